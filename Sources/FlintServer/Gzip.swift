import CompressNIO
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// Compresses responses with gzip when the request accepts it (`Accept-Encoding: gzip`), as
/// Google's front ends do for the REST API. Streaming answers are whole JSON arrays already,
/// so compressing the whole body loses nothing.
struct GzipResponses<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard let accept = request.headers[.acceptEncoding], Self.acceptsGzip(accept), response.headers[.contentEncoding] == nil,
            response.status != .noContent, response.status.code != 101,
            // A body that streams as it happens (WebChannel's back channel) cannot wait to be compressed.
            !(response.headers[.cacheControl]?.contains("no-transform") ?? false),
            // Small answers gain nothing from compression.
            (response.body.contentLength ?? Int.max) >= 1024
        else { return response }
        let body = response.body
        response.body = ResponseBody { writer in
            let collected = Collected()
            try await body.write(Collector(into: collected))
            var plain = collected.buffer
            let compressed = try plain.compress(with: .gzip())
            try await writer.write(compressed)
            try await writer.finish(nil)
        }
        response.headers[.contentEncoding] = "gzip"
        response.headers[.contentLength] = nil
        response.headers[values: .vary].append("Accept-Encoding")
        return response
    }

    /// `gzip` listed with a non-zero quality.
    static func acceptsGzip(_ header: String) -> Bool {
        header.split(separator: ",").contains { part in
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.first?.lowercased() == "gzip" || fields.first == "*" else { return false }
            return !fields.dropFirst().contains { $0.replacingOccurrences(of: " ", with: "") == "q=0" }
        }
    }
}

/// The bytes of a response body, gathered before compressing.
private final class Collected: @unchecked Sendable {
    // Written by one body writer, then read once it has finished.
    var buffer = ByteBuffer()
}

private struct Collector: ResponseBodyWriter {
    let into: Collected

    mutating func write(_ buffer: ByteBuffer) async throws {
        var copy = buffer
        into.buffer.writeBuffer(&copy)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
