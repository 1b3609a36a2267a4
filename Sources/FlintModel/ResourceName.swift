/// Parses and validates full resource names such as
/// `projects/p/databases/(default)/documents/users/alice`, with Firestore's messages.
public struct ResourceName: Sendable, Hashable {
    public let database: DatabaseID
    /// The path below `documents`; empty for the root.
    public let path: ResourcePath

    public init(database: DatabaseID, path: ResourcePath) {
        self.database = database
        self.path = path
    }

    public var text: String {
        path.isEmpty ? database.documentsRoot : database.documentsRoot + "/" + path.canonical
    }

    /// Parses any name under `documents` (root, collection or document) and checks every id.
    public static func parse(_ name: String, kind: String = "Resource") throws(FlintError)
        -> ResourceName
    {
        guard name.utf8.count <= Limits.maxDocumentNameBytes + 1024 else {
            throw .invalidArgument(
                "\(kind) name is longer than \(Limits.maxDocumentNameBytes) bytes.")
        }
        // Split on the byte: "/" is ASCII, and splitting by Character would run grapheme
        // breaking over every name of every request.
        let parts = name.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { Substring($0) }
        guard parts.count >= 5, parts[0] == "projects", parts[2] == "databases",
            parts[4] == "documents", !parts[1].isEmpty, !parts[3].isEmpty
        else {
            throw .invalidArgument(
                "\(kind) name \"\(name)\" is not of the form projects/{project_id}/databases/{database_id}/documents/{document_path}."
            )
        }
        var offset = parts[0...4].reduce(0) { $0 + $1.utf8.count + 1 }
        var segments: [String] = []
        segments.reserveCapacity(parts.count - 5)
        for (i, part) in parts.dropFirst(5).enumerated() {
            let id = String(part)
            if id.isEmpty {
                throw .invalidArgument("\(kind) name \"\(name)\" lacks a resource id at index \(offset).")
            }
            if id == "." || id == ".." {
                throw .invalidArgument(
                    "\(kind) name \"\(name)\" contains a resource id \"\(id)\" at index \(offset).")
            }
            try Validation.validateSegment(id, at: i)
            segments.append(id)
            offset += part.utf8.count + 1
        }
        let db = DatabaseID(project: String(parts[1]), database: String(parts[3]))
        return ResourceName(database: db, path: ResourcePath(segments))
    }

    /// Parses a document name; odd paths get Firestore's `lacks "/"` message.
    public static func parseDocument(_ name: String) throws(FlintError) -> (DatabaseID, DocumentKey) {
        let parsed = try parse(name, kind: "Document")
        guard let key = parsed.path.documentKey else {
            throw .invalidArgument(
                "Document name \"\(name)\" lacks \"/\" at index \(name.utf8.count).")
        }
        try Validation.validateDocumentName(parsed.database, key)
        return (parsed.database, key)
    }

    /// Parses a parent for list and query calls: the documents root or a document.
    public static func parseParent(_ name: String) throws(FlintError) -> (DatabaseID, ResourcePath) {
        let parsed = try parse(name, kind: "Parent")
        guard parsed.path.isEmpty || parsed.path.isDocumentPath else {
            throw .invalidArgument(
                "Parent name \"\(name)\" lacks \"/\" at index \(name.utf8.count).")
        }
        return (parsed.database, parsed.path)
    }
}
