import Synchronization

/// Where the verdicts of one request's rules checks are collected, for the request log. Set
/// as a task-local by the server around a request; actor calls run in the request's task, so
/// the engine sees it. A listen stream keeps one for its whole life and is checked again on
/// every change, so repeats are counted rather than kept, and distinct verdicts are capped.
public final class RulesTrace: Sendable {
    @TaskLocal public static var current: RulesTrace?

    public static let maxDistinct = 64

    private struct Entries {
        var order: [String] = []
        var counts: [String: Int] = [:]
        var beyondCap = 0
    }

    private let entries = Mutex(Entries())

    public init() {}

    func record(_ entry: String) {
        entries.withLock { e in
            if let count = e.counts[entry] {
                e.counts[entry] = count + 1
            } else if e.order.count < Self.maxDistinct {
                e.order.append(entry)
                e.counts[entry] = 1
            } else {
                e.beyondCap += 1
            }
        }
    }

    /// `get users/alice allowed`, `create posts/p denied @ L12`, in the order first given; one
    /// given more than once ends in `(×N)`, and verdicts past the cap are counted at the end.
    public var all: [String] {
        entries.withLock { e in
            e.order.map { entry in
                let count = e.counts[entry] ?? 1
                return count > 1 ? "\(entry) (×\(count))" : entry
            } + (e.beyondCap > 0 ? ["\(e.beyondCap) more"] : [])
        }
    }
}
