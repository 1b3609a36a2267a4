import FlintEngine
import FlintProto
import FlintServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import Testing

/// Compressed gRPC requests, against the reference and Flint: which encodings each takes.
struct GRPCCompressionDifferentialTests {
    /// What a commit and then a get answer when each is sent with the given encoding.
    static func outcomes(port: Int, project: String) async throws -> [String] {
        var config = HTTP2ClientTransport.Posix.Config.defaults
        config.compression.enabledAlgorithms = [.gzip, .deflate]
        return try await withGRPCClient(
            transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext, config: config)
        ) { client in
            let firestore = Google_Firestore_V1_Firestore.Client(wrapping: client)
            let metadata: Metadata = ["authorization": "Bearer owner"]
            let name = "projects/\(project)/databases/(default)/documents/c/a"
            var lines: [String] = []
            for (label, algorithm) in [("identity", CompressionAlgorithm.none), ("gzip", .gzip), ("deflate", .deflate)] {
                var options = CallOptions.defaults
                options.compression = algorithm
                var value = Google_Firestore_V1_Value()
                value.stringValue = String(repeating: label + " ", count: 1_000)
                var commit = Google_Firestore_V1_CommitRequest()
                commit.database = "projects/\(project)/databases/(default)"
                var write = Google_Firestore_V1_Write()
                write.update.name = name
                write.update.fields = ["s": value]
                commit.writes = [write]
                var get = Google_Firestore_V1_GetDocumentRequest()
                get.name = name
                do {
                    _ = try await firestore.commit(commit, metadata: metadata, options: options)
                    let doc = try await firestore.getDocument(get, metadata: metadata, options: options)
                    lines.append("\(label): \(doc.fields["s"]?.stringValue == value.stringValue ? "stored" : "differs")")
                } catch let error as RPCError {
                    lines.append("\(label): \(error.code)")
                }
            }
            return lines
        }
    }

    @Test func gzipIsTakenAndDeflateRefusedOnBoth() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential compression test skipped")
            return
        }
        defer { reference.stop() }
        let project = "flint-grpc-compression"
        let expected = try await Self.outcomes(port: reference.port, project: project)
        #expect(expected == ["identity: stored", "gzip: stored", "deflate: unimplemented"])

        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        let running = try await server.start()
        defer { running.stop() }
        #expect(try await Self.outcomes(port: running.port, project: project) == expected)
    }
}
