// In-process engine benchmark: single-document commits, point reads and resident memory
// per document at a given collection size. Run through bench/run.sh (release build).
import CHeapStats
import FlintEngine
import FlintQuery
import FlintModel

#if canImport(Glibc)
    import Glibc
#endif

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Heap bytes in use (small blocks and mmapped ones), from glibc's allocator.
func heapBytes() -> Int {
    Int(flint_heap_bytes_in_use())
}

/// Resident set size in bytes, from /proc/self/statm.
func residentBytes() -> Int {
    guard let f = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(f) }
    var size = 0
    var resident = 0
    _ = withUnsafeMutablePointer(to: &size) { s in
        withUnsafeMutablePointer(to: &resident) { r in
            withVaList([s, r]) { vfscanf(f, "%ld %ld", $0) }
        }
    }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// A Firestore-style 20-character auto id for index `i`: deterministic and computable in any
/// order, so reads can build their key fresh, as the server does from a request.
func autoID(_ i: Int) -> String {
    let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    var z = UInt64(i) &+ 0x9E37_79B9_7F4A_7C15
    return String(unsafeUninitializedCapacity: 20) { buffer in
        for j in 0..<20 {
            if j % 10 == 0 {
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                z ^= z >> 31
            }
            buffer[j] = alphabet.utf8Start[Int((z >> (6 * UInt64(j % 10))) & 63) % 62]
        }
        return 20
    }
}

func userKey(_ i: Int) -> DocumentKey {
    try! DocumentKey(ResourcePath(["users", autoID(i)]))
}

/// A cheap deterministic random sequence of indexes.
struct Indexes {
    var state: UInt64 = 42
    mutating func next(below n: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int(state >> 33) % n
    }
}

func rate(_ count: Int, _ seconds: Double) -> String { String(Int(Double(count) / seconds)) }

func smallDocument(_ i: Int) -> MapValue {
    ["name": .string("user\(i)"), "age": .integer(Int64(i % 90)), "active": .boolean(i % 2 == 0),
     "score": .double(Double(i) / 7), "city": "Pune"]
}

let arguments = Array(CommandLine.arguments.dropFirst())
let mode = ["queries", "transactions", "listeners", "rules", "durable", "export", "managed-export", "client", "http-ceiling", "hummingbird-ceiling", "grpc-ceiling", "grpc-ceiling-on-loop"].contains(arguments.first ?? "") ? arguments[0] : "documents"
let size = Int(arguments.last ?? "") ?? 100_000

/// Runs off the main actor, so each call to the database actor is a plain executor switch
/// on the same thread rather than a hop between threads.
@concurrent
func run(_ n: Int) async throws {
    let reads = 1_000_000
    let baseline = heapBytes() + n * MemoryLayout<MapValue>.stride  // the documents array, freed below
    let db = Database(id: DatabaseID(project: "bench"))

    // Inserts: one commit per document. Keys are built as a server would, from fresh strings
    // that only the store keeps, so the memory figure includes the ids.
    var writeKeys: [DocumentKey]? = (0..<n).map(userKey)
    let documents = (0..<n).map(smallDocument)
    var start = monotonicSeconds()
    for i in 0..<n {
        _ = try await db.commit([.set(writeKeys![i], documents[i])])
    }
    let insertSeconds = monotonicSeconds() - start
    writeKeys = nil  // now the store holds the only copy of each id
    let afterInsert = heapBytes() - baseline


    // Point reads of random existing documents.
    var indexes = Indexes()
    start = monotonicSeconds()
    var found = 0
    for _ in 0..<reads {
        if try await db.get(userKey(indexes.next(below: n))) != nil { found += 1 }
    }
    let readSeconds = monotonicSeconds() - start
    precondition(found == reads)

    // Updates of existing documents (each keeps its previous version within retention).
    let updates = min(n, 200_000)
    start = monotonicSeconds()
    for i in 0..<updates {
        _ = try await db.commit([.set(userKey(i), smallDocument(i + 1))])
    }
    let updateSeconds = monotonicSeconds() - start
    let afterUpdate = heapBytes() - baseline

        print(
        "documents=\(n) rss-MiB=\(residentBytes() >> 20) inserts/s=\(rate(n, insertSeconds)) reads/s=\(rate(reads, readSeconds)) updates/s=\(rate(updates, updateSeconds)) "
            + "bytes/doc=\(afterInsert / n) bytes/doc-with-history=\(afterUpdate / n) (\(updates) updated)")

}

switch mode {
case "queries": try await runQueries(size)
case "listeners": try await runListeners(size)
case "rules": runRules(size)
case "durable": try await runDurable(size)
case "export": try await runExport(size)
case "managed-export": try await runManagedExport(size)
case "client": try await runClient(size)
case "http-ceiling": try runHTTPCeiling()
case "hummingbird-ceiling": try await runHummingbirdCeiling()
case "grpc-ceiling": try await runGRPCCeiling(onItsLoop: false)
case "grpc-ceiling-on-loop": try await runGRPCCeiling(onItsLoop: true)
case "transactions":
    try await runTransactions(size, mode: .pessimistic)
    try await runTransactions(size, mode: .optimistic)
default: try await run(size)
}
