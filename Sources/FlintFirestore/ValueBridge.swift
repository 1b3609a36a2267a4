import FlintModel
import FlintQuery
import Foundation

/// Converts between the SDK's loosely typed data (`[String: Any]`) and Flint's values.
enum ValueBridge {
    static func arrayUnion(_ v: [Value]) -> FieldValue.Kind { .arrayUnion(v) }
    static func arrayRemove(_ v: [Value]) -> FieldValue.Kind { .arrayRemove(v) }

    /// A value without sentinels (query arguments, array elements).
    static func plainValue(_ any: Any, database: DatabaseID? = nil) throws(FirestoreErrorCode) -> Value {
        switch try input(any, database: database, path: "") {
        case .value(let v): return v
        case .sentinel: throw invalidArgument("FieldValue sentinels can only be used as field values in writes.")
        }
    }

    enum Input {
        case value(Value)
        case sentinel(FieldValue)
    }

    /// Reads one Swift value. Integers of any width, `Double`/`Float`, `Bool`, `String`,
    /// `Date`, `Timestamp`, `GeoPoint`, `VectorValue`, `Data`, `DocumentReference`, `NSNull`,
    /// optionals, arrays and string-keyed dictionaries are accepted, as the SDK accepts them.
    static func input(_ any: Any, database: DatabaseID?, path: String) throws(FirestoreErrorCode) -> Input {
        // Numbers read back from documents are NSNumbers; their own type says what they hold
        // (a cast would turn 1 into true).
        if Swift.type(of: any) is NSNumber.Type, let n = any as? NSNumber {
            switch String(cString: n.objCType) {
            case "c", "B": return .value(.boolean(n.boolValue))
            case "d", "f": return .value(.double(n.doubleValue))
            default: return .value(.integer(n.int64Value))
            }
        }
        switch any {
        case let f as FieldValue:
            if let problem = f.problem { throw problem }
            return .sentinel(f)
        case let b as Bool: return .value(.boolean(b))
        case let s as String: return .value(.string(s))
        case let i as Int: return .value(.integer(Int64(i)))
        case let i as Int64: return .value(.integer(i))
        case let i as Int32: return .value(.integer(Int64(i)))
        case let i as Int16: return .value(.integer(Int64(i)))
        case let i as Int8: return .value(.integer(Int64(i)))
        case let i as UInt8: return .value(.integer(Int64(i)))
        case let i as UInt16: return .value(.integer(Int64(i)))
        case let i as UInt32: return .value(.integer(Int64(i)))
        case let i as UInt:
            guard i <= UInt(Int64.max) else { throw invalidArgument("Value \(i) at \(path) does not fit in a 64-bit integer.") }
            return .value(.integer(Int64(i)))
        case let i as UInt64:
            guard i <= UInt64(Int64.max) else { throw invalidArgument("Value \(i) at \(path) does not fit in a 64-bit integer.") }
            return .value(.integer(Int64(i)))
        case let d as Double: return .value(.double(d))
        case let d as Float: return .value(.double(Double(d)))
        case let t as Timestamp: return .value(.timestamp(t.model))
        case let d as Date: return .value(.timestamp(Timestamp(date: d).model))
        case let g as GeoPoint:
            do { return .value(.geoPoint(try FlintModel.GeoPoint(latitude: g.latitude, longitude: g.longitude))) } catch {
                throw FirestoreErrorCode(flint: error)
            }
        case let d as Data: return .value(.bytes([UInt8](d)))
        case let v as VectorValue: return .value(.vector(v.array))
        case let r as DocumentReference:
            if let database, r.firestore.databaseID != database {
                throw invalidArgument(
                    "Document reference is for database \(r.firestore.databaseID.name) but should be for database \(database.name)")
            }
            return .value(.reference(FlintModel.DocumentReference(database: r.firestore.databaseID, key: try r.key)))
        case is NSNull: return .value(.null)
        case let a as [Any]:
            var values: [Value] = []
            for (i, element) in a.enumerated() {
                switch try input(element, database: database, path: "\(path)[\(i)]") {
                case .value(let v):
                    if case .array = v { throw invalidArgument("Nested arrays are not supported (found in field \(path)).") }
                    values.append(v)
                case .sentinel(let s):
                    throw invalidArgument("\(s.name) is not currently supported inside arrays (found in field \(path)).")
                }
            }
            return .value(.array(values))
        case let m as [String: Any]:
            var map = MapValue()
            for (k, v) in m {
                switch try input(v, database: database, path: path.isEmpty ? k : path + "." + k) {
                case .value(let value): map[k] = value
                case .sentinel: throw invalidArgument("FieldValue sentinels are not supported inside this value (found in field \(path)).")
                }
            }
            return .value(.map(map))
        default:
            let mirror = Mirror(reflecting: any)
            if mirror.displayStyle == .optional {
                guard let wrapped = mirror.children.first?.value else { return .value(.null) }
                return try input(wrapped, database: database, path: path)
            }
            throw invalidArgument("Unsupported type: \(type(of: any)) (found in field \(path.isEmpty ? "<root>" : path)).")
        }
    }

    /// The fields, transforms and field deletions of a document written with `data`.
    struct Parsed {
        var fields = MapValue()
        var transforms: [FlintModel.FieldTransform] = []
        var deletes: [FlintModel.FieldPath] = []
        /// Every leaf written: the mask of `setData(merge: true)`.
        var leaves: [FlintModel.FieldPath] = []
    }

    /// Splits `data` into plain fields and sentinels, walking nested maps.
    static func parse(_ data: [String: Any], database: DatabaseID, allowDelete: Bool) throws(FirestoreErrorCode) -> Parsed {
        var parsed = Parsed()
        var fields = MapValue()
        try walk(data, prefix: [], into: &parsed, target: &fields, database: database, allowDelete: allowDelete)
        parsed.fields = fields
        return parsed
    }

    private static func walk(
        _ data: [String: Any], prefix: [String], into parsed: inout Parsed, target: inout MapValue, database: DatabaseID, allowDelete: Bool
    ) throws(FirestoreErrorCode) {
        for (key, raw) in data {
            let segments = prefix + [key]
            let path = try FieldPath(segments).model()
            let dotted = segments.joined(separator: ".")
            if let nested = raw as? [String: Any], !nested.isEmpty, containsSentinel(nested) {
                var inner = (target[key]).flatMap { v -> MapValue? in if case .map(let m) = v { m } else { nil } } ?? MapValue()
                try walk(nested, prefix: segments, into: &parsed, target: &inner, database: database, allowDelete: allowDelete)
                target[key] = .map(inner)
                continue
            }
            switch try input(raw, database: database, path: dotted) {
            case .value(let v):
                target[key] = v
                if case .map(let m) = v, !m.isEmpty {
                    appendLeaves(m, segments, &parsed.leaves)
                } else {
                    parsed.leaves.append(path)
                }
            case .sentinel(let s):
                switch s.kind {
                case .delete:
                    guard allowDelete else {
                        throw invalidArgument(
                            "FieldValue.delete() can only be used with updateData() and setData() with merge:true (found in field \(dotted))")
                    }
                    parsed.deletes.append(path)
                    parsed.leaves.append(path)
                case .serverTimestamp: parsed.transforms.append(.init(path, .serverTimestamp))
                case .increment(let by): parsed.transforms.append(.init(path, .increment(by)))
                case .arrayUnion(let e): parsed.transforms.append(.init(path, .appendMissingElements(e)))
                case .arrayRemove(let e): parsed.transforms.append(.init(path, .removeAllFromArray(e)))
                }
            }
        }
    }

    private static func containsSentinel(_ data: [String: Any]) -> Bool {
        data.values.contains { v in
            if v is FieldValue { return true }
            if let m = v as? [String: Any] { return containsSentinel(m) }
            return false
        }
    }

    private static func appendLeaves(_ m: MapValue, _ prefix: [String], _ out: inout [FlintModel.FieldPath]) {
        for e in m.entries {
            let segments = prefix + [e.key]
            if case .map(let inner) = e.value, !inner.isEmpty {
                appendLeaves(inner, segments, &out)
            } else if let p = try? FlintModel.FieldPath(segments) {
                out.append(p)
            }
        }
    }

    // MARK: - Reading

    /// A stored value as the SDK hands it out: numbers as `NSNumber` (so `as? Int` and
    /// `as? Double` both work), `Timestamp`, `GeoPoint`, `VectorValue`, `Data`,
    /// `DocumentReference`, `NSNull`, `[Any]` and `[String: Any]`.
    static func any(_ v: Value, _ firestore: Firestore) -> Any {
        switch v {
        case .null: return NSNull()
        case .boolean(let b): return b
        case .integer(let i): return NSNumber(value: i)
        case .double(let d): return NSNumber(value: d)
        case .timestamp(let t): return Timestamp(model: t)
        case .string(let s): return s
        case .bytes(let b): return Data(b)
        case .reference(let r): return DocumentReference(r.key, firestore.database(r.database))
        case .geoPoint(let g): return GeoPoint(latitude: g.latitude, longitude: g.longitude)
        case .array(let a): return a.map { any($0, firestore) }
        case .map(let m): return dictionary(m, firestore)
        case .vector(let d): return VectorValue(d)
        }
    }

    static func dictionary(_ m: MapValue, _ firestore: Firestore) -> [String: Any] {
        var out: [String: Any] = [:]
        for e in m.entries { out[e.key] = any(e.value, firestore) }
        return out
    }
}

extension FieldValue {
    var name: String {
        switch kind {
        case .delete: "FieldValue.delete()"
        case .serverTimestamp: "FieldValue.serverTimestamp()"
        case .increment: "FieldValue.increment()"
        case .arrayUnion: "FieldValue.arrayUnion()"
        case .arrayRemove: "FieldValue.arrayRemove()"
        }
    }
}
