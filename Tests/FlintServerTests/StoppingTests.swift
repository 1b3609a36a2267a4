import FlintEngine
import FlintHTTPClient
import NIOCore
import NIOEmbedded
import NIOPosix
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@testable import FlintServer

struct StoppingTests {
    @Test(.timeLimit(.minutes(1))) func connectionsLeaveTheRegistryAsTheyCloseAndCloseAllClosesTheRest() async throws {
        let connections = OpenConnections()
        let first = EmbeddedChannel()
        let second = EmbeddedChannel()
        // An embedded channel closes (and completes its close future) only once active.
        for channel in [first, second] {
            try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        }
        connections.add(first)
        connections.add(second)
        #expect(connections.count == 2)
        try await first.close().get()
        // Callbacks on an embedded event loop run when it is told to run.
        first.embeddedEventLoop.run()
        #expect(connections.count == 1)
        connections.closeAll()
        second.embeddedEventLoop.run()
        try await second.closeFuture.get()
        #expect(connections.count == 0)
    }

    /// A client that sends half a request would hold the HTTP server's graceful shutdown for
    /// good; the stop closes its connection once the grace period is over.
    @Test(.timeLimit(.minutes(1))) func aHalfSentRequestDoesNotHoldUpAStop() async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        let running = try await server.start()
        let client = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: running.host, port: running.port).get()
        try await client.writeAndFlush(ByteBuffer(string: "GET /v1/projects/p/databases/(default)/documents/c/d HTTP/1.1\r\nHost: f\r\n")).get()
        // Time for the server to read the request's start before it is told to stop.
        try await Task.sleep(for: .milliseconds(100))
        running.stop()
        try await running.finished()
        // The stop closed the connection: the client sees its end.
        try await client.closeFuture.get()
        #expect(!client.isActive)
    }

    #if canImport(Glibc)
    /// Signals belong to the program that embeds Flint (only the command line stops on them): a
    /// running or stopped server leaves the program's own SIGTERM handler in place. Run in a
    /// process of its own, as other tests' servers in this one trap SIGTERM themselves.
    @Test(.timeLimit(.minutes(1))) func anEmbeddedServerLeavesTheProgramsSignalsToIt() async {
        await #expect(processExitsWith: .success) {
            var counting = sigaction()
            counting.__sigaction_handler = .init(sa_handler: { _ in sigtermsReceived.add(1, ordering: .relaxed) })
            sigaction(SIGTERM, &counting, nil)
            let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
            let running = try await server.start()
            kill(getpid(), SIGTERM)
            guard try await sigtermsReceived(reach: 1) else { exit(2) }
            // The signal did not stop it.
            guard try await HTTPClient.send("GET", "/", to: running.address).status == 200 else { exit(3) }
            running.stop()
            try await running.finished()
            kill(getpid(), SIGTERM)
            guard try await sigtermsReceived(reach: 2) else { exit(4) }
        }
    }
    #endif
}

/// SIGTERMs the process's own handler has received.
private let sigtermsReceived = Atomic<Int>(0)

/// Whether the handler, which runs on whichever thread takes the signal, has seen `count`
/// signals within five seconds.
private func sigtermsReceived(reach count: Int) async throws -> Bool {
    for _ in 0..<500 where sigtermsReceived.load(ordering: .relaxed) < count {
        try await Task.sleep(for: .milliseconds(10))
    }
    return sigtermsReceived.load(ordering: .relaxed) == count
}
