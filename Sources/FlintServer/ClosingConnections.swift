import HTTPTypes
import Hummingbird

/// Says `Connection: close` in the answer to a request that asked for it (RFC 9112 §9.6), so the
/// client does not reuse the connection: Hummingbird closes it without saying so. A first request
/// whose upgrade offer was dropped (`UnservedUpgrades`) is one.
struct ClosingConnections<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let connection = request.headers[.connection], connection.lowercased().contains("close") else {
            return try await next(request, context)
        }
        var response = try await next(request, context)
        response.headers[.connection] = "close"
        return response
    }
}
