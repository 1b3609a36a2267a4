import FlintEngine
import FlintProto
import FlintServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import Synchronization
import Testing

/// Target ids and resets on a raw Listen stream, against the reference and Flint. The SDKs
/// choose their own ids and keep their own tokens, so only the wire shows these.
struct ListenTargetsDifferentialTests {
    typealias Request = Google_Firestore_V1_ListenRequest

    /// What the stream's reader has seen, shared with the test that waits on it.
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
    }

    /// The stream's target changes, one line each ("ADD [1]", "RESET [12] token readTime",
    /// "CURRENT [1]"), for targets added in turn, each once the previous one is current.
    static func scenario(port: Int, project: String, targets: [(id: Int32, token: Data?)]) async throws -> [String] {
        let database = "projects/\(project)/databases/(default)"
        let seen = Lines()
        let requests = AsyncStream<Request>.makeStream()
        try await withGRPCClient(
            transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
        ) { client in
            let firestore = Google_Firestore_V1_Firestore.Client(wrapping: client)
            let metadata: Metadata = ["google-cloud-resource-prefix": "\(database)", "authorization": "Bearer owner"]
            let call = Task {
                try await firestore.listen(metadata: metadata, requestProducer: { writer in
                    for await r in requests.stream { try await writer.write(r) }
                }) { response in
                    for try await m in response.messages {
                        guard case .targetChange(let t)? = m.responseType, !t.targetIds.isEmpty else { continue }
                        var line = "\(t.targetChangeType)".uppercased() + " \(t.targetIds)"
                        if t.targetChangeType == .reset {
                            line += (t.resumeToken.isEmpty ? "" : " token") + (t.hasReadTime ? " readTime" : "")
                        }
                        seen.lines.withLock { $0.append(line) }
                    }
                }
            }
            for (index, target) in targets.enumerated() {
                var r = Request()
                r.database = database
                r.addTarget.targetID = target.id
                r.addTarget.query.parent = database + "/documents"
                var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
                from.collectionID = "c"
                r.addTarget.query.structuredQuery.from = [from]
                if let token = target.token { r.addTarget.resumeToken = token }
                requests.continuation.yield(r)
                let deadline = ContinuousClock.now + .seconds(30)
                while seen.lines.withLock({ $0.count { $0.hasPrefix("CURRENT") } }) <= index, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            requests.continuation.finish()
            call.cancel()
            _ = await call.result
        }
        return seen.lines.withLock { $0 }
    }

    @Test func chosenIdsAndResetsAgreeWithTheReference() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential listen target test skipped")
            return
        }
        defer { reference.stop() }
        // Id 0 four times among ids the client chose, the last with a token neither server issued.
        let targets: [(id: Int32, token: Data?)] = [(0, nil), (10, nil), (0, nil), (5, nil), (0, Data("elsewhere".utf8))]
        let project = "flint-listen-targets"
        let expected = try await Self.scenario(port: reference.port, project: project, targets: targets)
        #expect(expected == [
            "ADD [1]", "CURRENT [1]", "ADD [10]", "CURRENT [10]", "ADD [11]", "CURRENT [11]", "ADD [5]", "CURRENT [5]",
            "ADD [12]", "RESET [12] token readTime", "CURRENT [12]",
        ])

        let server = try await FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0)).start()
        defer { server.stop() }
        #expect(try await Self.scenario(port: server.port, project: project, targets: targets) == expected)
    }
}
