import Testing

@testable import FlintServer

struct LatchTests {
    @Test(.timeLimit(.minutes(1))) func firingReleasesEveryWaiterAndLaterOnesAtOnce() async {
        let latch = Latch()
        let waiters = (0..<3).map { _ in Task { await latch.wait() } }
        try? await Task.sleep(for: .milliseconds(20))
        latch.fire()
        for w in waiters { await w.value }
        // Once fired, a new waiter does not wait.
        await latch.wait()
    }

    @Test(.timeLimit(.minutes(1))) func aCancelledWaiterReturnsWithoutAFiring() async {
        let latch = Latch()
        let waiter = Task { await latch.wait() }
        try? await Task.sleep(for: .milliseconds(20))
        waiter.cancel()
        await waiter.value
        // Cancelled before it starts to wait: it returns too.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await latch.wait()
        }
        await early.value
    }
}
