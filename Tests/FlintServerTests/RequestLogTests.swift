import FlintEngine
import FlintModel
import FlintProto
import FlintServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import HTTPTypes
import Logging
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `info` line each request, gRPC call and WebSocket session leaves, as `--log-level info`
/// shows them.
struct RequestLogTests {
    /// Keeps every message logged through it.
    struct Recorder: LogHandler {
        let lines: Arc
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]

        final class Arc: Sendable {
            let lines = Mutex<[String]>([])
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) { lines.lines.withLock { $0.append("\(event.message)") } }
    }

    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{db}/documents {
            match /notes/{id} { allow read, write: if request.auth.uid == 'ann'; }
          }
        }
        """

    /// `gRPC <method> <status> <ms> ms[ rules: …]` with the latency replaced by `…`.
    static func withoutLatency(_ line: String) -> String {
        line.replacing(#/ [0-9.]+ ms/#, with: " … ms")
    }

    @Test func requestsCallsAndSessionsAreLoggedWithStatusAndRulesVerdicts() async throws {
        let recorder = Recorder(lines: .init())
        let engine = Engine()
        #expect(engine.rules.load(Self.rules, project: "logged").isEmpty)
        #expect(engine.rules.load(Self.rules, project: "ws").isEmpty)
        let server = FlintServer(
            engine: engine, configuration: ServerConfiguration(host: "127.0.0.1", port: 0),
            logger: Logger(label: "flint") { _ in recorder })
        let running = try await server.start()
        defer { running.stop() }

        let database = "projects/logged/databases/(default)"
        let url = URL(string: "http://127.0.0.1:\(running.port)/v1/\(database)/documents/notes/missing")!
        var get = URLRequest(url: url)
        get.setValue(RulesAPITests.jwt(#"{"sub":"ann"}"#), forHTTPHeaderField: "Authorization")
        _ = try await URLSession.shared.data(for: get)

        try await withGRPCClient(
            transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: running.port), transportSecurity: .plaintext)
        ) { client in
            let firestore = Google_Firestore_V1_Firestore.Client(wrapping: client)
            let ann: GRPCCore.Metadata = ["authorization": .string(RulesAPITests.jwt(#"{"sub":"ann"}"#))]
            let bob: GRPCCore.Metadata = ["authorization": .string(RulesAPITests.jwt(#"{"sub":"bob"}"#))]
            var commit = Google_Firestore_V1_CommitRequest()
            commit.database = database
            commit.writes = [GRPCTests.write("notes/n1", ["n": GRPCTests.int(1)])]
            commit.writes[0].update.name = database + "/documents/notes/n1"
            _ = try await firestore.commit(commit, metadata: ann)

            var read = Google_Firestore_V1_GetDocumentRequest()
            read.name = database + "/documents/notes/n1"
            await #expect(throws: RPCError.self) { try await firestore.getDocument(read, metadata: bob) }

            var query = Google_Firestore_V1_RunQueryRequest()
            query.parent = database + "/documents"
            var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
            from.collectionID = "notes"
            query.structuredQuery.from = [from]
            let found = try await firestore.runQuery(query, metadata: ann) { response in
                var names: [String] = []
                for try await answer in response.messages where answer.hasDocument { names.append(answer.document.name) }
                return names
            }
            #expect(found == [read.name])

            // A stream's line comes when it ends: here the client half-closes, and the server ends too.
            var listen = Google_Firestore_V1_ListenRequest()
            listen.database = database
            listen.addTarget.targetID = 1
            listen.addTarget.query = .init()
            listen.addTarget.query.parent = query.parent
            listen.addTarget.query.structuredQuery = query.structuredQuery
            _ = try await firestore.listen(metadata: ann, requestProducer: { [listen] in try await $0.write(listen) }) { response in
                var count = 0
                for try await _ in response.messages { count += 1 }
                return count
            }
        }

        // WebSocket sessions are logged when they end: one the client closes, one Flint closes
        // for a message that is not JSON (1007).
        let target = """
            {"addTarget": {"targetId": 1, "query": {"parent": "projects/ws/databases/(default)/documents",
              "structuredQuery": {"from": [{"collectionId": "notes"}]}}}}
            """
        let ann = HTTPFields([HTTPField(name: .authorization, value: RulesAPITests.jwt(#"{"sub":"ann"}"#))])
        // Its rules are checked again on each change it is sent, and the repeats counted.
        let wsDatabase = engine.database(project: "ws")
        _ = try await WebSocketListenTests.connect(running.port, headers: ann) { next, outbound in
            try await outbound.write(.text(target))
            while try await !next().contains("CURRENT") {}
            for n in 1...2 {
                _ = try await wsDatabase.commit([.set(try DocumentKey(parsing: "notes/w\(n)"), ["n": .integer(Int64(n))])])
                while try await !next().contains("notes/w\(n)") {}
            }
        }
        let refused = try await WebSocketListenTests.connect(running.port, headers: ann) { _, outbound in
            try await outbound.write(.text("not json"))
        }
        #expect(refused?.closeCode == .dataInconsistentWithMessage)

        // A WebSocket session's line is written as its handler returns, which may be after the
        // client has seen the close: wait for both.
        var lines: [String] = []
        for _ in 0..<200 {
            lines = recorder.lines.lines.withLock { $0 }.filter { !$0.contains("listening on") }.map(Self.withoutLatency)
            if lines.count >= 7 { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        #expect(lines.prefix(5) == [
            "GET /v1/\(database)/documents/notes/missing 404 … ms rules: get notes/missing allowed",
            "gRPC google.firestore.v1.Firestore/Commit OK … ms rules: create notes/n1 allowed",
            "gRPC google.firestore.v1.Firestore/GetDocument PERMISSION_DENIED … ms rules: get notes/n1 denied @ L4",
            "gRPC google.firestore.v1.Firestore/RunQuery OK … ms rules: list notes allowed",
            "gRPC google.firestore.v1.Firestore/Listen OK … ms rules: list notes allowed",
        ])
        #expect(Set(lines.dropFirst(5)) == [
            "WebSocket /v1/projects/ws/databases/(default)/documents:listen ended … ms rules: list notes allowed (×3)",
            "WebSocket /v1/projects/ws/databases/(default)/documents:listen closed 1007 … ms",
        ])
    }
}
