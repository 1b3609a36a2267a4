import Synchronization

/// Where the verdicts of one request's rules checks are collected, for the request log. Set
/// as a task-local by the server around a request; actor calls run in the request's task, so
/// the engine sees it.
public final class RulesTrace: Sendable {
    @TaskLocal public static var current: RulesTrace?

    private let entries = Mutex<[String]>([])

    public init() {}

    func record(_ entry: String) { entries.withLock { $0.append(entry) } }

    /// `get users/alice allowed`, `create posts/p denied @ L12`, in order.
    public var all: [String] { entries.withLock { $0 } }
}
