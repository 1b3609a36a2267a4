import FlintModel
import FlintQuery
import FlintStore

/// The listen streams of one database; confined to its actor.
struct WatchRegistry {
    var streams: [WatchStreamID: WatchStream] = [:]
    var nextStream: UInt64 = 0
    /// Reads before this time cannot be replayed: data was cleared without keeping history.
    var historyFloor = Timestamp(microseconds: 0)
}

/// One open listen stream: its targets and the events waiting for its sender.
final class WatchStream {
    let signal: AsyncStream<Void>.Continuation
    var targets: [Int32: WatchedTarget] = [:]
    /// Events decided outside a consistent point (removals, rejected targets).
    var outbox: [WatchEvent] = []
    /// The highest target id this stream has seen, chosen or asked for; a target added with id 0
    /// gets the next one, as on the reference, so it never meets an id in use.
    var highestTargetID: Int32 = 0

    init(signal: AsyncStream<Void>.Continuation) {
        self.signal = signal
    }
}

/// A target and what its client has been told. Changes are not queued: a commit only marks
/// the keys it touched, and the next delivery compares the current state with `sent`. So a
/// client that reads slowly gets the latest state of each document, once, and the memory a
/// target holds never exceeds one entry per document it covers.
final class WatchedTarget {
    enum Matcher {
        case documents(Set<DocumentKey>, [DocumentKey])
        case query(NormalizedQuery)
    }

    let id: Int32
    let matcher: Matcher
    let once: Bool
    /// Who listens: the rules are asked again whenever the target has changes to send.
    let auth: AuthContext
    /// Update time of each document the client holds for this target.
    var sent: [DocumentKey: Timestamp] = [:]
    /// Not yet delivered: where the client's view stood, when it asked to resume.
    var pendingStart: (resumeFrom: Timestamp?, resumeAsked: Bool)?
    /// Keys written since the last delivery, for targets evaluated document by document.
    var dirty: Set<DocumentKey> = []
    /// The whole result must be recomputed (windowed queries, clears, too many dirty keys).
    var rerun = false

    /// Beyond this many dirty keys a full recomputation is cheaper than tracking them.
    static let maxDirty = 10_000

    init(id: Int32, matcher: Matcher, once: Bool, auth: AuthContext, resumeFrom: Timestamp?, resumeAsked: Bool) {
        self.id = id
        self.matcher = matcher
        self.once = once
        self.auth = auth
        self.pendingStart = (resumeFrom, resumeAsked)
    }

    func covers(_ key: DocumentKey) -> Bool {
        switch matcher {
        case .documents(let keys, _): keys.contains(key)
        case .query(let q): q.inScope(key)
        }
    }

    /// Whether a document's membership depends only on the document itself; a limit, an
    /// offset or a nearest-neighbour search make it depend on the others too.
    var evaluatesPerDocument: Bool {
        switch matcher {
        case .documents: true
        case .query(let q): q.query.limit == nil && q.query.offset == 0 && q.query.findNearest == nil
        }
    }

    /// Whether a write can change what the target shows: it touches a document the client holds
    /// or one that now matches. (A document skipped by an offset shifts the window whatever it
    /// becomes, so offsets always count.)
    func mayChange(_ write: DocumentWrite) -> Bool {
        guard case .query(let q) = matcher, q.query.offset == 0 else { return true }
        if sent[write.key] != nil { return true }
        guard let state = write.state else { return false }
        return q.matches(write.key, state.fields)
    }

    func markWritten(_ key: DocumentKey) {
        guard !rerun else { return }
        if evaluatesPerDocument && dirty.count < Self.maxDirty {
            dirty.insert(key)
        } else {
            rerun = true
            dirty = []
        }
    }
}

/// The document changes of one delivery, one event per document for all targets it concerns.
struct ChangeBatch {
    private struct Entry {
        var key: DocumentKey
        /// The new state; nil when deleted.
        var document: Document?
        var targets: [Int32] = []
        var removed: [Int32] = []
    }

    private var entries: [Entry] = []
    private var byKey: [DocumentKey: [Int]] = [:]

    var isEmpty: Bool { entries.isEmpty }

    mutating func entered(_ doc: Document, target: Int32) {
        entries[slot(doc.key, doc)].targets.append(target)
    }

    mutating func left(_ key: DocumentKey, now current: Document?, target: Int32) {
        entries[slot(key, current)].removed.append(target)
    }

    /// Adds another batch's changes, joining those of the same document state.
    mutating func merge(_ other: ChangeBatch) {
        for e in other.entries {
            let i = slot(e.key, e.document)
            entries[i].targets += e.targets
            entries[i].removed += e.removed
        }
    }

    /// The entry for this key and state; a projection can give one key several states.
    private mutating func slot(_ key: DocumentKey, _ document: Document?) -> Int {
        if let found = byKey[key]?.first(where: { entries[$0].document == document }) { return found }
        entries.append(Entry(key: key, document: document))
        byKey[key, default: []].append(entries.count - 1)
        return entries.count - 1
    }

    func events(readTime: Timestamp) -> [WatchEvent] {
        entries.map { e in
            if let doc = e.document {
                return .changed(doc, targetIDs: e.targets.sorted(), removedTargetIDs: e.removed.sorted())
            }
            return .deleted(e.key, removedTargetIDs: e.removed.sorted(), readTime: readTime)
        }
    }
}
