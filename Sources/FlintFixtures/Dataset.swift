import FlintEngine
import FlintModel
import Foundation

/// A fixture file: documents in Firestore's REST JSON, written as one dataset.
///
/// ```json
/// { "description": "...",
///   "documents": [ { "name": "books/b1", "fields": { "title": {"stringValue": "Dune"} } } ] }
/// ```
/// A `name` is a path below `documents` or a full resource name of the target database.
public struct Dataset: Sendable {
    public var description: String
    public var documents: [(DocumentKey, MapValue)]

    public init(description: String, documents: [(DocumentKey, MapValue)]) {
        self.description = description
        self.documents = documents
    }

    /// Parses a dataset; every problem names the document it is in.
    public static func parse(_ data: Data, database: DatabaseID) throws(FlintError) -> Dataset {
        let json: Any
        do { json = try JSONSerialization.jsonObject(with: data) } catch {
            throw .invalidArgument("The dataset is not valid JSON: \(jsonProblem(error))")
        }
        guard let root = json as? [String: Any], let docs = root["documents"] as? [Any] else {
            throw .invalidArgument("A dataset must be an object with a \"documents\" array.")
        }
        var out: [(DocumentKey, MapValue)] = []
        for (i, raw) in docs.enumerated() {
            guard let doc = raw as? [String: Any], let name = doc["name"] as? String else {
                throw .invalidArgument("documents[\(i)] must be an object with a \"name\".")
            }
            let full = name.hasPrefix("projects/") ? name : database.documentsRoot + "/" + name
            let (db, key) = try ResourceName.parseDocument(full)
            guard db == database else {
                throw .invalidArgument("documents[\(i)] \"\(name)\" belongs to another database than \(database).")
            }
            let fields = try DocumentJSON.fields(doc["fields"] ?? [String: Any](), database: database, at: name)
            out.append((key, fields))
        }
        return Dataset(description: root["description"] as? String ?? "", documents: out)
    }

    public static func load(contentsOf url: URL, database: DatabaseID) throws(FlintError) -> Dataset {
        // Said plainly: Foundation's own descriptions of these are an error domain and number.
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw FlintError(.notFound, "Cannot read \(url.path): there is no such file.")
        }
        guard !isDirectory.boolValue else { throw .invalidArgument("\(url.path) is a directory; name the dataset files in it.") }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw FlintError(.notFound, "Cannot read \(url.path): it is not readable.")
        }
        return try parse(data, database: database)
    }

    /// Writes every document into `database` in commits of at most 500 writes.
    /// Returns the number of documents written.
    @discardableResult
    public func write(into database: Database) async throws(FlintError) -> Int {
        var start = 0
        while start < documents.count {
            let end = min(start + 500, documents.count)
            _ = try await database.commit(documents[start..<end].map { Write.set($0.0, $0.1) })
            start = end
        }
        return documents.count
    }
}
