import FlintModel
import FlintQuery

/// Runs a normalised query against a store: gathers the documents in scope, keeps those that
/// match, orders them and cuts the requested window.
public enum QueryExecutor {
    /// The query's documents in order, after offset and limit, with the projection applied.
    public static func run(_ q: NormalizedQuery, in store: any StoreBackend, at readTime: Timestamp?) -> [Document] {
        var stats = QueryStats()
        return run(q, in: store, at: readTime, stats: &stats)
    }

    /// As `run`, counting what was read.
    public static func run(_ q: NormalizedQuery, in store: any StoreBackend, at readTime: Timestamp?, stats: inout QueryStats)
        -> [Document]
    {
        // Indexes hold the latest state; reads at an earlier time scan the versions.
        if readTime == nil, let plan = IndexPlan.make(q), let docs = store.runIndexed(q, plan: plan, stats: &stats) {
            return project(docs, q.query.projection)
        }
        var matched = matching(q, in: store, at: readTime, stats: &stats)
        if let nearest = q.query.findNearest {
            return project(nearestDocuments(matched, nearest), q.query.projection)
        }
        matched.sort { q.compare(($0.key, $0.fields), ($1.key, $1.fields)) < 0 }
        let start = min(q.query.offset, matched.count)
        let end = q.query.limit.map { min(start + $0, matched.count) } ?? matched.count
        return project(Array(matched[start..<end]), q.query.projection)
    }

    /// Every document in scope that matches filter, ordered fields and cursors, unordered.
    public static func matching(_ q: NormalizedQuery, in store: any StoreBackend, at readTime: Timestamp?, stats: inout QueryStats)
        -> [Document]
    {
        var out: [Document] = []
        var scanned = 0
        let collections = store.collectionPaths(under: q.query.parent, withID: q.query.collectionID, anyDepth: q.query.allDescendants)
        for collection in collections {
            store.scan(collection: collection, at: readTime, startAfter: nil) { key, state in
                scanned += 1
                if q.matches(key, state.fields) {
                    out.append(Document(key: key, fields: state.fields, createTime: state.createTime, updateTime: state.updateTime))
                }
                return true
            }
        }
        stats.documentsScanned += scanned
        return out
    }

    public static func project(_ docs: [Document], _ projection: [FieldPath]?) -> [Document] {
        guard let projection else { return docs }
        let fields = projection.filter { !$0.isDocumentID }
        return docs.map { $0.masked(fields) }
    }

    static func nearestDocuments(_ docs: [Document], _ f: FindNearest) -> [Document] {
        var scored: [(Document, Double)] = []
        for doc in docs {
            guard case .vector(let v)? = doc.fields.value(at: f.field),
                let d = FindNearestRules.distance(v, f), FindNearestRules.withinThreshold(d, f)
            else { continue }
            scored.append((doc, d))
        }
        scored.sort { a, b in
            FindNearestRules.nearer(a.1, b.1, f.measure) ?? (a.0.key.path < b.0.key.path)
        }
        return scored.prefix(f.limit).map { doc, d in
            guard let name = f.distanceResultField else { return doc }
            var copy = doc
            copy.fields.setValue(.double(d), at: FieldPath(unchecked: [name]))
            return copy
        }
    }
}
