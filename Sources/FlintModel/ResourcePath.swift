/// An immutable path of segments below a database's `documents` root, such as `users/alice`.
///
/// Segments compare as Firestore orders them (`compareSegments`) and hash by their UTF-8 bytes. Use `DocumentKey` for documents and a
/// `ResourcePath` with an odd number of segments for collections.
public struct ResourcePath: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let segments: [String]

    /// Unchecked: callers that take input validate with `ResourceName` or `Validation`.
    public init(_ segments: [String]) { self.segments = segments }

    public static let root = ResourcePath([])

    public var isEmpty: Bool { segments.isEmpty }
    public var count: Int { segments.count }
    public var last: String? { segments.last }
    public var isDocumentPath: Bool { !segments.isEmpty && segments.count % 2 == 0 }
    public var isCollectionPath: Bool { segments.count % 2 == 1 }

    public func appending(_ segment: String) -> ResourcePath { ResourcePath(segments + [segment]) }
    public func appending(_ other: ResourcePath) -> ResourcePath {
        ResourcePath(segments + other.segments)
    }
    public var dropLast: ResourcePath { ResourcePath(Array(segments.dropLast())) }

    public func isPrefix(of other: ResourcePath) -> Bool {
        guard segments.count <= other.segments.count else { return false }
        for (a, b) in zip(segments, other.segments) where !equalUTF8(a, b) { return false }
        return true
    }

    public func isImmediateParent(of other: ResourcePath) -> Bool {
        other.segments.count == segments.count + 1 && isPrefix(of: other)
    }

    /// Segment-by-segment comparison (`compareSegments`); a prefix sorts first.
    public func compare(_ other: ResourcePath) -> Int {
        for (a, b) in zip(segments, other.segments) {
            let c = compareSegments(a, b)
            if c != 0 { return c }
        }
        return segments.count < other.segments.count ? -1 : (segments.count == other.segments.count ? 0 : 1)
    }

    public static func == (a: ResourcePath, b: ResourcePath) -> Bool {
        a.segments.count == b.segments.count && a.isPrefix(of: b)
    }

    public static func < (a: ResourcePath, b: ResourcePath) -> Bool { a.compare(b) < 0 }

    public func hash(into h: inout Hasher) {
        h.combine(segments.count)
        for s in segments { hashUTF8(s, into: &h) }
    }

    /// Segments joined with `/`.
    public var canonical: String { segments.joined(separator: "/") }
    public var description: String { canonical }
}

/// The path of a document: an even, non-zero number of segments. Checked when built.
public struct DocumentKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let path: ResourcePath

    public init(_ path: ResourcePath) throws(FlintError) {
        guard path.isDocumentPath else {
            throw .invalidArgument("\"\(path.canonical)\" is not a document path.")
        }
        self.path = path
    }

    /// Parses `coll/doc/...` with validation of every id; for tests, fixtures and the CLI.
    public init(parsing text: String) throws(FlintError) {
        let segments = text.split(onASCII: "/").map(String.init)
        for (i, s) in segments.enumerated() { try Validation.validateSegment(s, at: i) }
        try self.init(ResourcePath(segments))
    }

    /// Skips the check; for paths the package built itself from valid parts.
    package init(unchecked path: ResourcePath) { self.path = path }

    /// The collection holding this document.
    public var collection: ResourcePath { path.dropLast }
    public var collectionID: String { path.segments[path.count - 2] }
    public var documentID: String { path.segments[path.count - 1] }

    public static func < (a: DocumentKey, b: DocumentKey) -> Bool { a.path < b.path }
    public var description: String { path.canonical }
}

extension ResourcePath {
    /// This path as a document key, when it has an even number of segments.
    public var documentKey: DocumentKey? {
        isDocumentPath ? DocumentKey(unchecked: self) : nil
    }
}

/// A project and database pair: `projects/{project}/databases/{database}`.
public struct DatabaseID: Sendable, Hashable, CustomStringConvertible {
    public let project: String
    public let database: String

    public static let defaultDatabase = "(default)"

    public init(project: String, database: String = DatabaseID.defaultDatabase) {
        self.project = project
        self.database = database
    }

    public var name: String { "projects/\(project)/databases/\(database)" }
    public var documentsRoot: String { name + "/documents" }
    public var description: String { name }

    public static func == (a: DatabaseID, b: DatabaseID) -> Bool {
        equalUTF8(a.project, b.project) && equalUTF8(a.database, b.database)
    }

    public func hash(into h: inout Hasher) {
        hashUTF8(project, into: &h)
        hashUTF8(database, into: &h)
    }
}
