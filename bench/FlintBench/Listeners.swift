import FlintEngine
import FlintModel
import FlintQuery

/// Snapshot listeners in process: commit-acknowledged to snapshot-delivered latency with 1 and
/// with `count` query listeners, resident memory per idle listener, and what a stalled
/// listener costs while 10,000 changes commit.
@concurrent
func runListeners(_ count: Int) async throws {
    // A stalled listener: 10,000 changes to 10,000 documents of its collection, never read.
    let control = Database(id: DatabaseID(project: "control"))
    let heap0 = heapBytes()
    try await writeFeed(control)
    let withoutListener = heapBytes() - heap0
    let stalledDB = Database(id: DatabaseID(project: "stalled"))
    let stalled = stalledDB.snapshots(of: .query(Query(collectionID: "feed"))).makeAsyncIterator()
    _ = try await stalled.next()
    let heap1 = heapBytes()
    try await writeFeed(stalledDB)
    let withListener = heapBytes() - heap1
    let t0 = monotonicSeconds()
    let caughtUp = try await stalled.next()
    let catchUp = monotonicSeconds() - t0
    print(
        "stalled-listener changes=10000 heap-bytes-without-listener=\(withoutListener) heap-bytes-with-stalled-listener=\(withListener) "
            + "listener-overhead-bytes=\(withListener - withoutListener) catch-up-snapshot-docs=\(caughtUp?.documents.count ?? 0) catch-up-ms=\(Int(catchUp * 1000))")
    for listeners in [1, count] {
        let db = Database(id: DatabaseID(project: "bench"))
        let latencies = try await listenerLatencies(db, listeners: listeners, commits: 5_000)
        print("listeners=\(listeners) latency-p50-us=\(percentile(latencies, 0.5)) latency-p99-us=\(percentile(latencies, 0.99)) max-us=\(percentile(latencies, 1))")
    }

    // Idle listeners: each has delivered its first snapshot and waits.
    let idle = Database(id: DatabaseID(project: "idle"))
    _ = try await idle.commit((0..<100).map { .set(try! DocumentKey(parsing: "items/i\($0)"), ["n": .integer(Int64($0))]) })
    let before = residentBytes()
    var iterators: [SnapshotSequence.Iterator] = []
    for i in 0..<10_000 {
        let it = idle.snapshots(of: .query(Query(collectionID: "items", filter: .field(FieldFilter(try! FieldPath(parsing: "n"), .equal, .integer(Int64(i % 100))))))).makeAsyncIterator()
        _ = try await it.next()
        iterators.append(it)
    }
    print("idle-listeners=10000 resident-bytes-per-listener=\((residentBytes() - before) / 10_000) open-streams=\(await idle.watchStreamCount)")
    iterators.removeAll()

}

private func writeFeed(_ db: Database) async throws {
    for i in 0..<10_000 {
        _ = try await db.commit([.set(try! DocumentKey(parsing: "feed/f\(i)"), ["i": .integer(Int64(i)), "text": .string("a change of about a hundred bytes, the size of a chat message or a status update.")])])
    }
}

/// Microseconds from each commit's return to its listener's snapshot.
private func listenerLatencies(_ db: Database, listeners: Int, commits: Int) async throws -> [Int] {
    var channels: [AsyncStream<Double>.Continuation] = []
    var streams: [AsyncStream<Double>.AsyncIterator] = []
    for _ in 0..<listeners {
        let (stream, continuation) = AsyncStream<Double>.makeStream()
        channels.append(continuation)
        streams.append(stream.makeAsyncIterator())
    }
    let field = try! FieldPath(parsing: "group")
    let tasks = (0..<listeners).map { i in
        let channel = channels[i]
        let query = Query(collectionID: "scores", filter: .field(FieldFilter(field, .equal, .integer(Int64(i)))))
        return Task {
            for try await _ in db.snapshots(of: .query(query)) { channel.yield(monotonicSeconds()) }
        }
    }
    for i in 0..<listeners { _ = await streams[i].next() }  // first snapshots
    var indexes = Indexes()
    var out: [Int] = []
    out.reserveCapacity(commits)
    for c in 0..<commits {
        let k = indexes.next(below: listeners)
        _ = try await db.commit([.set(try! DocumentKey(parsing: "scores/s\(k)"), ["group": .integer(Int64(k)), "c": .integer(Int64(c))])])
        let acknowledged = monotonicSeconds()
        guard let delivered = await streams[k].next() else { break }
        out.append(Int((delivered - acknowledged) * 1e6))
    }
    for t in tasks { t.cancel() }
    return out
}

func percentile(_ values: [Int], _ p: Double) -> Int {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}
