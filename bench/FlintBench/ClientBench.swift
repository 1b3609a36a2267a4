import FlintEngine
import FlintFirestore
import FlintServer
import Foundation

/// The Swift client's single-document round trips: setData then getDocument on one document
/// at a time, embedded and over gRPC to a Flint on a loopback port in this process.
@concurrent
func runClient(_ count: Int) async throws {
    let engine = Engine()
    let embedded = try Firestore.embedded(project: "bench", engine: engine, user: .owner)
    try await measureRoundTrips("embedded", embedded, count)

    let server = FlintServer(engine: engine, configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
    let ready = AsyncStream<Int>.makeStream()
    let serving = Task { try await server.run { _, port in ready.continuation.yield(port) } }
    var ports = ready.stream.makeAsyncIterator()
    guard let port = await ports.next() else { return }
    let remote = Firestore.remote(host: "127.0.0.1:\(port)", project: "bench", user: .owner)
    try await measureRoundTrips("remote", remote, count)
    await remote.terminate()
    serving.cancel()
    // Another emulator to compare with (Google's: `../shared/tools/oracle.sh start 9090`).
    if let other = ProcessInfo.processInfo.environment["FLINT_BENCH_OTHER_EMULATOR"] {
        let client = Firestore.remote(host: other, project: "bench", user: .owner)
        try await measureRoundTrips("other-emulator(\(other))", client, count)
        await client.terminate()
    }
}

private func measureRoundTrips(_ label: String, _ db: Firestore, _ count: Int) async throws {
    let docs = db.collection("roundtrip")
    for i in 0..<200 { try await docs.document("warm\(i)").setData(["i": i]) }
    var writes: [Int] = []
    var reads: [Int] = []
    writes.reserveCapacity(count)
    reads.reserveCapacity(count)
    let began = monotonicSeconds()
    for i in 0..<count {
        let ref = docs.document("d\(i % 1000)")
        var t = monotonicSeconds()
        try await ref.setData(["i": i, "name": "round trip", "tags": ["a", "b"]])
        writes.append(Int((monotonicSeconds() - t) * 1_000_000_000))
        t = monotonicSeconds()
        let snapshot = try await ref.getDocument()
        reads.append(Int((monotonicSeconds() - t) * 1_000_000_000))
        precondition(snapshot.get("i") as? Int == i)
    }
    let seconds = monotonicSeconds() - began
    let us = { (ns: Int) in String(format: "%.1f", Double(ns) / 1000) }
    print(
        "client=\(label) round-trips=\(count) setData-p50-us=\(us(percentile(writes, 0.5))) setData-p99-us=\(us(percentile(writes, 0.99))) "
            + "getDocument-p50-us=\(us(percentile(reads, 0.5))) getDocument-p99-us=\(us(percentile(reads, 0.99))) pairs/s=\(rate(count, seconds))")
}
