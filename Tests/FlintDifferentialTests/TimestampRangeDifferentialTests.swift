import FlintEngine
import FlintProto
import FlintServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import SwiftProtobuf
import Testing

/// Timestamps outside protobuf's range, or finer than Firestore keeps, in every place a gRPC
/// request carries one: as a value (stored, filtered on, a cursor, a transform's operand) and as
/// an option (a read time, a precondition). Over gRPC, since REST's RFC 3339 text cannot say them.
struct TimestampRangeDifferentialTests {
    typealias Firestore = Google_Firestore_V1_Firestore.Client<HTTP2ClientTransport.Posix>

    static let project = "flint-timestamp-range"
    static let database = "projects/\(project)/databases/(default)"
    static let root = database + "/documents"
    static let invalid =
        "invalid timestamp, please check https://developers.google.com/protocol-buffers/docs/reference/java/com/google/protobuf/util/Timestamps.html#isValid-long-int- for the timestamp format."

    static let times: [(seconds: Int64, nanos: Int32)] = [
        (0, 1_000_000_000), (0, -1), (253_402_300_800, -1), (-62_135_596_801, 0), (253_402_300_800, 0),
        (-62_135_596_800, 0), (-1, 1), (-1, 0), (1, 1), (1, 1_000),
    ]

    static let places = [
        "value", "nested value", "filter", "cursor", "maximum", "get", "batch get", "list", "query",
        "aggregation", "read-only transaction", "precondition", "collection ids",
    ]

    /// Where the reference fails with `UNKNOWN` and no message (an exception it did not catch) or,
    /// for collection ids, takes the time as it stands: Flint refuses the time as other reads do.
    static func referenceDiffers(_ place: String, _ time: (seconds: Int64, nanos: Int32)) -> Bool {
        let secondsOut = time.seconds < -62_135_596_800 || time.seconds > 253_402_300_799
        let nanosOut = time.nanos < 0 || time.nanos > 999_999_999
        switch place {
        case "list", "query", "aggregation": return secondsOut
        case "collection ids": return secondsOut || nanosOut
        default: return false
        }
    }

    static func timestamp(_ t: (seconds: Int64, nanos: Int32)) -> Google_Protobuf_Timestamp {
        Google_Protobuf_Timestamp(seconds: t.seconds, nanos: t.nanos)
    }

    static func value(_ t: (seconds: Int64, nanos: Int32)) -> Google_Firestore_V1_Value {
        var v = Google_Firestore_V1_Value()
        v.timestampValue = timestamp(t)
        return v
    }

    static func query() -> Google_Firestore_V1_StructuredQuery {
        var q = Google_Firestore_V1_StructuredQuery()
        var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
        from.collectionID = "t"
        q.from = [from]
        return q
    }

    static func commit(_ firestore: Firestore, _ write: Google_Firestore_V1_Write) async throws -> String {
        var commit = Google_Firestore_V1_CommitRequest()
        commit.database = database
        commit.writes = [write]
        return "committed \(try await firestore.commit(commit, metadata: owner).writeResults.count)"
    }

    static let owner: Metadata = ["authorization": "Bearer owner"]

    /// How many of a stream's answers are of the kind `counts` picks.
    static func counted<Message: Sendable>(
        _ response: StreamingClientResponse<Message>, _ counts: (Message) -> Bool
    ) async throws -> Int {
        var n = 0
        for try await message in response.messages where counts(message) { n += 1 }
        return n
    }

    /// What one place answers for one time: a summary of the answer, or the status and message.
    static func outcome(_ firestore: Firestore, _ place: String, _ time: (seconds: Int64, nanos: Int32)) async throws -> String {
        var stored = Google_Firestore_V1_Write()
        stored.update.name = root + "/t/a"
        do {
            switch place {
            case "value":
                stored.update.fields = ["at": value(time)]
                return try await commit(firestore, stored)
            case "nested value":
                var map = Google_Firestore_V1_Value()
                map.mapValue.fields = ["at": value(time)]
                stored.update.fields = ["m": map]
                return try await commit(firestore, stored)
            case "maximum":
                var transform = Google_Firestore_V1_DocumentTransform.FieldTransform()
                transform.fieldPath = "n"
                transform.maximum = value(time)
                var write = Google_Firestore_V1_Write()
                write.transform.document = root + "/t/b"
                write.transform.fieldTransforms = [transform]
                return try await commit(firestore, write)
            case "precondition":
                // On a document never written, so that no server's clock shows in the answer.
                stored.update.name = root + "/t/none"
                stored.currentDocument.updateTime = timestamp(time)
                return try await commit(firestore, stored)
            case "filter", "cursor", "query":
                var request = Google_Firestore_V1_RunQueryRequest()
                request.parent = root
                request.structuredQuery = query()
                if place == "filter" {
                    var filter = Google_Firestore_V1_StructuredQuery.FieldFilter()
                    filter.field.fieldPath = "at"
                    filter.op = .lessThan
                    filter.value = value(time)
                    request.structuredQuery.where.fieldFilter = filter
                } else if place == "cursor" {
                    var order = Google_Firestore_V1_StructuredQuery.Order()
                    order.field.fieldPath = "at"
                    request.structuredQuery.orderBy = [order]
                    request.structuredQuery.startAt.values = [value(time)]
                } else {
                    request.readTime = timestamp(time)
                }
                return "documents \(try await firestore.runQuery(request, metadata: owner) { try await counted($0) { $0.hasDocument } })"
            case "get":
                var request = Google_Firestore_V1_GetDocumentRequest()
                request.name = root + "/t/a"
                request.readTime = timestamp(time)
                return "got \(try await firestore.getDocument(request, metadata: owner).fields.count)"
            case "batch get":
                var request = Google_Firestore_V1_BatchGetDocumentsRequest()
                request.database = database
                request.documents = [root + "/t/a"]
                request.readTime = timestamp(time)
                let found = try await firestore.batchGetDocuments(request, metadata: owner) {
                    try await counted($0) { if case .found = $0.result { true } else { false } }
                }
                return "batch \(found)"
            case "list":
                var request = Google_Firestore_V1_ListDocumentsRequest()
                request.parent = root
                request.collectionID = "t"
                request.readTime = timestamp(time)
                return "listed \(try await firestore.listDocuments(request, metadata: owner).documents.count)"
            case "aggregation":
                var request = Google_Firestore_V1_RunAggregationQueryRequest()
                request.parent = root
                request.structuredAggregationQuery.structuredQuery = query()
                var count = Google_Firestore_V1_StructuredAggregationQuery.Aggregation()
                count.count = .init()
                count.alias = "n"
                request.structuredAggregationQuery.aggregations = [count]
                request.readTime = timestamp(time)
                return "aggregated \(try await firestore.runAggregationQuery(request, metadata: owner) { try await counted($0) { $0.hasResult } })"
            case "read-only transaction":
                var request = Google_Firestore_V1_BeginTransactionRequest()
                request.database = database
                request.options.readOnly.readTime = timestamp(time)
                return "began \(try await !firestore.beginTransaction(request, metadata: owner).transaction.isEmpty)"
            case "collection ids":
                var request = Google_Firestore_V1_ListCollectionIdsRequest()
                request.parent = root
                request.readTime = timestamp(time)
                return "collections \(try await firestore.listCollectionIds(request, metadata: owner).collectionIds)"
            default:
                Issue.record("unknown place \(place)")
                return ""
            }
        } catch let error as RPCError {
            return "\(error.code): \(error.message)"
        }
    }

    static func outcomes(port: Int, reference: Bool) async throws -> [String] {
        try await withGRPCClient(
            transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
        ) { client in
            let firestore = Google_Firestore_V1_Firestore.Client(wrapping: client)
            var stored = Google_Firestore_V1_Write()
            stored.update.name = root + "/t/a"
            stored.update.fields = ["at": value((1, 0))]
            _ = try await commit(firestore, stored)
            var lines: [String] = []
            for place in places {
                for time in times {
                    let answer =
                        reference && referenceDiffers(place, time)
                        ? "invalidArgument: \(invalid)" : try await outcome(firestore, place, time)
                    lines.append("\(place) \(time): \(answer)")
                }
            }
            return lines
        }
    }

    @Test func outOfRangeAndFineTimesAreRefusedAsOnTheReference() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential timestamp test skipped")
            return
        }
        defer { reference.stop() }
        let expected = try await Self.outcomes(port: reference.port, reference: true)
        #expect(expected.contains("value (seconds: 0, nanos: -1): invalidArgument: Timestamp nanos exceeds limit for field."))
        #expect(expected.contains("get (seconds: 0, nanos: -1): invalidArgument: \(Self.invalid)"))

        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        let running = try await server.start()
        defer { running.stop() }
        let flint = try await Self.outcomes(port: running.port, reference: false)
        for (f, r) in zip(flint, expected) { #expect(f == r) }
        #expect(flint.count == expected.count)
    }
}
