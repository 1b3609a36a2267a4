import NIOCore

/// Runs a task's jobs on one NIO event loop.
///
/// A connection's handler is an async task; on the global executor every request costs two
/// thread wake-ups (the event loop resuming the handler, the handler handing its answer back),
/// and on a small machine those wake-ups are a large share of a request's time. Preferring the
/// connection's own event loop keeps reading, handling and writing on one thread; default
/// actors such as a database follow the preference, so an uncontended engine call stays there too.
final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `eventLoop` is immutable and event loops are thread-safe.
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
