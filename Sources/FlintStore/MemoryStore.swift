import FlintModel

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

    struct Collection {
        var documents = SortedMap<UTF8Key, Record>()
        var liveCount = 0
        /// Documents of this collection that have subcollections.
        var parentsOfSubcollections: Set<UTF8Key> = []
    }

    private var collections: [ResourcePath: Collection] = [:]
    /// Subcollection ids under each document path (the root is the empty path).
    private var subcollections: [ResourcePath: Set<UTF8Key>] = [:]
    public private(set) var documentCount = 0

    public init() {}

    public func document(_ key: DocumentKey, at readTime: Timestamp?) -> DocumentState? {
        collections[key.collection]?.documents[UTF8Key(key.documentID)]?.version(at: readTime)?.state
    }

    public func apply(_ writes: [DocumentWrite], commitTime: Timestamp, horizon: Timestamp) {
        for write in writes {
            let collectionPath = write.key.collection
            let id = UTF8Key(write.key.documentID)
            if collections[collectionPath] == nil { registerCollection(collectionPath) }
            let newVersion = StoredVersion(
                fields: write.state?.fields,
                createTime: write.state?.createTime ?? commitTime,
                updateTime: commitTime)
            let delta: Int = collections[collectionPath]!.documents.update(id) { record in
                let existed = record?.latest.fields != nil
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
            collections[collectionPath]!.liveCount += delta
            documentCount += delta
        }
    }

    private func registerCollection(_ path: ResourcePath) {
        collections[path] = Collection()
        let parent = path.dropLast
        subcollections[parent, default: []].insert(UTF8Key(path.last ?? ""))
        if let parentKey = parent.documentKey {
            if collections[parentKey.collection] == nil { registerCollection(parentKey.collection) }
            collections[parentKey.collection]!.parentsOfSubcollections.insert(
                UTF8Key(parentKey.documentID))
        }
    }

    public func scan(
        collection: ResourcePath, at readTime: Timestamp?, startAfter: String?,
        _ body: (DocumentKey, DocumentState) -> Bool
    ) {
        guard let c = collections[collection] else { return }
        let start = startAfter.map { c.documents.index(from: UTF8Key($0), inclusive: false) }
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

    public func missingDocumentIDs(in collection: ResourcePath, at readTime: Timestamp?) -> [String] {
        guard let c = collections[collection] else { return [] }
        return c.parentsOfSubcollections.sorted().filter { id in
            c.documents[id]?.version(at: readTime)?.fields == nil
                && (subcollections[collection.appending(id.string)] ?? []).contains {
                    hasDocuments(collection.appending(id.string).appending($0.string), at: readTime)
                }
        }.map(\.string)
    }

    /// Whether a collection holds an existing document at any depth.
    private func hasDocuments(_ collection: ResourcePath, at readTime: Timestamp?) -> Bool {
        guard let c = collections[collection] else { return false }
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
        for path in Array(collections.keys) {
            collections[path]!.documents.compactMapInPlace { _, record in
                var r = record
                r.prune(horizon: horizon)
                if r.latest.fields == nil, r.older.isEmpty, r.latest.updateTime <= horizon { return nil }
                return r
            }
        }
    }

    public func removeAll(under path: ResourcePath) {
        if path.isEmpty {
            collections = [:]
            subcollections = [:]
            documentCount = 0
            return
        }
        for collectionPath in Array(collections.keys) {
            guard let c = collections[collectionPath] else { continue }
            if path.isPrefix(of: collectionPath) {
                documentCount -= c.liveCount
                collections[collectionPath] = nil
            } else if path.isDocumentPath, collectionPath == path.dropLast,
                let removed = collections[collectionPath]!.documents[UTF8Key(path.last ?? "")]
            {
                if removed.latest.fields != nil {
                    documentCount -= 1
                    collections[collectionPath]!.liveCount -= 1
                }
                collections[collectionPath]!.documents.set(UTF8Key(path.last ?? ""), nil)
            }
        }
        // Keep the subcollection index consistent with what is left.
        for parent in Array(subcollections.keys) {
            subcollections[parent] = subcollections[parent]?.filter {
                collections[parent.appending($0.string)] != nil
            }
            if subcollections[parent]?.isEmpty == true { subcollections[parent] = nil }
        }
        for collectionPath in Array(collections.keys) {
            collections[collectionPath]!.parentsOfSubcollections =
                collections[collectionPath]!.parentsOfSubcollections.filter {
                    subcollections[collectionPath.appending($0.string)] != nil
                }
        }
    }
}
