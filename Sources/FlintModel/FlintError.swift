import Foundation

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

extension FlintError {
    /// A file system failure as `<what>: <the system's reason>` (`No such file or directory`),
    /// rather than Foundation's dump of its error domains and user info. `path`, when given, is
    /// the one that failed: when Foundation gives no reason, a file where a folder above it
    /// should be is named.
    public static func file(_ code: StatusCode, _ what: String, _ error: any Error, path: String? = nil) -> FlintError {
        if let flint = error as? FlintError { return flint }
        return FlintError(code, "\(what): \(fileReason(error, path: path)).")
    }

    /// The reason alone, as `file` words it.
    public static func fileReason(_ error: any Error, path: String? = nil) -> String {
        if let flint = error as? FlintError { return flint.message }
        let ns = error as NSError
        if let posix = ns.domain == NSPOSIXErrorDomain ? ns : ns.userInfo[NSUnderlyingErrorKey] as? NSError,
            posix.domain == NSPOSIXErrorDomain
        {
            return String(cString: strerror(Int32(posix.code)))
        }
        let posixCode: Int32? =
            switch CocoaError.Code(rawValue: ns.code) {
            case .fileNoSuchFile, .fileReadNoSuchFile: ENOENT
            case .fileWriteNoPermission, .fileReadNoPermission: EACCES
            case .fileWriteFileExists: EEXIST
            case .fileWriteOutOfSpace: ENOSPC
            case .fileWriteVolumeReadOnly: EROFS
            default: nil
            }
        if ns.domain == NSCocoaErrorDomain, let posixCode { return String(cString: strerror(posixCode)) }
        if let path {
            let above = FileManager.default.nearestExisting(path)
            if !above.isDirectory && above.path != URL(fileURLWithPath: path).standardizedFileURL.path {
                return "\(above.path) is a file"
            }
        }
        return ns.localizedDescription
    }
}

extension FileManager {
    /// `path` itself when it exists, else the nearest folder or file above it that does, and
    /// whether that is a folder: where a path that cannot be created runs into a file.
    public func nearestExisting(_ path: String) -> (path: String, isDirectory: Bool) {
        var url = URL(fileURLWithPath: path).standardizedFileURL
        var isDirectory: ObjCBool = false
        while !fileExists(atPath: url.path, isDirectory: &isDirectory), url.pathComponents.count > 1 {
            url = url.deletingLastPathComponent()
        }
        return (url.path, isDirectory.boolValue)
    }
}
