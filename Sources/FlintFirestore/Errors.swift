import FlintModel
import Foundation

/// The error domain of every error the client reports, as in FirebaseFirestore.
public let FirestoreErrorDomain = "FIRFirestoreErrorDomain"

/// A Firestore error: a gRPC status code and the server's (or the client's) message. It
/// bridges to `NSError` in `FirestoreErrorDomain`, so both `catch let e as FirestoreErrorCode`
/// and `(error as NSError).code` work, as with the SDK.
public struct FirestoreErrorCode: Error, CustomNSError, CustomStringConvertible, Sendable, Equatable {
    public enum Code: Int, Sendable, CaseIterable {
        case OK = 0
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
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Reads an error thrown by the client back as a Firestore error (nil for other errors).
    public init?(_ error: any Error) {
        if let e = error as? FirestoreErrorCode {
            self = e
        } else if let e = error as? FlintError {
            self.init(flint: e)
        } else {
            let ns = error as NSError
            guard ns.domain == FirestoreErrorDomain, let code = Code(rawValue: ns.code) else { return nil }
            self.init(code, ns.localizedDescription)
        }
    }

    init(flint error: FlintError) {
        self.init(Code(rawValue: error.code.rawValue) ?? .unknown, error.message)
    }

    public static var errorDomain: String { FirestoreErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }
    public var description: String { "FirestoreErrorCode(\(code)): \(message)" }

    public static var cancelled: Code { .cancelled }
    public static var unknown: Code { .unknown }
    public static var invalidArgument: Code { .invalidArgument }
    public static var deadlineExceeded: Code { .deadlineExceeded }
    public static var notFound: Code { .notFound }
    public static var alreadyExists: Code { .alreadyExists }
    public static var permissionDenied: Code { .permissionDenied }
    public static var resourceExhausted: Code { .resourceExhausted }
    public static var failedPrecondition: Code { .failedPrecondition }
    public static var aborted: Code { .aborted }
    public static var outOfRange: Code { .outOfRange }
    public static var unimplemented: Code { .unimplemented }
    public static var `internal`: Code { .internal }
    public static var unavailable: Code { .unavailable }
    public static var dataLoss: Code { .dataLoss }
    public static var unauthenticated: Code { .unauthenticated }
}

#if !canImport(Darwin)
    /// Where a transaction's update block reports an error, as on Apple platforms.
    public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?
#endif

/// Errors the client raises itself, before anything is sent (the SDK's argument checks).
func invalidArgument(_ message: String) -> FirestoreErrorCode {
    FirestoreErrorCode(.invalidArgument, message)
}

/// Runs backend work and reports its failures as `FirestoreErrorCode`.
func firestoreCall<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let e as FlintError {
        throw FirestoreErrorCode(flint: e)
    }
}
