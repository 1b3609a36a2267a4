import GRPCCore
import Synchronization
import Testing

@testable import FlintServer

/// The transport Flint serves gRPC through takes the clients' deadlines out of each call's
/// metadata, so grpc-swift sets no timer per call (a timer that held memory for the whole
/// deadline); everything else about the call passes through unchanged.
struct DeadlineFreeTransportTests {
    /// A transport that hands the server one call, made of the given parts.
    struct OneCall: ServerTransport {
        typealias Bytes = [UInt8]
        let parts: [RPCRequestPart<[UInt8]>]

        func listen(streamHandler: @escaping @Sendable (RPCStream<Inbound, Outbound>, ServerContext) async -> Void) async throws {
            let stream = RPCStream(
                descriptor: MethodDescriptor(fullyQualifiedService: "google.firestore.v1.Firestore", method: "Commit"),
                inbound: RPCAsyncSequence(wrapping: AsyncThrowingStream { continuation in
                    for part in parts { continuation.yield(part) }
                    continuation.finish()
                }),
                outbound: RPCWriter.Closable(wrapping: Discarding()))
            await streamHandler(stream, ServerContext(descriptor: stream.descriptor, remotePeer: "test", localPeer: "test", cancellation: .init()))
        }

        func beginGracefulShutdown() {}
    }

    struct Discarding: ClosableRPCWriterProtocol {
        func write(_ element: RPCResponsePart<[UInt8]>) async throws {}
        func write(contentsOf elements: some Sequence<RPCResponsePart<[UInt8]>>) async throws {}
        func finish() async {}
        func finish(throwing error: any Error) async {}
    }

    @Test func theDeadlineIsTakenOutAndTheRestPassesThrough() async throws {
        let metadata: Metadata = ["grpc-timeout": "59999952u", "authorization": "Bearer owner", "x-goog-api-client": "gl-python/3.11"]
        let transport = DeadlineFreeTransport(base: OneCall(parts: [.metadata(metadata), .message([1, 2, 3])]))
        let seen = Mutex<[String]>([])
        try await transport.listen { stream, _ in
            do {
                for try await part in stream.inbound {
                    switch part {
                    case .metadata(let m): seen.withLock { $0.append(m.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")) }
                    case .message(let bytes): seen.withLock { $0.append("\(bytes)") }
                    }
                }
            } catch {
                seen.withLock { $0.append("error \(error)") }
            }
        }
        #expect(seen.withLock { $0 } == ["authorization=Bearer owner x-goog-api-client=gl-python/3.11", "[1, 2, 3]"])
    }
}
