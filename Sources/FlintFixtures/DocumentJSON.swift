import FlintEngine
import FlintModel
import Foundation

/// Reads Firestore's REST document JSON (`{"fields": {"n": {"integerValue": "1"}}}`) into
/// Flint's model. Used for fixture files; the network edges use the protobuf JSON mapping.
public enum DocumentJSON {
    /// Decodes a `fields` object.
    public static func fields(_ json: Any, database: DatabaseID, at path: String = "fields") throws(FlintError) -> MapValue {
        guard let object = json as? [String: Any] else {
            throw .invalidArgument("\(path) must be an object of field values.")
        }
        var map = MapValue()
        for (name, raw) in object {
            map[name] = try value(raw, database: database, at: path + "." + name)
        }
        return map
    }

    /// Decodes one `Value` object such as `{"stringValue": "x"}`.
    public static func value(_ json: Any, database: DatabaseID, at path: String) throws(FlintError) -> Value {
        guard let object = json as? [String: Any], object.count == 1, let (kind, raw) = object.first else {
            throw .invalidArgument("\(path) must be an object with exactly one value type, such as {\"stringValue\": \"x\"}.")
        }
        func bad(_ expected: String) -> FlintError {
            .invalidArgument("\(path).\(kind) must be \(expected).")
        }
        switch kind {
        case "nullValue":
            return .null
        case "booleanValue":
            guard let b = raw as? Bool else { throw bad("true or false") }
            return .boolean(b)
        case "integerValue":
            if let s = raw as? String, let i = Int64(s) { return .integer(i) }
            if let n = raw as? NSNumber, let i = PlainJSON.int64(n) { return .integer(i) }
            throw bad("a 64-bit integer (as a string)")
        case "doubleValue":
            if let s = raw as? String {
                switch s {
                case "NaN": return .double(.nan)
                case "Infinity": return .double(.infinity)
                case "-Infinity": return .double(-.infinity)
                default: if let d = Double(s) { return .double(d) }
                }
            }
            if let n = raw as? NSNumber { return .double(PlainJSON.double(n)) }
            throw bad("a number")
        case "timestampValue":
            guard let s = raw as? String, let t = RFC3339.parse(s) else { throw bad("an RFC 3339 timestamp") }
            return .timestamp(t)
        case "stringValue":
            guard let s = raw as? String else { throw bad("a string") }
            return .string(s)
        case "bytesValue":
            guard let s = raw as? String, let data = Data(base64Encoded: s) else { throw bad("base64 text") }
            return .bytes(Array(data))
        case "referenceValue":
            guard let s = raw as? String else { throw bad("a document name") }
            let (db, key) = try ResourceName.parseDocument(s.hasPrefix("projects/") ? s : database.documentsRoot + "/" + s, reference: true)
            return .reference(DocumentReference(database: db, key: key))
        case "geoPointValue":
            guard let g = raw as? [String: Any] else { throw bad("{latitude, longitude}") }
            let lat = (g["latitude"] as? NSNumber).map(PlainJSON.double) ?? 0
            let lng = (g["longitude"] as? NSNumber).map(PlainJSON.double) ?? 0
            return .geoPoint(try GeoPoint(latitude: lat, longitude: lng))
        case "arrayValue":
            guard let a = raw as? [String: Any] else { throw bad("{values: [...]}") }
            let items = a["values"] as? [Any] ?? []
            var values: [Value] = []
            for (i, item) in items.enumerated() {
                values.append(try value(item, database: database, at: "\(path)[\(i)]"))
            }
            return .array(values)
        case "mapValue":
            guard let m = raw as? [String: Any] else { throw bad("{fields: {...}}") }
            let inner = try fields(m["fields"] ?? [String: Any](), database: database, at: path)
            return try Value.vector(shapedAs: inner) ?? .map(inner)
        default:
            throw .invalidArgument("\(path) has an unknown value type \"\(kind)\".")
        }
    }
}

extension DocumentJSON {
    /// A `fields` object in Firestore's REST JSON.
    public static func restFields(_ m: MapValue) -> [String: Any] {
        var out: [String: Any] = [:]
        for e in m.entries { out[e.key] = restValue(e.value) }
        return out
    }

    /// One value in Firestore's REST JSON (`{"integerValue": "1"}`).
    public static func restValue(_ v: Value) -> [String: Any] {
        switch v {
        case .null: ["nullValue": NSNull()]
        case .boolean(let b): ["booleanValue": b]
        case .integer(let i): ["integerValue": String(i)]
        case .double(let d): d.isFinite ? ["doubleValue": d] : ["doubleValue": d.isNaN ? "NaN" : (d > 0 ? "Infinity" : "-Infinity")]
        case .timestamp(let t): ["timestampValue": RFC3339.format(t)]
        case .string(let s): ["stringValue": s]
        case .bytes(let b): ["bytesValue": Data(b).base64EncodedString()]
        case .reference(let r): ["referenceValue": r.database.documentsRoot + "/" + r.key.path.canonical]
        case .geoPoint(let g): ["geoPointValue": ["latitude": g.latitude, "longitude": g.longitude]]
        case .array(let a): ["arrayValue": ["values": a.map(restValue)]]
        case .map(let m): ["mapValue": ["fields": restFields(m)]]
        case .vector(let values): restValue(.map(Value.vectorShape(values)))
        }
    }
}
