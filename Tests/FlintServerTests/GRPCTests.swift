import FlintEngine
import FlintModel
import FlintProto
import FlintServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import GRPCProtobuf
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// gRPC over a real loopback h2c connection to the shared port.
struct GRPCTests {
    static let database = "projects/p1/databases/(default)"
    static let root = database + "/documents"

    typealias Client = Google_Firestore_V1_Firestore.Client<HTTP2ClientTransport.Posix>

    /// A running Flint on a free port and a gRPC client connected to it.
    static func withFlint(_ body: (Client, Int) async throws -> Void) async throws {
        try await withFlintChannel { client, port in try await body(Google_Firestore_V1_Firestore.Client(wrapping: client), port) }
    }

    /// The same, with the plain gRPC client, for calls made with serializers of the test's own.
    static func withFlintChannel(_ body: (GRPCClient<HTTP2ClientTransport.Posix>, Int) async throws -> Void) async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        let running = try await server.start()
        defer { running.stop() }
        let port = running.port
        try await withGRPCClient(
            transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
        ) { client in
            try await body(client, port)
        }
    }

    static func write(_ id: String, _ fields: [UTF8Key: Google_Firestore_V1_Value]) -> Google_Firestore_V1_Write {
        var w = Google_Firestore_V1_Write()
        w.update.name = root + "/" + id
        w.update.fields = fields
        return w
    }

    static func int(_ n: Int64) -> Google_Firestore_V1_Value {
        var v = Google_Firestore_V1_Value()
        v.integerValue = n
        return v
    }

    @Test func unaryCallsReachTheEngineOverH2C() async throws {
        try await Self.withFlint { firestore, _ in
            var commit = Google_Firestore_V1_CommitRequest()
            commit.database = Self.database
            commit.writes = [Self.write("cities/sf", ["population": Self.int(870_000)])]
            let committed = try await firestore.commit(commit)
            #expect(committed.writeResults.count == 1)
            #expect(committed.commitTime.seconds > 0)
            // A commit of nothing has no commit time, as in production and on the reference.
            var nothing = Google_Firestore_V1_CommitRequest()
            nothing.database = Self.database
            #expect(try await firestore.commit(nothing).hasCommitTime == false)

            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = Self.root + "/cities/sf"
            let doc = try await firestore.getDocument(get)
            #expect(doc.fields["population"]?.integerValue == 870_000)
            #expect(doc.updateTime == committed.commitTime)

            get.name = Self.root + "/cities/la"
            let error = await #expect(throws: RPCError.self) { try await firestore.getDocument(get) }
            #expect(error?.code == .notFound)
            #expect(error?.message == "Document (\(Self.root)/cities/la) not found.")

            get.name = Self.root + "/cities"
            let invalid = await #expect(throws: RPCError.self) { try await firestore.getDocument(get) }
            #expect(invalid?.code == .invalidArgument)

            // A create's collection id, which only gRPC can leave empty, is named as the reference names it.
            var create = Google_Firestore_V1_CreateDocumentRequest()
            create.parent = Self.root
            create.documentID = "x"
            let unnamed = await #expect(throws: RPCError.self) { try await firestore.createDocument(create) }
            #expect(unnamed?.code == .invalidArgument)
            #expect(unnamed?.message == "collectionId is the empty string.")
            // After the document id and the document's name.
            create.documentID = "__x__"
            let reserved = await #expect(throws: RPCError.self) { try await firestore.createDocument(create) }
            #expect(reserved?.message == #"Resource id "__x__" is invalid because it is reserved."#)
            // A named collection id before the parent.
            create.parent = Self.root + "/c"
            for collectionID in ["__x__", "a/b"] {
                create.collectionID = collectionID
                let named = await #expect(throws: RPCError.self) { try await firestore.createDocument(create) }
                #expect(named?.message.hasPrefix(#"Collection id "\#(collectionID)" is invalid"#) == true, "\(collectionID)")
            }
            create.collectionID = "c"
            let parent = await #expect(throws: RPCError.self) { try await firestore.createDocument(create) }
            #expect(parent?.message == #"Document parent name "\#(Self.root)/c" lacks "/" at index \#(Self.root.count + 2)."#)
        }
    }

    /// Clients may compress their requests with gzip, as the reference accepts; deflate is
    /// refused there and here. This client also lists only gzip as an answer it takes.
    @Test func gzipRequestsAreTakenAndDeflateIsRefused() async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        let running = try await server.start()
        defer { running.stop() }
        var config = HTTP2ClientTransport.Posix.Config.defaults
        config.compression.enabledAlgorithms = [.gzip, .deflate]
        try await withGRPCClient(
            transport: .http2NIOPosix(
                target: .ipv4(address: "127.0.0.1", port: running.port), transportSecurity: .plaintext, config: config)
        ) { client in
            let firestore = Google_Firestore_V1_Firestore.Client(wrapping: client)
            var gzip = CallOptions.defaults
            gzip.compression = .gzip
            var text = Google_Firestore_V1_Value()
            text.stringValue = String(repeating: "compressible ", count: 50_000)
            var commit = Google_Firestore_V1_CommitRequest()
            commit.database = Self.database
            commit.writes = [Self.write("zipped/a", ["text": text, "n": Self.int(7)])]
            let committed = try await firestore.commit(commit, options: gzip)
            #expect(committed.writeResults.count == 1)

            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = Self.root + "/zipped/a"
            let doc = try await firestore.getDocument(get, options: gzip)
            #expect(doc.fields["text"]?.stringValue.count == 650_000)
            #expect(doc.fields["n"]?.integerValue == 7)

            var deflate = CallOptions.defaults
            deflate.compression = .deflate
            let refused = await #expect(throws: RPCError.self) { try await firestore.getDocument(get, options: deflate) }
            #expect(refused?.code == .unimplemented)

            // Past the request limit once inflated: the engine's own error, as for a plain request.
            text.stringValue = String(repeating: "x", count: 11 * 1_048_576)
            commit.writes = [Self.write("zipped/big", ["text": text])]
            let tooLarge = await #expect(throws: RPCError.self) { try await firestore.commit(commit, options: gzip) }
            #expect(tooLarge?.code == .invalidArgument)
            #expect(tooLarge?.message == "Request payload size exceeds the limit: 10485760 bytes.")
        }
    }

    /// The answer's bytes as they came, for checking how they were encoded.
    struct RawBytes: MessageDeserializer {
        func deserialize<Bytes: GRPCContiguousBytes>(_ bytes: Bytes) throws -> [UInt8] { bytes.withUnsafeBytes { Array($0) } }
    }

    /// Names that differ only in Unicode normalization (`é` as one scalar or as `e` and an
    /// accent) are different fields: a commit keeps both, where a map keyed by Swift strings
    /// would keep one and acknowledge the write.
    @Test func namesThatDifferOnlyInNormalizationAreKeptApart() async throws {
        let composed = UTF8Key("\u{E9}"), decomposed = UTF8Key("e\u{301}")
        try await Self.withFlintChannel { client, _ in
            let firestore = Google_Firestore_V1_Firestore.Client(wrapping: client)
            var inner = Google_Firestore_V1_Value()
            inner.mapValue.fields = [UTF8Key("\u{212B}"): Self.int(3), UTF8Key("\u{C5}"): Self.int(4)]
            var commit = Google_Firestore_V1_CommitRequest()
            commit.database = Self.database
            commit.writes = [Self.write("n/d", [composed: Self.int(1), decomposed: Self.int(2), "m": inner])]
            _ = try await firestore.commit(commit)

            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = Self.root + "/n/d"
            let doc = try await firestore.getDocument(get)
            #expect(doc.fields.count == 3)
            #expect(doc.fields[composed]?.integerValue == 1 && doc.fields[decomposed]?.integerValue == 2)
            #expect(doc.fields["m"]?.mapValue.fields == inner.mapValue.fields)
        }
    }

    /// A document's fields, and the entries of a map inside it, are encoded in key order, so
    /// clients that keep the wire order see the same document the same way on every run.
    @Test func mapEntriesAreEncodedInKeyOrder() async throws {
        let letters = ["z", "b", "y", "c", "x", "d", "w", "e", "v", "f", "u", "g"]
        try await Self.withFlintChannel { client, _ in
            let firestore = Google_Firestore_V1_Firestore.Client(wrapping: client)
            var inner = Google_Firestore_V1_Value()
            inner.mapValue.fields = Dictionary(uniqueKeysWithValues: letters.map { (UTF8Key("inner_" + $0), Self.int(1)) })
            var fields = Dictionary(uniqueKeysWithValues: letters.map { (UTF8Key("field_" + $0), Self.int(1)) })
            fields["nested"] = inner
            var commit = Google_Firestore_V1_CommitRequest()
            commit.database = Self.database
            commit.writes = [Self.write("o/d", fields)]
            _ = try await firestore.commit(commit)

            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = Self.root + "/o/d"
            let bytes = try await client.unary(
                request: ClientRequest(message: get), descriptor: Google_Firestore_V1_Firestore.Method.GetDocument.descriptor,
                serializer: OrderedProtobufSerializer<Google_Firestore_V1_GetDocumentRequest>(), deserializer: RawBytes(),
                options: .defaults
            ) { try $0.message }
            let names = letters.map { "field_" + $0 } + ["nested"] + letters.map { "inner_" + $0 }
            let found = names.compactMap { name in
                bytes.indices.first { bytes[$0...].starts(with: Array(name.utf8)) }.map { ($0, name) }
            }
            #expect(found.count == names.count)
            let sorted = letters.sorted()
            #expect(found.sorted { $0.0 < $1.0 }.map(\.1)
                == sorted.map { "field_" + $0 } + ["nested"] + sorted.map { "inner_" + $0 })
        }
    }

    /// `google.firestore.v1beta1.Firestore`, the API's earlier version, answers with v1's
    /// handlers: its messages are v1's, number for number. It has no RunAggregationQuery, and
    /// methods no version has are refused as on the reference.
    @Test func v1beta1CallsAreServedAsV1Calls() async throws {
        func beta(_ method: String) -> MethodDescriptor {
            MethodDescriptor(fullyQualifiedService: "google.firestore.v1beta1.Firestore", method: method)
        }
        try await Self.withFlintChannel { client, _ in
            var commit = Google_Firestore_V1_CommitRequest()
            commit.database = Self.database
            commit.writes = [Self.write("beta/a", ["n": Self.int(5)])]
            let committed = try await client.unary(
                request: ClientRequest(message: commit), descriptor: beta("Commit"),
                serializer: ProtobufSerializer<Google_Firestore_V1_CommitRequest>(),
                deserializer: ProtobufDeserializer<Google_Firestore_V1_CommitResponse>(), options: .defaults
            ) { try $0.message }
            #expect(committed.writeResults.count == 1 && committed.commitTime.seconds > 0)

            // What v1beta1 wrote, v1 reads.
            let v1 = Google_Firestore_V1_Firestore.Client(wrapping: client)
            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = Self.root + "/beta/a"
            #expect(try await v1.getDocument(get).fields["n"]?.integerValue == 5)

            var query = Google_Firestore_V1_RunQueryRequest()
            query.parent = Self.root
            var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
            from.collectionID = "beta"
            query.structuredQuery.from = [from]
            let found = try await client.serverStreaming(
                request: ClientRequest(message: query), descriptor: beta("RunQuery"),
                serializer: ProtobufSerializer<Google_Firestore_V1_RunQueryRequest>(),
                deserializer: ProtobufDeserializer<Google_Firestore_V1_RunQueryResponse>(), options: .defaults
            ) { response in
                var names: [String] = []
                for try await answer in response.messages where answer.hasDocument { names.append(answer.document.name) }
                return names
            }
            #expect(found == [Self.root + "/beta/a"])

            var aggregation = Google_Firestore_V1_RunAggregationQueryRequest()
            aggregation.parent = Self.root
            aggregation.structuredAggregationQuery.structuredQuery = query.structuredQuery
            var count = Google_Firestore_V1_StructuredAggregationQuery.Aggregation()
            count.count = .init()
            count.alias = "n"
            aggregation.structuredAggregationQuery.aggregations = [count]
            // Refusals name the method, in the reference's words.
            for (method, message) in [
                ("RunAggregationQuery", "Method google.firestore.v1beta1.Firestore/RunAggregationQuery is unimplemented"),
                ("NoSuchMethod", "Method not found: google.firestore.v1beta1.Firestore/NoSuchMethod"),
            ] {
                let refused = await #expect(throws: RPCError.self) {
                    try await client.serverStreaming(
                        request: ClientRequest(message: aggregation), descriptor: beta(method),
                        serializer: ProtobufSerializer<Google_Firestore_V1_RunAggregationQueryRequest>(),
                        deserializer: ProtobufDeserializer<Google_Firestore_V1_RunAggregationQueryResponse>(), options: .defaults
                    ) { response in for try await _ in response.messages {} }
                }
                #expect(refused?.code == .unimplemented, "\(method)")
                #expect(refused?.message == message)
            }
            let counted = try await v1.runAggregationQuery(aggregation) { response in
                var counts: [Int64] = []
                for try await answer in response.messages where answer.hasResult { counts += answer.result.aggregateFields.values.map(\.integerValue) }
                return counts
            }
            #expect(counted == [1])
        }
    }

    @Test func serverStreamingQueriesStreamEveryDocument() async throws {
        try await Self.withFlint { firestore, _ in
            var commit = Google_Firestore_V1_CommitRequest()
            commit.database = Self.database
            commit.writes = (1...5).map { Self.write("n/\($0)", ["v": Self.int(Int64($0))]) }
            _ = try await firestore.commit(commit)

            var query = Google_Firestore_V1_RunQueryRequest()
            query.parent = Self.root
            var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
            from.collectionID = "n"
            query.structuredQuery.from = [from]
            var order = Google_Firestore_V1_StructuredQuery.Order()
            order.field.fieldPath = "v"
            order.direction = .descending
            query.structuredQuery.orderBy = [order]
            var filter = Google_Firestore_V1_StructuredQuery.FieldFilter()
            filter.field.fieldPath = "v"
            filter.op = .greaterThan
            filter.value = Self.int(2)
            query.structuredQuery.where.fieldFilter = filter
            let values = try await firestore.runQuery(query) { response in
                var out: [Int64] = []
                for try await r in response.messages where r.hasDocument { out.append(r.document.fields["v"]?.integerValue ?? -1) }
                return out
            }
            #expect(values == [5, 4, 3])

            var batch = Google_Firestore_V1_BatchGetDocumentsRequest()
            batch.database = Self.database
            batch.documents = [Self.root + "/n/1", Self.root + "/n/9"]
            let found = try await firestore.batchGetDocuments(batch) { response in
                var out: [String] = []
                for try await r in response.messages {
                    switch r.result {
                    case .found(let d)?: out.append("found " + d.name)
                    case .missing(let name)?: out.append("missing " + name)
                    case nil: break
                    }
                }
                return out
            }
            #expect(found == ["found \(Self.root)/n/1", "missing \(Self.root)/n/9"])
        }
    }

    /// The mobile SDKs' handshake: database first, then batches that echo the last token.
    @Test func writeStreamHandshakeThenBatches() async throws {
        try await Self.withFlint { firestore, _ in
            let responses = try await firestore.write(requestProducer: { writer in
                var handshake = Google_Firestore_V1_WriteRequest()
                handshake.database = Self.database
                try await writer.write(handshake)
            }) { response in
                var out: [Google_Firestore_V1_WriteResponse] = []
                for try await r in response.messages { out.append(r) }
                return out
            }
            #expect(responses.count == 1)
            #expect(!responses[0].streamID.isEmpty)
            #expect(!responses[0].streamToken.isEmpty)

            let stream = AsyncStream<Google_Firestore_V1_WriteResponse>.makeStream()
            let answers = try await firestore.write(requestProducer: { writer in
                var tokens = stream.stream.makeAsyncIterator()
                var handshake = Google_Firestore_V1_WriteRequest()
                handshake.database = Self.database
                try await writer.write(handshake)
                for n in 1...2 {
                    guard let last = await tokens.next() else { return }
                    var batch = Google_Firestore_V1_WriteRequest()
                    batch.streamToken = last.streamToken
                    batch.writes = [Self.write("stream/\(n)", ["n": Self.int(Int64(n))])]
                    try await writer.write(batch)
                }
                _ = await tokens.next()
            }) { response in
                var out: [Google_Firestore_V1_WriteResponse] = []
                for try await r in response.messages {
                    out.append(r)
                    stream.continuation.yield(r)
                }
                stream.continuation.finish()
                return out
            }
            #expect(answers.count == 3)
            #expect(answers[1].writeResults.count == 1 && answers[2].writeResults.count == 1)
            #expect((answers[1].commitTime.seconds, answers[1].commitTime.nanos) < (answers[2].commitTime.seconds, answers[2].commitTime.nanos))
            #expect(Set(answers.map(\.streamToken)).count == 3)
            // The stream id comes with the handshake's answer only.
            #expect(!answers[0].streamID.isEmpty && answers.dropFirst().allSatisfy(\.streamID.isEmpty))

            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = Self.root + "/stream/2"
            #expect(try await firestore.getDocument(get).fields["n"]?.integerValue == 2)

            // A batch before the handshake is refused.
            let refused = await #expect(throws: RPCError.self) {
                try await firestore.write(requestProducer: { writer in
                    var batch = Google_Firestore_V1_WriteRequest()
                    batch.writes = [Self.write("stream/3", [:])]
                    try await writer.write(batch)
                }) { response in for try await _ in response.messages {} }
            }
            #expect(refused?.code == .invalidArgument)
        }
    }

    /// What the SDKs do on a write stream beyond the basics: send several batches before any is
    /// answered (each with the handshake's token), and end it with a request without writes.
    @Test func writeStreamTakesPipelinedBatchesAndEndsOnAnEmptyRequest() async throws {
        try await Self.withFlint { firestore, _ in
            let handshakeAnswer = AsyncStream<Data>.makeStream()
            let answers = try await firestore.write(requestProducer: { writer in
                var handshake = Google_Firestore_V1_WriteRequest()
                handshake.database = Self.database
                try await writer.write(handshake)
                var first = handshakeAnswer.stream.makeAsyncIterator()
                guard let token = await first.next() else { return }
                for n in 1...3 {
                    var batch = Google_Firestore_V1_WriteRequest()
                    batch.streamToken = token
                    batch.writes = [Self.write("piped/\(n)", ["n": Self.int(Int64(n))])]
                    try await writer.write(batch)
                }
                var last = Google_Firestore_V1_WriteRequest()
                last.streamToken = token
                try await writer.write(last)
            }) { response in
                var out: [Google_Firestore_V1_WriteResponse] = []
                for try await r in response.messages {
                    if out.isEmpty { handshakeAnswer.continuation.yield(r.streamToken) }
                    out.append(r)
                }
                return out
            }
            // Handshake, three batches, and the empty last request; then the stream ended.
            #expect(answers.count == 5)
            #expect(answers.dropFirst().prefix(3).allSatisfy { $0.writeResults.count == 1 && $0.hasCommitTime })
            #expect(answers[4].writeResults.isEmpty && !answers[4].hasCommitTime)
            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = Self.root + "/piped/3"
            #expect(try await firestore.getDocument(get).fields["n"]?.integerValue == 3)

            // The handshake must name its database; the resource prefix header does not.
            let unnamed = await #expect(throws: RPCError.self) {
                try await firestore.write(
                    metadata: ["google-cloud-resource-prefix": "\(Self.database)"],
                    requestProducer: { writer in try await writer.write(Google_Firestore_V1_WriteRequest()) }
                ) { response in for try await _ in response.messages {} }
            }
            #expect(unnamed?.code == .invalidArgument)
            #expect(unnamed?.message == "'database' must be set on an initial write request.")

            // Handshakes and later requests the reference refuses, in its words.
            var resuming = Google_Firestore_V1_WriteRequest()
            resuming.database = Self.database
            resuming.streamID = "x"
            resuming.writes = [Self.write("w/a", [:])]
            var withWrites = Google_Firestore_V1_WriteRequest()
            withWrites.database = Self.database
            withWrites.writes = [Self.write("w/a", [:])]
            var handshake = Google_Firestore_V1_WriteRequest()
            handshake.database = Self.database
            var elsewhere = Google_Firestore_V1_WriteRequest()
            elsewhere.database = "projects/zz/databases/(default)"
            elsewhere.writes = [Self.write("w/a", [:])]
            // A stream id after the handshake is refused too, before the database is compared,
            // and even on the last request, which holds no writes.
            var laterResuming = elsewhere
            laterResuming.streamID = "x"
            var lastResuming = Google_Firestore_V1_WriteRequest()
            lastResuming.streamID = "x"
            // A handshake's stream token is told after a stream id and before writes.
            var withToken = withWrites
            withToken.streamToken = Data([1])
            var withTokenAndID = resuming
            withTokenAndID.streamToken = Data([1])
            let refusals: [([Google_Firestore_V1_WriteRequest], String)] = [
                ([withToken], "Resuming streams is not supported, 'stream_token' must not be set on an initial write request."),
                ([withTokenAndID], "Resuming streams is not supported, do not set stream ID."),
                ([resuming], "Resuming streams is not supported, do not set stream ID."),
                ([handshake, laterResuming], "Resuming streams is not supported, do not set stream ID."),
                ([handshake, lastResuming], "Resuming streams is not supported, do not set stream ID."),
                ([withWrites], "'writes' must not be set on an initial write request."),
                ([handshake, elsewhere],
                 "Request specified a database (projects/zz/databases/(default)) that did not match the expected database (\(Self.database))"),
            ]
            for (requests, message) in refusals {
                let refused = await #expect(throws: RPCError.self) {
                    try await firestore.write(requestProducer: { writer in
                        for r in requests { try await writer.write(r) }
                    }) { response in for try await _ in response.messages {} }
                }
                #expect(refused?.code == .invalidArgument)
                #expect(refused?.message == message)
            }
        }
    }

    @Test func authorizationMetadataIsReadAsRESTReadsTheHeader() async throws {
        try await Self.withFlint { firestore, _ in
            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = Self.root + "/a/b"
            let error = await #expect(throws: RPCError.self) {
                try await firestore.getDocument(get, metadata: ["authorization": "Bearer not.a-jwt"])
            }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message == "invalid jwt")
            let owner = await #expect(throws: RPCError.self) {
                try await firestore.getDocument(get, metadata: ["authorization": "Bearer owner"])
            }
            #expect(owner?.code == .notFound)
        }
    }

    /// HTTP/1.1 and HTTP/2 clients share the port at the same time.
    @Test func restAndGRPCShareThePort() async throws {
        try await Self.withFlint { firestore, port in
            var commit = Google_Firestore_V1_CommitRequest()
            commit.database = Self.database
            commit.writes = [Self.write("shared/doc", ["n": Self.int(7)])]
            _ = try await firestore.commit(commit)
            let url = URL(string: "http://127.0.0.1:\(port)/v1/\(Self.root)/shared/doc")!
            let (data, response) = try await URLSession.shared.data(from: url)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            let fields = json?["fields"] as? [String: Any]
            #expect((fields?["n"] as? [String: Any])?["integerValue"] as? String == "7")
        }
    }

    static func http(_ port: Int, _ method: String, _ path: String) async throws -> (Int, Any?) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONSerialization.jsonObject(with: data))
    }

    @Test func metricsCountBothDialectsAndEveryDatabase() async throws {
        try await Self.withFlint { firestore, port in
            var commit = Google_Firestore_V1_CommitRequest()
            commit.database = Self.database
            commit.writes = [Self.write("m/1", [:]), Self.write("m/2", [:])]
            _ = try await firestore.commit(commit)
            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = Self.root + "/m/1"
            _ = try await firestore.getDocument(get)
            let (status, body) = try await Self.http(port, "GET", "/emulator/v1/metrics")
            #expect(status == 200)
            let report = try #require(body as? [String: Any])
            let requests = try #require(report["requests"] as? [String: Int])
            #expect(requests["grpc"] == 2)
            #expect(requests["http"] == 1)
            let databases = try #require(report["databases"] as? [[String: Any]])
            #expect(databases.count == 1)
            #expect(databases.first?["name"] as? String == Self.database)
            #expect(databases.first?["documents"] as? Int == 2)
            let memory = try #require(report["memory"] as? [String: Int])
            #expect((memory["residentBytes"] ?? 0) > 1_000_000)
        }
    }

    @Test func indexUsageReportsWhatQueriesNeeded() async throws {
        try await Self.withFlint { firestore, port in
            var query = Google_Firestore_V1_RunQueryRequest()
            query.parent = Self.root
            var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
            from.collectionID = "cities"
            query.structuredQuery.from = [from]
            var filter = Google_Firestore_V1_StructuredQuery.FieldFilter()
            filter.field.fieldPath = "state"
            filter.op = .equal
            filter.value.stringValue = "CA"
            query.structuredQuery.where.fieldFilter = filter
            var order = Google_Firestore_V1_StructuredQuery.Order()
            order.field.fieldPath = "population"
            order.direction = .descending
            query.structuredQuery.orderBy = [order]
            _ = try await firestore.runQuery(query) { response in for try await _ in response.messages {} }
            let (status, body) = try await Self.http(port, "GET", "/emulator/v1/projects/p1/databases/(default):indexUsage")
            #expect(status == 200)
            let indexes = try #require((body as? [String: Any])?["indexes"] as? [[String: Any]])
            #expect(indexes.count == 1)
            #expect(indexes.first?["collectionGroup"] as? String == "cities")
            let fields = try #require(indexes.first?["fields"] as? [[String: String]])
            #expect(fields.map { $0["fieldPath"] } == ["state", "population"])
        }
    }

    @Test func aServerThatCannotBindSaysWhyInsteadOfWaiting() async throws {
        let first = try await FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0)).start()
        defer { first.stop() }
        let second = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: first.port))
        await #expect(throws: (any Error).self) { _ = try await second.start() }
        // The first still serves.
        let (status, _) = try await Self.http(first.port, "GET", "/")
        #expect(status == 200)
    }

    @Test func shutdownEndpointStopsTheServer() async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        let running = try await server.start()
        let port = running.port
        let (status, _) = try await Self.http(port, "POST", "/shutdown")
        #expect(status == 200)
        try await running.finished()
        await #expect(throws: (any Error).self) { try await Self.http(port, "GET", "/") }
    }
}
