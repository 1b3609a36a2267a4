import FlintModel
import FlintQuery

/// One document version: the fields it had from `updateTime` on, or nil for a deletion.
public struct StoredVersion: Sendable {
    public var fields: MapValue?
    public var createTime: Timestamp
    public var updateTime: Timestamp

    public var state: DocumentState? {
        fields.map { DocumentState(fields: $0, createTime: createTime, updateTime: updateTime) }
    }
}

/// A document's final state after a commit, handed to the backend to store.
public struct DocumentWrite: Sendable {
    public var key: DocumentKey
    /// nil deletes the document.
    public var state: DocumentState?

    public init(key: DocumentKey, state: DocumentState?) {
        self.key = key
        self.state = state
    }
}

/// Where one database's documents live. The in-memory store is the default; a durable
/// backend stores the same versions. Confined to its database's actor.
public protocol StoreBackend: AnyObject {
    /// The document as of `readTime` (nil: latest), or nil when it did not exist then.
    func document(_ key: DocumentKey, at readTime: Timestamp?) -> DocumentState?

    /// Stores the final states of one commit, all at `commitTime`. Versions that ended before
    /// `horizon` may be forgotten.
    func apply(_ writes: [DocumentWrite], commitTime: Timestamp, horizon: Timestamp)

    /// Visits the existing documents of a collection in id order, after `startAfter` if given.
    func scan(
        collection: ResourcePath, at readTime: Timestamp?, startAfter: String?,
        _ body: (DocumentKey, DocumentState) -> Bool)

    /// Ids of the collections directly under `parent` (root or a document) that hold at
    /// least one existing document at any depth, in UTF-8 order.
    func collectionIDs(under parent: ResourcePath, at readTime: Timestamp?) -> [String]

    /// The collections below `parent` (root or a document) whose id is `collectionID` (nil: any
    /// id): only those directly below it, or with `anyDepth` those at every depth.
    func collectionPaths(under parent: ResourcePath, withID collectionID: String?, anyDepth: Bool) -> [ResourcePath]

    /// Ids of documents in `collection` that do not exist but have existing descendants.
    func missingDocumentIDs(in collection: ResourcePath, at readTime: Timestamp?) -> [String]

    /// Runs a query on the latest state through an index, already ordered, and stops once
    /// offset + limit documents are found. Nil when this backend cannot; the caller then scans.
    func runIndexed(_ q: NormalizedQuery, plan: IndexPlan, stats: inout QueryStats) -> [Document]?

    /// Forgets versions and deletions that ended before `horizon`.
    func compact(horizon: Timestamp)

    /// Deletes every document at or below `path` (empty: everything), keeping no history.
    func removeAll(under path: ResourcePath)

    /// Existing documents right now.
    var documentCount: Int { get }

    /// Visits every existing document (latest state), collection by collection, until `body`
    /// returns false.
    func forEachDocument(_ body: (DocumentKey, DocumentState) -> Bool)

    /// Makes a commit durable before it is applied; a failure refuses the commit whole.
    func persist(_ writes: [DocumentWrite], commitTime: Timestamp) throws(FlintError)

    /// Makes a `removeAll` durable.
    func persistRemoval(under path: ResourcePath) throws(FlintError)
}

extension StoreBackend {
    /// Memory keeps nothing across restarts.
    public func persist(_ writes: [DocumentWrite], commitTime: Timestamp) throws(FlintError) {}
    public func persistRemoval(under path: ResourcePath) throws(FlintError) {}
}
