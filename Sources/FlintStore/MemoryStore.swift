import FlintModel
import FlintQuery

/// The default backend: documents in ordered per-collection maps, with recent versions kept
/// for reads at a past time.
public final class MemoryStore: StoreBackend {
    struct Record {
        var latest: StoredVersion
        /// Earlier versions, oldest first; usually empty (an empty array allocates nothing).
        var older: [StoredVersion] = []

        func version(at t: Timestamp?) -> StoredVersion? {
            guard let t else { return latest }
            if latest.updateTime <= t { return latest }
            for v in older.reversed() where v.updateTime <= t { return v }
            return nil
        }

        /// Drops versions superseded before `horizon`; leading deletions carry no information.
        mutating func prune(horizon: Timestamp) {
            guard !older.isEmpty else { return }
            var drop = 0
            while drop < older.count {
                let next = drop + 1 < older.count ? older[drop + 1].updateTime : latest.updateTime
                if next <= horizon { drop += 1 } else { break }
            }
            while drop < older.count, older[drop].fields == nil { drop += 1 }
            if drop > 0 { older.removeFirst(drop) }
        }
    }

    /// A class, so a lookup retains one object instead of copying the maps it holds.
    final class Collection {
        var documents = SortedMap<DocumentIDKey, Record>()
        var liveCount = 0
        /// Documents of this collection that have subcollections.
        var parentsOfSubcollections: Set<DocumentIDKey> = []
        /// Indexes built for the queries run so far, kept current on every write.
        var indexes: [IndexDefinition: CompositeIndex<DocumentIDKey>] = [:]

        func index(_ definition: IndexDefinition) -> CompositeIndex<DocumentIDKey> {
            if let existing = indexes[definition] { return existing }
            let index = CompositeIndex<DocumentIDKey>(definition)
            documents.forEach { id, record in
                if let state = record.latest.state { index.add(id: id, state: state) }
                return true
            }
            indexes[definition] = index
            return index
        }
    }

    /// Collections by path; looked up with a slice of a document's path, so no path is built.
    private var collections: [PathKey: Collection] = [:]
    /// The collection found last: runs of requests usually stay in one collection, and
    /// comparing a few segments is cheaper than hashing them.
    private var lastFound: (key: PathKey, collection: Collection)?
    /// Collection paths by their last id, for collection-group queries.
    private var collectionsByID: [UTF8Key: [ResourcePath]] = [:]
    /// Indexes over whole collection groups, by collection id, kept current on every write.
    private var groupIndexes: [UTF8Key: [IndexDefinition: CompositeIndex<DocumentKey>]] = [:]
    /// Subcollection ids under each document path (the root is the empty path).
    private var subcollections: [ResourcePath: Set<UTF8Key>] = [:]
    public private(set) var documentCount = 0

    public init() {}

    public func document(_ key: DocumentKey, at readTime: Timestamp?) -> DocumentState? {
        collection(PathKey(collectionOf: key))?.documents[DocumentIDKey(key.documentID)]?.version(at: readTime)?.state
    }

    public func apply(_ writes: [DocumentWrite], commitTime: Timestamp, horizon: Timestamp) {
        for write in writes {
            let collectionPath = PathKey(collectionOf: write.key)
            let id = DocumentIDKey(write.key.documentID)
            let collection = self.collection(collectionPath) ?? registerCollection(write.key.collection)
            let newVersion = StoredVersion(
                fields: write.state?.fields,
                createTime: write.state?.createTime ?? commitTime,
                updateTime: commitTime)
            let groupIndexesHere = groupIndexes.isEmpty ? nil : groupIndexes[UTF8Key(write.key.collectionID)]
            let indexed = !collection.indexes.isEmpty || groupIndexesHere != nil
            var previous: MapValue?
            let delta: Int = collection.documents.update(id) { record in
                previous = record?.latest.fields
                let existed = previous != nil
                if var r = record {
                    r.older.append(r.latest)
                    r.latest = newVersion
                    r.prune(horizon: horizon)
                    record = r
                } else {
                    record = Record(latest: newVersion)
                }
                // A deletion with no earlier version to read needs no tombstone.
                if newVersion.fields == nil, record?.older.isEmpty == true { record = nil }
                return (newVersion.fields != nil ? 1 : 0) - (existed ? 1 : 0)
            }
            collection.liveCount += delta
            documentCount += delta
            guard indexed else { continue }
            let stored = write.state.map { DocumentState(fields: $0.fields, createTime: newVersion.createTime, updateTime: commitTime) }
            for index in collection.indexes.values {
                if let previous { index.remove(id: id, fields: previous) }
                if let stored { index.add(id: id, state: stored) }
            }
            for index in groupIndexesHere?.values ?? [:].values {
                if let previous { index.remove(id: write.key, fields: previous) }
                if let stored { index.add(id: write.key, state: stored) }
            }
        }
    }

    public func forEachDocument(_ body: (DocumentKey, DocumentState) -> Bool) {
        for (pathKey, collection) in collections {
            let path = pathKey.path
            var going = true
            collection.documents.forEach { id, record in
                guard let state = record.latest.state else { return true }
                going = body(DocumentKey(unchecked: path.appending(id.string)), state)
                return going
            }
            if !going { return }
        }
    }

    private func collection(_ key: PathKey) -> Collection? {
        if let last = lastFound, last.key == key { return last.collection }
        guard let found = collections[key] else { return nil }
        lastFound = (key, found)
        return found
    }

    @discardableResult
    private func registerCollection(_ path: ResourcePath) -> Collection {
        let collection = Collection()
        collections[PathKey(path)] = collection
        collectionsByID[UTF8Key(path.last ?? ""), default: []].append(path)
        let parent = path.dropLast
        subcollections[parent, default: []].insert(UTF8Key(path.last ?? ""))
        if let parentKey = parent.documentKey {
            let grandparent = collections[PathKey(collectionOf: parentKey)] ?? registerCollection(parentKey.collection)
            grandparent.parentsOfSubcollections.insert(DocumentIDKey(parentKey.documentID))
        }
        return collection
    }

    public func scan(
        collection: ResourcePath, at readTime: Timestamp?, startAfter: String?,
        _ body: (DocumentKey, DocumentState) -> Bool
    ) {
        guard let c = collections[PathKey(collection)] else { return }
        let start = startAfter.map { c.documents.index(from: DocumentIDKey($0), inclusive: false) }
        c.documents.forEach(from: start) { id, record in
            guard let state = record.version(at: readTime)?.state else { return true }
            return body(DocumentKey(unchecked: collection.appending(id.string)), state)
        }
    }

    public func collectionIDs(under parent: ResourcePath, at readTime: Timestamp?) -> [String] {
        guard let ids = subcollections[parent] else { return [] }
        return ids.sorted().filter { hasDocuments(parent.appending($0.string), at: readTime) }
            .map(\.string)
    }

    public func runIndexed(_ q: NormalizedQuery, plan: IndexPlan, stats: inout QueryStats) -> [Document]? {
        // A query without a collection id has no index of its own; the caller scans.
        guard q.query.collectionID != nil else { return nil }
        let wanted = q.query.limit.map { q.query.offset + $0 } ?? Int.max
        if wanted == 0 { return [] }
        var out: [Document] = []
        var scanned = 0
        // Each prefix's entries come in the query's order; each read stops once it alone has
        // found enough, and several are merged afterwards.
        var taken = 0
        func consider(_ key: DocumentKey, _ state: DocumentState) -> Bool {
            scanned += 1
            if plan.coversFilter || q.filterMatches(key, state.fields), q.withinCursors(key, state.fields) {
                out.append(Document(key: key, fields: state.fields, createTime: state.createTime, updateTime: state.updateTime))
                taken += 1
            }
            return taken < wanted
        }
        defer {
            stats.indexEntriesScanned += scanned
            stats.documentsScanned += out.count
        }
        if q.query.allDescendants, let collectionID = q.query.collectionID {
            let index = groupIndex(collectionID, plan.definition)
            for prefix in plan.prefixes {
                taken = 0
                index.scan(prefix: prefix) { key, state in
                    // A group index spans the whole database; a scoped group keeps its own part.
                    guard q.query.parent.isEmpty || q.inScope(key) else { return true }
                    return consider(key, state)
                }
            }
            return window(out, of: q, merging: plan.prefixes.count > 1, wanted: wanted)
        }
        guard let path = q.collection, let collection = collection(PathKey(path)) else { return [] }
        let consider = { (id: DocumentIDKey, state: DocumentState) in consider(DocumentKey(unchecked: path.appending(id.string)), state) }
        if plan.definition.components.isEmpty && !plan.definition.nameDescending {
            // Ordered by name only: the collection itself is that index.
            collection.documents.forEach { id, record in
                guard let state = record.latest.state else { return true }
                return consider(id, state)
            }
        } else {
            let index = collection.index(plan.definition)
            for prefix in plan.prefixes {
                taken = 0
                index.scan(prefix: prefix, consider)
            }
        }
        return window(out, of: q, merging: plan.prefixes.count > 1, wanted: wanted)
    }

    /// The query's window of `found`: merged into the query's order first when it came from
    /// several reads of an index (a document holding several array-contains-any values is
    /// found by each, and kept once), then cut to the offset and limit.
    private func window(_ found: [Document], of q: NormalizedQuery, merging: Bool, wanted: Int) -> [Document] {
        guard merging else { return Array(found.dropFirst(q.query.offset)) }
        var seen = Set<DocumentKey>()
        let ordered = found.filter { seen.insert($0.key).inserted }
            .sorted { q.compare(($0.key, $0.fields), ($1.key, $1.fields)) < 0 }
        return Array(ordered.prefix(wanted).dropFirst(q.query.offset))
    }

    /// The index over every collection named `collectionID`, built on first use.
    private func groupIndex(_ collectionID: String, _ definition: IndexDefinition) -> CompositeIndex<DocumentKey> {
        let id = UTF8Key(collectionID)
        if let existing = groupIndexes[id]?[definition] { return existing }
        let index = CompositeIndex<DocumentKey>(definition)
        for path in collectionsByID[id] ?? [] {
            collections[PathKey(path)]?.documents.forEach { docID, record in
                if let state = record.latest.state { index.add(id: DocumentKey(unchecked: path.appending(docID.string)), state: state) }
                return true
            }
        }
        groupIndexes[id, default: [:]][definition] = index
        return index
    }

    public func collectionPaths(under parent: ResourcePath, withID collectionID: String?, anyDepth: Bool) -> [ResourcePath] {
        if let collectionID {
            guard anyDepth else { return [parent.appending(collectionID)] }
            return (collectionsByID[UTF8Key(collectionID)] ?? []).filter { parent.isPrefix(of: $0) && $0.count > parent.count }
        }
        var out: [ResourcePath] = []
        func visit(_ parent: ResourcePath) {
            for id in subcollections[parent] ?? [] {
                let path = parent.appending(id.string)
                out.append(path)
                guard anyDepth, let c = collections[PathKey(path)] else { continue }
                for documentID in c.parentsOfSubcollections { visit(path.appending(documentID.string)) }
            }
        }
        visit(parent)
        return out
    }

    public func missingDocumentIDs(in collection: ResourcePath, at readTime: Timestamp?) -> [String] {
        guard let c = collections[PathKey(collection)] else { return [] }
        return c.parentsOfSubcollections.sorted().filter { id in
            c.documents[id]?.version(at: readTime)?.fields == nil
                && (subcollections[collection.appending(id.string)] ?? []).contains {
                    hasDocuments(collection.appending(id.string).appending($0.string), at: readTime)
                }
        }.map(\.string)
    }

    /// Whether a collection holds an existing document at any depth.
    private func hasDocuments(_ collection: ResourcePath, at readTime: Timestamp?) -> Bool {
        guard let c = collections[PathKey(collection)] else { return false }
        if readTime == nil {
            if c.liveCount > 0 { return true }
        } else {
            var found = false
            c.documents.forEach { _, record in
                found = record.version(at: readTime)?.fields != nil
                return !found
            }
            if found { return true }
        }
        for id in c.parentsOfSubcollections {
            let doc = collection.appending(id.string)
            for sub in subcollections[doc] ?? [] where hasDocuments(doc.appending(sub.string), at: readTime) {
                return true
            }
        }
        return false
    }

    public func compact(horizon: Timestamp) {
        for collection in collections.values {
            collection.documents.compactMapInPlace { _, record in
                var r = record
                r.prune(horizon: horizon)
                if r.latest.fields == nil, r.older.isEmpty, r.latest.updateTime <= horizon { return nil }
                return r
            }
        }
    }

    public func removeAll(under path: ResourcePath) {
        lastFound = nil
        // Whole subtrees go below; group indexes are rebuilt on next use rather than edited.
        groupIndexes = [:]
        if path.isEmpty {
            collections = [:]
            collectionsByID = [:]
            subcollections = [:]
            documentCount = 0
            return
        }
        for pathKey in Array(collections.keys) {
            guard let c = collections[pathKey] else { continue }
            let collectionPath = pathKey.path
            if path.isPrefix(of: collectionPath) {
                documentCount -= c.liveCount
                collections[pathKey] = nil
            } else if path.isDocumentPath, collectionPath == path.dropLast,
                let removed = c.documents[DocumentIDKey(path.last ?? "")]
            {
                if let fields = removed.latest.fields {
                    documentCount -= 1
                    c.liveCount -= 1
                    for index in c.indexes.values { index.remove(id: DocumentIDKey(path.last ?? ""), fields: fields) }
                }
                c.documents.set(DocumentIDKey(path.last ?? ""), nil)
            }
        }
        // Keep the collection indexes consistent with what is left.
        for id in Array(collectionsByID.keys) {
            collectionsByID[id] = collectionsByID[id]?.filter { collections[PathKey($0)] != nil }
            if collectionsByID[id]?.isEmpty == true { collectionsByID[id] = nil }
        }
        for parent in Array(subcollections.keys) {
            subcollections[parent] = subcollections[parent]?.filter {
                collections[PathKey(parent.appending($0.string))] != nil
            }
            if subcollections[parent]?.isEmpty == true { subcollections[parent] = nil }
        }
        for (pathKey, collection) in collections {
            let collectionPath = pathKey.path
            collection.parentsOfSubcollections = collection.parentsOfSubcollections.filter {
                subcollections[collectionPath.appending($0.string)] != nil
            }
        }
    }
}

/// A collection path as a slice of segments, so a document's own path can be sliced to find
/// its collection without allocating. Compares and hashes by UTF-8 bytes like `ResourcePath`.
struct PathKey: Hashable {
    let segments: ArraySlice<String>

    init(_ path: ResourcePath) { segments = path.segments[...] }
    init(collectionOf key: DocumentKey) { segments = key.path.segments.dropLast() }

    var path: ResourcePath { ResourcePath(Array(segments)) }

    static func == (a: PathKey, b: PathKey) -> Bool {
        a.segments.count == b.segments.count && zip(a.segments, b.segments).allSatisfy { equalUTF8($0, $1) }
    }

    func hash(into h: inout Hasher) {
        h.combine(segments.count)
        for s in segments { hashUTF8(s, into: &h) }
    }
}
