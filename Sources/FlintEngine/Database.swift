import FlintModel
import FlintQuery
import FlintStore

/// One Firestore database: its documents, commit times and reads. Every call is serialised
/// by the actor, so a commit is applied whole before anything else reads.
public actor Database {
    public nonisolated let id: DatabaseID
    let store: any StoreBackend
    let clock: any Clock
    let configuration: DatabaseConfiguration
    private var lastCommitTime = Timestamp(microseconds: 0)
    /// The latest read time handed out; later commits must come strictly after it.
    private var lastReadTime = Timestamp(microseconds: 0)
    private var lastCompaction = Timestamp(microseconds: 0)
    /// Every index the queries run so far would need in production.
    private var indexUsage = IndexRequirements()
    /// How many queries used each of those indexes, written out as the reference reports them
    /// (ending in `__name__`), in the order first used.
    private var indexUses: [IndexSpec: Int] = [:]
    private var indexUseOrder: [IndexSpec] = []
    private var transactions: [TransactionID: TransactionState] = [:]
    /// Shared locks of pessimistic read-write transactions, by document.
    private var locks: [DocumentKey: Set<TransactionID>] = [:]
    /// Pessimistic read-write transactions that ran queries (see `TransactionState.queries`).
    private var queryHolders: Set<TransactionID> = []
    /// Finished transactions, so a retry keeps its priority (and a read-only one is not
    /// retried); oldest first in `retiredOrder`, forgotten after a transaction lifetime or
    /// beyond `maxRetired`.
    private var retired: [TransactionID: (age: Timestamp, readOnly: Bool)] = [:]
    private var retiredOrder: [(id: TransactionID, ended: Timestamp)] = []
    private var retiredHead = 0
    private static let maxRetired = 100_000
    /// Transactions that ended by expiring, to say so when they are used again.
    private var expiredIDs: Set<TransactionID> = []
    /// Point reads waiting for an older transaction to release its locks, by that transaction.
    private var lockWaiters: [TransactionID: [UInt64: LockWaiter]] = [:]
    private var nextWaiter: UInt64 = 0
    /// Open listen streams and their targets.
    var watch = WatchRegistry()
    /// Observers of every commit (document triggers in tests).
    var commitFeed = CommitFeed()

    private struct LockWaiter {
        let continuation: CheckedContinuation<Void, Never>
        let timer: Task<Void, Never>
    }

    /// Security rules, read at each request; nil or empty leaves the database open.
    let rules: RulesRegistry?

    public init(
        id: DatabaseID, configuration: DatabaseConfiguration = DatabaseConfiguration(),
        clock: any Clock = SystemClock(), store: (any StoreBackend)? = nil, rules: RulesRegistry? = nil
    ) {
        self.id = id
        self.rules = rules
        self.configuration = configuration
        self.clock = clock
        self.store = store ?? MemoryStore()
    }

    /// Existing documents now.
    public var documentCount: Int { store.documentCount }

    // MARK: - Writes

    /// Applies all writes atomically, in order, at one new commit time, or none of them. With a
    /// transaction, its reads are checked first (see `ConcurrencyMode`) and it ends here.
    public func commit(_ writes: [Write], transaction: TransactionID? = nil, auth: AuthContext = .owner) throws(FlintError) -> CommitResult {
        expireTransactions()
        guard let transaction else {
            try validateRequest(writes)
            let result = try applyCommit(writes, auth: auth, inTransaction: false)
            // Writes outside transactions never wait: transactions that read what they changed lose.
            woundReaders(of: writes)
            return result
        }
        let tx = try use(transaction)
        // A request refused before any document is looked at leaves the transaction open, as on
        // the reference; one that fails on the documents (a precondition, the rules) ends it.
        if tx.readOnly, !writes.isEmpty { throw .readOnlyWrites }
        try validateRequest(writes)
        defer { finish(transaction) }
        if tx.readOnly { return CommitResult(commitTime: currentReadTime(), writeResults: []) }
        switch configuration.concurrency {
        case .pessimistic:
            for w in writes {
                for holder in locks[w.key] ?? [] where holder != transaction {
                    if let other = transactions[holder], Self.outranks(other, tx) { throw .contention }
                }
            }
        case .optimistic:
            for (key, seen) in tx.reads where store.document(key, at: nil)?.updateTime != seen { throw .contention }
            // A document that came to match a query since is caught by running it again.
            for read in tx.queries where QueryExecutor.run(read.query, in: store, at: nil).map(\.key) != read.returned {
                throw .contention
            }
        }
        let result = try applyCommit(writes, auth: auth, inTransaction: true)
        woundReaders(of: writes, except: transaction)
        return result
    }

    /// Every write's first pass, then every write's second, as the reference checks a request;
    /// then what Flint refuses and the reference does not. A write that stores something needs
    /// a database documents may be stored in, told first in its second pass, as the reference
    /// tells it (a delete stores nothing and is let be).
    private func validateWrites(_ writes: [Write]) throws(FlintError) {
        try Self.validateWrites(writes) { _ in id }
    }

    /// The checks on writes made before any stored document is read, each write's database
    /// given by `database` (a request's own; for a write naming another, that one, as the
    /// reference checks it there).
    public static func validateWrites(_ writes: [Write], database: (Int) -> DatabaseID) throws(FlintError) {
        for w in writes { try WriteApplier.validate(w) }
        for (i, w) in writes.enumerated() {
            if case .delete = w.operation {} else { try Validation.validateWritable(database(i)) }
            try WriteApplier.validateStored(w)
        }
        for w in writes { try Validation.checkDocumentNameFields(w) }
    }

    /// What can be refused from the request alone, before any stored document is read.
    private func validateRequest(_ writes: [Write]) throws(FlintError) {
        // An oversized request is refused as such before its contents are read.
        try Self.checkRequestSize(writes)
        try validateWrites(writes)
        try WriteApplier.checkRepeatedWrites(writes)
    }

    /// Applies writes that passed `validateRequest`.
    private func applyCommit(_ writes: [Write], auth: AuthContext, inTransaction: Bool) throws(FlintError) -> CommitResult {
        let commitTime = nextCommitTime()
        // The stored state of each key before this commit, and its state as the writes go.
        var original: [DocumentKey: DocumentState?] = [:]
        var pending: [DocumentKey: DocumentState?] = [:]
        var order: [DocumentKey] = []
        var results: [WriteResult] = []
        results.reserveCapacity(writes.count)
        // Each document's writes, kept only for the rules, which judge them together.
        let judged = rulesApply(to: auth)
        var writesTo: [DocumentKey: [Write]] = [:]
        var unmet: FlintError?
        for write in writes {
            let key = write.key
            let current: DocumentState?
            let repeated: Bool
            if let staged = pending[key] {
                current = staged
                repeated = true
            } else {
                current = store.document(key, at: nil)
                original[key] = .some(current)
                order.append(key)
                repeated = false
            }
            // A later write's update time is the first write's (`checkRepeatedWrites`), which
            // was checked against the stored document, as the reference checks it once.
            if !(repeated && write.precondition.updateTime != nil) {
                do throws(FlintError) {
                    try WriteApplier.checkPrecondition(write, on: current, database: id)
                } catch {
                    unmet = unmet ?? error
                }
            }
            let (next, result) = try stage(write, on: current, at: commitTime)
            pending[key] = .some(next)
            results.append(result)
            if judged { writesTo[key, default: []].append(write) }
        }
        // The reference folds a document's writes into one mutation: a document whose fields end
        // as they were stored (and that was not deleted on the way) keeps its times, and every
        // write to a document reports the folded mutation's update time. A document written
        // once is already so (`stage` keeps an unchanged document), which is the common case.
        if order.count < writes.count {
            for key in order {
                if let before = original[key] ?? nil, let final = pending[key] ?? nil,
                    final.createTime == before.createTime, final.fields.isIdentical(to: before.fields)
                {
                    pending[key] = .some(before)
                }
            }
            for i in results.indices { results[i].updateTime = (pending[writes[i].key] ?? nil)?.updateTime }
        }
        // Rules come first: a denied write is refused as such even when its precondition fails.
        if judged {
            let folded = order.map { key in
                FoldedWrites(key: key, writes: writesTo[key] ?? [], before: original[key] ?? nil, after: pending[key] ?? nil)
            }
            try authorizeWrites(folded, final: pending, auth: auth, time: commitTime, writeCount: writes.count, inTransaction: inTransaction)
        }
        if let unmet { throw unmet }
        // Only documents whose state changed are written (and told to listeners).
        let changed = order.compactMap { key -> DocumentWrite? in
            guard let final = pending[key], let before = original[key], before != final else { return nil }
            return DocumentWrite(key: key, state: final)
        }
        try store.persist(changed, commitTime: commitTime)
        store.apply(changed, commitTime: commitTime, horizon: horizon(commitTime))
        compactIfDue(commitTime)
        noteWatchedChanges(changed)
        publishCommit(changed, before: { original[$0] ?? nil }, at: commitTime)
        return CommitResult(commitTime: commitTime, writeResults: results)
    }

    /// Applies each write on its own; one failing does not stop the others. The successful
    /// writes share one commit time. Writing one document twice is rejected as a whole.
    /// Only the owner (the server SDKs) may batch-write: no rules apply, as on the reference.
    public func batchWrite(_ writes: [Write], auth: AuthContext = .owner) throws(FlintError) -> [Result<WriteResult, FlintError>] {
        // A malformed request is refused as a whole, before the caller is checked, as on the
        // reference; only what depends on the stored documents fails one write at a time.
        var seen = Set<DocumentKey>()
        for w in writes where !seen.insert(w.key).inserted {
            throw .invalidArgument("the same document cannot be written more than once in a single request")
        }
        try Self.checkRequestSize(writes)
        try validateWrites(writes)
        guard auth == .owner else { throw FlintError(.permissionDenied, "Batch writes require admin authentication.") }
        let commitTime = nextCommitTime()
        var changed: [DocumentWrite] = []
        var before: [DocumentKey: DocumentState] = [:]
        var results: [Result<WriteResult, FlintError>] = []
        for write in writes {
            do throws(FlintError) {
                let current = store.document(write.key, at: nil)
                try WriteApplier.checkPrecondition(write, on: current, database: id)
                let (next, result) = try stage(write, on: current, at: commitTime)
                if next != current {
                    changed.append(DocumentWrite(key: write.key, state: next))
                    before[write.key] = current
                }
                results.append(.success(result))
            } catch {
                results.append(.failure(error))
            }
        }
        do throws(FlintError) {
            try store.persist(changed, commitTime: commitTime)
        } catch {
            // Nothing was applied: every write that would have been reports the failure.
            return results.map { r in if case .success = r { .failure(error) } else { r } }
        }
        store.apply(changed, commitTime: commitTime, horizon: horizon(commitTime))
        compactIfDue(commitTime)
        noteWatchedChanges(changed)
        publishCommit(changed, before: { before[$0] }, at: commitTime)
        return results
    }

    /// One validated write applied to `current`: the next state, with Firestore's times (create
    /// time kept, update time unchanged when the fields are identical, not merely equal: `1.0`
    /// written over `1` is stored), and its write result.
    private func stage(_ write: Write, on current: DocumentState?, at commitTime: Timestamp)
        throws(FlintError) -> (DocumentState?, WriteResult)
    {
        let outcome = WriteApplier.apply(write, to: current, commitTime: commitTime)
        guard let fields = outcome.fields else { return (nil, WriteResult(updateTime: nil)) }
        // A plain set stores exactly the data `WriteApplier.validate` and `validateStored` checked.
        var plainSet = write.updateMask == nil && write.transforms.isEmpty
        if case .update = write.operation {} else { plainSet = false }
        if !plainSet { try Validation.validateFields(fields) }
        try Validation.validateSize(write.key, fields)
        let next: DocumentState
        if let current, current.fields.isIdentical(to: fields) {
            next = current
        } else {
            next = DocumentState(fields: fields, createTime: current?.createTime ?? commitTime, updateTime: commitTime)
        }
        return (next, WriteResult(updateTime: next.updateTime, transformResults: outcome.transformResults))
    }

    public static func checkRequestSize(_ writes: [Write]) throws(FlintError) {
        var total = 0
        for w in writes {
            if case .update(let key, let fields) = w.operation {
                total += StorageSize.document(key, fields)
            } else {
                total += StorageSize.documentName(w.key.path)
            }
        }
        if total > Limits.maxRequestBytes {
            throw .invalidArgument("Request payload size exceeds the limit: \(Limits.maxRequestBytes) bytes.")
        }
    }

    /// Strictly increasing commit times, even when the clock stands still or steps back, and
    /// always after any read time already given out, so a snapshot never gains a commit.
    private func nextCommitTime() -> Timestamp {
        let floor = max(lastCommitTime, lastReadTime).adding(microseconds: 1)
        lastCommitTime = max(clock.now(), floor)
        return lastCommitTime
    }

    func horizon(_ t: Timestamp) -> Timestamp {
        t.adding(microseconds: -configuration.versionRetentionMicros)
    }

    /// Sweeps expired versions and deletions at most once per quarter of the retention window.
    private func compactIfDue(_ now: Timestamp) {
        let interval = max(configuration.versionRetentionMicros / 4, 1_000_000)
        guard now.microseconds - lastCompaction.microseconds >= interval else { return }
        lastCompaction = now
        store.compact(horizon: horizon(now))
    }

    // MARK: - Transactions

    /// Starts a transaction; with `.readWrite(retrying:)` the new one keeps the old one's age.
    public func beginTransaction(_ options: TransactionOptions = .readWrite()) throws(FlintError) -> TransactionID {
        expireTransactions()
        let now = clock.now()
        let id = TransactionID.random()
        switch options {
        case .readOnly(let readTime):
            let snapshot = try resolveReadTime(readTime) ?? currentReadTime()
            transactions[id] = TransactionState(id: id, readOnly: true, age: now, began: now, lastUsed: now, snapshot: snapshot)
        case .readWrite(let retrying):
            var age = now
            if let retrying {
                // An id of another shape is refused, as the reference refuses one not of its own.
                guard retrying.isWellFormed else { throw .invalidTransaction }
                if let old = transactions[retrying] {
                    if old.readOnly { throw .readOnlyRetry }
                    age = old.age
                    finish(retrying)
                } else if let ended = retired[retrying] {
                    if ended.readOnly { throw .readOnlyRetry }
                    age = ended.age
                }
            }
            transactions[id] = TransactionState(id: id, readOnly: false, age: age, began: now, lastUsed: now, snapshot: nil)
        }
        return id
    }

    /// Ends a transaction without writing; rolling back one that already ended is harmless.
    public func rollback(_ id: TransactionID) throws(FlintError) {
        if transactions[id] != nil {
            finish(id)
        } else if retired[id] == nil {
            throw id.isWellFormed ? .unknownRollback : .invalidTransaction
        }
    }

    /// Checks that `id` names an open transaction, and one that may write when `writing`, as
    /// the reference checks it before it reads the rest of a request.
    public func checkTransaction(_ id: TransactionID, writing: Bool) throws(FlintError) {
        expireTransactions()
        let tx = try use(id)
        if writing, tx.readOnly { throw .readOnlyWrites }
    }

    /// The transaction, checked and touched; a wounded or expired one ends with its error.
    private func use(_ id: TransactionID) throws(FlintError) -> TransactionState {
        if let tx = transactions[id], isExpired(tx) {
            finish(id)
            expiredIDs.insert(id)
        }
        guard var tx = transactions[id] else {
            if expiredIDs.contains(id) { throw .expiredTransaction }
            throw id.isWellFormed ? .closedTransaction : .invalidTransaction
        }
        if let error = tx.abortedBy {
            finish(id)
            throw error
        }
        tx.lastUsed = clock.now()
        transactions[id] = tx
        return tx
    }

    /// Notes a transactional read: its version for validation and, when pessimistic, a shared lock.
    private func recordRead(_ id: TransactionID, _ key: DocumentKey, _ state: DocumentState?) {
        guard var tx = transactions[id], !tx.readOnly else { return }
        if tx.reads[key] == nil { tx.reads[key] = .some(state?.updateTime) }
        transactions[id] = tx
        if configuration.concurrency == .pessimistic { locks[key, default: []].insert(id) }
    }

    /// Notes a query run in a read-write transaction, with the documents it returned (each of
    /// which `recordRead` also notes).
    private func recordQuery(_ id: TransactionID, _ query: NormalizedQuery, _ returned: [DocumentKey]) {
        guard var tx = transactions[id], !tx.readOnly else { return }
        // Only pessimistic commits use the boundary (optimistic ones run the query again).
        // Returned documents may be projected; the boundary needs the fields the order reads.
        // A nearest-neighbour search orders by distance, which `compare` does not, so it has none.
        var boundary: (key: DocumentKey, fields: MapValue)?
        if configuration.concurrency == .pessimistic, let limit = query.query.limit, query.query.findNearest == nil,
            returned.count == limit, let last = returned.last, let state = store.document(last, at: nil)
        {
            boundary = (last, state.fields)
        }
        tx.queries.append(QueryRead(query: query, returned: returned, limitBoundary: boundary))
        transactions[id] = tx
        if configuration.concurrency == .pessimistic { queryHolders.insert(id) }
    }

    /// After a commit, the pessimistic transactions that read what it changed lose: the holders
    /// of its documents' locks (any older one already made a transactional committer abort), and
    /// those whose queries a written document now matches, whatever their age, since the
    /// committer held no lock such a query could have waited on.
    private func woundReaders(of writes: [Write], except committer: TransactionID? = nil) {
        for w in writes { for holder in locks[w.key] ?? [] where holder != committer { wound(holder) } }
        for holder in queryHolders(answeredDifferentlyAfter: writes) where holder != committer { wound(holder) }
    }

    /// Pessimistic transactions with a query that a document just written now matches within
    /// its limit: it would answer with one more document (one that stopped matching was
    /// returned or passed over by the offset, so locked).
    private func queryHolders(answeredDifferentlyAfter writes: [Write]) -> [TransactionID] {
        guard !queryHolders.isEmpty else { return [] }
        var written: [(DocumentKey, MapValue)] = []
        for key in Set(writes.map(\.key)) {
            if let state = store.document(key, at: nil) { written.append((key, state.fields)) }
        }
        return queryHolders.filter { holder in
            guard let tx = transactions[holder] else { return false }
            return tx.queries.contains { read in written.contains { read.isChanged(by: $0.0, $0.1) } }
        }
    }

    /// Whether `a` beats `b` under wound-wait: the older wins, ids break ties.
    private static func outranks(_ a: TransactionState, _ b: TransactionState) -> Bool {
        if a.age != b.age { return a.age < b.age }
        return a.id.bytes.lexicographicallyPrecedes(b.id.bytes)
    }

    private func wound(_ id: TransactionID) {
        guard var tx = transactions[id] else { return }
        tx.abortedBy = .contention
        transactions[id] = tx
        releaseLocks(tx)
    }

    private func finish(_ id: TransactionID) {
        guard let tx = transactions.removeValue(forKey: id) else { return }
        releaseLocks(tx)
        retired[id] = (tx.age, tx.readOnly)
        retiredOrder.append((id, clock.now()))
    }

    /// Forgets retired transactions from the oldest end: O(1) per call on average.
    private func pruneRetired() {
        let horizon = clock.now().microseconds - configuration.transactionLifetimeMicros
        while retiredHead < retiredOrder.count,
            retiredOrder.count - retiredHead > Self.maxRetired || retiredOrder[retiredHead].ended.microseconds < horizon
        {
            let id = retiredOrder[retiredHead].id
            retired[id] = nil
            expiredIDs.remove(id)
            retiredHead += 1
        }
        if retiredHead > 1024 && retiredHead * 2 > retiredOrder.count {
            retiredOrder.removeFirst(retiredHead)
            retiredHead = 0
        }
    }

    private func releaseLocks(_ tx: TransactionState) {
        queryHolders.remove(tx.id)
        for key in tx.reads.keys {
            locks[key]?.remove(tx.id)
            if locks[key]?.isEmpty == true { locks[key] = nil }
        }
        if let waiting = lockWaiters.removeValue(forKey: tx.id) {
            for waiter in waiting.values {
                waiter.timer.cancel()
                waiter.continuation.resume()
            }
        }
    }

    /// Wound-wait's "wait": before a pessimistic read-write transaction reads documents that an
    /// older live transaction holds, it waits (up to `lockWait`) for that one to finish. The older
    /// one usually goes on to write them, which would wound this one had it read first; queued,
    /// it reads the new version and commits. Only younger waits for older, so nothing deadlocks.
    private func waitForOlderHolders(of keys: [DocumentKey], _ id: TransactionID) async {
        guard configuration.concurrency == .pessimistic, configuration.lockWait > .zero else { return }
        // Most reads find no older holder; the clock is read only when one does.
        var deadline: ContinuousClock.Instant?
        while let me = transactions[id], !me.readOnly, me.abortedBy == nil, let blocker = olderHolder(of: keys, than: me) {
            let now = ContinuousClock.now
            if deadline == nil { deadline = now + configuration.lockWait }
            guard let deadline, now < deadline else { return }
            let token = nextWaiter
            nextWaiter += 1
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let timer = Task { [weak self] in
                    try? await Task.sleep(until: deadline)
                    await self?.stopWaiting(for: blocker, token)
                }
                lockWaiters[blocker, default: [:]][token] = LockWaiter(continuation: continuation, timer: timer)
            }
        }
    }

    private func olderHolder(of keys: [DocumentKey], than me: TransactionState) -> TransactionID? {
        for key in keys {
            for holder in locks[key] ?? [] where holder != me.id {
                if let other = transactions[holder], other.abortedBy == nil, Self.outranks(other, me) { return holder }
            }
        }
        return nil
    }

    private func stopWaiting(for blocker: TransactionID, _ token: UInt64) {
        lockWaiters[blocker]?.removeValue(forKey: token)?.continuation.resume()
        if lockWaiters[blocker]?.isEmpty == true { lockWaiters[blocker] = nil }
    }

    private func isExpired(_ tx: TransactionState) -> Bool {
        let now = clock.now().microseconds
        return now - tx.began.microseconds > configuration.transactionLifetimeMicros
            || now - tx.lastUsed.microseconds > configuration.transactionIdleMicros
    }

    /// Ends transactions past their lifetime or idle limit, so abandoned ones hold no locks.
    private func expireTransactions() {
        for (id, tx) in transactions where isExpired(tx) {
            finish(id)
            expiredIDs.insert(id)
        }
        pruneRetired()
    }

    /// Where a read looks: a read-only transaction's snapshot, a requested time, or the latest.
    private func readTime(_ readTime: Timestamp?, _ transaction: TransactionID?) throws(FlintError) -> Timestamp? {
        guard let transaction else { return try resolveReadTime(readTime) }
        return try use(transaction).snapshot
    }

    // MARK: - Reads

    /// Checks a requested read time against the clock and the retention window.
    private func resolveReadTime(_ readTime: Timestamp?) throws(FlintError) -> Timestamp? {
        guard let readTime else { return nil }
        try checkReadTime(readTime)
        lastReadTime = max(lastReadTime, readTime)
        return readTime
    }

    /// Refuses a read time in the future or beyond the retention window, reading nothing.
    public func checkReadTime(_ readTime: Timestamp) throws(FlintError) {
        let now = clock.now()
        if readTime > now && readTime > lastCommitTime {
            throw .invalidArgument("The requested 'read_time' cannot be in the future.")
        }
        if readTime < horizon(now) {
            throw FlintError(.failedPrecondition, "The requested 'read_time' is too old.")
        }
    }

    /// A time at which every acknowledged commit is visible.
    public func currentReadTime() -> Timestamp {
        lastReadTime = max(clock.now(), lastCommitTime, lastReadTime)
        return lastReadTime
    }

    /// The document, or nil when it does not exist (at `readTime`, when given).
    public func get(
        _ key: DocumentKey, mask: [FieldPath]? = nil, readTime: Timestamp? = nil, transaction: TransactionID? = nil, auth: AuthContext = .owner
    ) async throws(FlintError) -> Document? {
        try Validation.validateReadMask(mask)
        if let transaction { await waitForOlderHolders(of: [key], transaction) }
        let t = try self.readTime(readTime, transaction)
        try authorizeReads([key], auth: auth, at: t, inTransaction: transaction != nil)
        let state = store.document(key, at: t)
        if let transaction { recordRead(transaction, key, state) }
        return state.map { document(key, $0).masked(mask) }
    }

    /// Several documents read at one consistent time, in the order asked, each once.
    public func batchGet(
        _ asked: [DocumentKey], mask: [FieldPath]? = nil, readTime: Timestamp? = nil, transaction: TransactionID? = nil,
        auth: AuthContext = .owner
    ) async throws(FlintError) -> BatchGetResult {
        try Validation.validateReadMask(mask)
        // A document asked for twice is answered once, as on the reference.
        var seen = Set<DocumentKey>()
        let keys = asked.filter { seen.insert($0).inserted }
        if let transaction { await waitForOlderHolders(of: keys, transaction) }
        let t = try self.readTime(readTime, transaction)
        try authorizeReads(keys, auth: auth, at: t, inTransaction: transaction != nil)
        let results = keys.map { key in
            let state = store.document(key, at: t)
            if let transaction { recordRead(transaction, key, state) }
            return (key, state.map { document(key, $0).masked(mask) })
        }
        return BatchGetResult(readTime: t ?? currentReadTime(), documents: results)
    }

    /// One page of a collection's documents or, without a collection id, of the documents of
    /// every collection directly below the parent, in name order.
    public func listDocuments(_ request: ListDocumentsRequest) throws(FlintError) -> ListDocumentsPage {
        // The reference's checks, in its order: the transaction is looked up first.
        if let transaction = request.transaction { try checkTransaction(transaction, writing: false) }
        if request.showMissing && request.collectionID == nil {
            throw .invalidArgument("collection id must be set when show_missing is true")
        }
        // Listing with missing documents takes no page size check: a negative one is the default.
        guard request.showMissing || request.pageSize >= 0 else { throw .invalidArgument("Page size must be nonnegative.") }
        // The collection id's form here, its length only after the page token.
        if let id = request.collectionID { try Validation.validateCollectionID(id, checkingLength: false) }
        if request.showMissing && !request.orderBy.isEmpty {
            throw .invalidArgument("cannot specify an order when show_missing is true")
        }
        var mask = try request.mask.map(Validation.readMask)
        let orderBy = request.orderBy.isEmpty ? [] : try Ordering.parseList(request.orderBy, checkField: Validation.checkNamedPath)
        let requestedTime = try request.readTime?.get()
        let token = try request.pageToken.map { t throws(FlintError) in try PageToken(decoding: t) }
        // With missing documents shown the reference does not measure the collection id: nothing
        // can be stored under one too long, so the page is empty.
        if let id = request.collectionID, !request.showMissing { try Validation.checkQueriedCollectionIDLength(id) }
        // Across collections only name order is kept, as in a kindless query.
        if request.collectionID == nil, !orderBy.isEmpty, !orderBy.allSatisfy({ $0.field.isDocumentID && !$0.descending }) {
            throw .invalidArgument("kind is required for all orders except __key__ ascending")
        }
        // With missing documents shown, the reference answers whole documents, mask or not.
        if request.showMissing { mask = nil }
        let readTime = try self.readTime(token?.readTime ?? requestedTime, request.transaction) ?? currentReadTime()
        // Documents that do not exist are metadata, which rules never grant.
        if request.showMissing, request.auth != .owner {
            throw FlintError(.permissionDenied, "Metadata operations require admin authentication.")
        }
        let limit = request.pageSize <= 0 ? Self.defaultListPageSize : min(request.pageSize, Self.largestListPage)
        // Rules see the listing as a query: its order, and the page size as its limit.
        let asQuery = Query(parent: request.parent, collectionID: request.collectionID, orderBy: orderBy, limit: limit)
        try authorizeQuery(asQuery, auth: request.auth, at: readTime)
        // The order is planned once the read time and the rules have passed it, as a query's is.
        try NormalizedQuery.checkKeyScan(orderBy, filter: nil)
        try NormalizedQuery.checkOrderTerms(orderBy)
        // A token holds the last listed document's path below the parent: collection id, document id.
        let after = token.map { ResourcePath($0.after.split(onASCII: "/").map(String.init)) }
        guard after.map({ $0.count == 2 }) ?? true else { throw .invalidArgument("invalid page token") }
        let collections = store.collectionPaths(under: request.parent, withID: request.collectionID, anyDepth: false).sorted()

        var listed: [ListedDocument] = []
        if orderBy.isEmpty {
            for collection in collections where listed.count < limit {
                var startAfter: String?
                if let after {
                    let c = compareSegments(collection.last ?? "", after.segments[0])
                    if c < 0 { continue }
                    if c == 0 { startAfter = after.segments[1] }
                }
                listed += listing(collection, startAfter: startAfter, atMost: limit - listed.count, request, mask, readTime)
            }
        } else {
            var all: [(DocumentKey, DocumentState)] = []
            for collection in collections {
                store.scan(collection: collection, at: readTime, startAfter: nil) { key, state in
                    if orderBy.allSatisfy({ $0.field.isDocumentID || state.fields.value(at: $0.field) != nil }) {
                        all.append((key, state))
                    }
                    return true
                }
            }
            all.sort { Self.orders($0, before: $1, by: orderBy) }
            var start = 0
            if let after {
                let last = request.parent.appending(after)
                start = (all.firstIndex { $0.0.path == last }).map { $0 + 1 } ?? all.count
            }
            for (key, state) in all[start...].prefix(limit) {
                listed.append(ListedDocument(key: key, document: document(key, state).masked(mask)))
            }
        }
        // A full page is followed by a token, as on the reference, without looking further:
        // the page after the last full one is empty.
        let more = listed.count == limit
        let page = listed
        if let transaction = request.transaction {
            for listed in page {
                let state = listed.document.map { DocumentState(fields: $0.fields, createTime: $0.createTime, updateTime: $0.updateTime) }
                recordRead(transaction, listed.key, state)
            }
        }
        let next = more ? page.last.map { PageToken(readTime: readTime, after: "\($0.key.collectionID)/\($0.key.documentID)").encoded() } : nil
        return ListDocumentsPage(documents: page, nextPageToken: next, readTime: readTime)
    }

    /// The reference's page sizes: a listing that asks for none gets 30 documents a page, and
    /// none gets more than 150; the rest follow by page token.
    static let defaultListPageSize = 30
    static let largestListPage = 150

    /// Up to `atMost` documents of one collection in id order, after `startAfter`; with
    /// `showMissing`, documents that do not exist but have subcollections are merged in.
    private func listing(
        _ collection: ResourcePath, startAfter: String?, atMost: Int, _ request: ListDocumentsRequest, _ mask: [FieldPath]?,
        _ readTime: Timestamp
    ) -> [ListedDocument] {
        var existing: [(DocumentKey, DocumentState)] = []
        store.scan(collection: collection, at: readTime, startAfter: startAfter) { key, state in
            existing.append((key, state))
            return existing.count < atMost
        }
        var missing: [String] = []
        if request.showMissing {
            missing = store.missingDocumentIDs(in: collection, at: readTime)
            if let startAfter { missing.removeAll { compareSegments($0, startAfter) <= 0 } }
        }
        var out: [ListedDocument] = []
        var e = 0
        var m = 0
        while out.count < atMost, e < existing.count || m < missing.count {
            if m < missing.count, e == existing.count || compareSegments(missing[m], existing[e].0.documentID) < 0 {
                out.append(ListedDocument(key: DocumentKey(unchecked: collection.appending(missing[m])), document: nil))
                m += 1
            } else {
                let (key, state) = existing[e]
                out.append(ListedDocument(key: key, document: document(key, state).masked(mask)))
                e += 1
            }
        }
        return out
    }

    /// Orders by the given fields, then by name in the direction of the last one.
    private static func orders(
        _ a: (DocumentKey, DocumentState), before b: (DocumentKey, DocumentState), by orderBy: [Ordering]
    ) -> Bool {
        for o in orderBy {
            let c: Int
            if o.field.isDocumentID {
                c = a.0.path.compare(b.0.path)
            } else {
                c = Value.compare(a.1.fields.value(at: o.field) ?? .null, b.1.fields.value(at: o.field) ?? .null)
            }
            if c != 0 { return o.descending ? c > 0 : c < 0 }
        }
        let c = a.0.path.compare(b.0.path)
        return (orderBy.last?.descending ?? false) ? c > 0 : c < 0
    }

    /// Collection ids directly under `parent` (the root or a document), one page at a time.
    /// Only the owner may list them (production allows it through IAM only, never rules);
    /// a malformed request is refused first, as on the reference.
    public func listCollectionIDs(
        parent: ResourcePath, pageSize: Int = 0, pageToken: String? = nil, readTime: Timestamp? = nil,
        auth: AuthContext = .owner
    ) throws(FlintError) -> CollectionIDsPage {
        guard pageSize >= 0 else { throw .invalidArgument("page_size must be greater than or equal to zero.") }
        // A requested read time is checked against the clock before the token is read, as the
        // reference checks it.
        if let readTime { try checkReadTime(readTime) }
        let token = try pageToken.map { t throws(FlintError) in try PageToken(decoding: t) }
        let t = try resolveReadTime(token?.readTime ?? readTime)
        guard auth == .owner else { throw FlintError(.permissionDenied, "Metadata operations require admin authentication.") }
        var ids = store.collectionIDs(under: parent, at: t)
        if let after = token?.after { ids = ids.filter { compareUTF8($0, after) > 0 } }
        // A full page is followed by a token, as on the reference, even when nothing follows.
        guard pageSize > 0, ids.count >= pageSize else {
            return CollectionIDsPage(collectionIDs: ids, nextPageToken: nil)
        }
        let page = Array(ids.prefix(pageSize))
        let next = PageToken(readTime: t ?? currentReadTime(), after: page[page.count - 1])
        return CollectionIDsPage(collectionIDs: page, nextPageToken: next.encoded())
    }

    // MARK: - Queries

    /// Runs a structured query at one consistent time.
    /// With `explain`, the plan comes back too; without `analyze` no documents are read.
    public func runQuery(
        _ query: Query, readTime: Timestamp? = nil, transaction: TransactionID? = nil, explain: ExplainOptions? = nil,
        auth: AuthContext = .owner
    ) throws(FlintError) -> QueryResult {
        try run(query, aggregating: [], readTime: readTime, transaction: transaction, explain: explain, auth: auth)
    }

    /// A query's documents; for an aggregation, only those that have the fields it sums or
    /// averages, in their order (see `NormalizedQuery`).
    private func run(
        _ query: Query, aggregating: [FieldPath], readTime: Timestamp?, transaction: TransactionID?, explain: ExplainOptions?,
        auth: AuthContext
    ) throws(FlintError) -> QueryResult {
        // What the query is, then when and whether it may be read, then how it is planned, as
        // the reference tells a query's faults.
        let normalized = try NormalizedQuery.read(query, database: id, aggregating: aggregating, heldToRules: auth != .owner)
        let requested = try self.readTime(readTime, transaction)
        try authorizeQuery(normalized.query, auth: auth, at: requested)
        try normalized.checkPlan()
        try checkIndexes(normalized)
        // The actor runs nothing in between, so the latest state is the state at this time.
        let t = requested ?? currentReadTime()
        var stats = QueryStats()
        let started = clock.now()
        let documents = QueryExecutor.run(normalized, in: store, at: requested, stats: &stats)
        if let transaction {
            // The documents an offset skipped were read as well: one of them deleted, or changed
            // so it no longer matches, moves the answer along. (The reference keeps writers off
            // them as it keeps them off the documents returned.)
            for d in try skippedByOffset(query, aggregating: aggregating, at: requested, in: transaction) + documents {
                recordRead(transaction, d.key, DocumentState(fields: d.fields, createTime: d.createTime, updateTime: d.updateTime))
            }
            recordQuery(transaction, normalized, documents.map(\.key))
        }
        guard let explain else { return QueryResult(documents: documents, readTime: t) }
        let scope = query.allDescendants ? "Collection group" : "Collection"
        let indexes: [MapValue] = [["query_scope": .string(scope), "properties": .string(IndexPlan.productionIndex(normalized))]]
        guard explain.analyze else {
            return QueryResult(documents: [], readTime: t, explainMetrics: ExplainMetrics(indexesUsed: indexes, executionStats: nil))
        }
        let execution = ExplainMetrics.ExecutionStats(
            resultsReturned: documents.count,
            executionDurationMicros: clock.now().microseconds - started.microseconds,
            readOperations: max(documents.count, 1),
            debugStats: [
                "documents_scanned": .string(String(stats.documentsScanned)),
                "index_entries_scanned": .string(String(stats.indexEntriesScanned)),
                "billing_details": .map(Self.billingDetails(documents: documents.count, indexEntries: 0)),
            ])
        return QueryResult(documents: documents, readTime: t, explainMetrics: ExplainMetrics(indexesUsed: indexes, executionStats: execution))
    }

    /// The documents `query`'s offset passes over before its first result, in order; none
    /// for a read-only transaction, which records no reads.
    private func skippedByOffset(
        _ query: Query, aggregating: [FieldPath], at readTime: Timestamp?, in transaction: TransactionID
    ) throws(FlintError) -> [Document] {
        guard query.offset > 0, transactions[transaction]?.readOnly == false else { return [] }
        var head = query
        head.limit = query.offset
        head.offset = 0
        head.projection = nil
        return QueryExecutor.run(try NormalizedQuery(head, database: id, aggregating: aggregating), in: store, at: readTime)
    }

    /// Split points that divide a collection-group query into at most `partitionCount` parts
    /// of similar size, as document names in order; a page at a time when `pageSize` is given.
    /// Only the owner may ask: the split points name documents whatever the rules say.
    public func partitionQuery(
        _ query: Query, partitionCount: Int, pageSize: Int = 0, pageToken: String? = nil, readTime: Timestamp? = nil,
        auth: AuthContext = .owner
    ) throws(FlintError) -> (cursors: [DocumentKey], nextPageToken: String?) {
        guard query.allDescendants else {
            throw .invalidArgument("A partition query must be a collection group query (all_descendants).")
        }
        guard query.filter == nil, query.startAt == nil, query.endAt == nil, query.limit == nil, query.offset == 0,
            query.projection == nil, query.findNearest == nil,
            query.orderBy.allSatisfy({ $0.field.isDocumentID && !$0.descending }), query.orderBy.count <= 1
        else {
            throw .invalidArgument(
                "A partition query may only order by __name__ ascending; filters, other orders, limits, offsets and cursors are not supported.")
        }
        guard partitionCount > 0 else { throw .invalidArgument("partition_count must be positive.") }
        guard pageSize >= 0 else { throw .invalidArgument("Page size must be nonnegative.") }
        let token = try pageToken.map { t throws(FlintError) in try PageToken(decoding: t) }
        let t = try resolveReadTime(token?.readTime ?? readTime) ?? currentReadTime()
        let normalized = try NormalizedQuery(query, database: id)
        guard auth == .owner else { throw FlintError(.permissionDenied, "Partition queries require admin authentication.") }
        let keys = QueryExecutor.run(normalized, in: store, at: t).map(\.key)
        var points: [DocumentKey] = []
        let parts = min(partitionCount, keys.count)
        if parts > 1 {
            for k in 1..<parts {
                let key = keys[k * keys.count / parts]
                if points.last != key { points.append(key) }
            }
        }
        let start = Int(token?.after ?? "") ?? 0
        guard start <= points.count else { throw .invalidArgument("invalid page token") }
        let end = pageSize > 0 ? min(start + pageSize, points.count) : points.count
        let next = end < points.count ? PageToken(readTime: t, after: String(end)).encoded() : nil
        return (Array(points[start..<end]), next)
    }

    /// Records what the query needs and, when indexes are required, refuses it like production.
    func checkIndexes(_ q: NormalizedQuery) throws(FlintError) {
        let needs = IndexRequirements.of(q)
        guard !needs.isEmpty else { return }
        for c in needs.composites where !indexUsage.composites.contains(c) { indexUsage.composites.append(c) }
        for o in needs.fieldOverrides where !indexUsage.fieldOverrides.contains(o) { indexUsage.fieldOverrides.append(o) }
        countIndexUses(needs, nameDescending: q.orderBy.last?.descending ?? false)
        guard configuration.requireIndexes else { return }
        let missing = needs.unmet(
            declared: configuration.declaredIndexes, overrides: configuration.fieldOverrides, settings: configuration.singleFieldSettings)
        if !missing.isEmpty { throw FlintError(.failedPrecondition, missing.errorMessage) }
    }

    /// The composite indexes and field overrides the queries so far would need in production.
    public func indexUsageReport() -> IndexRequirements { indexUsage }

    /// Each index the queries so far would use in production, with how many queries used it, in
    /// the order first used. A field override is a collection-group index of its one field.
    /// Each index ends in `__name__` in the direction of the query's last order, as the
    /// reference's report writes it.
    public func indexUseCounts() -> [(index: IndexSpec, queries: Int)] {
        indexUseOrder.map { ($0, indexUses[$0] ?? 0) }
    }

    private func countIndexUses(_ needs: IndexRequirements, nameDescending: Bool) {
        let name = (FieldPath.documentID, nameDescending ? IndexSpec.Mode.descending : .ascending)
        // The reference's report leaves vector searches out; so does this one.
        let used =
            needs.composites.map { $0.spec }.filter { !$0.fields.contains { $0.1.isVector } }
            + needs.fieldOverrides.map { IndexSpec(collectionGroup: $0.collectionGroup, scope: .collectionGroup, fields: [($0.field, $0.mode)]) }
        for var index in used {
            index.fields.append(name)
            if indexUses[index] == nil { indexUseOrder.append(index) }
            indexUses[index, default: 0] += 1
        }
    }

    /// Aggregates a query's documents (after its offset and limit); results keyed by alias.
    /// With `explain`, the query's plan comes back too; without `analyze`, no values.
    public func runAggregation(
        _ query: Query, aggregations: [Aggregation], readTime: Timestamp? = nil, transaction: TransactionID? = nil,
        explain: ExplainOptions? = nil, auth: AuthContext = .owner
    ) throws(FlintError) -> AggregationResult {
        try NormalizedQuery.checkOperators(query)
        try Aggregator.checkFirst(aggregations)
        try NormalizedQuery.checkShape(query, database: id)
        let aliases = try Aggregator.aliases(aggregations, of: query)
        var documentsQuery = query
        documentsQuery.projection = nil
        let result = try run(documentsQuery, aggregating: aggregations.compactMap(\.field), readTime: readTime, transaction: transaction, explain: explain, auth: auth)
        if let plan = result.explainMetrics, plan.executionStats == nil {
            return AggregationResult(values: [], readTime: result.readTime, explainMetrics: plan)
        }
        let values = Array(zip(aliases, Aggregator.aggregate(aggregations, over: result.documents.map(\.fields))))
        guard let metrics = result.explainMetrics, var stats = metrics.executionStats else {
            return AggregationResult(values: values, readTime: result.readTime)
        }
        // One result, billed as production bills aggregations: a read per 1,000 index entries
        // matched, at least one.
        stats.resultsReturned = 1
        stats.readOperations = max(1, (result.documents.count + 999) / 1000)
        stats.debugStats["billing_details"] = .map(Self.billingDetails(documents: 0, indexEntries: result.documents.count))
        return AggregationResult(
            values: values, readTime: result.readTime, explainMetrics: ExplainMetrics(indexesUsed: metrics.indexesUsed, executionStats: stats))
    }

    /// Production's `billing_details` debug statistics: what was billed, and whether the
    /// minimum of one read applied because nothing else was.
    static func billingDetails(documents: Int, indexEntries: Int) -> MapValue {
        [
            "documents_billable": .string(String(documents)),
            "index_entries_billable": .string(String(indexEntries)),
            "min_query_cost": .string(documents + indexEntries == 0 ? "1" : "0"),
        ]
    }

    /// Visits every existing document, for exports; the actor is held meanwhile, so the
    /// documents come from one consistent state. `body` returns false to stop.
    public func forEachDocument(_ body: @Sendable (Document) -> Bool) {
        store.forEachDocument { key, state in body(document(key, state)) }
    }

    /// Deletes every document at or below `path` (empty: the whole database), with no history.
    public func clear(under path: ResourcePath = .root) {
        // A failure to make the clear durable leaves the data to come back after a restart;
        // the clear itself still happens, as callers (test harnesses) expect.
        try? store.persistRemoval(under: path)
        store.removeAll(under: path)
        noteWatchedClear()
    }

    /// Deletes every document of the given collection groups (documents whose own collection
    /// has one of `collectionIDs` as its id; their subcollections stay), or every document when
    /// no id is given. Firestore in native mode has one namespace, `""`: a list of namespaces
    /// without it names no document. Each document is deleted in a commit of its own, as the
    /// reference does, so listeners see the deletions and transactions that read them lose.
    /// Returns how many documents went.
    @discardableResult
    public func bulkDelete(collectionIDs: [String], namespaceIDs: [String] = []) throws(FlintError) -> Int {
        guard !collectionIDs.isEmpty || !namespaceIDs.isEmpty else {
            throw FlintError(.failedPrecondition, "collection_ids and namespace_ids cannot both be empty.")
        }
        if !namespaceIDs.isEmpty, !namespaceIDs.contains("") { return 0 }
        let groups = Set(collectionIDs)
        var keys: [DocumentKey] = []
        store.forEachDocument { key, _ in
            if groups.isEmpty || groups.contains(key.collectionID) { keys.append(key) }
            return true
        }
        keys.sort()
        expireTransactions()
        for key in keys {
            let write = [Write.delete(key)]
            _ = try applyCommit(write, auth: .owner, inTransaction: false)
            woundReaders(of: write)
        }
        return keys.count
    }

    private func document(_ key: DocumentKey, _ s: DocumentState) -> Document {
        Document(key: key, fields: s.fields, createTime: s.createTime, updateTime: s.updateTime)
    }
}
