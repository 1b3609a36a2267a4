import FlintTesting
import Foundation
import Testing

/// Nearest-neighbour queries sent as the same REST JSON to the reference and to a Flint server:
/// the same documents in the same order, at the same distances to the last bit, and the same
/// refusals. A threshold is set to a distance the reference returned, so a distance one unit in
/// the last place off moves a document across it.
struct VectorSearchDifferentialTests {
    static let measures = ["EUCLIDEAN", "COSINE", "DOT_PRODUCT"]

    /// A double as Firestore's JSON writes it: a number, or a string for what JSON lacks.
    static func json(_ x: Double) -> String {
        if x.isNaN { return #""NaN""# }
        if x.isInfinite { return x > 0 ? #""Infinity""# : #""-Infinity""# }
        return "\(x)"
    }

    static func vector(_ xs: [Double]) -> String {
        let values = xs.map { #"{"doubleValue": \#(json($0))}"# }.joined(separator: ", ")
        return #"{"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [\#(values)]}}}}}"#
    }

    /// Components of every scale the sums can round differently on.
    static func component(_ rng: inout SeededGenerator) -> Double {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: Double.random(in: -10...10, using: &rng)
        case 1: Double(Int.random(in: -5...5, using: &rng))
        case 2: Double.random(in: 0..<1e-3, using: &rng)
        default: Double.random(in: -1e6...1e6, using: &rng)
        }
    }

    static func nearest(_ query: [Double], _ measure: String, threshold: Double? = nil) -> String {
        let bound = threshold.map { #", "distanceThreshold": \#(json($0))"# } ?? ""
        return #"{"structuredQuery": {"from": [{"collectionId": "v"}], "findNearest": {"vectorField": {"fieldPath": "e"}, "queryVector": \#(vector(query)), "distanceMeasure": "\#(measure)", "limit": 40, "distanceResultField": "d"\#(bound)}}}"#
    }

    /// The outcome of POSTing `body` to `url`.
    static func query(_ url: String, _ body: String) async throws -> (text: String, distances: [Double]) {
        outcome(try await RawHTTP.send("POST", url, body))
    }

    /// The status and message of a refusal, or each document's id and distance in order.
    static func outcome(_ answer: (status: Int, json: Any?)) -> (text: String, distances: [Double]) {
        guard answer.status == 200 else { return ("\(answer.status) \(RawHTTP.message(answer.json) ?? "")", []) }
        var rows: [String] = []
        var distances: [Double] = []
        for result in answer.json as? [[String: Any]] ?? [] {
            guard let document = result["document"] as? [String: Any] else { continue }
            let id = (document["name"] as? String ?? "").split(separator: "/").last.map(String.init) ?? "?"
            let value = ((document["fields"] as? [String: Any])?["d"] as? [String: Any])?["doubleValue"]
            guard let distance = (value as? NSNumber)?.doubleValue ?? (value as? String).flatMap(Double.init) else {
                rows.append("\(id)=none")
                continue
            }
            distances.append(distance)
            rows.append("\(id)=\(distance)")
        }
        return ("200 " + rows.joined(separator: " "), distances)
    }

    static func commit(_ documents: String, _ fields: [(id: String, fields: String)], on bases: [String]) async throws {
        let writes = fields.map { #"{"update": {"name": "\#(documents)/v/\#($0.id)", "fields": \#($0.fields)}}"# }
        for base in bases {
            let answer = try await RawHTTP.send("POST", base + "/v1/\(documents):commit", #"{"writes": [\#(writes.joined(separator: ", "))]}"#)
            #expect(answer.status == 200, "\(RawHTTP.message(answer.json) ?? "")")
        }
    }

    @Test func randomVectorsAreAsNearAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "vector search") else { return }
        defer { stop() }
        // FLINT_VECTOR_SEED explores other vectors; the default is the one kept.
        let seed = ProcessInfo.processInfo.environment["FLINT_VECTOR_SEED"].flatMap { UInt64($0) } ?? 20_261_129
        var rng = SeededGenerator(seed: seed)
        var thresholds = 0
        var compared = 0
        // Below four, past one group of four, past several, with a rest and without.
        for dimension in [1, 2, 3, 4, 5, 7, 8, 9, 16, 33] {
            let documents = "projects/flint-vectors-\(dimension)/databases/(default)/documents"
            var fields: [(id: String, fields: String)] = (0..<20).map { i in
                ("d\(i < 10 ? "0" : "")\(i)", #"{"e": \#(Self.vector((0..<dimension).map { _ in Self.component(&rng) }))}"#)
            }
            // Other dimensions and other types take no part.
            fields.append(("other", #"{"e": \#(Self.vector((0...dimension).map { _ in Self.component(&rng) }))}"#))
            fields.append(("plain", #"{"e": {"arrayValue": {"values": [{"doubleValue": 1.5}]}}}"#))
            try await Self.commit(documents, fields, on: [reference.base, flint])
            let query = (0..<dimension).map { _ in Double.random(in: -3...3, using: &rng) }
            for measure in Self.measures {
                let url = "/v1/\(documents):runQuery"
                let expected = try await Self.query(reference.base + url, Self.nearest(query, measure))
                let found = try await Self.query(flint + url, Self.nearest(query, measure))
                #expect(found.text == expected.text, "\(dimension) dimensions, \(measure)")
                compared += 1
                guard expected.distances.count > 6 else { continue }
                let threshold = expected.distances[5]
                let bounded = Self.nearest(query, measure, threshold: threshold)
                let expectedBounded = try await Self.query(reference.base + url, bounded)
                let foundBounded = try await Self.query(flint + url, bounded)
                #expect(foundBounded.text == expectedBounded.text, "\(dimension) dimensions, \(measure), threshold \(threshold)")
                #expect(expectedBounded.distances.last == threshold, "the threshold's own document is kept")
                thresholds += 1
            }
        }
        #expect(compared == 30)
        #expect(thresholds > 25, "\(thresholds) thresholds tried")
    }

    /// Infinite, huge, tiny and zero components, and query vectors with NaN and infinity: which
    /// distances are NaN or infinite, where NaN sorts for each measure, and which thresholds it
    /// passes.
    @Test func extremeVectorsSortAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "extreme vector search") else { return }
        defer { stop() }
        let documents = "projects/flint-vector-extremes/databases/(default)/documents"
        let stored: [(String, [Double])] = [
            ("inf", [.infinity, 1]), ("ninf", [-.infinity, 0]), ("big", [1e200, 1e200]), ("tiny", [1e-170, 1e-170]),
            ("negz", [-0.0, 0.0]), ("one", [1, 0]), ("mix", [1e308, -1e308]), ("same", [1, 1]), ("twice", [2, 2]),
        ]
        try await Self.commit(documents, stored.map { ($0.0, #"{"e": \#(Self.vector($0.1))}"#) }, on: [reference.base, flint])
        let queries: [[Double]] = [[1, 1], [0, 0], [.nan, 0], [.infinity, 1], [1e200, 1e200], [1e-170, 1e-170], [-0.0, 1]]
        var nanDistances = 0
        for query in queries {
            for measure in Self.measures {
                for threshold in [nil, 0.0, 1.0] {
                    let body = Self.nearest(query, measure, threshold: threshold)
                    let expected = try await Self.query(reference.base + "/v1/\(documents):runQuery", body)
                    let found = try await Self.query(flint + "/v1/\(documents):runQuery", body)
                    #expect(found.text == expected.text, "\(query) \(measure) threshold \(threshold.map { "\($0)" } ?? "none")")
                    if expected.text.contains("=nan") { nanDistances += 1 }
                }
            }
        }
        #expect(nanDistances > 20, "\(nanDistances) answers with a NaN distance")
    }

    /// NaN in a stored vector, thresholds that are not finite, and which of two problems in one
    /// document is named.
    @Test func vectorRefusalsAreTheReferences() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "vector refusals") else { return }
        defer { stop() }
        let documents = "projects/flint-vector-refusals/databases/(default)/documents"
        let nan = Self.vector([.nan, 1])
        let arrayInArray = #"{"arrayValue": {"values": [{"arrayValue": {}}]}}"#
        let writes: [(String, String)] = [
            ("top", #"{"fields": {"e": \#(nan)}}"#),
            ("nested", #"{"fields": {"m": {"mapValue": {"fields": {"e": \#(nan)}}}}}"#),
            ("inArray", #"{"fields": {"a": {"arrayValue": {"values": [\#(nan)]}}}}"#),
            ("tooLong", #"{"fields": {"e": \#(Self.vector([.nan] + Array(repeating: 1, count: 2048)))}}"#),
            ("infinite", #"{"fields": {"e": \#(Self.vector([.infinity, -.infinity]))}}"#),
            ("maskedOut?updateMask.fieldPaths=x", #"{"fields": {"e": \#(nan), "x": {"integerValue": "1"}}}"#),
            ("nanBeforeArrayInArray", #"{"fields": {"a": \#(nan), "b": \#(arrayInArray)}}"#),
            ("nanBeforeReserved", #"{"fields": {"a": \#(nan), "b": {"mapValue": {"fields": {"__y__": {"integerValue": "1"}}}}}}"#),
        ]
        for (path, body) in writes {
            let url = "/v1/\(documents)/v/\(path)"
            let expected = try await RawHTTP.send("PATCH", reference.base + url, body)
            let found = try await RawHTTP.send("PATCH", flint + url, body)
            #expect(found.status == expected.status, "\(path)")
            #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(path)")
        }
        var queries: [String] = []
        for threshold in [Double.nan, .infinity, -.infinity, -0.0] {
            queries += Self.measures.map { Self.nearest([.nan, 1], $0, threshold: threshold) }
        }
        // The threshold is checked after the query's other parts.
        let unbounded = Self.nearest([1, 1], "EUCLIDEAN", threshold: .nan)
        queries.append(unbounded.replacingOccurrences(of: #""distanceResultField": "d""#, with: #""distanceResultField": "__d__""#))
        queries.append(unbounded.replacingOccurrences(of: #"{"structuredQuery": {"#, with: #"{"structuredQuery": {"limit": 3, "#))
        queries.append(unbounded.replacingOccurrences(of: #""limit": 40"#, with: #""limit": 0"#))
        for body in queries {
            let expected = try await Self.query(reference.base + "/v1/\(documents):runQuery", body)
            let found = try await Self.query(flint + "/v1/\(documents):runQuery", body)
            #expect(found.text == expected.text, "\(body)")
        }
        #expect(Set(queries).count == 15, "each query is its own")
    }
}
