import FlintModel
import FlintProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import SwiftProtobuf
import Testing

/// Field names that differ only in Unicode normalization (`é` as one scalar, or as `e` and a
/// combining accent; the Ångström sign and `Å`), written over gRPC and REST to both servers,
/// then read back, filtered on and masked; documents and aggregations so named. Swift's strings
/// hold each pair equal.
struct NormalizationDifferentialTests {
    static let composed = "\u{E9}", decomposed = "e\u{301}", angstrom = "\u{212B}", ring = "\u{C5}"

    /// Fields as one line, each name by its scalars, in byte order: `U+0065 U+0301=2, …`.
    static func describe(_ fields: [UTF8Key: Google_Firestore_V1_Value]) -> String {
        fields.keys.sorted().map { key in
            let name = key.string.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
            let value: String
            switch fields[key]!.valueType {
            case .integerValue(let i): value = "\(i)"
            case .mapValue(let m): value = "{" + describe(m.fields) + "}"
            default: value = "?"
            }
            return name + "=" + value
        }.joined(separator: ", ")
    }

    static func int(_ n: Int64) -> Google_Firestore_V1_Value { .with { $0.integerValue = n } }

    static func outcomes(port: Int, project: String) async throws -> [String] {
        let database = "projects/\(project)/databases/(default)"
        let rest = "http://127.0.0.1:\(port)/v1/\(database)/documents"
        var lines: [String] = []

        try await withGRPCClient(transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)) { client in
            let firestore = Google_Firestore_V1_Firestore.Client(wrapping: client)
            let metadata: Metadata = ["authorization": "Bearer owner"]
            var inner = Google_Firestore_V1_Value()
            inner.mapValue.fields = [UTF8Key(angstrom): int(3), UTF8Key(ring): int(4)]
            var write = Google_Firestore_V1_Write()
            write.update.name = database + "/documents/n/grpc"
            write.update.fields = [UTF8Key(composed): int(1), UTF8Key(decomposed): int(2), "m": inner]
            var commit = Google_Firestore_V1_CommitRequest()
            commit.database = database
            commit.writes = [write]
            _ = try await firestore.commit(commit, metadata: metadata)
            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = write.update.name
            lines.append("grpc: " + describe(try await firestore.getDocument(get, metadata: metadata).fields))
        }

        func read(_ id: String) async throws -> String {
            let answer = try await RawHTTP.exchange("GET", rest + "/n/" + id, headers: ["Authorization": "Bearer owner"])
            guard answer.status == 200 else { return "\(answer.status)" }
            return describe(try Google_Firestore_V1_Document(jsonUTF8Data: answer.body).fields)
        }
        let body = #"{"fields":{"\#(composed)":{"integerValue":"1"},"\#(decomposed)":{"integerValue":"2"},"#
            + #""m":{"mapValue":{"fields":{"\#(angstrom)":{"integerValue":"3"},"\#(ring)":{"integerValue":"4"}}}}}}"#
        let written = try await RawHTTP.send("PATCH", rest + "/n/rest", body)
        lines.append("rest: \(written.status) " + (try await read("rest")))

        for (name, value) in [(composed, 1), (composed, 2), (decomposed, 2), ("m.`\(ring)`", 4), ("m.`\(ring)`", 3)] {
            let path = name.hasPrefix("m.") ? name : "`\(name)`"
            let query = #"{"structuredQuery":{"from":[{"collectionId":"n"}],"where":{"fieldFilter":{"field":{"fieldPath":"\#(path)"},"op":"EQUAL","value":{"integerValue":"\#(value)"}}}}}"#
            let answer = try await RawHTTP.exchange(
                "POST", rest + ":runQuery", headers: ["Authorization": "Bearer owner", "Content-Type": "application/json"], body: query)
            let found = String(decoding: answer.body, as: UTF8.self).ranges(of: #""document""#).count
            lines.append("\(path.unicodeScalars.map { $0.value }) == \(value): \(answer.status), \(found) documents")
        }

        // Two documents so named in one batch; two aggregations so named.
        let root = database + "/documents/b/"
        let batch = #"{"writes":[{"update":{"name":"\#(root + composed)"}},{"update":{"name":"\#(root + decomposed)"}}]}"#
        lines.append("batchWrite: \(try await RawHTTP.send("POST", rest + ":batchWrite", batch).status)")
        let aggregation = #"{"structuredAggregationQuery":{"structuredQuery":{"from":[{"collectionId":"b"}]},"#
            + #""aggregations":[{"alias":"\#(composed)","count":{}},{"alias":"\#(decomposed)","count":{"upTo":"1"}}]}}"#
        let counted = try await RawHTTP.exchange("POST", rest + ":runAggregationQuery", headers: ["Content-Type": "application/json"], body: aggregation)
        // The array's one answer, read as the message it is.
        let answer = String(decoding: counted.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).dropFirst().dropLast()
        let result = try Google_Firestore_V1_RunAggregationQueryResponse(jsonString: String(answer))
        lines.append("aggregation: \(counted.status) " + describe(result.result.aggregateFields))

        let mask = "%60" + decomposed.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "%60"
        let masked = try await RawHTTP.send("PATCH", rest + "/n/rest?updateMask.fieldPaths=" + mask, #"{"fields":{}}"#)
        lines.append("masked: \(masked.status) " + (try await read("rest")))
        return lines
    }

    @Test func bothNamesOfAPairAreKeptFilteredAndMaskedApart() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServerPorts(for: "normalization") else { return }
        defer { stop() }
        let project = "flint-normalization"
        let expected = try await Self.outcomes(port: reference.port, project: project)
        let pairs = "U+65 U+301=2, U+6D={U+C5=4, U+212B=3}, U+E9=1"
        #expect(expected.first == "grpc: " + pairs)
        #expect(expected.dropFirst().first == "rest: 200 " + pairs)
        // Each filter finds both documents by its own name only.
        #expect(expected.dropFirst(2).prefix(5).map { $0.hasSuffix(": 200, 2 documents") } == [true, false, true, true, false])
        #expect(expected.dropLast().suffix(2) == ["batchWrite: 200", "aggregation: 200 U+65 U+301=1, U+E9=2"])
        #expect(expected.last == "masked: 200 U+6D={U+C5=4, U+212B=3}, U+E9=1")
        let flinted = try await Self.outcomes(port: flint, project: project)
        #expect(flinted == expected)
    }
}
