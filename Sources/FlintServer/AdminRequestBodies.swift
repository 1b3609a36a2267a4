import FlintModel
import Foundation

/// The JSON bodies of the admin routes, read as the reference reads them but with each fault
/// named.
extension AdminAPI {
    /// A bulk delete's body, in the proto3 JSON of the reference's `BulkDeleteRequest` (either
    /// spelling of each field); anything else is refused with the field named.
    struct BulkDelete {
        var database: DatabaseID
        var collectionIDs: [String] = []
        var namespaceIDs: [String] = []

        init(_ body: Data) throws(FlintError) {
            let shape = #"Expected {"database": "projects/…/databases/…", "collectionIds": ["…"], "namespaceIds": ["…"]}."#
            // An empty body is an empty request, as in the reference's reading.
            guard let object = body.isEmpty ? [:] : try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
                throw .invalidArgument("The request must be a JSON object. \(shape)")
            }
            let known: Set = ["database", "collectionIds", "collection_ids", "namespaceIds", "namespace_ids"]
            if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
                throw .invalidArgument("Unknown field \"\(unknown)\" in the request. \(shape)")
            }
            func strings(_ key: String, _ alias: String) throws(FlintError) -> [String] {
                guard let value = object[key] ?? object[alias], !(value is NSNull) else { return [] }
                guard let list = value as? [Any], let texts = list as? [String] else {
                    throw .invalidArgument("\"\(key)\" must be a list of strings. \(shape)")
                }
                return texts
            }
            var name = ""
            if let value = object["database"], !(value is NSNull) {
                guard let text = value as? String else { throw .invalidArgument("\"database\" must be a string. \(shape)") }
                name = text
            }
            database = try ResourceName.parseDatabase(name)
            collectionIDs = try strings("collectionIds", "collection_ids")
            namespaceIDs = try strings("namespaceIds", "namespace_ids")
        }
    }

    /// The body of a rules load: `{"rules": {"files": [{"content", "name", "fingerprint"}]},
    /// "database": "projects/{p}/databases/{d}"}`. Anything else is refused, as the reference
    /// refuses it, but with the field named.
    struct RulesLoad {
        var files: [(content: String, name: String?)] = []
        var database: DatabaseID?

        init(_ body: Data) throws(FlintError) {
            let shape = "Expected {\"rules\": {\"files\": [{\"content\": \"…\"}]}} with an optional \"database\": \"projects/…/databases/…\"."
            // A null field is an absent one, as in proto3's JSON.
            func object(_ any: Any?, _ at: String, allowing keys: Set<String>) throws(FlintError) -> [String: Any] {
                guard let o = (any as? [String: Any])?.filter({ !($0.value is NSNull) }) else {
                    throw .invalidArgument("\(at) must be an object. \(shape)")
                }
                if let unknown = o.keys.sorted().first(where: { !keys.contains($0) }) {
                    throw .invalidArgument("Unknown field \"\(unknown)\" in \(at). \(shape)")
                }
                return o
            }
            let top = try object(try? JSONSerialization.jsonObject(with: body), "the request", allowing: ["rules", "database"])
            let rules = try object(top["rules"], "\"rules\"", allowing: ["files"])
            guard let files = rules["files"] as? [Any], !files.isEmpty else {
                throw .invalidArgument("\"rules.files\" must be a list of at least one file. \(shape)")
            }
            for (i, any) in files.enumerated() {
                let file = try object(any, "rules.files[\(i)]", allowing: ["content", "name", "fingerprint"])
                if let f = file["fingerprint"], (f as? String).flatMap({ Data(base64Encoded: $0) }) == nil {
                    throw .invalidArgument("rules.files[\(i)].fingerprint must be base64. \(shape)")
                }
                // A file without content is empty rules, which the compiler refuses by name.
                guard let content = file["content"] as? String ?? (file["content"] == nil ? "" : nil) else {
                    throw .invalidArgument("rules.files[\(i)].content must be a string. \(shape)")
                }
                self.files.append((content, file["name"] as? String))
            }
            if let name = top["database"] { database = try ResourceName.parseDatabase(name as? String ?? "\(name)") }
        }
    }

    /// The body of an export or import: `{"export_directory"}` (or Flint's `"directory"`), with
    /// an optional `"database"` and, for an export, `"export_name"`. As in proto3's JSON, a
    /// field may be spelt in lowerCamelCase, and a null one is absent; as on the reference, an
    /// unknown field is refused.
    struct TransferRequest {
        let directory: String
        let name: String?
        let database: Any?

        init(_ body: Data, naming: Bool) throws(FlintError) {
            let shape = naming
                ? #"Expected {"export_directory": "/path"} with an optional "database": "projects/…/databases/…" and "export_name": "…"."#
                : #"Expected {"export_directory": "/path"} with an optional "database": "projects/…/databases/…"."#
            guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
                throw .invalidArgument("The request must be a JSON object. \(shape)")
            }
            var spellings = ["export_directory": "export_directory", "exportDirectory": "export_directory", "directory": "export_directory", "database": "database"]
            if naming {
                spellings["export_name"] = "export_name"
                spellings["exportName"] = "export_name"
            }
            var fields: [String: Any] = [:]
            for (key, value) in object.sorted(by: { $0.key < $1.key }) where !(value is NSNull) {
                guard let field = spellings[key] else { throw .invalidArgument("Unknown field \"\(key)\" in the request. \(shape)") }
                guard fields.updateValue(value, forKey: field) == nil else { throw .invalidArgument("\"\(field)\" is given twice. \(shape)") }
            }
            guard let directory = fields["export_directory"] as? String, !directory.isEmpty else { throw .invalidArgument(shape) }
            guard fields["export_name"].map({ $0 is String }) ?? true else {
                throw .invalidArgument("\"export_name\" must be a string. \(shape)")
            }
            self.directory = directory
            name = fields["export_name"] as? String
            database = fields["database"]
        }
    }
}
