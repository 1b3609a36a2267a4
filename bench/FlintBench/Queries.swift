import FlintEngine
import FlintModel
import FlintQuery

/// Query throughput and latency at `n` documents. Every document has `g` (one of n/100
/// groups, so an equality matches 100 documents) and `t` (a number to order by).
@concurrent
func runQueries(_ n: Int) async throws {
    let db = Database(id: DatabaseID(project: "bench"))
    var indexes = Indexes()
    var start = 0
    while start < n {
        let end = min(start + 500, n)
        _ = try await db.commit((start..<end).map { i in
            .set(userKey(i), ["g": .integer(Int64(i % (n / 100))), "t": .integer(Int64(indexes.next(below: 1_000_000))), "name": .string("user\(i)")])
        })
        start = end
    }
    let groups = n / 100
    func query(_ group: Int, limit: Int?) -> Query {
        Query(collectionID: "users", filter: .field(FieldFilter(try! FieldPath(parsing: "g"), .equal, .integer(Int64(group)))),
              orderBy: [Ordering(try! FieldPath(parsing: "t"), descending: true)], limit: limit)
    }
    // Build the index once, as the first query of this shape does.
    let first = try await db.runQuery(query(0, limit: nil))
    precondition(first.documents.count == 100)

    func throughput(limit: Int?, expect: Int) async throws -> Int {
        let rounds = 20_000
        let t0 = monotonicSeconds()
        for _ in 0..<rounds {
            let r = try await db.runQuery(query(indexes.next(below: groups), limit: limit))
            precondition(r.documents.count == expect)
        }
        return Int(Double(rounds) / (monotonicSeconds() - t0))
    }
    let q100 = try await throughput(limit: nil, expect: 100)
    let q10 = try await throughput(limit: 10, expect: 10)

    var latencies: [Double] = []
    for _ in 0..<5_000 {
        let t0 = monotonicSeconds()
        _ = try await db.runQuery(query(indexes.next(below: groups), limit: 10))
        latencies.append(monotonicSeconds() - t0)
    }
    latencies.sort()
    let p50 = latencies[latencies.count / 2] * 1e6
    let p99 = latencies[latencies.count * 99 / 100] * 1e6

    // The same query scanning every document (a read time bypasses the indexes).
    let scans = max(3, 2_000_000 / n)
    let t0 = monotonicSeconds()
    for _ in 0..<scans {
        let readTime = await db.currentReadTime()
        _ = try await db.runQuery(query(indexes.next(below: groups), limit: 10), readTime: readTime)
    }
    let scanMicros = (monotonicSeconds() - t0) / Double(scans) * 1e6
    print("queries documents=\(n) eq+order(100 results)/s=\(q100) eq+order+limit10/s=\(q10) "
        + "limit10 p50-us=\(String(Int(p50 * 10) / 10)) p99-us=\(String(Int(p99 * 10) / 10)) full-scan-us=\(Int(scanMicros))")
}
