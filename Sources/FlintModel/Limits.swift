/// Firestore's production limits, which Flint enforces.
public enum Limits {
    public static let maxIDBytes = 1500
    public static let maxDocumentNameBytes = 6 * 1024
    public static let maxDocumentBytes = 1_048_576
    public static let maxDepth = 20
    public static let maxVectorDimensions = 2048
    public static let maxRequestBytes = 10 * 1_048_576
    public static let maxFieldNameBytes = 1500
    /// A field path, its segments joined by dots.
    public static let maxFieldPathBytes = 1500
    /// One string or bytes value: 1 MiB less 89 bytes.
    public static let maxFieldValueBytes = 1_048_487
    /// A value a query compares with, by storage size (what an index entry can hold).
    public static let maxQueryValueBytes = 1500

    /// Checked where a vector is read, before its components, as the reference checks it.
    public static func checkDimensions(_ count: Int) throws(FlintError) {
        if count > maxVectorDimensions {
            throw .invalidArgument("Vectors must be at most \(maxVectorDimensions) dimensions.")
        }
    }
}

/// Checks of ids, names and document contents, with Firestore's messages where it has good ones.
public enum Validation {
    /// A collection id: 1–1,500 bytes, not `.` or `..`, no `/`, not `__.*__`.
    public static func validateCollectionID(_ id: String, checkingLength: Bool = true) throws(FlintError) {
        try validateIDShape(id, noun: "Collection id", lengthElement: checkingLength ? "kind" : nil)
        if isReserved(id) { throw .invalidArgument("Collection id \"\(id)\" is invalid because it is reserved.") }
    }

    /// The length of the collection a query or listing reads, worded as the reference words it
    /// for queries. Its form (`validateCollectionID` without the length) is checked earlier,
    /// where the reference reads it.
    public static func checkQueriedCollectionIDLength(_ id: String) throws(FlintError) {
        if id.utf8.count > Limits.maxIDBytes { throw .invalidArgument("The query kind is longer than \(Limits.maxIDBytes) bytes.") }
    }

    /// A document id: as a collection id, except that a numeric id (`__id<n>__`, see `NumericID`)
    /// is allowed.
    public static func validateDocumentID(_ id: String, checkingLength: Bool = true) throws(FlintError) {
        try validateIDShape(id, lengthElement: checkingLength ? "name" : nil)
        guard isReserved(id) else { return }
        switch NumericID.parse(id) {
        case .valid: return
        case .outOfRange: throw .invalidArgument("Resource id \"\(id)\" is invalid because it is not a 64 bit integer.")
        case .notNumeric: throw .invalidArgument("Resource id \"\(id)\" is invalid because it is reserved.")
        }
    }

    /// The id at `index` of a path: collection ids at even positions, document ids at odd ones.
    /// Lookups and deletes leave the length unchecked, as the reference does: a name too long
    /// to store names no document, so a read finds nothing and a delete removes nothing.
    public static func validateSegment(_ id: String, at index: Int, checkingLength: Bool = true) throws(FlintError) {
        if index % 2 == 0 {
            try validateCollectionID(id, checkingLength: checkingLength)
        } else {
            try validateDocumentID(id, checkingLength: checkingLength)
        }
    }

    /// The length of each id of a stored document's path, which the reference checks only when it
    /// comes to store the write (after every write was read), in path order.
    public static func validateIDLengths(_ path: ResourcePath) throws(FlintError) {
        for (index, id) in path.segments.enumerated() {
            try validateLength(id, element: index % 2 == 0 ? "kind" : "name")
        }
    }

    /// The reference words the limit after its storage layer: a collection id is a key's
    /// "kind", a document id its "name".
    private static func validateLength(_ id: String, element: String) throws(FlintError) {
        if id.utf8.count > Limits.maxIDBytes {
            throw .invalidArgument("The key path element \(element) is longer than \(Limits.maxIDBytes) bytes.")
        }
    }

    /// The checks every id gets: length (unless `lengthElement` is nil), `.` and `..`, and `/`.
    private static func validateIDShape(_ id: String, noun: String = "Resource id", lengthElement: String?) throws(FlintError) {
        if id.isEmpty { throw .invalidArgument("Resource id must not be empty.") }
        if let lengthElement { try validateLength(id, element: lengthElement) }
        if id == "." || id == ".." { throw .invalidArgument("\(noun) \"\(id)\" is invalid because it is reserved.") }
        if id.utf8.contains(UInt8(ascii: "/")) {
            throw .invalidArgument("\(noun) \"\(id)\" is invalid because it contains \"/\".")
        }
    }

    /// `__anything__` is reserved for Firestore itself; `____`, with nothing between, is not
    /// (probed on the reference, as a field, an id, a project and a database).
    public static func isReserved(_ name: String) -> Bool {
        let u = name.utf8
        return u.count > 4 && u.starts(with: "__".utf8) && u.reversed().starts(with: "__".utf8)
    }

    /// Where documents may be stored: Firestore keeps `__…__` project and database ids for
    /// itself, and database ids to 100 bytes of letters, digits, `-`, `_` and `.` (or
    /// `(default)`). Reads and deletes there are let be, as on the reference; they find nothing.
    public static func validateWritable(_ db: DatabaseID) throws(FlintError) {
        if isReserved(db.project) { throw .invalidArgument("The app id \"\(db.project)\" is reserved.") }
        if db.database.utf8.count > 100 { throw .invalidArgument("The database is longer than 100 bytes.") }
        if isReserved(db.database) { throw .invalidArgument("The database \"\(db.database)\" is reserved.") }
        try validateDatabaseCharacters(db.database)
    }

    /// The database a stored reference or a `__name__` operand names: 100 bytes at most, of
    /// the same characters as a writable database; a reserved id is let be, as on the reference.
    public static func validateReferencedDatabase(_ db: DatabaseID) throws(FlintError) {
        if db.database.utf8.count > 100 { throw .invalidArgument("The database is longer than 100 bytes.") }
        try validateDatabaseCharacters(db.database)
    }

    private static func validateDatabaseCharacters(_ database: String) throws(FlintError) {
        if database != DatabaseID.defaultDatabase, !database.utf8.allSatisfy(isDatabaseIDByte) {
            throw .invalidArgument("Illegal string \"\(database)\" in database.")
        }
    }

    private static func isDatabaseIDByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    public static func validateDocumentName(_ db: DatabaseID, _ key: DocumentKey) throws(FlintError) {
        let bytes = key.path.canonical.utf8.count
        if bytes > Limits.maxDocumentNameBytes {
            throw .invalidArgument(
                "Document name \"\(db.documentsRoot)/\(key.path.canonical)\" is longer than \(Limits.maxDocumentNameBytes) bytes."
            )
        }
    }

    /// What of a document's fields to check. The reference checks a request in two passes: first
    /// what it refuses wherever it stands (reserved names, `__type__` that is not a string,
    /// arrays in arrays, vectors' shapes, coordinates), in every write, then what only a stored
    /// document must keep (empty or long names, depth, value sizes, referenced databases, NaN in
    /// a vector, a `__type__` naming no type). Fields a write's mask may leave out get only the
    /// first; the second runs on what the mask selects, once it is in the document. (A request
    /// read off the wire has had the first pass's names, vectors and coordinates checked as each
    /// value was read; see `Wire.value`.)
    public enum FieldChecks: Sendable {
        /// Both passes.
        case stored
        /// The first pass.
        case anywhere
        /// The second pass, for fields that passed the first.
        case storedOnly
    }

    /// Checks field names, nesting and array rules of a document's fields (not its size).
    public static func validateFields(_ fields: MapValue, _ checks: FieldChecks = .stored) throws(FlintError) {
        if checks != .storedOnly { try validateMap(fields, path: [], pathBytes: 0, depth: 0, stored: false) }
        if checks != .anywhere { try validateMap(fields, path: [], pathBytes: 0, depth: 0, stored: true) }
    }

    /// A problem below a top-level field: the reference names only that field.
    private static func nested(_ path: [String]) -> FlintError {
        .invalidArgument("Property \(path[0]) contains an invalid nested entity.")
    }

    /// `pathBytes`: the bytes of `path` joined by dots.
    private static func validateMap(_ map: MapValue, path: [String], pathBytes: Int, depth: Int, stored: Bool) throws(FlintError) {
        for entry in map.entries {
            let name = entry.key
            if name.isEmpty, stored {
                throw path.isEmpty ? .invalidArgument("The property.name is the empty string.") : nested(path)
            }
            let bytes = path.isEmpty ? name.utf8.count : pathBytes + 1 + name.utf8.count
            if bytes > Limits.maxFieldNameBytes, stored {
                throw path.isEmpty ? .invalidArgument("The property.name is longer than \(Limits.maxFieldNameBytes) bytes.") : nested(path)
            }
            if isReserved(name), stored || !isTypeMarker(name, nested: !path.isEmpty, valueIsString: isString(entry.value)) {
                throw reserved(name, entry.value, path)
            }
            try validateValue(entry.value, path: path + [name], pathBytes: bytes, depth: depth, inArray: false, stored: stored)
        }
    }

    /// A field's name as the reference checks it while it reads the value, in queries as in
    /// writes: a reserved name is refused, except a nested `__type__` string (a vector's marker;
    /// naming any other type, it is refused only where stored).
    public static func checkFieldName(_ name: String, nested: Bool, valueIsString: Bool) throws(FlintError) {
        guard isReserved(name), !isTypeMarker(name, nested: nested, valueIsString: valueIsString) else { return }
        throw reservedName(name, nested: nested)
    }

    /// What reading a value off the wire refuses (`Wire.value`), for a value built in process,
    /// such as a query's operand: a reserved name in a map (before its value; a nested
    /// `__type__` after it, which only a string may be), and an empty vector.
    public static func checkReadable(_ value: Value) throws(FlintError) {
        switch value {
        case .map(let m):
            for e in m.entries {
                if e.key == "__type__" {
                    try checkReadable(e.value)
                    try checkFieldName(e.key, nested: true, valueIsString: isString(e.value))
                } else {
                    try checkFieldName(e.key, nested: true, valueIsString: false)
                    try checkReadable(e.value)
                }
            }
        case .array(let items):
            for item in items { try checkReadable(item) }
        case .vector(let components):
            if components.isEmpty { throw .invalidArgument("Cannot have a zero length vector.") }
        case .null, .boolean, .integer, .double, .timestamp, .string, .bytes, .reference, .geoPoint:
            break
        }
    }

    private static func isTypeMarker(_ name: String, nested: Bool, valueIsString: Bool) -> Bool {
        nested && valueIsString && name == "__type__"
    }

    private static func isString(_ v: Value) -> Bool { if case .string = v { true } else { false } }

    /// The reference emulator words a reserved name by where it stands: a top-level field, a
    /// nested `__type__` (the marker of a typed map such as a vector), or any other nested name.
    private static func reserved(_ name: String, _ value: Value, _ path: [String]) -> FlintError {
        isTypeMarker(name, nested: !path.isEmpty, valueIsString: isString(value)) ? nested(path) : reservedName(name, nested: !path.isEmpty)
    }

    private static func reservedName(_ name: String, nested: Bool) -> FlintError {
        guard nested else { return .invalidArgument("field name \(name) is reserved") }
        guard name == "__type__" else { return .invalidArgument("field name '\(name)' is reserved.") }
        return .invalidArgument("Field __type__ is not a string.")
    }

    private static func validateValue(_ value: Value, path: [String], pathBytes: Int, depth: Int, inArray: Bool, stored: Bool)
        throws(FlintError)
    {
        switch value {
        case .map(let m):
            if stored { try checkDepth(depth + 1, path) }
            try validateMap(m, path: path, pathBytes: pathBytes, depth: depth + 1, stored: stored)
        case .array(let items):
            if inArray { throw .invalidArgument("Cannot convert an array value in an array value.") }
            if stored { try checkDepth(depth + 1, path) }
            for item in items {
                try validateValue(item, path: path, pathBytes: pathBytes, depth: depth + 1, inArray: true, stored: stored)
            }
        case .geoPoint(let g):
            _ = try GeoPoint(latitude: g.latitude, longitude: g.longitude)
        case .vector(let components):
            // An empty vector is named first, as the reference names it, even inside an array.
            if components.isEmpty { throw .invalidArgument("Cannot have a zero length vector.") }
            try Limits.checkDimensions(components.count)
            if inArray { throw .invalidArgument("Cannot convert a vector value in an array value.") }
            // Only stored vectors: a query's vector may hold NaN, as on the reference.
            if stored, components.contains(where: \.isNaN) {
                throw path.count == 1 ? .invalidArgument("Vector cannot contain NaN values.") : nested(path)
            }
        case .string(let s):
            if stored { try checkValueSize(s.utf8.count, path) }
        case .bytes(let b):
            if stored { try checkValueSize(b.count, path) }
        case .reference(let r) where stored:
            // Inside a map the reference names only the top-level field, as for any other value.
            do throws(FlintError) { try validateReferencedDatabase(r.database) } catch {
                throw path.count == 1 ? error : nested(path)
            }
        case .null, .boolean, .integer, .double, .timestamp, .reference:
            break
        }
    }

    /// Production's field value limit; a value in a top-level array counts as that field's.
    private static func checkValueSize(_ bytes: Int, _ path: [String]) throws(FlintError) {
        guard bytes > Limits.maxFieldValueBytes else { return }
        guard path.count == 1 else { throw nested(path) }
        throw .invalidArgument("The value of property \"\(path[0])\" is longer than \(Limits.maxFieldValueBytes) bytes.")
    }

    /// Deeper than 20 maps and arrays: the reference names only the top-level field.
    private static func checkDepth(_ depth: Int, _ path: [String]) throws(FlintError) {
        if depth > Limits.maxDepth { throw nested(path) }
    }

    /// Rejects documents whose storage size exceeds 1 MiB, in the reference emulator's words.
    public static func validateSize(_ key: DocumentKey, _ fields: MapValue) throws(FlintError) {
        if StorageSize.document(key, fields) > Limits.maxDocumentBytes {
            throw .invalidArgument("maximum entity size is \(Limits.maxDocumentBytes) bytes")
        }
    }
}

/// Firestore's documented storage-size rules, used for the 1 MiB document limit.
public enum StorageSize {
    /// String sizes count UTF-8 bytes plus one.
    public static func string(_ s: String) -> Int { s.utf8.count + 1 }

    /// Each collection and document id, plus 16. A numeric document id (`__id7__`) is an
    /// integer, 8 bytes, however many digits it is written with.
    public static func documentName(_ path: ResourcePath) -> Int {
        path.segments.enumerated().reduce(16) { total, segment in
            let isDocumentID = segment.offset % 2 == 1
            return total + (isDocumentID && NumericID.value(segment.element) != nil ? 8 : string(segment.element))
        }
    }

    public static func value(_ v: Value) -> Int {
        switch v {
        case .null, .boolean: 1
        case .integer, .double, .timestamp: 8
        case .geoPoint: 16
        case .string(let s): string(s)
        case .bytes(let b): b.count
        case .reference(let r): documentName(r.key.path)
        case .array(let items): items.reduce(0) { $0 + value($1) }
        case .map(let m): fields(m)
        // Counted by its dimensions alone, not as the map it is written as.
        case .vector(let v): 8 * v.count
        }
    }

    public static func fields(_ m: MapValue) -> Int {
        m.entries.reduce(0) { $0 + string($1.key) + value($1.value) }
    }

    /// Name size + field sizes + 32 bytes of document overhead.
    public static func document(_ key: DocumentKey, _ fields: MapValue) -> Int {
        documentName(key.path) + self.fields(fields) + 32
    }
}
