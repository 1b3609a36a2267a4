import FlintDurable
import FlintEngine
import FlintExport
import FlintModel
import Foundation

/// Export and import of `n` small documents: seconds, documents/s, the export's size, and
/// resident memory before and after each (the export streams; the import holds what it loads,
/// since the data lives in memory).
func runExport(_ n: Int) async throws {
    let source = try await seededEngine(n)
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flint-bench-export-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let before = residentBytes()
    var start = monotonicSeconds()
    let written = try await FlintExport.export(source, to: dir)
    let exportSeconds = monotonicSeconds() - start
    let afterExport = residentBytes()
    let size = (try? FileManager.default.attributesOfItem(atPath: dir + "/bench/(default).jsonl.gz")[.size] as? Int) ?? 0
    print("export documents=\(written.documents) seconds=\(String(format: "%.1f", exportSeconds)) docs/s=\(rate(n, exportSeconds)) file-MiB=\(size >> 20) rss-MiB-before=\(before >> 20) rss-MiB-after=\(afterExport >> 20)")
    // Offline import into a data directory: batches stream into SQLite, nothing is kept.
    let dataDir = dir + "-data"
    defer { try? FileManager.default.removeItem(atPath: dataDir) }
    try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
    let file = try DurableFile(path: dataDir + "/flint.sqlite")
    let beforeOffline = residentBytes()
    start = monotonicSeconds()
    var loaded = 0
    // As `flint import` does it: every document checked first, then loaded.
    try await FlintExport.check(dir)
    try await FlintExport.forEachBatch(in: dir) { id, batch in
        try file.load(id, batch.map(\.1))
        loaded += batch.count
    }
    let offlineSeconds = monotonicSeconds() - start
    print("offline-import documents=\(loaded) seconds=\(String(format: "%.1f", offlineSeconds)) docs/s=\(rate(loaded, offlineSeconds)) rss-MiB-growth=\((residentBytes() - beforeOffline) >> 20)")
    // The check every import makes first: each document read and checked, nothing written.
    start = monotonicSeconds()
    try await FlintExport.check(dir)
    let checkSeconds = monotonicSeconds() - start
    print("check documents=\(n) seconds=\(String(format: "%.1f", checkSeconds)) docs/s=\(rate(n, checkSeconds)) (part of each import)")
    let target = Engine()
    start = monotonicSeconds()
    let read = try await FlintExport.import(from: dir, into: target)
    let importSeconds = monotonicSeconds() - start
    print("import documents=\(read.documents) seconds=\(String(format: "%.1f", importSeconds)) docs/s=\(rate(n, importSeconds)) rss-MiB-after=\(residentBytes() >> 20) (holding both engines)")
}

/// The same documents as a managed export (Google's format): written, then read back into a
/// fresh engine; the reader holds one 32 KiB block and one batch at a time.
func runManagedExport(_ n: Int) async throws {
    let source = try await seededEngine(n)
    let db = source.database(project: "bench")
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flint-bench-managed-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let before = residentBytes()
    var start = monotonicSeconds()
    let written = try await ManagedExport.export(db, to: dir)
    let exportSeconds = monotonicSeconds() - start
    let size = (try? FileManager.default.attributesOfItem(atPath: dir + "/firestore_export/all_namespaces/all_kinds/output-0")[.size] as? Int) ?? 0
    print("managed-export documents=\(written) seconds=\(String(format: "%.1f", exportSeconds)) docs/s=\(rate(n, exportSeconds)) file-MiB=\(size >> 20) rss-MiB-growth=\((residentBytes() - before) >> 20)")
    // The check every import makes first: each document read and checked, nothing written.
    start = monotonicSeconds()
    try await FlintExport.check(dir)
    let checkSeconds = monotonicSeconds() - start
    print("check documents=\(n) seconds=\(String(format: "%.1f", checkSeconds)) docs/s=\(rate(n, checkSeconds)) (part of each import)")
    let target = Engine()
    start = monotonicSeconds()
    let read = try await FlintExport.import(from: dir, into: target)
    let importSeconds = monotonicSeconds() - start
    print("managed-import documents=\(read.documents) seconds=\(String(format: "%.1f", importSeconds)) docs/s=\(rate(n, importSeconds)) rss-MiB-after=\(residentBytes() >> 20) (holding both engines)")
}

/// An engine holding `n` small documents in project "bench", written 500 at a time.
private func seededEngine(_ n: Int) async throws -> Engine {
    let source = Engine()
    let db = source.database(project: "bench")
    var i = 0
    while i < n {
        let end = min(i + 500, n)
        _ = try await db.commit((i..<end).map { .set(userKey($0), smallDocument($0)) })
        i = end
    }
    return source
}
