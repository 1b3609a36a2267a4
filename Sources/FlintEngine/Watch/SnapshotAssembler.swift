import FlintModel
import FlintQuery

/// One document's change between two snapshots of a view, indexed as the Firebase SDKs
/// index `DocumentChange`: removals first at their old positions, then additions and
/// modifications at their new ones, each index counted after the changes listed before it.
public struct ViewChange: Sendable, Equatable {
    public enum Kind: String, Sendable { case added, modified, removed }
    public var kind: Kind
    public var document: Document
    /// Position before the change; -1 for additions.
    public var oldIndex: Int
    /// Position after the change; -1 for removals.
    public var newIndex: Int
}

/// What a listener sees at one consistent point: every document in order, and what changed.
public struct ViewSnapshot: Sendable {
    public var targetID: Int32
    public var readTime: Timestamp
    public var documents: [Document]
    public var changes: [ViewChange]
}

/// Turns one watch stream's events into snapshots per target, the way the SDKs present them
/// to `addSnapshotListener`: nothing until a target is current, then one snapshot at each
/// consistent point where its documents changed (the first one even when empty).
public struct SnapshotAssembler: Sendable {
    private struct View: Sendable {
        let query: NormalizedQuery?
        var documents: [DocumentKey: Document] = [:]
        var ordered: [Document] = []
        /// Changes since the last snapshot: the new state, or nil when the document left.
        var pending: [DocumentKey: Document?] = [:]
        var current = false
        var published = false

        func precedes(_ a: Document, _ b: Document) -> Bool {
            guard let query else { return a.key.path < b.key.path }
            return query.compare((a.key, a.fields), (b.key, b.fields)) < 0
        }
    }

    private var views: [Int32: View] = [:]
    /// Above this many changes in one snapshot, indexes come from an order-statistics tree
    /// (O(n log n)) instead of walking the list change by change (O(n) each).
    let largeChangeCount: Int

    public init() { largeChangeCount = 32 }

    init(largeChangeCount: Int) { self.largeChangeCount = largeChangeCount }

    /// Starts a view of a target; `query` orders it (nil: a documents target, ordered by name).
    public mutating func register(_ targetID: Int32, query: NormalizedQuery?) {
        views[targetID] = View(query: query)
    }

    public mutating func unregister(_ targetID: Int32) {
        views[targetID] = nil
    }

    /// Applies events in order; returns the snapshots they complete and the targets the server
    /// removed, with the error when one made it remove them (those views end).
    public mutating func apply(_ events: [WatchEvent]) -> (snapshots: [ViewSnapshot], removed: [(Int32, FlintError?)]) {
        var snapshots: [ViewSnapshot] = []
        var removed: [(Int32, FlintError?)] = []
        for event in events {
            switch event {
            case .target(let kind, let ids, _, let readTime, let cause):
                switch kind {
                case .current:
                    for id in ids { views[id]?.current = true }
                case .reset:
                    for id in ids {
                        for key in views[id]?.documents.keys.map({ $0 }) ?? [] { views[id]?.pending[key] = .some(nil) }
                    }
                case .remove:
                    for id in ids where views[id] != nil {
                        views[id] = nil
                        removed.append((id, cause))
                    }
                case .noChange where ids.isEmpty:
                    guard let readTime else { continue }
                    for id in views.keys.sorted() {
                        if let snapshot = publish(id, readTime) { snapshots.append(snapshot) }
                    }
                case .add, .noChange:
                    break
                }
            case .changed(let doc, let targets, let removed):
                for id in targets { views[id]?.pending[doc.key] = .some(doc) }
                for id in removed { views[id]?.pending[doc.key] = .some(nil) }
            case .deleted(let key, let removed, _):
                for id in removed { views[id]?.pending[key] = .some(nil) }
            case .existenceFilter:
                // Flint's deliveries are exact, so counts always agree.
                break
            }
        }
        return (snapshots, removed)
    }

    private mutating func publish(_ id: Int32, _ readTime: Timestamp) -> ViewSnapshot? {
        guard var view = views[id], view.current else { return nil }
        var removed: [Document] = []
        var added: [Document] = []
        var modified: [(old: Document, new: Document)] = []
        for (key, next) in view.pending {
            let before = view.documents[key]
            switch (before, next) {
            case (let old?, nil):
                removed.append(old)
                view.documents[key] = nil
            case (nil, let new?):
                added.append(new)
                view.documents[key] = new
            case (let old?, let new?) where old != new:
                modified.append((old, new))
                view.documents[key] = new
            default:
                break
            }
        }
        view.pending = [:]
        let changed = !removed.isEmpty || !added.isEmpty || !modified.isEmpty
        guard changed || !view.published else {
            views[id] = view
            return nil
        }
        let ordered: [Document]
        let changes: [ViewChange]
        if !view.published {
            // The first snapshot: everything is added, in order.
            ordered = added.sorted(by: view.precedes)
            changes = ordered.enumerated().map { ViewChange(kind: .added, document: $1, oldIndex: -1, newIndex: $0) }
        } else if removed.count + added.count + modified.count > largeChangeCount {
            (ordered, changes) = Self.indexWithTree(view, removed, added, modified)
        } else {
            (ordered, changes) = Self.indexByWalking(view, removed, added, modified)
        }
        view.ordered = ordered
        view.published = true
        views[id] = view
        return ViewSnapshot(targetID: id, readTime: readTime, documents: ordered, changes: changes)
    }

    /// Walks the old order to the new one, indexing each change as it is applied.
    private static func indexByWalking(
        _ view: View, _ removed: [Document], _ added: [Document], _ modified: [(old: Document, new: Document)]
    ) -> ([Document], [ViewChange]) {
        var tracker = view.ordered
        var changes: [ViewChange] = []
        for doc in removed.sorted(by: view.precedes) {
            let old = tracker.firstIndex { $0.key == doc.key } ?? -1
            if old >= 0 { tracker.remove(at: old) }
            changes.append(ViewChange(kind: .removed, document: doc, oldIndex: old, newIndex: -1))
        }
        for (kind, docs) in [(ViewChange.Kind.added, added), (.modified, modified.map(\.new))] {
            for doc in docs.sorted(by: view.precedes) {
                var old = -1
                if kind == .modified, let i = tracker.firstIndex(where: { $0.key == doc.key }) {
                    old = i
                    tracker.remove(at: i)
                }
                let new = tracker.firstIndex { view.precedes(doc, $0) } ?? tracker.count
                tracker.insert(doc, at: new)
                changes.append(ViewChange(kind: kind, document: doc, oldIndex: old, newIndex: new))
            }
        }
        return (tracker, changes)
    }

    /// The same indexes for many changes at once: every version involved (the old documents,
    /// the added ones, the new versions of modified ones) is sorted once, and a Fenwick tree
    /// over that order counts the documents present before each position as changes apply.
    private static func indexWithTree(
        _ view: View, _ removed: [Document], _ added: [Document], _ modified: [(old: Document, new: Document)]
    ) -> ([Document], [ViewChange]) {
        let universe = view.ordered + added + modified.map(\.new)
        let firstNew = view.ordered.count
        // Old versions stay ahead of new versions that compare equal, as in the walk.
        let order = universe.indices.sorted { a, b in
            if view.precedes(universe[a], universe[b]) { return true }
            if view.precedes(universe[b], universe[a]) { return false }
            return a < b
        }
        var position = [Int](repeating: 0, count: universe.count)
        for (p, i) in order.enumerated() { position[i] = p }
        var oldSlot: [DocumentKey: Int] = [:]
        for i in 0..<firstNew { oldSlot[universe[i].key] = i }
        var tree = Fenwick(count: universe.count)
        var present = [Bool](repeating: false, count: universe.count)
        func set(_ p: Int, _ on: Bool) {
            tree.add(p, on ? 1 : -1)
            present[p] = on
        }
        for i in 0..<firstNew { set(position[i], true) }
        var changes: [ViewChange] = []
        for doc in removed.sorted(by: view.precedes) {
            guard let slot = oldSlot[doc.key] else { continue }
            let p = position[slot]
            changes.append(ViewChange(kind: .removed, document: doc, oldIndex: tree.prefix(p), newIndex: -1))
            set(p, false)
        }
        for i in added.indices.sorted(by: { view.precedes(added[$0], added[$1]) }) {
            let p = position[firstNew + i]
            set(p, true)
            changes.append(ViewChange(kind: .added, document: added[i], oldIndex: -1, newIndex: tree.prefix(p)))
        }
        for i in modified.indices.sorted(by: { view.precedes(modified[$0].new, modified[$1].new) }) {
            guard let slot = oldSlot[modified[i].old.key] else { continue }
            let from = position[slot]
            let oldIndex = tree.prefix(from)
            set(from, false)
            let to = position[firstNew + added.count + i]
            set(to, true)
            changes.append(ViewChange(kind: .modified, document: modified[i].new, oldIndex: oldIndex, newIndex: tree.prefix(to)))
        }
        let ordered = order.indices.filter { present[$0] }.map { universe[order[$0]] }
        return (ordered, changes)
    }
}

/// Counts over positions with O(log n) updates and prefix sums.
private struct Fenwick {
    private var tree: [Int]

    init(count: Int) { tree = [Int](repeating: 0, count: count + 1) }

    mutating func add(_ position: Int, _ delta: Int) {
        var i = position + 1
        while i < tree.count {
            tree[i] += delta
            i += i & -i
        }
    }

    /// How many are present strictly before `position`.
    func prefix(_ position: Int) -> Int {
        var sum = 0
        var i = position
        while i > 0 {
            sum += tree[i]
            i -= i & -i
        }
        return sum
    }
}
