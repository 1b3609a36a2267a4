import FlintEngine
import FlintModel
import Synchronization

/// A clock that moves only when told, so tests never sleep.
public final class ManualClock: Clock {
    private let current: Mutex<Timestamp>

    public init(_ start: Timestamp = Timestamp(microseconds: 1_700_000_000_000_000)) {
        current = Mutex(start)
    }

    public func now() -> Timestamp { current.withLock { $0 } }

    public func advance(microseconds: Int64) {
        current.withLock { $0 = $0.adding(microseconds: microseconds) }
    }

    public func advance(seconds: Int64) { advance(microseconds: seconds * 1_000_000) }
}
