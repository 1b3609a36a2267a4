import HTTPTypes
import Hummingbird
import HummingbirdCore

/// Cross-origin access as the reference emulator grants it: every origin (`null` included, which
/// pages opened from `file://` send) with credentials, and in a preflight every header the
/// browser asks for. A fixed list of headers would fail the preflight of any page that sends one
/// more, such as the App Check token of the Lite SDK. Hummingbird's CORS middleware answers only
/// a fixed list, so Flint says it here. Pages served from the internet may reach Flint on the
/// developer's machine too, when the browser asks (Chrome's Private Network Access).
struct CrossOriginAccess<Context: RequestContext>: RouterMiddleware {
    static var allowedMethods: String { "DELETE,GET,HEAD,PATCH,POST,PUT" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // The reference answers OPTIONS on any path, asked by a browser or not.
        if request.method == .options {
            var headers = Self.grant(for: request)
            if request.headers[.origin] != nil {
                headers[.vary] = "Origin"
                if let asked = request.headers[.accessControlRequestHeaders] { headers[.accessControlAllowHeaders] = asked }
            }
            headers[.contentLength] = "0"
            return Response(status: .ok, headers: headers)
        }
        guard request.headers[.origin] != nil else { return try await next(request, context) }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // Errors answered by the framework (no route, say) reach the browser too.
            response = try error.response(from: request, context: context)
        }
        for field in Self.grant(for: request) { response.headers[field.name] = field.value }
        response.headers[values: .vary].append("Origin")
        return response
    }

    /// The headers that let the request's origin read the answer; none without an origin.
    static func grant(for request: Request) -> HTTPFields {
        guard let origin = request.headers[.origin] else { return [:] }
        var fields: HTTPFields = [
            .accessControlAllowOrigin: origin,
            .accessControlAllowMethods: allowedMethods,
            .accessControlAllowCredentials: "true",
        ]
        if request.headers[.accessControlRequestPrivateNetwork] != nil { fields[.accessControlAllowPrivateNetwork] = "true" }
        return fields
    }
}

extension HTTPField.Name {
    fileprivate static let accessControlRequestPrivateNetwork = Self("access-control-request-private-network")!
    fileprivate static let accessControlAllowPrivateNetwork = Self("access-control-allow-private-network")!
}
