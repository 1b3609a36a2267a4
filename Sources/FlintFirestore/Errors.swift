import FlintModel
import Foundation

/// The error domain of every error the client reports, as in FirebaseFirestore.
public let FirestoreErrorDomain = "FIRFirestoreErrorDomain"

/// A Firestore error: a gRPC status code and the server's (or the client's) message. It is an
/// `NSError` in `FirestoreErrorDomain` (on Linux too, where Swift errors do not bridge), so
/// `catch let e as NSError` with `e.code == FirestoreErrorCode.permissionDenied.rawValue`,
/// `catch let e as FirestoreErrorCode` with `e.code == .permissionDenied`, and
/// `e.localizedDescription` all work as with the SDK.
public final class FirestoreErrorCode: NSError, @unchecked Sendable {
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

        /// `error.code == .permissionDenied` where `code` is NSError's `Int`.
        public static func == (lhs: Int, rhs: Code) -> Bool { lhs == rhs.rawValue }
        public static func == (lhs: Int?, rhs: Code) -> Bool { lhs == rhs.rawValue }
        public static func != (lhs: Int, rhs: Code) -> Bool { lhs != rhs.rawValue }
        public static func ~= (pattern: Code, value: Int) -> Bool { pattern.rawValue == value }
    }

    public init(_ code: Code, _ message: String) {
        super.init(domain: FirestoreErrorDomain, code: code.rawValue, userInfo: [NSLocalizedDescriptionKey: message])
    }

    convenience init(flint error: FlintError) {
        self.init(Code(rawValue: error.code.rawValue) ?? .unknown, error.message)
    }

    public required init?(coder: NSCoder) { nil }

    /// The status as the enum.
    public var status: Code { Code(rawValue: code) ?? .unknown }
    /// The server's message.
    public var message: String { localizedDescription }

    /// Reads an error thrown by the client (or an engine error) as a Firestore error; nil for
    /// other errors.
    public static func from(_ error: any Error) -> FirestoreErrorCode? {
        if let e = error as? FirestoreErrorCode { return e }
        if let e = error as? FlintError { return FirestoreErrorCode(flint: e) }
        return nil
    }

    public override var description: String { "FirestoreErrorCode(\(status)): \(message)" }

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
