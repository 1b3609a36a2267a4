import FlintModel
import FlintQuery
import FlintStore

/// The in-memory store, with every commit written through to a `DurableFile` first. Reads and
/// queries are the memory store's; after a restart the latest state of every document is
/// restored (earlier versions, for reads at a past time, are not kept across restarts).
public final class DurableStore: StoreBackend {
    private let memory = MemoryStore()
    private let file: DurableFile
    private let database: DatabaseID

    public init(file: DurableFile, database: DatabaseID) {
        self.file = file
        self.database = database
    }

    /// Puts back a stored document, with its own create and update times.
    public func restore(_ key: DocumentKey, _ state: DocumentState) {
        memory.apply([DocumentWrite(key: key, state: state)], commitTime: state.updateTime, horizon: state.updateTime)
    }

    public func persist(_ writes: [DocumentWrite], commitTime: Timestamp) throws(FlintError) {
        try file.write(database, writes, commitTime: commitTime)
    }

    public func persistRemoval(under path: ResourcePath) throws(FlintError) {
        try file.removeAll(database, under: path)
    }

    public func document(_ key: DocumentKey, at readTime: Timestamp?) -> DocumentState? { memory.document(key, at: readTime) }

    public func apply(_ writes: [DocumentWrite], commitTime: Timestamp, horizon: Timestamp) {
        memory.apply(writes, commitTime: commitTime, horizon: horizon)
    }

    public func scan(collection: ResourcePath, at readTime: Timestamp?, startAfter: String?, _ body: (DocumentKey, DocumentState) -> Bool) {
        memory.scan(collection: collection, at: readTime, startAfter: startAfter, body)
    }

    public func collectionIDs(under parent: ResourcePath, at readTime: Timestamp?) -> [String] { memory.collectionIDs(under: parent, at: readTime) }

    public func collectionPaths(under parent: ResourcePath, withID collectionID: String?, anyDepth: Bool) -> [ResourcePath] {
        memory.collectionPaths(under: parent, withID: collectionID, anyDepth: anyDepth)
    }

    public func missingDocumentIDs(in collection: ResourcePath, at readTime: Timestamp?) -> [String] {
        memory.missingDocumentIDs(in: collection, at: readTime)
    }

    public func runIndexed(_ q: NormalizedQuery, plan: IndexPlan, stats: inout QueryStats) -> [Document]? {
        memory.runIndexed(q, plan: plan, stats: &stats)
    }

    public func compact(horizon: Timestamp) { memory.compact(horizon: horizon) }

    public func removeAll(under path: ResourcePath) { memory.removeAll(under: path) }

    public var documentCount: Int { memory.documentCount }

    public func forEachDocument(_ body: (DocumentKey, DocumentState) -> Bool) { memory.forEachDocument(body) }
}
