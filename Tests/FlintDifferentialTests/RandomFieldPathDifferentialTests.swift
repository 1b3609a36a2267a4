import FlintTesting
import Foundation
import Testing

/// Random field path texts (plain and backquoted segments, C-style escapes good and bad,
/// reserved names, stray dots) named by read masks, listings, projections, orders, update
/// masks and transforms, sent as the same REST requests to the reference and to a Flint
/// server: each must end with the same status and message, or answer and store the same fields.
/// So the paths are parsed alike, escapes included, and a request naming several faulty paths
/// is told the same one.
struct RandomFieldPathDifferentialTests {
    /// Segments a path is made of, most of them good. `__name__` and what an escape spells as it
    /// are left out of written paths: there the reference stores a field `__key__` and Flint
    /// refuses. An unpaired surrogate (`\uDE00`) is left out too: the reference stores it as `?`
    /// but finds nothing when a read names it (data-model.md).
    static let good = [
        "a", "b", "c", "A", "_x", "`a.b`", "`a\\`b`", "`a\\\\b`", "`a\\nb`", "`\\x41\\x42\\x2e`", "`\\u00e9`", "`\\uD83D\\uDE00`",
        "`\\U0001F600`", "`\\101`", "`\\a\\t\\v\\?\\'`", "`b`", "`\u{e9}`",
    ]
    static let faulty = [
        "1a", "\u{e9}", "a-b", " ", "*", "__x__", "`__x__`", "__key__", "`\\x5f_x__`", "`a\\q`", "`\\x4`", "`\\12`", "`\\400`",
        "`\\U00110000`", "``", "`a", "`\\`",
    ]
    static let names = ["`__name__`", "__name__", "`\\x5f\\x5fname__`"]

    static func pick<T>(_ items: [T], _ rng: inout SeededGenerator) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }

    /// One to three segments, each faulty one time in eight; a read may name `__name__`.
    static func path(_ rng: inout SeededGenerator, reading: Bool) -> String {
        var text = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
            switch Int.random(in: 0..<16, using: &rng) {
            case 0, 1: pick(faulty, &rng)
            case 2 where reading: pick(names, &rng)
            default: pick(good, &rng)
            }
        }.joined(separator: ".")
        switch Int.random(in: 0..<40, using: &rng) {
        case 0: text = "." + text
        case 1: text += "."
        case 2: text = ""
        default: break
        }
        return text
    }

    static func paths(_ rng: inout SeededGenerator, reading: Bool) -> [String] {
        (0..<Int.random(in: 1...3, using: &rng)).map { _ in path(&rng, reading: reading) }
    }

    /// Fields whose names the escapes spell, so masks and projections find them.
    static var stored: [String: Any] { [
        "fields": [
            "a": ["mapValue": ["fields": ["b": ["integerValue": "1"], "a.b": ["integerValue": "2"]]]],
            "a.b": ["integerValue": "3"], "AB.": ["integerValue": "4"], "\u{e9}": ["integerValue": "5"], "a\nb": ["integerValue": "6"],
            "\u{1F600}": ["integerValue": "7"], "A": ["integerValue": "8"], "a`b": ["integerValue": "9"], "a?": ["integerValue": "10"],
        ] as [String: Any]
    ] }

    /// A query string giving the parameter `name` each of `values`, percent-encoded.
    static func parameters(_ name: String, _ values: [String]) -> String {
        values.map { name + "=" + $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }.joined(separator: "&")
    }

    static func json(_ object: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// The status and message of a refusal, or the fields answered (documents' fields for a
    /// query or a listing), as sorted JSON.
    static func outcome(_ answer: (status: Int, json: Any?)) throws -> String {
        if let message = RawHTTP.message(answer.json) { return "\(answer.status) \(message)" }
        if let list = answer.json as? [[String: Any]] {
            return "\(answer.status) " + (try json(list.compactMap { ($0["document"] as? [String: Any])?["fields"] ?? [:] }))
        }
        let object = answer.json as? [String: Any] ?? [:]
        if let documents = object["documents"] as? [[String: Any]] { return "\(answer.status) " + (try json(documents.map { $0["fields"] ?? [:] })) }
        return "\(answer.status) " + (try json(object["fields"] ?? [:]))
    }

    @Test func randomFieldPathsAreReadAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "random field path") else { return }
        defer { stop() }
        // FLINT_FIELD_PATH_SEED explores other paths; the default is the one kept.
        let seed = ProcessInfo.processInfo.environment["FLINT_FIELD_PATH_SEED"].flatMap { UInt64($0) } ?? 20_261_130
        var rng = SeededGenerator(seed: seed)
        let documents = "projects/flint-random-field-paths/databases/(default)/documents"
        for base in [reference.base, flint] {
            #expect(try await RawHTTP.send("PATCH", base + "/v1/\(documents)/d/x", try Self.json(Self.stored)).status == 200)
        }
        var outcomes: [String: Int] = [:]
        for step in 0..<240 {
            var requests: [(method: String, path: String, body: String?)] = []
            switch Int.random(in: 0..<6, using: &rng) {
            case 0:
                requests = [("GET", "/d/x?" + Self.parameters("mask.fieldPaths", Self.paths(&rng, reading: true)), nil)]
            case 1:
                var parameters = Self.parameters("mask.fieldPaths", Self.paths(&rng, reading: true))
                if Bool.random(using: &rng) { parameters += "&pageSize=-1" }
                if Bool.random(using: &rng) { parameters += "&" + Self.parameters("orderBy", [Self.path(&rng, reading: true)]) }
                requests = [("GET", "/d?" + parameters, nil)]
            case 2, 3:
                var query: [String: Any] = ["from": [["collectionId": "d"]]]
                if Bool.random(using: &rng) { query["select"] = ["fields": Self.paths(&rng, reading: true).map { ["fieldPath": $0] }] }
                query["orderBy"] = (0..<Int.random(in: 0...2, using: &rng)).map { _ in
                    ["field": ["fieldPath": Self.path(&rng, reading: true)], "direction": Self.pick(["ASCENDING", "DESCENDING", 7] as [Any], &rng)]
                }
                requests = [("POST", ":runQuery", try Self.json(["structuredQuery": query]))]
            case 4:
                let name = "\(documents)/t/s\(step)"
                let transforms = (0..<Int.random(in: 1...2, using: &rng)).map { _ in
                    ["fieldPath": Self.path(&rng, reading: false), "increment": ["integerValue": "1"]] as [String: Any]
                }
                requests = [
                    ("POST", ":commit", try Self.json(["writes": [["transform": ["document": name, "fieldTransforms": transforms]]]])),
                    ("GET", "/t/s\(step)", nil),
                ]
            default:
                let mask = Self.parameters("updateMask.fieldPaths", Self.paths(&rng, reading: false))
                requests = [("PATCH", "/u/s\(step)?" + mask, try Self.json(Self.stored)), ("GET", "/u/s\(step)", nil)]
            }
            for (method, path, body) in requests {
                let url = "/v1/\(documents)" + path
                let expected = try Self.outcome(try await RawHTTP.send(method, reference.base + url, body))
                let found = try Self.outcome(try await RawHTTP.send(method, flint + url, body))
                #expect(found == expected, "step \(step): \(method) \(url) \(body ?? "")")
                outcomes[String(expected.prefix(3)), default: 0] += 1
            }
        }
        // Both answers and refusals, or the test compares little.
        #expect(outcomes["200", default: 0] > 100 && outcomes["400", default: 0] > 80, "\(outcomes.sorted { $0.key < $1.key })")
    }
}
