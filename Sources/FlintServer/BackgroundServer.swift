/// A Flint serving in the background, for tests and programs that embed it.
public struct BackgroundServer: Sendable {
    public let host: String
    public let port: Int
    private let serving: Task<Void, any Error>

    fileprivate init(host: String, port: Int, serving: Task<Void, any Error>) {
        self.host = host
        self.port = port
        self.serving = serving
    }

    /// `host:port`, the value for `FIRESTORE_EMULATOR_HOST`.
    public var address: String { "\(host):\(port)" }

    /// Stops it; open calls get the grace period, as on SIGTERM.
    public func stop() { serving.cancel() }

    /// Returns once it has stopped (after `stop()` or `POST /shutdown`).
    public func finished() async throws { try await serving.value }
}

extension FlintServer {
    /// Starts serving in the background and returns once the port is bound. A server that
    /// cannot start (the port is taken) throws its error here instead of leaving the caller
    /// waiting.
    public func start() async throws -> BackgroundServer {
        let ready = AsyncStream<(String, Int)>.makeStream()
        let serving = Task {
            defer { ready.continuation.finish() }
            try await run { host, port in ready.continuation.yield((host, port)) }
        }
        var bound = ready.stream.makeAsyncIterator()
        guard let (host, port) = await bound.next() else {
            try await serving.value
            throw CancellationError()
        }
        return BackgroundServer(host: host, port: port, serving: serving)
    }
}
