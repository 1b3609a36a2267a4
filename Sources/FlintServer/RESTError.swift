import FlintModel
import Foundation
import HTTPTypes
import Hummingbird

/// The one mapping from a status code to an HTTP status, as Google APIs do it.
extension StatusCode {
    var httpStatus: HTTPResponse.Status {
        switch self {
        case .ok: .ok
        case .invalidArgument, .failedPrecondition, .outOfRange: .badRequest
        case .unauthenticated: .unauthorized
        case .permissionDenied: .forbidden
        case .notFound: .notFound
        case .alreadyExists, .aborted: .conflict
        case .resourceExhausted: .tooManyRequests
        case .cancelled: HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request")
        case .unimplemented: .notImplemented
        case .unavailable: .serviceUnavailable
        case .deadlineExceeded: .gatewayTimeout
        case .internal, .unknown, .dataLoss: .internalServerError
        }
    }
}

extension FlintError {
    /// Google's error envelope, written with sorted keys: the order the reference prints them in.
    private struct Envelope: Encodable {
        struct Detail: Encodable {
            let type = "type.googleapis.com/google.rpc.DebugInfo"
            let detail: String
            enum CodingKeys: String, CodingKey {
                case type = "@type"
                case detail
            }
        }
        struct Body: Encodable {
            let code: Int
            let details: [Detail]?
            let message: String
            let status: String
        }
        let error: Body
    }

    /// `{"error": {"code": 400, "message": "...", "status": "INVALID_ARGUMENT"}}`. JSONEncoder,
    /// not JSONSerialization: the latter's boxing cost a quarter of a not-found answer's time.
    func restResponse() -> Response {
        let envelope = Envelope(error: .init(
            code: Int(code.httpStatus.code), details: details.isEmpty ? nil : details.map { .init(detail: $0) },
            message: message, status: code.name))
        let encoder = JSONEncoder()
        // Slashes stay as they are, as Google's front ends write them: messages name paths.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(envelope)) ?? Data()
        return Response(
            status: code.httpStatus, headers: [.contentType: "application/json; charset=UTF-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
