import FlintEngine
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

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
}
