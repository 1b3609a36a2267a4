import FlintFixtures
import FlintModel
import Foundation
import Yams

/// A rules test file (YAML or JSON): the rules it tests, seed data, and cases. See
/// docs/rules-testing.md for the full reference.
public struct RulesSpec: Decodable, Sendable {
    /// The rules file, relative to the spec.
    public var rules: String
    /// Documents written as the owner, by path below the database's documents.
    public var data: [String: SpecValue]?
    /// More seed documents, from a JSON or YAML file of the same shape as `data`.
    public var dataFile: String?
    /// When the seed is written: before each test (default) or once for the file.
    public var seed: Seed?
    public var project: String?
    public var tests: [RulesCase]

    public enum Seed: String, Decodable, Sendable { case each, once }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case rules, data, dataFile, seed, project, tests
    }

    /// Reads a spec; `.yaml`/`.yml` files as YAML, anything else as JSON. A key the spec does
    /// not define is refused at the top level and noted on its case below it: decoding alone
    /// would skip it, and a misspelt `path` or `claims` would quietly test something else.
    public static func load(_ url: URL) throws -> RulesSpec {
        let data = try Data(contentsOf: url)
        var spec: RulesSpec
        let raw: SpecValue
        if ["yaml", "yml"].contains(url.pathExtension.lowercased()) {
            spec = try YAMLDecoder().decode(RulesSpec.self, from: data)
            raw = try YAMLDecoder().decode(SpecValue.self, from: data)
        } else {
            spec = try decodeJSON(RulesSpec.self, from: data)
            raw = try decodeJSON(SpecValue.self, from: data)
        }
        guard case .object(let top) = raw else { return spec }
        if let stray = SpecValue.strayKeys(top, allowed: CodingKeys.allCases.map(\.rawValue)).first {
            throw FlintError.invalidArgument("unknown field \"\(stray)\"; a spec holds \(CodingKeys.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if case .array(let tests)? = top["tests"] {
            for (i, test) in zip(spec.tests.indices, tests) { spec.tests[i].strayKeys = RulesCase.strayKeys(test) }
        }
        return spec
    }

    /// Decodes JSON, saying where it is malformed: JSONDecoder says only that it is not valid
    /// JSON, where JSONSerialization names the character.
    static func decodeJSON<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            do { _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) } catch {
                throw FlintError.invalidArgument("not valid JSON: \(jsonProblem(error))")
            }
            throw DecodingError.dataCorrupted(context)
        }
    }
}

/// One request and the verdict it should get.
public struct RulesCase: Decodable, Sendable {
    /// Required for a test; the writes of a batch have none.
    public var name: String?
    /// Absent or null: signed out. `owner`: rules skipped. A map: `uid` and optional `claims`
    /// (any claim: `email`, `email_verified`, `firebase.sign_in_provider`, custom ones).
    public var auth: SpecAuth?
    /// get, list, create, set, update, delete, batch, transaction.
    public var op: String
    public var path: String?
    public var data: SpecValue?
    /// Fields set to the server's time (`request.time` in the rules).
    public var serverTimestamps: [String]?
    /// Fields incremented by the given numbers.
    public var increments: [String: SpecValue]?
    /// `FieldValue.arrayUnion` and `arrayRemove`: elements added to or removed from list fields.
    public var arrayUnion: [String: [SpecValue]]?
    public var arrayRemove: [String: [SpecValue]]?
    /// Query clauses: `[field, operator, value]`; operators as the SDKs write them.
    public var `where`: [[SpecValue]]?
    /// `[field]` or `[field, desc]`.
    public var orderBy: [[String]]?
    public var limit: Int?
    /// Collection-group query over the collection id in `path`.
    public var group: Bool?
    /// The writes of a batch or transaction.
    public var writes: [RulesCase]?
    /// allow or deny (required for a test).
    public var expect: String?
    /// The exact denial message expected.
    public var denial: String?
    /// The line (where an allow condition starts) that should appear in the denial.
    public var line: Int?
    /// A value `debug()` should have printed, in its text form (`string_value: "x"`).
    public var debug: String?
    /// Keys the spec wrote here that a case does not have (`pth`, `auth.claim`), set by
    /// `RulesSpec.load`; such a case is reported as malformed instead of run.
    public var strayKeys: [String] = []

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, auth, op, path, data, serverTimestamps, increments, arrayUnion, arrayRemove
        case `where`, orderBy, limit, group, writes, expect, denial, line, debug
    }

    /// The keys of a case (and of its `auth` and `writes`) that it does not define.
    static func strayKeys(_ raw: SpecValue, prefix: String = "") -> [String] {
        guard case .object(let fields) = raw else { return [] }
        var stray = SpecValue.strayKeys(fields, allowed: CodingKeys.allCases.map(\.rawValue)).map { prefix + $0 }
        if case .object(let auth)? = fields["auth"] {
            stray += SpecValue.strayKeys(auth, allowed: ["uid", "claims"]).map { prefix + "auth." + $0 }
        }
        if case .array(let writes)? = fields["writes"] {
            for (i, write) in writes.enumerated() { stray += strayKeys(write, prefix: prefix + "writes[\(i)].") }
        }
        return stray
    }
}

public enum SpecAuth: Decodable, Sendable {
    case owner
    case user(uid: String, claims: [String: SpecValue])

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let s = try? c.decode(String.self) {
            guard s == "owner" else { throw DecodingError.dataCorruptedError(in: c, debugDescription: "auth is null, \"owner\" or {uid, claims}") }
            self = .owner
            return
        }
        struct User: Decodable {
            var uid: String
            var claims: [String: SpecValue]?
        }
        let user = try c.decode(User.self)
        self = .user(uid: user.uid, claims: user.claims ?? [:])
    }
}

/// A plain JSON/YAML value with exact kinds: integers stay integers.
public indirect enum SpecValue: Decodable, Sendable, Equatable {
    case null, bool(Bool), int(Int64), double(Double), string(String), array([SpecValue]), object([String: SpecValue])

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .int(i)
        } else if let d = try? c.decode(Double.self) {
            self = .double(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([SpecValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: SpecValue].self))
        }
    }

    /// The Firestore value; `{"$timestamp": "RFC 3339"}` is a timestamp.
    public var value: Value {
        switch self {
        case .null: return .null
        case .bool(let b): return .boolean(b)
        case .int(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let a): return .array(a.map(\.value))
        case .object(let o):
            if o.count == 1, case .string(let text)? = o["$timestamp"], let t = RFC3339.parse(text) { return .timestamp(t) }
            return .map(MapValue(o.map { ($0.key, $0.value.value) }))
        }
    }

    var fields: MapValue { if case .map(let m) = value { m } else { [:] } }

    /// The keys of `object` outside `allowed`, sorted.
    static func strayKeys(_ object: [String: SpecValue], allowed: [String]) -> [String] {
        object.keys.filter { !allowed.contains($0) }.sorted()
    }
}
