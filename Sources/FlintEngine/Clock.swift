import FlintModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The source of commit and read times; tests substitute a manual clock.
public protocol Clock: Sendable {
    func now() -> Timestamp
}

/// The wall clock, in microseconds.
public struct SystemClock: Clock {
    public init() {}

    public func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(microseconds: Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000)
    }
}
