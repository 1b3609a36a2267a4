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

/// A one-time signal any number of tasks wait for: the server has begun to shut down.
final class Latch: Sendable {
    private struct State {
        var fired = false
        var next = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    func fire() {
        let waiters = state.withLock { s in
            s.fired = true
            defer { s.waiters = [:] }
            return s.waiters.values
        }
        for w in waiters { w.resume() }
    }

    /// Returns once fired, or as soon as the waiting task is cancelled.
    func wait() async {
        let id = state.withLock { s in
            s.next += 1
            return s.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                // A cancellation that came before the waiter was registered is seen here.
                let now = state.withLock { s in
                    if s.fired || Task.isCancelled { return true }
                    s.waiters[id] = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
