import FlintEngine
import FlintModel
import FlintQuery
import FlintTesting
import Testing

struct TransactionTests {
    static func database(_ mode: ConcurrencyMode, clock: ManualClock = ManualClock()) -> Database {
        var config = DatabaseConfiguration()
        config.concurrency = mode
        return Database(id: DatabaseID(project: "tx"), configuration: config, clock: clock)
    }

    /// The SDKs' loop: run the body in a transaction; on ABORTED retry with the same priority.
    static func increment(_ db: Database, _ key: DocumentKey) async throws -> Int {
        var previous: TransactionID?
        for attempt in 1...10_000 {
            let tx = try await db.beginTransaction(.readWrite(retrying: previous))
            previous = tx
            if try await attemptIncrement(db, key, tx) { return attempt }
        }
        Issue.record("an increment never committed")
        return 0
    }

    /// One attempt: false when the transaction was aborted and must be retried.
    static func attemptIncrement(_ db: Database, _ key: DocumentKey, _ tx: TransactionID) async throws -> Bool {
        do {
            let current = try await db.get(key, transaction: tx)?.fields["n"]
            var n: Int64 = 0
            if case .integer(let v)? = current { n = v }
            await Task.yield()  // let the other clients interleave between read and commit
            _ = try await db.commit([.set(key, ["n": .integer(n + 1)])], transaction: tx)
            return true
        } catch {
            if error.code == .aborted { return false }
            throw error
        }
    }

    /// The status an operation ends with.
    static func code(_ body: () async throws -> Void) async -> StatusCode {
        do {
            try await body()
            return .ok
        } catch let error as FlintError {
            return error.code
        } catch {
            return .unknown
        }
    }

    @Test(arguments: [ConcurrencyMode.pessimistic, .optimistic])
    func eightClientsIncrementingOneCounterEndAtExactly1600(mode: ConcurrencyMode) async throws {
        let db = Self.database(mode)
        let counter = try DocumentKey(parsing: "counters/c")
        let attempts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask { @Sendable in
                    var total = 0
                    for _ in 0..<200 { total += try await Self.increment(db, counter) }
                    return total
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(try await db.get(counter)?.fields["n"] == 1600)
        #expect(attempts >= 1600)
    }

    @Test(arguments: [ConcurrencyMode.pessimistic, .optimistic])
    func twoTransactionsCreatingOneDocumentExactlyOneWins(mode: ConcurrencyMode) async throws {
        let db = Self.database(mode)
        let key = try DocumentKey(parsing: "users/alice")
        for firstToCommit in [0, 1] {
            await db.clear()
            let t = [try await db.beginTransaction(), try await db.beginTransaction()]
            for tx in t { #expect(try await db.get(key, transaction: tx) == nil) }
            var outcomes: [StatusCode] = []
            for i in [firstToCommit, 1 - firstToCommit] {
                outcomes.append(await Self.code {
                    _ = try await db.commit([Write(.update(key, ["by": .integer(Int64(i))]), precondition: .exists(false))], transaction: t[i])
                })
            }
            #expect(outcomes.filter { $0 == .ok }.count == 1, "\(outcomes)")
            #expect(outcomes.allSatisfy { $0 == .ok || $0 == .aborted || $0 == .alreadyExists })
        }
    }

    /// Wound-wait's wait: a younger transaction reading what an older one holds waits for it,
    /// then reads the version the older one wrote and commits on its first attempt.
    @Test func youngerReadersQueueBehindAnOlderHolder() async throws {
        // A manual clock makes the ages differ; begun in the same microsecond, the tie would be
        // broken by the random ids.
        let clock = ManualClock()
        let db = Self.database(.pessimistic, clock: clock)
        let key = try DocumentKey(parsing: "counters/q")
        _ = try await db.commit([.set(key, ["n": .integer(0)])])
        let older = try await db.beginTransaction()
        clock.advance(seconds: 1)
        let younger = try await db.beginTransaction()
        #expect(try await db.get(key, transaction: older)?.fields["n"] == 0)
        let read = Task { try await db.get(key, transaction: younger)?.fields["n"] }
        // The younger read cannot finish while the older transaction holds the document.
        try await Task.sleep(for: .milliseconds(50))
        _ = try await db.commit([.set(key, ["n": .integer(1)])], transaction: older)
        #expect(try await read.value == 1)
        _ = try await db.commit([.set(key, ["n": .integer(2)])], transaction: younger)
        #expect(try await db.get(key)?.fields["n"] == 2)
    }

    /// An abandoned older transaction delays a younger read by `lockWait` at most.
    @Test func theWaitIsBoundedByLockWait() async throws {
        var config = DatabaseConfiguration()
        config.lockWait = .milliseconds(100)
        let clock = ManualClock()
        let db = Database(id: DatabaseID(project: "tx"), configuration: config, clock: clock)
        let key = try DocumentKey(parsing: "counters/w")
        let abandoned = try await db.beginTransaction()
        _ = try await db.get(key, transaction: abandoned)
        clock.advance(seconds: 1)
        let younger = try await db.beginTransaction()
        let started = ContinuousClock.now
        #expect(try await db.get(key, transaction: younger) == nil)
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(100))
        // Far above the 100 ms: only a wait that never ends should fail here, not a test run
        // whose two pool threads are busy with other suites.
        #expect(waited < .seconds(60))
        // Reading anyway, it shares the lock; the older one still wins at commit.
        let loser = await Self.code { _ = try await db.commit([.set(key, ["by": .string("younger")])], transaction: younger) }
        #expect(loser == .aborted)
    }

    @Test func crossedReadsAndWritesFinishWithoutDeadlock() async throws {
        let clock = ManualClock()
        let db = Self.database(.pessimistic, clock: clock)
        let a = try DocumentKey(parsing: "c/a")
        let b = try DocumentKey(parsing: "c/b")
        _ = try await db.commit([.set(a, ["v": 1]), .set(b, ["v": 1])])
        let t1 = try await db.beginTransaction()
        clock.advance(seconds: 1)
        let t2 = try await db.beginTransaction()
        _ = try await db.get(a, transaction: t1)
        _ = try await db.get(b, transaction: t2)
        _ = try await db.get(b, transaction: t1)
        _ = try await db.get(a, transaction: t2)
        var codes: [StatusCode] = []
        for (tx, key) in [(t2, a), (t1, b)] {
            codes.append(await Self.code { _ = try await db.commit([.set(key, ["v": 2])], transaction: tx) })
        }
        #expect(codes == [.aborted, .ok])  // the younger yields, the older commits
    }

    @Test func readOnlyTransactionsNeverBlockWritersAndKeepTheirSnapshot() async throws {
        let db = Self.database(.pessimistic)
        let key = try DocumentKey(parsing: "c/a")
        _ = try await db.commit([.set(key, ["v": 1])])
        let ro = try await db.beginTransaction(.readOnly())
        #expect(try await db.get(key, transaction: ro)?.fields == ["v": 1])
        _ = try await db.commit([.set(key, ["v": 2])])
        #expect(try await db.get(key, transaction: ro)?.fields == ["v": 1])
        #expect(try await db.batchGet([key], transaction: ro).documents.first?.1?.fields == ["v": 1])
        await #expect(throws: FlintError.invalidArgument("Cannot modify entities in a read-only transaction.")) {
            try await db.commit([.set(key, ["v": 3])], transaction: ro)
        }
        #expect(try await db.get(key)?.fields == ["v": 2])
    }

    @Test func writesOutsideTransactionsWoundReadersInsteadOfWaiting() async throws {
        let db = Self.database(.pessimistic)
        let key = try DocumentKey(parsing: "c/a")
        let tx = try await db.beginTransaction()
        _ = try await db.get(key, transaction: tx)
        _ = try await db.commit([.set(key, ["v": 1])])  // does not wait for the reader
        await #expect(throws: FlintError(.aborted, "Too much contention on these documents. Please try again.")) {
            try await db.commit([.set(key, ["v": 2])], transaction: tx)
        }
        #expect(try await db.get(key)?.fields == ["v": 1])
    }

    @Test func optimisticCommitsFailOnStaleReads() async throws {
        let db = Self.database(.optimistic)
        let key = try DocumentKey(parsing: "c/a")
        let stale = try await db.beginTransaction()
        _ = try await db.get(key, transaction: stale)
        let fresh = try await db.beginTransaction()
        _ = try await db.get(key, transaction: fresh)
        _ = try await db.commit([.set(key, ["v": 1])], transaction: fresh)
        let e = await #expect(throws: FlintError.self) { try await db.commit([.set(key, ["v": 2])], transaction: stale) }
        #expect(e?.code == .aborted)
        #expect(try await db.get(key)?.fields == ["v": 1])
    }

    @Test func idsAreCheckedAsTheReferenceDoes() async throws {
        let clock = ManualClock()
        let db = Self.database(.pessimistic, clock: clock)
        let malformed = TransactionID(bytes: [0, 0, 0], isWellFormed: false)
        await #expect(throws: FlintError.invalidArgument("Invalid transaction.")) { try await db.commit([], transaction: malformed) }
        await #expect(throws: FlintError.invalidArgument("Invalid transaction.")) { try await db.rollback(malformed) }
        // An id of Flint's shape it never gave out here (another database's, say) is "closed".
        let foreign = try await Self.database(.pessimistic, clock: clock).beginTransaction()
        await #expect(throws: FlintError.invalidArgument("Transaction is invalid or closed.")) { try await db.commit([], transaction: foreign) }
        await #expect(throws: FlintError.invalidArgument("Transaction is invalid or closed.")) {
            try await db.get(try DocumentKey(parsing: "c/a"), transaction: foreign)
        }
        await #expect(throws: FlintError.invalidArgument("Transaction is invalid or expired.")) { try await db.rollback(foreign) }
        let used = try await db.beginTransaction()
        _ = try await db.commit([.set(try DocumentKey(parsing: "c/a"), [:])], transaction: used)
        await #expect(throws: FlintError.invalidArgument("Transaction is invalid or closed.")) { try await db.commit([], transaction: used) }
        try await db.rollback(used)  // harmless after the end, as the reference answers {}
        let idle = try await db.beginTransaction()
        clock.advance(seconds: 61)
        await #expect(throws: FlintError.invalidArgument("The referenced transaction has expired or is no longer valid.")) {
            try await db.get(try DocumentKey(parsing: "c/a"), transaction: idle)
        }
        let old = try await db.beginTransaction()
        for _ in 0..<4 {
            clock.advance(seconds: 55)
            _ = try await db.get(try DocumentKey(parsing: "c/a"), transaction: old)
        }
        clock.advance(seconds: 55)  // 275 s in all: past the 270 s lifetime though never idle for 60 s
        await #expect(throws: FlintError.invalidArgument("The referenced transaction has expired or is no longer valid.")) {
            try await db.commit([], transaction: old)
        }
    }

    static let contention = FlintError(.aborted, "Too much contention on these documents. Please try again.")

    /// A transaction that found no `tag == "x"` document must not commit as if there were none
    /// once another one has been written: a phantom no document lock covers.
    @Test(arguments: [ConcurrencyMode.pessimistic, .optimistic])
    func aDocumentThatComesToMatchATransactionsQueryAbortsIt(_ mode: ConcurrencyMode) async throws {
        let db = Self.database(mode)
        let tagged = Query(collectionID: "c", filter: .field(FieldFilter(field("tag"), .equal, "x")))
        let claim = key("claims/x")
        func attempt(_ concurrent: [Write], inTransaction: Bool, finding found: Int = 0) async throws -> FlintError? {
            let tx = try await db.beginTransaction()
            #expect(try await db.runQuery(tagged, transaction: tx).documents.count == found)
            if inTransaction {
                let other = try await db.beginTransaction()
                _ = try await db.commit(concurrent, transaction: other)
            } else {
                _ = try await db.commit(concurrent)
            }
            do {
                _ = try await db.commit([.set(claim, ["by": "tx"])], transaction: tx)
                return nil
            } catch {
                return error
            }
        }
        // Documents the query does not match change nothing.
        #expect(try await attempt([.set(key("c/a"), ["tag": "y"]), .set(key("d/b"), ["tag": "x"])], inTransaction: false) == nil)
        #expect(try await attempt([.set(key("c/a"), ["tag": "z"])], inTransaction: true) == nil)
        // One that comes to match it, outside a transaction or in another one, aborts it.
        #expect(try await attempt([.set(key("c/b"), ["tag": "x"])], inTransaction: false) == Self.contention)
        #expect(try await attempt([.set(key("c/a"), ["tag": "x"])], inTransaction: true, finding: 1) == Self.contention)
        // So does a count taken in the transaction.
        let tx = try await db.beginTransaction()
        let count = try await db.runAggregation(tagged, aggregations: [Aggregation(alias: "n", .count(upTo: nil))], transaction: tx)
        #expect(count.values.first?.1 == .integer(2))
        _ = try await db.commit([.set(key("c/c"), ["tag": "x"])])
        await #expect(throws: Self.contention) { try await db.commit([.set(claim, ["by": "count"])], transaction: tx) }
        #expect(try await db.get(claim)?.fields == ["by": "tx"])
    }

    /// A queue worker taking the first open job: new jobs that sort after the one it took are
    /// beyond its limit and change nothing; one that sorts before it does.
    @Test(arguments: [ConcurrencyMode.pessimistic, .optimistic])
    func aDocumentBeyondAQuerysLimitLeavesItsTransactionAlone(_ mode: ConcurrencyMode) async throws {
        let db = Self.database(mode)
        let firstOpen = Query(
            collectionID: "jobs", filter: .field(FieldFilter(field("open"), .equal, true)), orderBy: [Ordering(field("at"))], limit: 1,
            projection: [field("open")])
        _ = try await db.commit([.set(key("jobs/j5"), ["open": true, "at": 5])])
        func take(whileAdding job: Write) async throws -> FlintError? {
            let tx = try await db.beginTransaction()
            let taken = try #require(try await db.runQuery(firstOpen, transaction: tx).documents.first?.key)
            _ = try await db.commit([job])
            do {
                _ = try await db.commit([.set(taken, ["open": false, "at": 5])], transaction: tx)
                return nil
            } catch {
                return error
            }
        }
        #expect(try await take(whileAdding: .set(key("jobs/j9"), ["open": true, "at": 9])) == nil)
        _ = try await db.commit([.set(key("jobs/j5"), ["open": true, "at": 5])])
        #expect(try await take(whileAdding: .set(key("jobs/j1"), ["open": true, "at": 1])) == Self.contention)
    }

    /// The documents an offset skipped count as read: deleting one, or changing it so it no
    /// longer matches, moves the answer along, so the transaction must not commit what it saw.
    /// A document that does not match changes nothing.
    @Test(arguments: [ConcurrencyMode.pessimistic, .optimistic])
    func documentsSkippedByAnOffsetGuardTheTransaction(_ mode: ConcurrencyMode) async throws {
        let db = Self.database(mode)
        let second = Query(collectionID: "c", filter: .field(FieldFilter(field("v"), .equal, 1)), orderBy: [Ordering(field("n"))], offset: 1, limit: 1)
        func answer(whileCommitting outside: Write) async throws -> FlintError? {
            _ = try await db.commit(["a", "b", "c"].enumerated().map { i, id in .set(key("c/\(id)"), ["v": 1, "n": .integer(Int64(i))]) })
            let tx = try await db.beginTransaction()
            let seen = try #require(try await db.runQuery(second, transaction: tx).documents.first?.key)
            #expect(seen == key("c/b"))
            _ = try await db.commit([outside])
            do {
                _ = try await db.commit([.set(key("out/o"), ["saw": .string(seen.path.canonical)])], transaction: tx)
                return nil
            } catch {
                return error
            }
        }
        #expect(try await answer(whileCommitting: .delete(key("c/a"))) == Self.contention)
        #expect(try await answer(whileCommitting: .set(key("c/a"), ["v": 2, "n": 0])) == Self.contention)
        #expect(try await answer(whileCommitting: .set(key("c/z"), ["v": 2, "n": 9])) == nil)
    }

    /// As on the reference: a commit refused from the request alone leaves its transaction open,
    /// and one that fails on the stored documents (a precondition, the rules) ends it.
    @Test func onlyACommitThatReachedTheDocumentsEndsItsTransaction() async throws {
        let db = Self.database(.pessimistic)
        let key = try DocumentKey(parsing: "c/a")
        _ = try await db.commit([.set(key, ["v": 1])])
        let refusals: [([Write], String)] = [
            ([.set(key, ["__x__": 1])], "field name __x__ is reserved"),
            ([.set(key, [:]), Write(.update(key, [:]), precondition: .exists(false))], "Cannot upsert then insert an entity in the same request."),
        ]
        let tx = try await db.beginTransaction()
        for (writes, message) in refusals {
            await #expect(throws: FlintError.invalidArgument(message)) { try await db.commit(writes, transaction: tx) }
            #expect(try await db.get(key, transaction: tx)?.fields == ["v": 1])
        }
        _ = try await db.commit([.set(key, ["v": 2])], transaction: tx)
        #expect(try await db.get(key)?.fields == ["v": 2])

        let ro = try await db.beginTransaction(.readOnly())
        await #expect(throws: FlintError.invalidArgument("Cannot modify entities in a read-only transaction.")) {
            try await db.commit([.set(key, ["v": 3])], transaction: ro)
        }
        _ = try await db.commit([], transaction: ro)

        let failed = try await db.beginTransaction()
        let missing = try DocumentKey(parsing: "c/missing")
        let e = await #expect(throws: FlintError.self) {
            try await db.commit([Write(.update(missing, [:]), precondition: .exists(true))], transaction: failed)
        }
        #expect(e?.code == .notFound)
        await #expect(throws: FlintError.invalidArgument("Transaction is invalid or closed.")) { try await db.commit([], transaction: failed) }
    }

    @Test func rolledBackAndExpiredTransactionsReleaseTheirLocks() async throws {
        let clock = ManualClock()
        let db = Self.database(.pessimistic, clock: clock)
        let key = try DocumentKey(parsing: "c/a")
        let old = try await db.beginTransaction()
        _ = try await db.get(key, transaction: old)
        clock.advance(seconds: 1)
        let young = try await db.beginTransaction()
        _ = try await db.get(key, transaction: young)
        try await db.rollback(old)
        _ = try await db.commit([.set(key, ["v": 1])], transaction: young)  // nothing older holds a lock now
        let abandoned = try await db.beginTransaction()
        _ = try await db.get(key, transaction: abandoned)
        clock.advance(seconds: 61)
        let next = try await db.beginTransaction()
        _ = try await db.get(key, transaction: next)
        _ = try await db.commit([.set(key, ["v": 2])], transaction: next)
        #expect(try await db.get(key)?.fields == ["v": 2])
    }

    @Test func retriesKeepTheirPriority() async throws {
        let clock = ManualClock()
        let db = Self.database(.pessimistic, clock: clock)
        let key = try DocumentKey(parsing: "c/a")
        let first = try await db.beginTransaction()
        clock.advance(seconds: 1)
        let other = try await db.beginTransaction()
        clock.advance(seconds: 1)
        let retry = try await db.beginTransaction(.readWrite(retrying: first))  // as old as `first`
        _ = try await db.get(key, transaction: retry)
        _ = try await db.get(key, transaction: other)
        await #expect(throws: FlintError.self) { try await db.commit([.set(key, ["by": "other"])], transaction: other) }
        _ = try await db.commit([.set(key, ["by": "retry"])], transaction: retry)
        #expect(try await db.get(key)?.fields == ["by": "retry"])
        // An id Flint could not have given is refused; one it could have, long forgotten, starts afresh.
        await #expect(throws: FlintError.invalidArgument("Invalid transaction.")) {
            try await db.beginTransaction(.readWrite(retrying: TransactionID(bytes: Array("abc".utf8), isWellFormed: false)))
        }
        _ = try await db.beginTransaction(.readWrite(retrying: TransactionID(bytes: Array(repeating: 7, count: 16))))
        // A read-only transaction is not retried, open or ended.
        let readOnly = try await db.beginTransaction(.readOnly())
        await #expect(throws: FlintError.invalidArgument("Cannot retry a read-only transaction.")) {
            try await db.beginTransaction(.readWrite(retrying: readOnly))
        }
        _ = try await db.commit([], transaction: readOnly)
        await #expect(throws: FlintError.invalidArgument("Cannot retry a read-only transaction.")) {
            try await db.beginTransaction(.readWrite(retrying: readOnly))
        }
    }
}
