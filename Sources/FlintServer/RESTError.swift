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
    /// `{"error": {"code": 400, "message": "...", "status": "INVALID_ARGUMENT"}}`
    func restResponse() -> Response {
        var error: [String: Any] = ["code": Int(code.httpStatus.code), "message": message, "status": code.name]
        if !details.isEmpty {
            error["details"] = details.map { ["@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": $0] }
        }
        let body: [String: Any] = ["error": error]
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
        return Response(
            status: code.httpStatus, headers: [.contentType: "application/json; charset=UTF-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
