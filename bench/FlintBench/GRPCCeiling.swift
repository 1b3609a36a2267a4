// A gRPC server that does nothing but answer: grpc-swift's HTTP/2 transport serving one unary
// method, Firestore's Commit path, whose handler reads the request's bytes and replies with a
// fixed CommitResponse, with no decoding and no Flint code. Its CPU time per call is what the
// framework alone costs a unary RPC; bench/clients.py --ceiling reports it beside Flint's.
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import NIOPosix
import FlintServer

#if canImport(Glibc)
    import Glibc
#endif

/// Bytes in, bytes out: the handler sees the message exactly as it came.
private struct Verbatim: MessageSerializer, MessageDeserializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: [UInt8]) throws -> Bytes { Bytes(message) }
    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> [UInt8] {
        serializedMessageBytes.withUnsafeBytes { Array($0) }
    }
}

private struct AnswerEveryCommit: RegistrableRPCService {
    /// A CommitResponse with one write result and a commit time, as Flint answers a single write:
    /// field 1 (write_results) holding field 1 (update_time), and field 2 (commit_time).
    static let response: [UInt8] = {
        let timestamp: [UInt8] = [0x08, 0x80, 0xE4, 0xC4, 0xC6, 0x06, 0x10, 0xC0, 0x84, 0x3D]
        let writeResult: [UInt8] = [0x0A, UInt8(timestamp.count)] + timestamp
        return [0x0A, UInt8(writeResult.count)] + writeResult + [0x12, UInt8(timestamp.count)] + timestamp
    }()

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerHandler(
            forMethod: MethodDescriptor(fullyQualifiedService: "google.firestore.v1.Firestore", method: "Commit"),
            deserializer: Verbatim(), serializer: Verbatim()
        ) { request, _ in
            for try await _ in request.messages {}
            return StreamingServerResponse { writer in
                try await writer.write(Self.response)
                return [:]
            }
        }
    }
}

/// Serves until killed, after printing the address it listens on. With `onItsLoop`, each call's
/// task runs on the event loop, as Flint runs its gRPC calls; without, on Swift's global executor,
/// as grpc-swift does by default.
func runGRPCCeiling(onItsLoop: Bool) async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let server = GRPCServer(
        transport: .http2NIOPosix(
            address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext, eventLoopGroup: group),
        services: [AnswerEveryCommit()])
    try await withThrowingDiscardingTaskGroup { tasks in
        tasks.addTask {
            if onItsLoop {
                try await withTaskExecutorPreference(EventLoopTaskExecutor(group.next())) { try await server.serve() }
            } else {
                try await server.serve()
            }
        }
        guard let address = try await server.listeningAddress?.ipv4 else { return }
        print("listening on \(address.host):\(address.port)")
        fflush(nil)  // every stream: the reader waits for this line through a pipe
    }
}
