import NIOCore

/// Runs a task's jobs on NIO event loops.
///
/// A connection's handler is an async task; on the global executor every request costs two
/// thread wake-ups (the event loop resuming the handler, the handler handing its answer back),
/// and on a small machine those wake-ups are a large share of a request's time. Preferring an
/// event loop keeps reading, handling and writing on one thread; default actors such as a
/// database follow the preference, so an uncontended engine call stays there too.
public final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `place` is immutable and event loops are thread-safe.
    private enum Place {
        /// One connection's loop (HTTP/1.1: Flint owns the connection's task).
        case loop(any EventLoop)
        /// Whichever loop of the group enqueues the job, or any of them from another thread.
        /// The gRPC transport makes the tasks of its connections and calls itself, so they
        /// cannot be given their connection's loop; but a call's task is woken by its stream's
        /// loop, and running it there saves the same wake-ups.
        case nearest(any EventLoopGroup)
    }

    private let place: Place

    public init(_ eventLoop: any EventLoop) {
        place = .loop(eventLoop)
    }

    init(nearestIn group: any EventLoopGroup) {
        place = .nearest(group)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let eventLoop: any EventLoop
        switch place {
        case .loop(let loop): eventLoop = loop
        case .nearest(let group): eventLoop = group.any()
        }
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
