import FlintTesting
import Foundation
import Testing

/// Random commits of sets, masked updates, transforms, deletes and preconditions over three
/// documents, sent as the same REST JSON to the reference and to a Flint server: each commit
/// must end with the same status (and message, when refused) and the same transform results,
/// and leave the same documents. Skipped when the reference is not installed.
struct RandomCommitDifferentialTests {
    /// Values in REST JSON. Transform operands and array elements leave out arrays: an array
    /// appended inside an array is refused by Flint, as by production (data-model.md).
    static var values: [[String: Any]] {
        [
            ["integerValue": "1"], ["integerValue": "-3"], ["integerValue": "9223372036854775807"], ["integerValue": "-9223372036854775808"],
            ["doubleValue": 1.5], ["doubleValue": 1.0], ["doubleValue": -0.0], ["doubleValue": "NaN"], ["doubleValue": "Infinity"],
            ["stringValue": "x"], ["stringValue": ""], ["nullValue": NSNull()], ["booleanValue": true],
            ["timestampValue": "2001-02-03T04:05:06.123456Z"],
            ["arrayValue": ["values": [["integerValue": "1"], ["doubleValue": 1.0], ["stringValue": "x"]]]],
            ["arrayValue": [:] as [String: Any]],
            ["mapValue": ["fields": ["k": ["integerValue": "2"]]]], ["mapValue": [:] as [String: Any]],
        ]
    }
    static var numbers: [[String: Any]] { Array(values.prefix(9)) }
    static let paths = ["a", "b", "m.k", "m.j", "m", "`x.y`", "arr", "m.k.z"]

    static func pick<T>(_ items: [T], _ rng: inout SeededGenerator) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }

    static func value(_ rng: inout SeededGenerator, nested: Bool = false) -> [String: Any] {
        if !nested && Int.random(in: 0..<7, using: &rng) == 0 {
            return ["mapValue": ["fields": ["k": value(&rng, nested: true), "j": value(&rng, nested: true)]]]
        }
        return pick(nested ? values.filter { $0["arrayValue"] == nil } : values, &rng)
    }

    /// Fields holding values at up to three of the paths (`m.k` nests `k` in a map `m`).
    static func fields(_ rng: inout SeededGenerator) -> [String: Any] {
        var fields: [String: Any] = [:]
        for path in paths.shuffled(using: &rng).prefix(Int.random(in: 0...3, using: &rng)) {
            let segments = path.hasPrefix("`") ? [String(path.dropFirst().dropLast())] : path.split(separator: ".").map(String.init)
            fields = placing(value(&rng), at: segments[...], in: fields)
        }
        return fields
    }

    static func placing(_ value: [String: Any], at segments: ArraySlice<String>, in fields: [String: Any]) -> [String: Any] {
        var fields = fields
        guard let first = segments.first else { return fields }
        if segments.count == 1 {
            fields[first] = value
        } else {
            let inner = ((fields[first] as? [String: Any])?["mapValue"] as? [String: Any])?["fields"] as? [String: Any] ?? [:]
            fields[first] = ["mapValue": ["fields": placing(value, at: segments.dropFirst(), in: inner)]]
        }
        return fields
    }

    static func transform(_ rng: inout SeededGenerator) -> [String: Any] {
        let path = pick(paths, &rng)
        let elements = { (rng: inout SeededGenerator) in ["values": (0..<Int.random(in: 0...2, using: &rng)).map { _ in value(&rng, nested: true) }] }
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: return ["fieldPath": path, "increment": pick(numbers + [["stringValue": "x"]], &rng)]
        case 1: return ["fieldPath": path, "maximum": pick(numbers, &rng)]
        case 2: return ["fieldPath": path, "minimum": pick(numbers, &rng)]
        case 3: return ["fieldPath": path, "appendMissingElements": elements(&rng)]
        case 4: return ["fieldPath": path, "removeAllFromArray": elements(&rng)]
        default: return ["fieldPath": path, "setToServerValue": "REQUEST_TIME"]
        }
    }

    static func write(_ rng: inout SeededGenerator, documents: String) -> [String: Any] {
        let name = documents + "/c/" + pick(["a", "b", "c"], &rng)
        var write: [String: Any]
        switch Int.random(in: 0..<10, using: &rng) {
        case 0:
            write = ["delete": name]
        case 1:
            write = ["transform": ["document": name, "fieldTransforms": (0..<Int.random(in: 1...2, using: &rng)).map { _ in transform(&rng) }]]
        default:
            write = ["update": ["name": name, "fields": fields(&rng)]]
            if Bool.random(using: &rng) {
                write["updateMask"] = ["fieldPaths": Array(paths.shuffled(using: &rng).prefix(Int.random(in: 0...3, using: &rng)))]
            }
            if Int.random(in: 0..<5, using: &rng) < 2 {
                write["updateTransforms"] = (0..<Int.random(in: 1...2, using: &rng)).map { _ in transform(&rng) }
            }
        }
        switch Int.random(in: 0..<20, using: &rng) {
        case 0, 1, 2: write["currentDocument"] = ["exists": true]
        case 3, 4: write["currentDocument"] = ["exists": false]
        default: break
        }
        return write
    }

    /// JSON text with sorted keys, server times (this century's) as `NOW`, numbers as doubles
    /// and `-0.0` as `0.0`. The reference writes `9.223372036854776E18` where Flint writes
    /// `9.223372036854776e+18`, which Foundation reads as different kinds of number; and the
    /// reference stores a negative zero as zero, where Flint keeps its sign (data-model.md).
    static func normalized(_ json: Any?) -> String {
        func walk(_ any: Any) -> Any {
            switch any {
            case let map as [String: Any]:
                // Foundation may hand a number over as a Bool, so doubles are read by their key.
                if let number = map["doubleValue"] as? NSNumber { return ["doubleValue": number.doubleValue == 0 ? 0.0 : number.doubleValue] }
                return map.mapValues(walk)
            case let list as [Any]: return list.map(walk)
            case let text as String where text.range(of: #"^20[2-9]\d-\d\d-\d\dT"#, options: .regularExpression) != nil: return "NOW"
            default: return any
            }
        }
        guard let json else { return "nothing" }
        let data = try? JSONSerialization.data(withJSONObject: walk(json), options: [.sortedKeys, .fragmentsAllowed])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "unencodable"
    }

    /// A commit's status and, when refused, its error's status name and message; when applied,
    /// its transform results.
    static func outcome(_ answer: (status: Int, json: Any?)) -> String {
        guard answer.status == 200 else {
            let error = (answer.json as? [String: Any])?["error"] as? [String: Any]
            let status = error?["status"] as? String ?? "?"
            // Flint words precondition failures as production does (data-model.md).
            let message = answer.status == 404 || answer.status == 409 ? "" : error?["message"] as? String ?? ""
            return "\(answer.status) \(status) \(message)"
        }
        let results = ((answer.json as? [String: Any])?["writeResults"] as? [[String: Any]] ?? []).map { $0["transformResults"] ?? [] }
        return "200 " + normalized(results)
    }

    @Test func randomCommitsEndAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "random commit") else { return }
        defer { stop() }
        // FLINT_COMMIT_SEED explores other commits; the default is the one kept.
        let kept: UInt64 = 20_261_127
        let seed = ProcessInfo.processInfo.environment["FLINT_COMMIT_SEED"].flatMap { UInt64($0) } ?? kept
        var rng = SeededGenerator(seed: seed)
        let documents = "projects/flint-random-commits/databases/(default)/documents"
        var outcomes: [String: Int] = [:]
        for step in 0..<150 {
            let commit: [String: Any] = ["writes": (0..<Int.random(in: 1...2, using: &rng)).map { _ in Self.write(&rng, documents: documents) }]
            let body = String(decoding: try JSONSerialization.data(withJSONObject: commit, options: [.sortedKeys]), as: UTF8.self)
            let expected = Self.outcome(try await RawHTTP.send("POST", reference.base + "/v1/\(documents):commit", body))
            let found = Self.outcome(try await RawHTTP.send("POST", flint + "/v1/\(documents):commit", body))
            #expect(found == expected, "step \(step): \(body)")
            outcomes[String(expected.prefix(3)), default: 0] += 1
            for id in ["a", "b", "c"] {
                let stored = try await RawHTTP.send("GET", reference.base + "/v1/\(documents)/c/\(id)", nil)
                let held = try await RawHTTP.send("GET", flint + "/v1/\(documents)/c/\(id)", nil)
                let want = stored.status == 200 ? Self.normalized((stored.json as? [String: Any])?["fields"] ?? [:]) : "\(stored.status)"
                let got = held.status == 200 ? Self.normalized((held.json as? [String: Any])?["fields"] ?? [:]) : "\(held.status)"
                #expect(got == want, "c/\(id) after step \(step): \(body)")
                // Every later step would differ too: stop at the first.
                if got != want { return }
            }
        }
        // The commits mix applied ones with every kind of refusal, or the test compares little.
        #expect(outcomes["200", default: 0] > 75)
        // The kept seed meets several of each refusal, and a missing document to update;
        // another seed may meet fewer (seed 9005 had four 400s) or no 404.
        let least = seed == kept ? 5 : 0
        #expect(outcomes["400", default: 0] > least && outcomes["409", default: 0] > least, "\(outcomes.sorted { $0.key < $1.key })")
        if seed == kept { #expect(outcomes["404", default: 0] > 0) }
    }
}
