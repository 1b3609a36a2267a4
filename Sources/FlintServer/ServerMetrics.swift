import Foundation
import Synchronization

/// Counters for the metrics endpoint, shared by both sides of the port.
final class ServerMetrics: Sendable {
    let httpRequests = Atomic<Int>(0)
    let grpcCalls = Atomic<Int>(0)

    /// This process's resident memory, from /proc; nil where there is none.
    static func residentBytes() -> Int? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// Ends a running server from inside it (`POST /shutdown`).
final class ShutdownTrigger: Sendable {
    private let stream = AsyncStream<Void>.makeStream()

    func fire() { stream.continuation.yield() }

    /// Returns when fired.
    func wait() async {
        var it = stream.stream.makeAsyncIterator()
        _ = await it.next()
    }
}
