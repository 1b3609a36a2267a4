import FlintEngine
import FlintModel

/// 8 clients each committing `n` transactional increments of one counter: latency of each
/// successful increment (begin to commit, retries included) and how many attempts it took.
@concurrent
func runTransactions(_ n: Int, mode: ConcurrencyMode) async throws {
    var config = DatabaseConfiguration()
    config.concurrency = mode
    let db = Database(id: DatabaseID(project: "bench"), configuration: config)
    let counter = try DocumentKey(parsing: "counters/c")
    let t0 = monotonicSeconds()
    let results = try await withThrowingTaskGroup(of: ([Double], Int).self) { group in
        for _ in 0..<8 {
            group.addTask {
                var latencies: [Double] = []
                var attempts = 0
                for _ in 0..<n {
                    let start = monotonicSeconds()
                    var previous: TransactionID?
                    while true {
                        attempts += 1
                        let tx = try await db.beginTransaction(.readWrite(retrying: previous))
                        previous = tx
                        do {
                            var value: Int64 = 0
                            if case .integer(let v)? = try await db.get(counter, transaction: tx)?.fields["n"] { value = v }
                            await Task.yield()
                            _ = try await db.commit([.set(counter, ["n": .integer(value + 1)])], transaction: tx)
                            break
                        } catch let error as FlintError {
                            if error.code != .aborted { throw error }
                        }
                    }
                    latencies.append(monotonicSeconds() - start)
                }
                return (latencies, attempts)
            }
        }
        return try await group.reduce(into: ([Double](), 0)) { $0.0 += $1.0; $0.1 += $1.1 }
    }
    let elapsed = monotonicSeconds() - t0
    let sorted = results.0.sorted()
    let final = try await db.get(counter)?.fields["n"]
    precondition(final == .integer(Int64(8 * n)))
    func us(_ q: Double) -> Int { Int(sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] * 1e6) }
    print("transactions mode=\(mode.rawValue) clients=8 increments=\(8 * n) commits/s=\(Int(Double(8 * n) / elapsed)) "
        + "p50-us=\(us(0.5)) p99-us=\(us(0.99)) attempts-per-commit=\(Double(results.1) / Double(8 * n))")
}
