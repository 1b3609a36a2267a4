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

    public init() {}

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
        var modified: [Document] = []
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
                modified.append(new)
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
        if !view.published {
            // The first snapshot: everything is added, in order.
            let ordered = added.sorted(by: view.precedes)
            view.ordered = ordered
            view.published = true
            views[id] = view
            let changes = ordered.enumerated().map { ViewChange(kind: .added, document: $1, oldIndex: -1, newIndex: $0) }
            return ViewSnapshot(targetID: id, readTime: readTime, documents: ordered, changes: changes)
        }
        // Walk the old order to the new one, indexing each change as it is applied.
        var tracker = view.ordered
        var changes: [ViewChange] = []
        for doc in removed.sorted(by: view.precedes) {
            let old = tracker.firstIndex { $0.key == doc.key } ?? -1
            if old >= 0 { tracker.remove(at: old) }
            changes.append(ViewChange(kind: .removed, document: doc, oldIndex: old, newIndex: -1))
        }
        for (kind, docs) in [(ViewChange.Kind.added, added), (.modified, modified)] {
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
        view.ordered = tracker
        view.published = true
        views[id] = view
        return ViewSnapshot(targetID: id, readTime: readTime, documents: tracker, changes: changes)
    }
}
