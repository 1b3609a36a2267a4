import FlintEngine
import FlintModel
import Foundation
import Synchronization

/// A document's states around a write, as Cloud Functions' `Change`.
public struct Change<T: Sendable>: Sendable {
    public let before: T
    public let after: T
}

/// What a trigger is told besides the data: the wildcards of its pattern and the event.
public struct EventContext: Sendable {
    public enum EventType: String, Sendable { case create, update, delete }
    /// Values of the pattern's `{wildcards}` in the written document's path.
    public let params: [String: String]
    public let eventType: EventType
    /// The commit time.
    public let timestamp: Timestamp
    /// The written document's path.
    public let resource: String
}

/// A handler that failed, kept so a test can assert no trigger failed.
public struct TriggerFailure: Sendable, CustomStringConvertible {
    public let pattern: String
    public let path: String
    public let message: String
    public var description: String { "\(pattern) on \(path): \(message)" }
}

/// Document triggers for tests, shaped like Cloud Functions' Firestore triggers: handlers for
/// onCreate / onUpdate / onDelete / onWrite on path patterns (`bookRequests/{requestId}`,
/// `{collection}/{docId}`), run after each commit of an embedded database, in commit order,
/// one at a time. Handlers write through `firestore`, which skips rules as the Admin SDK
/// does; their writes fire further triggers, up to `maxDepth` levels (a loop guard).
/// `settle()` waits until every commit so far, and what it set off, has been handled.
public final class DocumentTriggers: Sendable {
    public typealias SnapshotHandler = @Sendable (QueryDocumentSnapshot, EventContext) async throws -> Void
    public typealias ChangeHandler = @Sendable (Change<DocumentSnapshot>, EventContext) async throws -> Void

    enum Handler {
        case create(SnapshotHandler)
        case update(ChangeHandler)
        case delete(SnapshotHandler)
        case write(ChangeHandler)
    }

    struct Registration {
        let pattern: String
        let segments: [String]
        let handler: Handler
    }

    private struct State {
        var registrations: [Registration] = []
        var processed: UInt64 = 0
        var busy = false
        var failures: [TriggerFailure] = []
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    /// The database as handlers see it (rules skipped).
    public let firestore: Firestore
    /// How many commits deep a chain of triggers may go; deeper commits fire nothing and are
    /// recorded as failures.
    public let maxDepth: Int
    private let database: Database
    private let state = Mutex(State())
    private let runner = Mutex<Task<Void, Never>?>(nil)

    /// Triggers on the database of an embedded `Firestore`.
    public init(_ firestore: Firestore, maxDepth: Int = 8) async throws {
        guard let engine = firestore.engine, firestore.settings.host == FirestoreSettings.defaultHost else {
            throw FirestoreErrorCode(.unimplemented, "Document triggers need an embedded Firestore.")
        }
        self.firestore = firestore.withSecurityRulesDisabled()
        self.maxDepth = maxDepth
        database = engine.database(firestore.databaseID)
        let (records, after) = await database.commitRecords()
        state.withLock { $0.processed = after }
        let task = Task { [weak self] in
            for await record in records {
                guard let self else { return }
                await self.handle(record)
            }
        }
        runner.withLock { $0 = task }
    }

    deinit { runner.withLock { $0?.cancel() } }

    /// Stops handling commits.
    public func stop() { runner.withLock { $0?.cancel() } }

    /// A pattern to attach handlers to, as `functions.firestore.document(...)`.
    public func document(_ pattern: String) -> DocumentTrigger { DocumentTrigger(triggers: self, pattern: pattern) }

    func register(_ pattern: String, _ handler: Handler) {
        let segments = pattern.split(onASCII: "/", omittingEmptySubsequences: true).map(String.init)
        precondition(segments.count % 2 == 0 && !segments.isEmpty, "A trigger pattern names documents: \(pattern)")
        state.withLock { $0.registrations.append(Registration(pattern: pattern, segments: segments, handler: handler)) }
    }

    /// Handlers that threw, and commits refused by the loop guard.
    public var failures: [TriggerFailure] { state.withLock { $0.failures } }

    /// Waits until every commit published so far, and every commit its handlers made, has
    /// been handled.
    public func settle() async {
        while true {
            let target = await database.publishedCommitSerial
            while await !handled(through: target) {}
            if await database.publishedCommitSerial == target { return }
        }
    }

    /// True when every record through `target` is handled; otherwise waits for the next
    /// record to be handled and returns false.
    private func handled(through target: UInt64) async -> Bool {
        await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let done = state.withLock { s -> Bool in
                if s.processed >= target && !s.busy { return true }
                s.waiters.append(c)
                return false
            }
            if done { c.resume(returning: true) }
        }
    }

    private func handle(_ record: CommitRecord) async {
        let registrations = state.withLock { s -> [Registration] in
            s.busy = true
            return s.registrations
        }
        if record.depth >= maxDepth {
            let paths = record.changes.map(\.key.path.canonical).joined(separator: ", ")
            state.withLock {
                $0.failures.append(TriggerFailure(pattern: "*", path: paths, message: "Trigger chain deeper than \(maxDepth) commits; stopped."))
            }
        } else {
            await CommitOrigin.$depth.withValue(record.depth + 1) {
                for change in record.changes {
                    for r in registrations {
                        guard let params = Self.match(r.segments, change.key.path.segments) else { continue }
                        await run(r, change, params, record.commitTime)
                    }
                }
            }
        }
        let ready = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            s.processed = max(s.processed, record.serial)
            s.busy = false
            defer { s.waiters = [] }
            return s.waiters
        }
        // Waiters check again themselves.
        for w in ready { w.resume(returning: false) }
    }

    private func run(_ r: Registration, _ change: CommittedChange, _ params: [String: String], _ time: FlintModel.Timestamp) async {
        let ref = DocumentReference(change.key, firestore)
        let before = DocumentSnapshot(ref, change.before)
        let after = DocumentSnapshot(ref, change.after)
        let type: EventContext.EventType = change.before == nil ? .create : change.after == nil ? .delete : .update
        let context = EventContext(params: params, eventType: type, timestamp: Timestamp(model: time), resource: ref.path)
        do {
            switch r.handler {
            case .create(let h): if type == .create, let doc = change.after { try await h(QueryDocumentSnapshot(ref, doc), context) }
            case .update(let h): if type == .update { try await h(Change(before: before, after: after), context) }
            case .delete(let h): if type == .delete, let doc = change.before { try await h(QueryDocumentSnapshot(ref, doc), context) }
            case .write(let h): try await h(Change(before: before, after: after), context)
            }
        } catch {
            let message = (FirestoreErrorCode.from(error)?.description) ?? String(describing: error)
            state.withLock { $0.failures.append(TriggerFailure(pattern: r.pattern, path: ref.path, message: message)) }
        }
    }

    /// The wildcard values when `path` matches `pattern` segment for segment.
    static func match(_ pattern: [String], _ path: [String]) -> [String: String]? {
        guard pattern.count == path.count else { return nil }
        var params: [String: String] = [:]
        for (p, s) in zip(pattern, path) {
            if p.hasPrefix("{") && p.hasSuffix("}") {
                params[String(p.dropFirst().dropLast())] = s
            } else if p != s {
                return nil
            }
        }
        return params
    }
}

/// Handlers for one document pattern.
public struct DocumentTrigger: Sendable {
    let triggers: DocumentTriggers
    let pattern: String

    public func onCreate(_ handler: @escaping DocumentTriggers.SnapshotHandler) { triggers.register(pattern, .create(handler)) }
    public func onUpdate(_ handler: @escaping DocumentTriggers.ChangeHandler) { triggers.register(pattern, .update(handler)) }
    public func onDelete(_ handler: @escaping DocumentTriggers.SnapshotHandler) { triggers.register(pattern, .delete(handler)) }
    public func onWrite(_ handler: @escaping DocumentTriggers.ChangeHandler) { triggers.register(pattern, .write(handler)) }
}
