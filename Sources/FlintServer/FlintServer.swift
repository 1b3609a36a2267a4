import FlintEngine
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

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

/// The HTTP side of Flint's one port. Today it answers the reference emulator's health check;
/// the REST, admin and WebSocket routes and the gRPC side join it on the same listener.
public struct FlintServer: Sendable {
    public let engine: Engine
    public let configuration: ServerConfiguration
    private let logger: Logger

    public init(engine: Engine, configuration: ServerConfiguration, logger: Logger = Logger(label: "flint")) {
        self.engine = engine
        self.configuration = configuration
        self.logger = logger
    }

    /// The router with every route Flint serves.
    public func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.middlewares.add(RequestLog(logger: logger))
        // Browsers (the web SDK, the Lite SDK) preflight every cross-origin call.
        router.middlewares.add(
            CORSMiddleware(
                allowOrigin: .originBased,
                allowHeaders: [
                    .accept, .authorization, .contentType, .origin, HTTPField.Name("x-goog-api-client")!,
                    HTTPField.Name("x-goog-request-params")!, HTTPField.Name("google-cloud-resource-prefix")!,
                    HTTPField.Name("x-firebase-gmpid")!,
                ],
                allowMethods: [.delete, .get, .head, .patch, .post, .put],
                allowCredentials: true))
        // The reference emulator answers `GET /` with `Ok`; tools poll it to see it is up.
        router.get("/") { _, _ in "Ok" }
        let admin = AdminAPI(engine: engine)
        router.delete("/emulator/v1/**") { request, _ in await admin.clear(request) }
        let rest = RESTAPI(engine: engine)
        for method in [HTTPRequest.Method.get, .post, .patch, .delete] {
            router.on("/v1/**", method: method) { request, context in await rest.respond(request, context: context) }
        }
        return router
    }

    /// The application, for running or for in-process tests.
    public func makeApplication(onReady: @escaping @Sendable (String, Int) async -> Void = { _, _ in })
        -> some ApplicationProtocol
    {
        Application(
            router: makeRouter(),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Flint"),
            onServerRunning: { channel in
                await onReady(configuration.host, channel.localAddress?.port ?? configuration.port)
            },
            logger: logger)
    }

    /// Serves until SIGINT or SIGTERM, then shuts down gracefully.
    public func run(onReady: @escaping @Sendable (String, Int) async -> Void) async throws {
        try await makeApplication(onReady: onReady).runService()
    }
}
