import NIOCore
import NIOPosix
import Testing

@testable import FlintServer

/// Where a task that prefers an event-loop executor runs after each suspension: on its loop,
/// or (for the gRPC server) on the loop that woke it, never on the global pool.
struct EventLoopTaskExecutorTests {
    /// Suspends until `waker` resumes the task. The wake-up is sent only once the task has left
    /// the loop it runs on (a job queued there runs after it), so it always comes from `waker`;
    /// a resumption that came first would let the task go on where it was.
    static func wake(from waker: any EventLoop) async throws {
        let current = try #require(MultiThreadedEventLoopGroup.currentEventLoop)
        let promise = waker.makePromise(of: Void.self)
        current.execute { waker.execute { promise.succeed() } }
        try await promise.futureResult.get()
    }

    @Test func aConnectionsTaskRunsOnItsLoopWhoeverWakesIt() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let (home, other) = (group.next(), group.next())
        let places = try await withTaskExecutorPreference(EventLoopTaskExecutor(home)) {
            var places = [home.inEventLoop]
            for waker in [other, home, other, other] {
                try await Self.wake(from: waker)
                places.append(home.inEventLoop)
            }
            return places
        }
        try await group.shutdownGracefully()
        #expect(places == Array(repeating: true, count: 5))
    }

    @Test func aCallsTaskRunsOnTheLoopThatWokeIt() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let (first, second) = (group.next(), group.next())
        let places = try await withTaskExecutorPreference(EventLoopTaskExecutor(nearestIn: group)) {
            // Started from a thread outside the group, it still runs on one of its loops.
            var places = [first.inEventLoop || second.inEventLoop]
            // Not alternating, so a round robin over the loops cannot pass by chance.
            for waker in [second, second, first, first, first, second] {
                try await Self.wake(from: waker)
                places.append(waker.inEventLoop)
            }
            return places
        }
        try await group.shutdownGracefully()
        #expect(places == Array(repeating: true, count: 7))
    }
}
