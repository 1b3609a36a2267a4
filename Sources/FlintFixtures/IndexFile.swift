import FlintEngine
import FlintModel
import FlintQuery
import Foundation

/// Reads `firestore.indexes.json`: composite indexes and single-field overrides.
public enum IndexFile {
    /// The composite indexes, the collection-group field overrides, and what each field
    /// override leaves its field of the collection-scope single-field indexes.
    public static func parse(_ data: Data) throws(FlintError) -> (indexes: [IndexSpec], overrides: [FieldOverride], settings: [SingleFieldSetting]) {
        let json: Any
        do { json = try JSONSerialization.jsonObject(with: data) } catch {
            throw .invalidArgument("firestore.indexes.json is not valid JSON: \(jsonProblem(error))")
        }
        guard let root = json as? [String: Any] else {
            throw .invalidArgument("firestore.indexes.json must be an object with \"indexes\" and \"fieldOverrides\".")
        }
        // A misspelt list would otherwise declare nothing, and every query would want an index.
        for key in root.keys.sorted() where key != "indexes" && key != "fieldOverrides" && !key.hasPrefix("$") {
            throw .invalidArgument("firestore.indexes.json holds \"indexes\" and \"fieldOverrides\", not \"\(key)\".")
        }
        for key in ["indexes", "fieldOverrides"] where root[key] != nil && !(root[key] is [Any]) {
            throw .invalidArgument("\(key) must be a list.")
        }
        var indexes: [IndexSpec] = []
        for (i, raw) in (root["indexes"] as? [Any] ?? []).enumerated() {
            let at = "indexes[\(i)]"
            guard let index = raw as? [String: Any], let group = index["collectionGroup"] as? String,
                let fields = index["fields"] as? [Any], !fields.isEmpty
            else { throw .invalidArgument("\(at) needs \"collectionGroup\" and a non-empty \"fields\" list.") }
            let scopeText = index["queryScope"] as? String ?? "COLLECTION"
            guard let scope = IndexSpec.Scope(rawValue: scopeText) else {
                throw .invalidArgument("\(at).queryScope must be COLLECTION or COLLECTION_GROUP, not \(scopeText).")
            }
            var specFields: [(FieldPath, IndexSpec.Mode)] = []
            for (j, rawField) in fields.enumerated() {
                guard let f = rawField as? [String: Any], let path = f["fieldPath"] as? String else {
                    throw .invalidArgument("\(at).fields[\(j)] needs a \"fieldPath\".")
                }
                specFields.append((try FieldPath(parsing: path), try mode(f, at: "\(at).fields[\(j)]")))
            }
            indexes.append(IndexSpec(collectionGroup: group, scope: scope, fields: specFields))
        }
        var overrides: [FieldOverride] = []
        var settings: [SingleFieldSetting] = []
        for (i, raw) in (root["fieldOverrides"] as? [Any] ?? []).enumerated() {
            let at = "fieldOverrides[\(i)]"
            guard let o = raw as? [String: Any], let group = o["collectionGroup"] as? String, let path = o["fieldPath"] as? String
            else { throw .invalidArgument("\(at) needs \"collectionGroup\" and \"fieldPath\".") }
            let field = try FieldPath(parsing: path)
            // Without "indexes" (a TTL setting alone) the field keeps its automatic indexes.
            guard let list = o["indexes"] else { continue }
            guard let entries = list as? [Any] else { throw .invalidArgument("\(at).indexes must be a list.") }
            var modes: [IndexSpec.Mode] = []
            for (j, rawIndex) in entries.enumerated() {
                guard let entry = rawIndex as? [String: Any] else { throw .invalidArgument("\(at).indexes[\(j)] must be an object.") }
                let mode = try mode(entry, at: "\(at).indexes[\(j)]")
                switch entry["queryScope"] as? String ?? "COLLECTION" {
                case "COLLECTION_GROUP": overrides.append(FieldOverride(collectionGroup: group, field: field, mode: mode))
                case "COLLECTION": modes.append(mode)
                case let other: throw .invalidArgument("\(at).indexes[\(j)].queryScope must be COLLECTION or COLLECTION_GROUP, not \(other).")
                }
            }
            settings.append(SingleFieldSetting(collectionGroup: group, field: field, modes: modes))
        }
        return (indexes, overrides, settings)
    }

    private static func mode(_ f: [String: Any], at: String) throws(FlintError) -> IndexSpec.Mode {
        if let order = f["order"] as? String {
            switch order {
            case "ASCENDING": return .ascending
            case "DESCENDING": return .descending
            default: throw .invalidArgument("\(at).order must be ASCENDING or DESCENDING, not \(order).")
            }
        }
        if let config = f["arrayConfig"] as? String {
            guard config == "CONTAINS" else { throw .invalidArgument("\(at).arrayConfig must be CONTAINS, not \(config).") }
            return .arrayContains
        }
        if let config = f["vectorConfig"] {
            // `{"dimension": 768, "flat": {}}`, the one kind of vector index there is.
            guard let object = config as? [String: Any], let number = object["dimension"] as? NSNumber, !PlainJSON.isBoolean(number),
                let dimension = PlainJSON.int64(number), (1...Int64(Limits.maxVectorDimensions)).contains(dimension)
            else {
                throw .invalidArgument("\(at).vectorConfig needs a \"dimension\" from 1 to \(Limits.maxVectorDimensions).")
            }
            guard object["flat"] is [String: Any], object.count == 2 else {
                throw .invalidArgument("\(at).vectorConfig must be {\"dimension\": \(dimension), \"flat\": {}}.")
            }
            return .vector(dimension: Int(dimension))
        }
        throw .invalidArgument("\(at) needs \"order\", \"arrayConfig\" or \"vectorConfig\".")
    }
}
