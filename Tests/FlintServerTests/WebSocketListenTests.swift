import FlintEngine
import FlintModel
import FlintServer
import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOWebSocket
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The WebSocket listen facade, through a real WebSocket client on the shared port.
struct WebSocketListenTests {
    static let documents = "projects/ws/databases/(default)/documents"

    /// A running Flint on a free port, with its engine for writing directly.
    static func withFlint(_ body: (Engine, Int) async throws -> Void) async throws {
        let engine = Engine()
        let server = FlintServer(engine: engine, configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        let running = try await server.start()
        defer { running.stop() }
        let port = running.port
        try await body(engine, port)
    }

    /// Connects, runs `script` with a reader of text messages (each awaited with a deadline),
    /// and returns how the server closed the socket.
    static func connect(
        _ port: Int, query: String = "", headers: HTTPFields = [:],
        _ script: @escaping @Sendable (_ next: () async throws -> String, _ outbound: WebSocketOutboundWriter) async throws -> Void
    ) async throws -> WebSocketCloseFrame? {
        var configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20)
        configuration.additionalHeaders = headers
        return try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(port)/v1/projects/ws/databases/(default)/documents:listen" + query,
            configuration: configuration, logger: Logger(label: "ws-test")
        ) { inbound, outbound, _ in
            let mailbox = TextMailbox()
            // The inbound stream takes one reader at a time, and the close handshake that follows
            // reads it too; so it is read here until it ends, and the script runs beside it.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        try await script({ try await mailbox.next() }, outbound)
                        try await outbound.close(.normalClosure, reason: nil)
                    } catch {
                        try? await outbound.close(.unexpectedServerError, reason: "test script failed")
                        throw error
                    }
                }
                do {
                    for try await message in inbound.messages(maxSize: 1 << 24) {
                        if case .text(let text) = message { await mailbox.add(text) }
                    }
                } catch {}
                await mailbox.finish()
                try await group.waitForAll()
            }
        }
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    static func snapshot(_ text: String) throws -> (id: String, documents: [String], changes: [String]) {
        let s = try #require(try json(text)["snapshot"] as? [String: Any])
        let docs = (s["documents"] as? [[String: Any]] ?? []).map { ($0["name"] as? String ?? "").replacingOccurrences(of: documents + "/", with: "") }
        let changes = (s["changes"] as? [[String: Any]] ?? []).map { c in
            let name = (c["document"] as? String ?? "").replacingOccurrences(of: documents + "/", with: "")
            return "\(c["type"] ?? "") \(name) \(c["oldIndex"] ?? "") \(c["newIndex"] ?? "")"
        }
        #expect(s["readTime"] is String)
        return (s["id"] as? String ?? "", docs, changes)
    }
}

enum WebSocketTestError: Error { case noMessage }

/// Text messages received so far; `next` waits up to thirty seconds for one: only a message that never comes should fail a test, not a busy machine.
actor TextMailbox {
    private var texts: [String] = []
    private var finished = false

    func add(_ text: String) { texts.append(text) }
    func finish() { finished = true }

    func next() async throws -> String {
        let deadline = ContinuousClock.now + .seconds(30)
        while texts.isEmpty, !finished, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        guard !texts.isEmpty else { throw WebSocketTestError.noMessage }
        return texts.removeFirst()
    }
}

extension WebSocketListenTests {
    @Test func snapshotModeSendsOrderedSnapshotsWithIndexedChanges() async throws {
        try await Self.withFlint { engine, port in
            let db = engine.database(project: "ws")
            _ = try await db.commit([.set(try DocumentKey(parsing: "books/b"), ["rank": 2])])
            let close = try await Self.connect(port, query: "?mode=snapshots&heartbeat=0") { next, outbound in
                try await outbound.writeTextMessage(
                    #"{"subscribe":{"id":"top","query":{"from":[{"collectionId":"books"}],"orderBy":[{"field":{"fieldPath":"rank"}}]}}}"#)
                var s = try Self.snapshot(try await next())
                #expect(s.id == "top")
                #expect(s.documents == ["books/b"])
                #expect(s.changes == ["added books/b -1 0"])

                try await outbound.writeTextMessage(#"{"subscribe":{"id":"none","query":{"from":[{"collectionId":"empty"}]}}}"#)
                s = try Self.snapshot(try await next())
                #expect(s.id == "none" && s.documents.isEmpty && s.changes.isEmpty)

                try await outbound.writeTextMessage(#"{"subscribe":{"id":"one","document":"books/a"}}"#)
                s = try Self.snapshot(try await next())
                #expect(s.id == "one" && s.documents.isEmpty)

                _ = try await db.commit([.set(try DocumentKey(parsing: "books/a"), ["rank": 1])])
                var got = [try Self.snapshot(try await next()), try Self.snapshot(try await next())].sorted { $0.id < $1.id }
                #expect(got[0].id == "one" && got[0].documents == ["books/a"] && got[0].changes == ["added books/a -1 0"])
                #expect(got[1].id == "top" && got[1].documents == ["books/a", "books/b"] && got[1].changes == ["added books/a -1 0"])

                try await outbound.writeTextMessage(#"{"unsubscribe":{"id":"one"}}"#)
                #expect(try await next() == #"{"unsubscribed":{"id":"one"}}"#)
                _ = try await db.commit([.set(try DocumentKey(parsing: "books/a"), ["rank": 3])])
                s = try Self.snapshot(try await next())
                #expect(s.id == "top" && s.documents == ["books/b", "books/a"] && s.changes == ["modified books/a 0 1"])

                _ = try await db.commit([.delete(try DocumentKey(parsing: "books/b"))])
                got = [try Self.snapshot(try await next())]
                #expect(got[0].changes == ["removed books/b 0 -1"])
                try await outbound.close(.normalClosure, reason: nil)
            }
            #expect(close?.closeCode == .normalClosure)  // the server answered the client's close
        }
    }

    @Test func subscriptionErrorsAreMessagesAndBadMessagesCloseTheSocket() async throws {
        try await Self.withFlint { _, port in
            var close = try await Self.connect(port, query: "?mode=snapshots") { next, outbound in
                try await outbound.writeTextMessage(#"{"subscribe":{"id":"bad","query":{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"n"},"op":"IN","value":{"arrayValue":{}}}}}}}"#)
                let error = try #require(try Self.json(try await next())["error"] as? [String: Any])
                #expect(error["id"] as? String == "bad")
                #expect(error["status"] as? String == "INVALID_ARGUMENT")
                #expect(error["code"] as? Int == 3)
                try await outbound.writeTextMessage(#"{"subscribe":{"id":"ok","document":"c/x"}}"#)
                #expect(try Self.snapshot(try await next()).id == "ok")
                try await outbound.writeTextMessage(#"{"subscribe":{"id":"ok","document":"c/y"}}"#)
                let duplicate = try #require(try Self.json(try await next())["error"] as? [String: Any])
                #expect(duplicate["message"] as? String == "Subscription \"ok\" already exists on this socket.")
                // A subscription that says more than one thing, or something unknown, is refused by name.
                for (message, expected) in [
                    (#"{"subscribe":{"id":"s1","document":"c/x","extra":1}}"#, #"Unknown key "extra" in subscribe; it holds id, document, query and parent."#),
                    (#"{"subscribe":{"id":"s2","query":{"from":[{"collectionId":"c"}]},"parnet":"a/b"}}"#, #"Unknown key "parnet" in subscribe; it holds id, document, query and parent."#),
                    (#"{"subscribe":{"id":"s3","document":"c/x","query":{"from":[{"collectionId":"c"}]}}}"#, #"subscribe takes a "document" or a "query" (with its "parent"), not both."#),
                    (#"{"subscribe":{"id":"s4","document":"c/x","parent":"a/b"}}"#, #"subscribe takes a "document" or a "query" (with its "parent"), not both."#),
                    (#"{"subscribe":{"id":"s5","document":7}}"#, "document must be a document path."),
                    (#"{"subscribe":{"id":"s6","query":{"from":[{"collectionId":"c"}]},"parent":7}}"#, "parent must be a document path."),
                    (#"{"unsubscribe":{"id":"never"}}"#, #"No subscription "never" on this socket."#),
                    // A query that is not Firestore's JSON is told where.
                    (#"{"subscribe":{"id":"s7","query":{"from":[{"collectionId":"c"}],"orderBy":[{"field":{"fieldPath":"n"},"sideways":true}]}}}"#,
                     #"The query is not a StructuredQuery in Firestore's JSON. Unknown name "sideways" at 'query.orderBy[0]': Cannot find field."#),
                ] {
                    try await outbound.writeTextMessage(message)
                    let error = try #require(try Self.json(try await next())["error"] as? [String: Any], "\(message)")
                    #expect(error["message"] as? String == expected, "\(message)")
                }
                // Unsubscribing a live one is confirmed; its id is then unknown.
                try await outbound.writeTextMessage(#"{"unsubscribe":{"id":"ok"}}"#)
                #expect(try Self.json(try await next())["unsubscribed"] as? [String: String] == ["id": "ok"])
                try await outbound.writeTextMessage("not json")
                _ = try? await next()
            }
            #expect(close?.closeCode == .dataInconsistentWithMessage)
            #expect(close?.reason?.hasPrefix("Expected a JSON object") == true)

            close = try await Self.connect(port, query: "?mode=snapshots") { next, outbound in
                try await outbound.writeTextMessage(#"{"unsubscribe":{"id":1}}"#)
                _ = try? await next()
            }
            #expect(close?.closeCode == .dataInconsistentWithMessage)
            #expect(close?.reason == #"unsubscribe holds an "id" string and nothing else."#)

            // In raw mode a message that is not a ListenRequest closes the socket, saying where.
            close = try await Self.connect(port) { next, outbound in
                try await outbound.writeTextMessage(#"{"addTarget": {"targetId": "one"}}"#)
                _ = try? await next()
            }
            #expect(close?.closeCode == .dataInconsistentWithMessage)
            // (A close reason is cut to 123 bytes; the place comes before the cut.)
            #expect(close?.reason?.hasPrefix("Not a ListenRequest in Firestore's JSON. Invalid value at 'addTarget.targetId'. A number is malformed") == true)

            close = try await Self.connect(port) { next, outbound in
                try await outbound.writeBinaryMessage(.init(bytes: [1, 2, 3]))
                _ = try? await next()
            }
            #expect(close?.closeCode == .unacceptableData)

            // A text message that is not UTF-8: `{"removeTarget": 1, "labels": {"x": "\xff"}}`.
            close = try await Self.connect(port) { next, outbound in
                let bytes = Array(#"{"removeTarget": 1, "labels": {"x": ""#.utf8) + [0xFF] + Array(#""}}"#.utf8)
                try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: .init(bytes: bytes))))
                _ = try? await next()
            }
            #expect(close?.closeCode == .dataInconsistentWithMessage)
        }
    }

    @Test func heartbeatsArriveWhenAsked() async throws {
        try await Self.withFlint { _, port in
            _ = try await Self.connect(port, query: "?mode=snapshots&heartbeat=0.1") { next, outbound in
                let heartbeat = try #require(try Self.json(try await next())["heartbeat"] as? [String: Any])
                #expect(heartbeat["time"] is String)
                try await outbound.close(.normalClosure, reason: nil)
            }
        }
    }

    @Test func rawModeCarriesListenMessagesInFirestoreJSON() async throws {
        try await Self.withFlint { engine, port in
            _ = try await engine.database(project: "ws").commit([.set(try DocumentKey(parsing: "c/a"), ["n": 1])])
            let close = try await Self.connect(port, headers: [.authorization: "Bearer owner"]) { next, outbound in
                try await outbound.writeTextMessage(
                    #"{"addTarget":{"targetId":2,"query":{"parent":"\#(Self.documents)","structuredQuery":{"from":[{"collectionId":"c"}]}}}}"#)
                let add = try Self.json(try await next())
                #expect((add["targetChange"] as? [String: Any])?["targetChangeType"] as? String == "ADD")
                let change = try #require(try Self.json(try await next())["documentChange"] as? [String: Any])
                #expect((change["document"] as? [String: Any])?["fields"] as? [String: [String: String]] == ["n": ["integerValue": "1"]])
                #expect(change["targetIds"] as? [Int] == [2])
                let current = try #require(try Self.json(try await next())["targetChange"] as? [String: Any])
                #expect(current["targetChangeType"] as? String == "CURRENT")
                #expect(current["resumeToken"] is String)
                let global = try #require(try Self.json(try await next())["targetChange"] as? [String: Any])
                #expect(global["targetIds"] == nil && global["readTime"] is String)

                // A name written with a surrogate-pair escape names the document it spells.
                _ = try await engine.database(project: "ws").commit([.set(try DocumentKey(parsing: "d/\u{20000}"), [:])])
                try await outbound.writeTextMessage(#"{"addTarget":{"targetId":3,"documents":{"documents":["\#(Self.documents)/d/\ud840\udc00"]}}}"#)
                #expect((try Self.json(try await next())["targetChange"] as? [String: Any])?["targetChangeType"] as? String == "ADD")
                let found = try #require(try Self.json(try await next())["documentChange"] as? [String: Any])
                #expect((found["document"] as? [String: Any])?["name"] as? String == Self.documents + "/d/\u{20000}")
                for _ in 0..<2 { _ = try await next() }  // CURRENT, then the global read time

                // A second target with the same id ends the stream, as over gRPC.
                try await outbound.writeTextMessage(
                    #"{"addTarget":{"targetId":2,"documents":{"documents":["\#(Self.documents)/c/a"]}}}"#)
                _ = try? await next()
            }
            #expect(close?.closeCode == .unknown(4003))
            #expect(close?.reason == "Target ID 2 is already in use on this stream.")
        }
    }

    @Test func aMalformedTokenIsRefusedBeforeTheUpgrade() async throws {
        try await Self.withFlint { _, port in
            await #expect(throws: (any Error).self) {
                _ = try await Self.connect(port, headers: [.authorization: "Bearer not-a-jwt"]) { _, _ in }
            }
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/projects/ws/databases/(default)/documents:listen")!)
            request.setValue("Bearer not-a-jwt", forHTTPHeaderField: "Authorization")
            let (data, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 400)
            #expect(String(decoding: data, as: UTF8.self).contains("invalid jwt"))
        }
    }
}
