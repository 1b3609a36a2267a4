import FlintEngine
import FlintProto
import FlintServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import Testing

/// Bad input and abandoned streams over gRPC: clear codes, and nothing left running.
struct GRPCStreamHygieneTests {
    typealias Query = Google_Firestore_V1_StructuredQuery

    static func query(_ collection: String) -> Query {
        var q = Query()
        var from = Query.CollectionSelector()
        from.collectionID = collection
        q.from = [from]
        return q
    }

    static func runQuery(_ q: Query) -> Google_Firestore_V1_RunQueryRequest {
        var r = Google_Firestore_V1_RunQueryRequest()
        r.parent = GRPCTests.root
        r.structuredQuery = q
        return r
    }

    /// Open listen streams of the test database, from the metrics endpoint.
    static func listenStreams(_ port: Int) async throws -> Int {
        let (_, body) = try await GRPCTests.http(port, "GET", "/emulator/v1/metrics")
        let databases = (body as? [String: Any])?["databases"] as? [[String: Any]] ?? []
        return databases.first { $0["name"] as? String == GRPCTests.database }?["listenStreams"] as? Int ?? 0
    }

    static func waitForListenStreams(_ port: Int, toBe expected: Int) async throws -> Int {
        var count = try await listenStreams(port)
        let deadline = ContinuousClock.now + .seconds(30)
        while count != expected, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            count = try await listenStreams(port)
        }
        return count
    }

    @Test func unknownEnumValuesAreInvalidArguments() async throws {
        try await GRPCTests.withFlint { firestore, _ in
            var q = Self.query("c")
            var filter = Query.FieldFilter()
            filter.field.fieldPath = "n"
            filter.op = .UNRECOGNIZED(99)
            filter.value = GRPCTests.int(1)
            q.where.fieldFilter = filter
            var error = await #expect(throws: RPCError.self) {
                try await firestore.runQuery(Self.runQuery(q)) { response in for try await _ in response.messages {} }
            }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message == "Unknown FieldFilter operator.")

            q = Self.query("c")
            var order = Query.Order()
            order.field.fieldPath = "n"
            order.direction = .UNRECOGNIZED(7)
            q.orderBy = [order]
            error = await #expect(throws: RPCError.self) {
                try await firestore.runQuery(Self.runQuery(q)) { response in for try await _ in response.messages {} }
            }
            #expect(error?.code == .invalidArgument)
            // The reference's words.
            #expect(error?.message == "Unrecognized ordering.")

            var commit = Google_Firestore_V1_CommitRequest()
            commit.database = GRPCTests.database
            var write = GRPCTests.write("c/a", [:])
            var transform = Google_Firestore_V1_DocumentTransform.FieldTransform()
            transform.fieldPath = "at"
            transform.setToServerValue = .UNRECOGNIZED(9)
            write.updateTransforms = [transform]
            commit.writes = [write]
            error = await #expect(throws: RPCError.self) { try await firestore.commit(commit) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message == "ServerValue type must be specified for set_to_server_value transformation.")
        }
    }

    @Test func abandonedQueryStreamsDoNotStopTheServer() async throws {
        try await GRPCTests.withFlint { firestore, _ in
            var commit = Google_Firestore_V1_CommitRequest()
            commit.database = GRPCTests.database
            let pad = String(repeating: "x", count: 2000)
            commit.writes = (0..<2000).map { i in
                var v = Google_Firestore_V1_Value()
                v.stringValue = pad
                return GRPCTests.write("big/\(i)", ["pad": v])
            }
            _ = try await firestore.commit(commit)
            // Read one document of 2,000 (4 MB), then walk away: the client cancels the stream.
            for _ in 0..<20 {
                let first = try await firestore.runQuery(Self.runQuery(Self.query("big"))) { response in
                    var iterator = response.messages.makeAsyncIterator()
                    return try await iterator.next()
                }
                #expect(first?.document.name.hasPrefix(GRPCTests.root + "/big/") == true)
            }
            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = GRPCTests.root + "/big/7"
            #expect(try await firestore.getDocument(get).fields["pad"]?.stringValue == pad)
        }
    }

    @Test func listenStreamsEndWhenTheClientCancelsOrHalfCloses() async throws {
        try await GRPCTests.withFlint { firestore, port in
            var add = Google_Firestore_V1_ListenRequest()
            add.database = GRPCTests.database
            add.addTarget.targetID = 1
            add.addTarget.query.parent = GRPCTests.root
            add.addTarget.query.structuredQuery = Self.query("c")
            let request = add

            // Cancelled: the call's task is cancelled while the stream is open.
            let opened = AsyncStream<Void>.makeStream()
            let calls = (0..<10).map { _ in
                Task {
                    try await firestore.listen(requestProducer: { writer in
                        try await writer.write(request)
                        try await Task.sleep(for: .seconds(60))
                    }) { response in
                        // Once per stream: a stream sends several messages, and ten of them
                        // need not come from ten streams.
                        var first = true
                        for try await _ in response.messages where first {
                            first = false
                            opened.continuation.yield()
                        }
                    }
                }
            }
            var iterator = opened.stream.makeAsyncIterator()
            for _ in 0..<10 { await iterator.next() }
            #expect(try await Self.listenStreams(port) == 10)
            for call in calls { call.cancel() }
            #expect(try await Self.waitForListenStreams(port, toBe: 0) == 0)

            // Half-closed: the client sends its target and ends its side; the server ends too.
            let received = try await firestore.listen(requestProducer: { writer in
                try await writer.write(request)
            }) { response in
                var count = 0
                for try await _ in response.messages { count += 1 }
                return count
            }
            #expect(received <= 4)
            #expect(try await Self.waitForListenStreams(port, toBe: 0) == 0)
        }
    }
}
