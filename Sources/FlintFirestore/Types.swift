import FlintModel
import Foundation

/// A point in time with microsecond precision (Firestore's), like FirebaseFirestore's `Timestamp`.
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let seconds: Int64
    public let nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    public init(date: Date) {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        self.init(model: FlintModel.Timestamp(microseconds: Int64(micros)))
    }

    /// Now.
    public init() { self.init(date: Date()) }

    init(model t: FlintModel.Timestamp) {
        self.init(seconds: t.seconds, nanoseconds: t.nanos)
    }

    public func dateValue() -> Date {
        Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }

    var model: FlintModel.Timestamp {
        FlintModel.Timestamp(microseconds: seconds * 1_000_000 + Int64(nanoseconds / 1000))
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
    }

    public var description: String { RFC3339.format(model) }
}

/// A latitude and longitude in degrees.
public struct GeoPoint: Sendable, Hashable, Codable {
    public let latitude: Double
    public let longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// A vector embedding, as documents store it for nearest-neighbour search. `FieldValue.vector`
/// makes one; a vector field reads back as one.
public struct VectorValue: Sendable, Hashable, Codable {
    /// The vector's components.
    public let array: [Double]

    public init(_ array: [Double]) { self.array = array }
    public init(_ array: [NSNumber]) { self.array = array.map(\.doubleValue) }
}

/// A path to a field; `FieldPath.documentID()` is the document's id in queries.
public struct FieldPath: Sendable, Hashable {
    let segments: [String]

    public init(_ fieldNames: [String]) {
        segments = fieldNames
    }

    public static func documentID() -> FieldPath { FieldPath(["__name__"]) }

    /// A dotted string as `updateData` and `whereField` read it.
    init(dotted: String) throws(FirestoreErrorCode) {
        guard !dotted.isEmpty, !dotted.hasPrefix("."), !dotted.hasSuffix("."), !dotted.contains("..") else {
            throw invalidArgument("Invalid field path (\(dotted)). Paths must not be empty, begin with '.', end with '.', or contain '..'")
        }
        if dotted.contains(where: { "~*/[]".contains($0) }) {
            throw invalidArgument("Invalid field path (\(dotted)). Paths must not contain '~', '*', '/', '[', or ']'")
        }
        segments = dotted.split(separator: ".").map(String.init)
    }

    func model() throws(FirestoreErrorCode) -> FlintModel.FieldPath {
        if segments == ["__name__"] { return .documentID }
        guard !segments.isEmpty, !segments.contains(where: \.isEmpty) else {
            throw invalidArgument("Invalid field path. Provided names must not be empty.")
        }
        do { return try FlintModel.FieldPath(segments) } catch { throw FirestoreErrorCode(flint: error) }
    }
}

/// Sentinel values for writes, resolved by the server at commit time.
public final class FieldValue: Sendable {
    enum Kind: Sendable {
        case delete
        case serverTimestamp
        case increment(Value)
        case arrayUnion([Value])
        case arrayRemove([Value])
    }

    let kind: Kind
    /// Elements that could not be converted, reported when the write is built.
    let problem: FirestoreErrorCode?

    init(_ kind: Kind, problem: FirestoreErrorCode? = nil) {
        self.kind = kind
        self.problem = problem
    }

    public static func delete() -> FieldValue { FieldValue(.delete) }
    public static func serverTimestamp() -> FieldValue { FieldValue(.serverTimestamp) }
    public static func increment(_ by: Int64) -> FieldValue { FieldValue(.increment(.integer(by))) }
    public static func increment(_ by: Double) -> FieldValue { FieldValue(.increment(.double(by))) }
    public static func arrayUnion(_ elements: [Any]) -> FieldValue { elementsValue(elements, ValueBridge.arrayUnion) }
    public static func arrayRemove(_ elements: [Any]) -> FieldValue { elementsValue(elements, ValueBridge.arrayRemove) }
    public static func vector(_ array: [Double]) -> VectorValue { VectorValue(array) }
    public static func vector(_ array: [NSNumber]) -> VectorValue { VectorValue(array) }

    private static func elementsValue(_ elements: [Any], _ make: ([Value]) -> Kind) -> FieldValue {
        do {
            return FieldValue(make(try elements.map { v throws(FirestoreErrorCode) in try ValueBridge.plainValue(v) }))
        } catch {
            return FieldValue(make([]), problem: error)
        }
    }
}
