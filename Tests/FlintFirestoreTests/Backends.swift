import FlintEngine
import FlintFirestore
import FlintServer
import Foundation

/// The two ways to reach a database: in process, and over gRPC to a Flint on a free port.
enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
    case embedded, remote

    var description: String { rawValue }

    /// Runs `body` with an owner client of a fresh project, and the engine behind it.
    func run(rules: String? = nil, _ body: @Sendable (Firestore, Engine) async throws -> Void) async throws {
        let engine = Engine()
        let project = "client-\(UUID().uuidString.prefix(8).lowercased())"
        if let rules { _ = engine.rules.load(rules, project: project) }
        switch self {
        case .embedded:
            let db = try Firestore.embedded(project: project, engine: engine, user: .owner)
            try await body(db, engine)
        case .remote:
            let server = FlintServer(engine: engine, configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
            let running = try await server.start()
            defer { running.stop() }
            let db = Firestore.remote(host: running.address, project: project, user: .owner)
            defer { Task { await db.terminate() } }
            try await body(db, engine)
        }
    }
}

/// Collects a listener's callbacks so a test can await them one by one.
final class Inbox<T: Sendable>: Sendable {
    let stream: AsyncStream<Result<T, any Error>>
    private let continuation: AsyncStream<Result<T, any Error>>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    func put(_ value: T?, _ error: (any Error)?) {
        if let value { continuation.yield(.success(value)) } else if let error { continuation.yield(.failure(error)) }
    }

    /// The next callback, failing after `seconds`.
    func next(within seconds: Double = 30) async throws -> T {
        let stream = self.stream
        return try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask {
                var it = stream.makeAsyncIterator()
                guard let r = await it.next() else { throw CancellationError() }
                return try r.get()
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                throw TimeoutError()
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
    }
}

struct TimeoutError: Error {}
