import FlintDurable
import FlintEngine
import FlintModel
import Foundation

/// Durable mode: documents per second in 500-write commits, single-write commits per second,
/// and the time to restore at start, for each fsync policy.
func runDurable(_ n: Int) async throws {
    for (name, sync) in [("process-crash-safe", DurableFile.Sync.processCrashSafe), ("sync-every-commit", .everyCommit)] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flint-bench-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var engine: Engine? = try Engine.durable(directory: dir, sync: sync)
        let db = engine!.database(project: "bench")
        var start = monotonicSeconds()
        var i = 0
        while i < n {
            let end = min(i + 500, n)
            _ = try await db.commit((i..<end).map { .set(userKey($0), smallDocument($0)) })
            i = end
        }
        let batched = monotonicSeconds() - start
        let singles = sync == .everyCommit ? 2_000 : 20_000
        start = monotonicSeconds()
        for j in 0..<singles { _ = try await db.commit([.set(userKey(j), smallDocument(j + 1))]) }
        let single = monotonicSeconds() - start
        engine = nil
        start = monotonicSeconds()
        let restored = try Engine.durable(directory: dir, sync: sync)
        let count = await restored.database(project: "bench").documentCount
        let restore = monotonicSeconds() - start
        let size = ((try? FileManager.default.attributesOfItem(atPath: dir + "/flint.sqlite")[.size] as? Int) ?? 0) >> 20
        print("durable \(name) documents=\(n) docs/s-in-500-write-commits=\(rate(n, batched)) single-write-commits/s=\(rate(singles, single)) restore-s=\(String(format: "%.2f", restore)) restored=\(count) file-MiB=\(size) rss-MiB=\(residentBytes() >> 20)")
    }
}
