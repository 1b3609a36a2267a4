import FlintEngine
import HTTPTypes
import Hummingbird
import Logging
import FlintModel
import FlintProto
import FlintReflection
import FlintWebChannel
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import HummingbirdCore
import HummingbirdWebSocket
import NIOCore
import NIOPosix
import ServiceLifecycle

/// Where and how Flint listens.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port; the chosen one is passed to `onReady`.
    public var port: Int

    public init(host: String = "127.0.0.1", port: Int = 8080) {
        self.host = host
        self.port = port
    }
}

/// Flint's one port: HTTP/1.1 (REST, admin, health) through Hummingbird and cleartext HTTP/2
/// (gRPC) through grpc-swift, told apart by each connection's first bytes.
public struct FlintServer: Sendable {
    public let engine: Engine
    public let configuration: ServerConfiguration
    private let logger: Logger
    let metrics = ServerMetrics()
    let shutdown = ShutdownTrigger()
    /// Fired when shutting down begins, so long-lived calls can end with a status.
    let draining = Latch()
    /// The web SDK's open WebChannel sessions.
    let channels = ChannelRegistry()

    public init(engine: Engine, configuration: ServerConfiguration, logger: Logger = Logger(label: "flint")) {
        self.engine = engine
        self.configuration = configuration
        self.logger = logger
    }

    /// Stops a running server as SIGTERM or `POST /shutdown` would.
    public func stop() { shutdown.fire() }

    /// The router with every route Flint serves.
    public func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.middlewares.add(RequestLog(logger: logger, metrics: metrics))
        router.middlewares.add(ClosingConnections())
        router.middlewares.add(GzipResponses())
        router.middlewares.add(CompressedRequests())
        // Browsers (the web SDK, the Lite SDK) preflight every cross-origin call.
        router.middlewares.add(CrossOriginAccess())
        router.middlewares.add(UnroutedRequests())
        // The reference emulator answers `GET /` with `Ok` and a newline; tools poll it to see
        // it is up, and some compare the body.
        router.get("/") { _, _ in "Ok\n" }
        let admin = AdminAPI(engine: engine, metrics: metrics, shutdown: shutdown)
        router.delete("/emulator/v1/**") { request, _ in
            // Below a database's documents, `:ruleCoverage` is part of an id, as on the reference.
            let resetsCoverage = request.uri.path.hasSuffix(":ruleCoverage") && !AdminAPI.isBelowDocuments(request.uri.path)
            return resetsCoverage ? await admin.ruleCoverage(request) : await admin.clear(request)
        }
        router.get("/emulator/v1/metrics") { _, _ in await admin.metricsReport() }
        router.get("/emulator/v1/**") { request, _ in
            let path = request.uri.path
            if path.hasSuffix(":securityRules") { return await admin.getSecurityRules(request) }
            if path.hasSuffix(":ruleCoverage") || path.hasSuffix(":ruleCoverage.html") { return await admin.ruleCoverage(request) }
            return await admin.indexUsage(request)
        }
        router.put("/emulator/v1/**") { request, _ in await admin.putSecurityRules(request) }
        router.post("/shutdown") { _, _ in admin.shutdownNow() }
        router.post("/emulator/v1:export") { request, _ in await admin.export(request) }
        router.post("/emulator/v1:import") { request, _ in await admin.importExport(request) }
        router.post("/emulator/v1/**") { request, _ in
            let path = request.uri.path
            if path.hasSuffix(":evaluateRules") { return await admin.evaluateRules(request) }
            if path.hasSuffix(":bulkDelete") { return await admin.bulkDelete(request) }
            return path.hasSuffix(":import") ? await admin.importExport(request) : await admin.export(request)
        }
        // The web SDK's streams, where the reference serves them.
        let webChannel = WebChannelStreams(engine: engine, registry: channels, logger: logger)
        router.post("/google.firestore.v1.Firestore/{stream}/channel") { request, context in
            await webChannel.post(request, stream: context.parameters.get("stream") ?? "")
        }
        router.get("/google.firestore.v1.Firestore/{stream}/channel") { request, context in
            await webChannel.get(request, stream: context.parameters.get("stream") ?? "")
        }
        let rest = RESTAPI(engine: engine)
        // PUT is served only to say what to use instead.
        for method in [HTTPRequest.Method.get, .post, .patch, .delete, .put] {
            router.on("/v1/**", method: method) { request, context in await rest.respond(request, context: context) }
            router.on("/v1beta1/**", method: method) { request, context in await rest.respond(request, context: context) }
        }
        return router
    }

    /// The HTTP/1.1 side alone, for in-process tests of REST and admin routes; HTTP/2
    /// connections are closed.
    public func makeApplication(onReady: @escaping @Sendable (String, Int) async -> Void = { _, _ in })
        -> some ApplicationProtocol
    {
        let handoff = GRPCHandoff(eventLoopGroup: Self.eventLoopGroup)
        handoff.cancel()
        return makeApplication(grpc: handoff, connections: OpenConnections(), onReady: onReady)
    }

    /// The application on the shared port: HTTP/1.1 here, HTTP/2 connections handed to `grpc`.
    func makeApplication(
        grpc: GRPCHandoff, connections: OpenConnections, onReady: @escaping @Sendable (String, Int) async -> Void
    ) -> some ApplicationProtocol
    {
        let listen = WebSocketListen(engine: engine, logger: logger, metrics: metrics)
        return Application(
            router: makeRouter(),
            server: HTTPServerBuilder { responder in
                SharedPortChannel(http1: HTTP1WebSocketUpgradeChannel(
                    responder: { request, writer, channel in
                        switch Expectation(request) {
                        case .none: break
                        case .continue: try await writer.writeInformationalHead(HTTPResponse(status: .continue))
                        case .unmet:
                            try await writer.writeResponse(HTTPResponse(status: .expectationFailed, headerFields: [.contentLength: "0"]))
                            return
                        }
                        try await responder(request.withoutFragment, writer, channel)
                    },
                    // Text messages must be UTF-8 (RFC 6455): one that is not is closed with 1007
                    // rather than read with its bad bytes replaced, which would change the values sent.
                    configuration: .init(ws: .init(maxFrameSize: 1 << 20, autoPing: .enabled(timePeriod: .seconds(30)), validateUTF8: true)),
                    shouldUpgrade: { head, _, _ in listen.shouldUpgrade(head) }),
                    grpc: grpc, connections: connections)
            },
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Flint"),
            onServerRunning: { channel in
                await onReady(configuration.host, channel.localAddress?.port ?? configuration.port)
            },
            eventLoopGroupProvider: .shared(Self.eventLoopGroup),
            logger: logger)
    }

    /// grpc-swift's HTTP/2 transport on connections the shared port hands over, with calls
    /// routed as the reference routes them and without their deadlines.
    typealias GRPCTransport = CallRoutingTransport<DeadlineFreeTransport<HTTP2ServerTransport.Custom<GRPCHandoff>>>

    /// The gRPC server for connections the shared port recognises as HTTP/2.
    func makeGRPCServer(_ handoff: GRPCHandoff) -> GRPCServer<GRPCTransport> {
        var config = HTTP2ServerTransport.Custom<GRPCHandoff>.Config.defaults
        // Firestore refuses requests over 10 MiB with a clear error, which the engine gives; the
        // transport only resets streams, so its own cap sits well above that.
        config.rpc.maxRequestPayloadSize = 4 * Limits.maxRequestBytes
        // The reference takes gzip-compressed requests and refuses deflate. Answers stay plain for
        // clients that list identity first in grpc-accept-encoding, as the C-core clients do.
        config.compression.enabledAlgorithms = [.gzip]
        // Server SDKs open a stream per listener and per call, all on one connection. Left
        // unset, no limit is advertised but SwiftNIO enforces 100, and each stream past it
        // makes the connection end with a protocol error. The reference advertises 2³¹ − 1.
        config.http2.maxConcurrentStreams = Int(Int32.max)
        var router = RPCRouter<GRPCTransport>()
        for service in [GRPCFirestoreService(engine: engine, draining: draining)] + Self.reflection.rpcServices {
            service.registerMethods(with: &router)
        }
        router.registerInterceptors(pipeline: [.apply(GRPCCallLog(logger: logger, metrics: metrics), to: .all)])
        let transport = DeadlineFreeTransport(base: HTTP2ServerTransport.Custom(listenerFactory: handoff, config: config))
        return GRPCServer(transport: CallRoutingTransport(base: transport, served: Set(router.methods)), router: router)
    }

    /// What grpcurl and other dynamic clients are told the gRPC side serves.
    static let reflection = ServerReflection(
        index: ServerReflection.servedDescriptors,
        services: [Google_Firestore_V1_Firestore.descriptor.fullyQualifiedService, FirestoreV1Beta1.service])

    static var eventLoopGroup: MultiThreadedEventLoopGroup { .singleton }

    /// Serves REST and gRPC on one port until `POST /shutdown`, `stop()` or the task's
    /// cancellation, then shuts down: open calls get `gracePeriod` to finish, and connections
    /// still open after it are closed. Signals are left to the program: the command line stops
    /// on SIGINT and SIGTERM, and a program that embeds Flint keeps its own handling of them.
    public func run(gracePeriod: Duration = .milliseconds(500), onReady: @escaping @Sendable (String, Int) async -> Void)
        async throws
    {
        let handoff = GRPCHandoff(eventLoopGroup: Self.eventLoopGroup)
        // A server stopped before gRPC began listening never settles the hand-off; settle it
        // here (after it succeeded this changes nothing), so no connection waits on it.
        defer { handoff.cancel() }
        let grpc = makeGRPCServer(handoff)
        let connections = OpenConnections()
        let app = makeApplication(grpc: handoff, connections: connections, onReady: onReady)
        // Every way of stopping asks the HTTP server to shut down: cancelling it instead would
        // end its accept loop with an error it logs.
        let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await withTaskExecutorPreference(EventLoopTaskExecutor(nearestIn: Self.eventLoopGroup)) {
                    try await grpc.serve()
                }
            }
            defer { group.cancelAll() }
            let serving = Task { try await services.run() }
            let shutdown = self.shutdown
            let stopping = Task { [channels, draining] in
                await shutdown.wait()
                guard !Task.isCancelled else { return }
                // Open back channels are requests that never finish on their own.
                channels.closeAll()
                // Listen streams end with UNAVAILABLE, which clients take as a cue to reconnect.
                draining.fire()
                grpc.beginGracefulShutdown()
                await services.triggerGracefulShutdown()
                try? await Task.sleep(for: gracePeriod)
                connections.closeAll()
            }
            defer { stopping.cancel() }
            // Sessions a browser left without terminating hold a stream each until swept.
            let sweeper = Task { [channels] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(5))
                    channels.sweep()
                }
            }
            defer { sweeper.cancel() }
            do {
                try await withTaskCancellationHandler {
                    try await serving.value
                } onCancel: {
                    shutdown.fire()
                }
            } catch {
                throw ListenFailure(error, at: HostAndPort(host: configuration.host, port: configuration.port)) ?? error
            }
            group.addTask {
                try await Task.sleep(for: gracePeriod)
                throw CancellationError()
            }
            // The first to finish: the gRPC server draining, or the grace period.
            _ = try? await group.next()
        }
    }
}

/// Why Flint could not take its address, in a sentence for whoever started it (NIO's own
/// words name the system call, not the address).
public struct ListenFailure: Error, CustomStringConvertible {
    public let description: String

    init?(_ error: any Error, at address: HostAndPort) {
        switch error {
        case let failure as IOError:
            let reason = failure.errnoCode == EADDRINUSE
                ? "the port is in use (is another emulator running there?)" : String(cString: strerror(failure.errnoCode)).lowercased()
            description = "Cannot listen on \(address): \(reason)."
        case is SocketAddressError, is SocketAddressError.UnknownHost:
            description = "Cannot listen on \(address): no such host."
        default:
            return nil
        }
    }
}
