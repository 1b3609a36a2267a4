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

    /// Parses any name under `documents` (root, collection or document) and checks every id,
    /// element by element as the reference emulator does, naming the first element missing or
    /// wrong and where it should start. `kind` begins the messages ("Document name …"); a
    /// reference value's name has two messages of its own. `checkingIDLengths: false` is for
    /// names only looked up or deleted (see `Validation.validateSegment`).
    public static func parse(
        _ name: String, kind: String = "Resource", reference: Bool = false, checkingIDLengths: Bool = true
    ) throws(FlintError) -> ResourceName
    {
        guard name.utf8.count <= Limits.maxDocumentNameBytes + 1024 else {
            throw .invalidArgument(
                "\(kind) name is longer than \(Limits.maxDocumentNameBytes) bytes.")
        }
        let elements = Elements(name, kind: kind)
        let database = try elements.database()
        let parts = elements.parts
        if reference && parts.count == 4 { throw .invalidArgument("Non-document resource reference value not supported.") }
        // Anything but `documents` there, even nothing when more follows, is no resource the
        // reference knows; a lone trailing `/` is told as such below.
        if reference, parts.count > 4, parts[4] != "documents", !(parts[4].isEmpty && parts.count == 5) {
            throw .invalidArgument("Resource \"\(name)\" is not recognized.")
        }
        try elements.literal(4, "documents")
        if parts.count == 6 && parts[5].isEmpty { throw elements.fail("is invalid: Omit trailing \"/\".") }
        var segments: [String] = []
        segments.reserveCapacity(parts.count - 5)
        for i in parts.indices.dropFirst(5) {
            let index = i - 5
            let what = index % 2 == 0 ? "a collection id" : "a resource id"
            let id = String(try elements.element(i, what))
            try elements.refuseDots(id, i, what)
            try Validation.validateSegment(id, at: index, checkingLength: checkingIDLengths)
            segments.append(id)
        }
        return ResourceName(database: database, path: ResourcePath(segments))
    }

    /// Parses a `projects/{p}/databases/{d}` name, with the reference's messages.
    public static func parseDatabase(_ name: String) throws(FlintError) -> DatabaseID {
        let elements = Elements(name, kind: "Database")
        let database = try elements.database()
        if elements.parts.count == 5 && elements.parts[4].isEmpty { throw elements.fail("has invalid trailing \"/\".") }
        if elements.parts.count > 4 { throw elements.fail("has extra characters at index \(elements.start(4) - 1).") }
        return database
    }

    /// A name split into its `/`-separated elements, read in order.
    private struct Elements {
        let name: String
        let kind: String
        let parts: [Substring]

        init(_ name: String, kind: String) {
            self.name = name
            self.kind = kind
            // Split on the byte: splitting by Character would run grapheme breaking over every
            // name of every request, and miss a `/` that a combining mark follows.
            parts = name.split(onASCII: "/")
        }

        /// Where element `i` starts; worked out only for a message. Positions count UTF-16
        /// units, as the reference (a Java program) counts them.
        func start(_ i: Int) -> Int { parts[..<i].reduce(0) { $0 + $1.utf16.count + 1 } }

        func fail(_ problem: String) -> FlintError { .invalidArgument("\(kind) name \"\(name)\" \(problem)") }

        /// The element at `i`, which must be there and not empty.
        func element(_ i: Int, _ what: String) throws(FlintError) -> Substring {
            guard i < parts.count else { throw fail("lacks \"/\" at index \(name.utf16.count).") }
            if parts[i].isEmpty {
                if i > 0 && i == parts.count - 1 { throw fail("has invalid trailing \"/\".") }
                throw fail("lacks \(what) at index \(start(i)).")
            }
            return parts[i]
        }

        /// The reference reads a literal as a prefix, so `databasesx` lacks the "/" after
        /// `databases`, not the word.
        func literal(_ i: Int, _ word: String) throws(FlintError) {
            let found = try element(i, "\"\(word)\"")
            guard !found.utf8.elementsEqual(word.utf8) else { return }
            // By bytes: `documents` and a combining mark end in another Character than `s`.
            if found.utf8.starts(with: word.utf8) { throw fail("lacks \"/\" at index \(start(i) + word.utf16.count).") }
            throw fail("lacks \"\(word)\" at index \(start(i)).")
        }

        /// The project and database the first four elements name.
        func database() throws(FlintError) -> DatabaseID {
            try literal(0, "projects")
            let project = try element(1, "a project id")
            try refuseDots(project, 1, "a project id")
            try literal(2, "databases")
            let database = try element(3, "a database id")
            try refuseDots(database, 3, "a database id")
            return DatabaseID(project: String(project), database: String(database))
        }

        /// `.` and `..` name no resource at any level (a path would read them as steps).
        func refuseDots(_ id: some StringProtocol, _ i: Int, _ what: String) throws(FlintError) {
            if id == "." || id == ".." { throw fail("contains \(what) \"\(id)\" at index \(start(i)).") }
        }
    }

    /// Parses a document name, or with `reference` the name a reference value holds; odd
    /// paths get Firestore's `lacks "/"` message.
    public static func parseDocument(
        _ name: String, reference: Bool = false, checkingIDLengths: Bool = true
    ) throws(FlintError) -> (DatabaseID, DocumentKey) {
        let kind = reference ? "Resource" : "Document"
        let parsed = try parse(name, kind: kind, reference: reference, checkingIDLengths: checkingIDLengths)
        if parsed.path.isEmpty {
            throw .invalidArgument(
                "\(kind) name \"\(name)\" is invalid: Omit \"/documents\" when referencing a database (except as the parent of a document).")
        }
        guard let key = parsed.path.documentKey else {
            throw .invalidArgument(
                "\(kind) name \"\(name)\" lacks \"/\" at index \(name.utf16.count).")
        }
        try Validation.validateDocumentName(parsed.database, key)
        return (parsed.database, key)
    }

    /// Parses a parent for list and query calls: the documents root or a document.
    public static func parseParent(_ name: String, checkingIDLengths: Bool = true) throws(FlintError) -> (DatabaseID, ResourcePath) {
        let parsed = try parse(name, kind: "Document parent", checkingIDLengths: checkingIDLengths)
        guard parsed.path.isEmpty || parsed.path.isDocumentPath else {
            throw .invalidArgument(
                "Document parent name \"\(name)\" lacks \"/\" at index \(name.utf16.count).")
        }
        return (parsed.database, parsed.path)
    }
}
