import Hummingbird
import NIOCore

/// A request no route serves is answered as the reference answers it (`Response.notFound`),
/// where Hummingbird would send an empty body: a client that shows the body then says what
/// happened.
struct UnroutedRequests<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound && error.body == nil {
            return .notFound
        }
    }
}

extension Response {
    /// The reference's answer for what it does not serve: `404`, `Not Found` and a newline.
    static var notFound: Response {
        Response(
            status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: "Not Found\n")))
    }
}
