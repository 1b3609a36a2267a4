/// The gRPC status codes, which Firestore uses for every error on every dialect.
public enum StatusCode: Int, Sendable, CaseIterable {
    case ok = 0
    case cancelled = 1
    case unknown = 2
    case invalidArgument = 3
    case deadlineExceeded = 4
    case notFound = 5
    case alreadyExists = 6
    case permissionDenied = 7
    case resourceExhausted = 8
    case failedPrecondition = 9
    case aborted = 10
    case outOfRange = 11
    case unimplemented = 12
    case `internal` = 13
    case unavailable = 14
    case dataLoss = 15
    case unauthenticated = 16

    /// The upper-case name used in `google.rpc.Status` JSON (`"INVALID_ARGUMENT"`).
    public var name: String {
        switch self {
        case .ok: "OK"
        case .cancelled: "CANCELLED"
        case .unknown: "UNKNOWN"
        case .invalidArgument: "INVALID_ARGUMENT"
        case .deadlineExceeded: "DEADLINE_EXCEEDED"
        case .notFound: "NOT_FOUND"
        case .alreadyExists: "ALREADY_EXISTS"
        case .permissionDenied: "PERMISSION_DENIED"
        case .resourceExhausted: "RESOURCE_EXHAUSTED"
        case .failedPrecondition: "FAILED_PRECONDITION"
        case .aborted: "ABORTED"
        case .outOfRange: "OUT_OF_RANGE"
        case .unimplemented: "UNIMPLEMENTED"
        case .internal: "INTERNAL"
        case .unavailable: "UNAVAILABLE"
        case .dataLoss: "DATA_LOSS"
        case .unauthenticated: "UNAUTHENTICATED"
        }
    }
}

/// The one error type of Flint: a status code and a message for the developer.
///
/// Every layer throws this; the server maps it once to a gRPC status and once to REST JSON.
public struct FlintError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: StatusCode
    public var message: String
    /// Extra lines for the developer, kept out of `message` so the message stays the reference's
    /// (the values rules printed with `debug()` when they denied a request).
    public var details: [String] = []

    public init(_ code: StatusCode, _ message: String, details: [String] = []) {
        self.code = code
        self.message = message
        self.details = details
    }

    public static func invalidArgument(_ message: String) -> FlintError {
        FlintError(.invalidArgument, message)
    }

    public var description: String { "\(code.name): \(message)" }
}
