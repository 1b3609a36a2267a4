import FlintEngine
import FlintModel
import FlintHTTPClient
import FlintWebChannel
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

@testable import FlintServer

/// The web SDK's streams over WebChannel on the shared port, driven with plain HTTP requests as
/// the SDK's channel makes them. Back channels here are long polls (`CI=1`), which end once they
/// have sent something; streaming back channels are exercised by the interop suite.
struct WebChannelTests {
    static let database = "projects/wc/databases/(default)"

    /// A client of one channel: its session id, the last array it has seen, the next map id.
    final class Channel: @unchecked Sendable {
        // Used by one test task at a time.
        let port: Int
        let stream: String
        var sid = ""
        var lastArray = 0
        var nextMap = 0
        var rid = 100

        init(port: Int, stream: String) {
            self.port = port
            self.stream = stream
        }

        var path: String { "/google.firestore.v1.Firestore/\(stream)/channel" }

        static func form(_ messages: [String], offset: Int, headers: [String: String] = [:]) -> [UInt8] {
            var parts: [String] = []
            if !headers.isEmpty {
                parts.append("headers=" + encode(headers.map { "\($0.key):\($0.value)\r\n" }.joined()))
            }
            parts.append("count=\(messages.count)")
            if !messages.isEmpty { parts.append("ofs=\(offset)") }
            for (k, m) in messages.enumerated() { parts.append("req\(k)___data__=" + encode(m)) }
            return Array(parts.joined(separator: "&").utf8)
        }

        static func encode(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }

        func post(_ query: String, _ body: [UInt8]) async throws -> HTTPClient.Response {
            try await HTTPClient.send(
                "POST", path + "?database=\(Self.encode(WebChannelTests.database))&VER=8&" + query, to: "127.0.0.1:\(port)",
                headers: [("Content-Type", "application/x-www-form-urlencoded")], body: body, timeout: .seconds(10))
        }

        /// Opens the channel with its first message; returns the handshake's text.
        func open(_ first: String, headers: [String: String] = [:], query: String = "") async throws -> String {
            let answer = try await post("RID=\(rid)&CVER=22&X-HTTP-Session-Id=gsessionid&zx=a&t=1" + query, Self.form([first], offset: 0, headers: headers))
            rid += 1
            nextMap = 1
            #expect(answer.status == 200)
            let text = String(decoding: answer.body, as: UTF8.self)
            let arrays = try #require(try JSONSerialization.jsonObject(with: Data(try ChannelSession.unframe(text)[0].utf8)) as? [[Any]])
            let handshake = try #require(arrays.first?[1] as? [Any])
            sid = try #require(handshake[1] as? String)
            return text
        }

        /// Sends messages; returns the answer `[backchannel, last array, outstanding]`.
        func send(_ messages: [String]) async throws -> [Int] {
            let answer = try await post("SID=\(sid)&RID=\(rid)&AID=\(lastArray)&zx=b&t=1", Self.form(messages, offset: nextMap))
            rid += 1
            nextMap += messages.count
            #expect(answer.status == 200)
            return try #require(try JSONSerialization.jsonObject(with: Data(try ChannelSession.unframe(String(decoding: answer.body, as: UTF8.self))[0].utf8)) as? [Int])
        }

        /// One long poll: the messages it carried (noops left out), as JSON objects.
        func poll() async throws -> [[String: Any]] {
            let answer = try await HTTPClient.send(
                "GET", path + "?database=x&VER=8&RID=rpc&SID=\(sid)&AID=\(lastArray)&CI=1&TYPE=xmlhttp&TO=5000&zx=c&t=1",
                to: "127.0.0.1:\(port)", headers: [("Accept-Encoding", "gzip")], timeout: .seconds(10))
            #expect(answer.status == 200)
            var messages: [[String: Any]] = []
            for chunk in try ChannelSession.unframe(String(decoding: answer.body, as: UTF8.self)) {
                let arrays = try #require(try JSONSerialization.jsonObject(with: Data(chunk.utf8)) as? [[Any]])
                for array in arrays {
                    let id = try #require(array[0] as? Int)
                    #expect(id == lastArray + 1, "arrays are numbered one by one")
                    lastArray = id
                    let payload = try #require(array[1] as? [Any])
                    if let message = payload[0] as? [String: Any] { messages.append(message) }
                }
            }
            return messages
        }

        /// Polls until `count` messages have come.
        func messages(_ count: Int) async throws -> [[String: Any]] {
            var all: [[String: Any]] = []
            for _ in 0..<20 where all.count < count { all += try await poll() }
            return all
        }

        func terminate() async throws -> Int {
            try await post("SID=\(sid)&RID=\(rid)&TYPE=terminate&zx=d&t=1", []).status
        }

    }

    static func withFlint(_ body: (Engine, Int) async throws -> Void) async throws {
        let engine = Engine()
        let server = FlintServer(engine: engine, configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        let running = try await server.start()
        defer { running.stop() }
        try await body(engine, running.port)
    }

    static func put(_ port: Int, _ document: String, _ fields: String) async throws {
        let answer = try await HTTPClient.send(
            "PATCH", "/v1/\(database)/documents/\(document)", to: "127.0.0.1:\(port)",
            headers: [("Authorization", "Bearer owner"), ("Content-Type", "application/json")], body: Array(#"{"fields":\#(fields)}"#.utf8))
        #expect(answer.status == 200)
    }

    static func queryTarget(_ collection: String, id: Int) -> String {
        #"{"database":"\#(database)","addTarget":{"targetId":\#(id),"query":{"parent":"\#(database)/documents","structuredQuery":{"from":[{"collectionId":"\#(collection)"}]}}}}"#
    }

    @Test func aListenerHearsTheQueryThenEachChangeThenItsRemoval() async throws {
        try await Self.withFlint { _, port in
            try await Self.put(port, "rooms/a", #"{"n":{"integerValue":"1"}}"#)
            let channel = Channel(port: port, stream: "Listen")
            let handshake = try await channel.open(Self.queryTarget("rooms", id: 2), headers: ["Authorization": "Bearer owner"])
            #expect(handshake == "50\n[[0,[\"c\",\"\(channel.sid)\",\"\",8,12,30000]]]")

            let first = try await channel.messages(4)
            #expect((first[0]["targetChange"] as? [String: Any])?["targetChangeType"] as? String == "ADD")
            let change = try #require(first[1]["documentChange"] as? [String: Any])
            #expect((change["document"] as? [String: Any])?["name"] as? String == "\(Self.database)/documents/rooms/a")
            #expect(change["targetIds"] as? [Int] == [2])
            #expect((first[2]["targetChange"] as? [String: Any])?["targetChangeType"] as? String == "CURRENT")

            try await Self.put(port, "rooms/b", #"{"n":{"integerValue":"2"}}"#)
            let next = try await channel.messages(2)
            let added = try #require(next.first { $0["documentChange"] != nil }?["documentChange"] as? [String: Any])
            #expect((added["document"] as? [String: Any])?["name"] as? String == "\(Self.database)/documents/rooms/b")

            // No back channel is open between polls; nothing is outstanding once all is seen.
            let answer = try await channel.send([#"{"removeTarget":2}"#])
            #expect(answer == [0, channel.lastArray, 0])
            let removed = try await channel.messages(1)
            #expect((removed[0]["targetChange"] as? [String: Any])?["targetChangeType"] as? String == "REMOVE")

            #expect(try await channel.terminate() == 200)
            let after = try await channel.post("SID=\(channel.sid)&RID=1&AID=0", Channel.form([], offset: 0))
            #expect(after.status == 400 && String(decoding: after.body, as: UTF8.self) == "Unknown SID")
        }
    }

    @Test func aWriteStreamHandsOutItsTokenThenCommitsEachBatch() async throws {
        try await Self.withFlint { engine, port in
            let channel = Channel(port: port, stream: "Write")
            _ = try await channel.open(#"{"database":"\#(Self.database)"}"#)
            let handshake = try await channel.messages(1)
            #expect((handshake[0]["streamId"] as? String)?.isEmpty == false)
            #expect(handshake[0]["streamToken"] as? String == "AAAAAAAAAAA=")

            let write = #"{"streamToken":"AAAAAAAAAAA=","writes":[{"update":{"name":"\#(Self.database)/documents/w/one","fields":{"n":{"integerValue":"7"}}}}]}"#
            _ = try await channel.send([write])
            let committed = try await channel.messages(1)
            #expect(committed[0]["streamToken"] as? String == "AAAAAAAAAAE=")
            #expect((committed[0]["writeResults"] as? [[String: Any]])?.count == 1)
            #expect(committed[0]["commitTime"] is String)
            let stored = try await engine.database(project: "wc").get(try DocumentKey(parsing: "w/one"))
            #expect(stored?.fields == ["n": 7])

            // A character past U+FFFF written as a JSON surrogate-pair escape is itself.
            _ = try await channel.send([#"{"writes":[{"update":{"name":"\#(Self.database)/documents/w/two","fields":{"s":{"stringValue":"\ud840\udc00"}}}}]}"#])
            #expect((try await channel.messages(1)[0]["writeResults"] as? [[String: Any]])?.count == 1)
            #expect(try await engine.database(project: "wc").get(try DocumentKey(parsing: "w/two"))?.fields == ["s": "\u{20000}"])

            // A batch that fails ends the stream with its error, in the reference's form.
            _ = try await channel.send([#"{"writes":[{"update":{"name":"\#(Self.database)/documents/w","fields":{}}}]}"#])
            let failed = try await channel.messages(1)
            #expect(failed[0] as NSDictionary == [
                "error": [
                    "message": #"INVALID_ARGUMENT: Document name "\#(Self.database)/documents/w" lacks "/" at index \#(Self.database.count + "/documents/w".count)."#,
                    "status": "INVALID_ARGUMENT",
                ]
            ] as NSDictionary)
        }
    }

    @Test func theCallerComesFromTheHeadersTheClientEncodes() async throws {
        try await Self.withFlint { engine, port in
            _ = engine.rules.load(
                "rules_version = '2'; service cloud.firestore { match /databases/{db}/documents { match /notes/{id} { allow read: if request.auth.uid == id; } } }",
                project: "wc")
            // An unsigned token, as the Auth emulator issues: {"alg":"none"} . {"sub":"ann"} .
            let token = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbm4iLCJ1c2VyX2lkIjoiYW5uIn0."
            let doc = #"{"database":"\#(Self.database)","addTarget":{"targetId":4,"documents":{"documents":["\#(Self.database)/documents/notes/ann"]}}}"#

            // In the body, as the SDK sends them (no CORS preflight needed).
            let inBody = Channel(port: port, stream: "Listen")
            _ = try await inBody.open(doc, headers: ["Authorization": "Bearer \(token)"])
            let allowed = try await inBody.messages(2)
            #expect((allowed[1]["targetChange"] as? [String: Any])?["targetChangeType"] as? String == "CURRENT")

            // In the `$httpHeaders` parameter, as older clients send them.
            let inQuery = Channel(port: port, stream: "Listen")
            _ = try await inQuery.open(doc, query: "&%24httpHeaders=" + Channel.encode("Authorization:Bearer \(token)\r\n"))
            #expect(((try await inQuery.messages(2))[1]["targetChange"] as? [String: Any])?["targetChangeType"] as? String == "CURRENT")

            // Without them the rules deny, and the target is removed with the cause.
            let anonymous = Channel(port: port, stream: "Listen")
            _ = try await anonymous.open(doc)
            let denied = try await anonymous.messages(2)
            let removal = try #require(denied[1]["targetChange"] as? [String: Any])
            #expect(removal["targetChangeType"] as? String == "REMOVE")
            #expect((removal["cause"] as? [String: Any])?["code"] as? Int == 7)

            // A token that is not one ends the stream with the error REST gives for it.
            let garbled = Channel(port: port, stream: "Listen")
            _ = try await garbled.open(doc, headers: ["Authorization": "Bearer not-a-token"])
            let rest = try await HTTPClient.send(
                "GET", "/v1/\(Self.database)/documents/notes/ann", to: "127.0.0.1:\(port)", headers: [("Authorization", "Bearer not-a-token")])
            let restError = try #require((try JSONSerialization.jsonObject(with: Data(rest.body)) as? [String: Any])?["error"] as? [String: Any])
            let error = try #require((try await garbled.messages(1))[0]["error"] as? [String: Any])
            #expect(error["status"] as? String == restError["status"] as? String)
            #expect(error["message"] as? String == "\(restError["status"] ?? ""): \(restError["message"] ?? "")")
        }
    }

    @Test func eachSessionIsLoggedWhenItEndsWithTheRulesVerdicts() async throws {
        let recorder = RequestLogTests.Recorder(lines: .init())
        let engine = Engine()
        #expect(engine.rules.load(RequestLogTests.rules, project: "wc").isEmpty)
        let server = FlintServer(
            engine: engine, configuration: ServerConfiguration(host: "127.0.0.1", port: 0), logger: Logger(label: "flint") { _ in recorder })
        let running = try await server.start()
        defer { running.stop() }

        let listen = Channel(port: running.port, stream: "Listen")
        _ = try await listen.open(#"{"database":"\#(Self.database)","addTarget":{"targetId":2,"documents":{"documents":["\#(Self.database)/documents/notes/n1"]}}}"#)
        _ = try await listen.messages(2)  // ADD, then REMOVE: signed out, the rules deny
        #expect(try await listen.terminate() == 200)
        let write = Channel(port: running.port, stream: "Write")
        _ = try await write.open(#"{"database":"nonsense"}"#)
        _ = try await write.messages(1)

        var sessions: [String] = []
        for _ in 0..<100 {
            sessions = recorder.lines.lines.withLock { $0 }.filter { $0.hasPrefix("WebChannel") }.map(RequestLogTests.withoutLatency)
            if sessions.count == 2 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(Set(sessions) == ["WebChannel Listen ended … ms rules: get notes/n1 denied @ L4", "WebChannel Write INVALID_ARGUMENT … ms"])
    }

    @Test func aFullRegistryRefusesTheHandshakeWithResourceExhausted() async throws {
        let streams = WebChannelStreams(engine: Engine(), registry: ChannelRegistry(capacity: 1), logger: Logger(label: "wc"))
        let router = Router()
        router.post("/google.firestore.v1.Firestore/{stream}/channel") { request, context in
            await streams.post(request, stream: context.parameters.get("stream") ?? "")
        }
        try await Application(router: router).test(.router) { client in
            let path = "/google.firestore.v1.Firestore/Write/channel?VER=8&RID=1"
            let first = #"count=1&ofs=0&req0___data__=%7B%22database%22%3A%22projects%2Fp%2Fdatabases%2F(default)%22%7D"#
            try await client.execute(uri: path, method: .post, body: ByteBuffer(string: first)) { #expect($0.status == .ok) }
            try await client.execute(uri: path, method: .post, body: ByteBuffer(string: first)) { response in
                #expect(response.status == .tooManyRequests)
                let error = try #require((try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])?["error"] as? [String: Any])
                #expect(error["status"] as? String == "RESOURCE_EXHAUSTED")
                #expect(error["message"] as? String == WebChannelError.tooManySessions(1).message)
            }
        }
    }

    @Test func requestsTheProtocolCannotTakeAreRefused() async throws {
        try await Self.withFlint { _, port in
            func send(_ method: String, _ target: String, _ body: String = "") async throws -> (Int, String) {
                let answer = try await HTTPClient.send(method, target, to: "127.0.0.1:\(port)", body: Array(body.utf8))
                return (answer.status, String(decoding: answer.body, as: UTF8.self))
            }
            // Only the two streams are channels.
            #expect(try await send("POST", "/google.firestore.v1.Firestore/Commit/channel?VER=8&RID=1", "count=0") == (404, "Not Found\n"))
            // A session that does not exist.
            #expect(try await send("POST", "/google.firestore.v1.Firestore/Listen/channel?SID=nope&RID=2&AID=0", "count=0") == (400, "Unknown SID"))
            #expect(try await send("GET", "/google.firestore.v1.Firestore/Listen/channel?SID=nope&RID=rpc&AID=0&CI=1") == (400, "Unknown SID"))
            // A body that is not the protocol's form.
            let (status, text) = try await send("POST", "/google.firestore.v1.Firestore/Listen/channel?VER=8&RID=3", "count=1&ofs=0&req0_type=x")
            #expect(status == 400)
            #expect(text.contains(#""message":"Message 0 is a field map; Flint takes messages as raw JSON (reqN___data__).""#))
            // A message that is not a ListenRequest ends the stream with the reason.
            let channel = Channel(port: port, stream: "Listen")
            _ = try await channel.open(#"{"database":"\#(Self.database)","addTarget":{"targetId":"two"}}"#)
            let error = try #require((try await channel.messages(1))[0]["error"] as? [String: Any])
            #expect(error["status"] as? String == "INVALID_ARGUMENT")
            #expect((error["message"] as? String)?.hasPrefix("INVALID_ARGUMENT: Invalid JSON payload received.") == true)
        }
    }
}
