import FlintModel
import FlintStore

/// One document's change in a commit: its state before and after (nil when absent).
public struct CommittedChange: Sendable {
    public var key: DocumentKey
    public var before: Document?
    public var after: Document?
}

/// A commit as observers see it: every document it changed, at one commit time.
public struct CommitRecord: Sendable {
    public var commitTime: Timestamp
    public var changes: [CommittedChange]
    /// How deep in a chain of commit handlers the commit was made (0: by a client); read from
    /// `CommitOrigin.depth` in the committing task, so handlers can stop runaway chains.
    public var depth: Int
    /// Counts the records published by this database, from 1.
    public var serial: UInt64
}

/// Who made a commit, carried by the committing task.
public enum CommitOrigin {
    @TaskLocal public static var depth = 0
}

/// The observers of one database's commits. Publishing never waits: each observer has an
/// unbounded stream, which is what a test harness wants (it drains it as commits come).
struct CommitFeed {
    private var observers: [UInt64: AsyncStream<CommitRecord>.Continuation] = [:]
    private var next: UInt64 = 0
    /// The serial of the last record published.
    private(set) var published: UInt64 = 0

    var isEmpty: Bool { observers.isEmpty }

    mutating func add(_ continuation: AsyncStream<CommitRecord>.Continuation) -> UInt64 {
        next += 1
        observers[next] = continuation
        return next
    }

    mutating func remove(_ id: UInt64) { observers[id] = nil }

    mutating func publish(_ changes: [CommittedChange], at commitTime: Timestamp, depth: Int) {
        published += 1
        let record = CommitRecord(commitTime: commitTime, changes: changes, depth: depth, serial: published)
        for c in observers.values { c.yield(record) }
    }
}

extension Database {
    /// Every later commit (and batch write) that changed documents, in commit order, with the
    /// documents before and after, and the serial of the last record published before.
    /// Ends when the caller stops iterating.
    public func commitRecords() -> (records: AsyncStream<CommitRecord>, after: UInt64) {
        let (stream, continuation) = AsyncStream<CommitRecord>.makeStream()
        let id = commitFeed.add(continuation)
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            Task { await self.removeCommitObserver(id) }
        }
        return (stream, commitFeed.published)
    }

    /// The serial of the last commit record published.
    public var publishedCommitSerial: UInt64 { commitFeed.published }

    private func removeCommitObserver(_ id: UInt64) { commitFeed.remove(id) }

    /// Tells observers about applied writes; `before` gives each key's state before the commit.
    func publishCommit(_ writes: [DocumentWrite], before: (DocumentKey) -> DocumentState?, at commitTime: Timestamp) {
        guard !commitFeed.isEmpty, !writes.isEmpty else { return }
        let changes = writes.map { w in
            CommittedChange(
                key: w.key, before: before(w.key).map { Document(key: w.key, fields: $0.fields, createTime: $0.createTime, updateTime: $0.updateTime) },
                after: w.state.map { Document(key: w.key, fields: $0.fields, createTime: $0.createTime, updateTime: $0.updateTime) })
        }
        commitFeed.publish(changes, at: commitTime, depth: CommitOrigin.depth)
    }
}
