import FlintEngine
import FlintModel
import FlintQuery
import FlintRules
import Foundation
import Testing

/// The seed apps' own rules (rules-samples/), each with a table of requests and the verdicts
/// they should get: every match block and method, allowed and denied.
struct RulesSamplesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("rules-samples")

    /// A JSON value with exact kinds (an integer stays an integer).
    enum JSON: Decodable {
        case null, bool(Bool), int(Int64), double(Double), string(String), array([JSON]), object([String: JSON])

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() { self = .null } else if let b = try? c.decode(Bool.self) { self = .bool(b) } else if let i = try? c.decode(Int64.self) {
                self = .int(i)
            } else if let d = try? c.decode(Double.self) { self = .double(d) } else if let s = try? c.decode(String.self) { self = .string(s) } else if let a = try? c.decode([JSON].self) {
                self = .array(a)
            } else { self = .object(try c.decode([String: JSON].self)) }
        }

        var value: Value {
            switch self {
            case .null: .null
            case .bool(let b): .boolean(b)
            case .int(let i): .integer(i)
            case .double(let d): .double(d)
            case .string(let s): .string(s)
            case .array(let a): .array(a.map(\.value))
            case .object(let o): .map(MapValue(o.map { ($0.key, $0.value.value) }))
            }
        }

        var fields: MapValue { if case .map(let m) = value { m } else { [:] } }
    }

    struct Spec: Decodable {
        var rules: String
        var data: [String: JSON]
        var tests: [Case]
    }

    struct Case: Decodable {
        var name: String
        var auth: JSON?
        var op: String
        var path: String
        var data: JSON?
        var `where`: [[JSON]]?
        var limit: Int?
        var expect: String
        var denial: String?
    }

    static let specs = ["seed-000-bookstore/tests.json", "seed-001-music-social/tests.json", "seed-001-music-social/tests.friends-only.json", "seed-003-elder-care/tests.json"]

    @Test(arguments: specs) func everyCaseGetsItsVerdict(_ file: String) async throws {
        let url = Self.root.appendingPathComponent(file)
        let spec = try JSONDecoder().decode(Spec.self, from: Data(contentsOf: url))
        let source = try String(contentsOf: url.deletingLastPathComponent().appendingPathComponent(spec.rules), encoding: .utf8)
        let registry = RulesRegistry()
        let problems = registry.load(source, project: "samples")
        #expect(problems.isEmpty, "\(problems)")
        #expect(spec.tests.count >= 5)
        for test in spec.tests {
            // A fresh database per case, seeded as the owner, so cases never see each other's writes.
            let db = Database(id: DatabaseID(project: "samples"), rules: registry)
            _ = try await db.commit(try spec.data.map { path, doc in .set(try DocumentKey(parsing: path), doc.fields) })
            let outcome = await Self.run(test, db)
            let label = "\(file): \(test.name)"
            switch (test.expect, outcome) {
            case ("allow", nil): break
            case ("allow", let e?) where e.code != .permissionDenied: break  // allowed by the rules, refused for another reason
            case ("deny", let e?) where e.code == .permissionDenied:
                if let denial = test.denial { #expect(e.message == denial, "\(label)") }
            default:
                Issue.record("\(label): expected \(test.expect), got \(outcome.map { "\($0)" } ?? "allowed")")
            }
        }
    }

    static func auth(_ json: JSON?) -> AuthContext {
        guard let json else { return .unauthenticated }
        switch json {
        case .string("owner"): return .owner
        case .object(let o):
            guard case .string(let uid)? = o["uid"] else { return .unauthenticated }
            var claims: MapValue = ["sub": .string(uid), "user_id": .string(uid)]
            if case .object(let extra)? = o["claims"] { for (k, v) in extra { claims[k] = v.value } }
            return .user(uid: uid, token: claims)
        default: return .unauthenticated
        }
    }

    /// Runs one case; nil when it succeeded.
    static func run(_ test: Case, _ db: Database) async -> FlintError? {
        let who = auth(test.auth)
        do throws(FlintError) {
            let fields = test.data?.fields ?? [:]
            switch test.op {
            case "get":
                _ = try await db.get(try DocumentKey(parsing: test.path), auth: who)
            case "list":
                let path = ResourcePath(test.path.split(separator: "/").map(String.init))
                var filters: [Filter] = []
                for clause in test.where ?? [] {
                    guard clause.count == 3, case .string(let f) = clause[0], case .string(let op) = clause[1] else { continue }
                    let ops: [String: FieldFilter.Operator] = ["==": .equal, "!=": .notEqual, "<": .lessThan, "<=": .lessThanOrEqual, ">": .greaterThan, ">=": .greaterThanOrEqual, "in": .in, "array-contains": .arrayContains]
                    guard let o = ops[op] else { continue }
                    filters.append(.field(FieldFilter(try FieldPath(parsing: f), o, clause[2].value)))
                }
                let filter: Filter? = filters.isEmpty ? nil : filters.count == 1 ? filters[0] : .composite(CompositeFilter(.and, filters))
                _ = try await db.runQuery(Query(parent: path.dropLast, collectionID: path.last ?? "", filter: filter, limit: test.limit), auth: who)
            case "create":
                _ = try await db.commit([Write(.update(try DocumentKey(parsing: test.path), fields), precondition: .exists(false))], auth: who)
            case "set":
                _ = try await db.commit([.set(try DocumentKey(parsing: test.path), fields)], auth: who)
            case "update":
                let mask = try fields.entries.map { e throws(FlintError) in try FieldPath([e.key]) }
                _ = try await db.commit([Write(.update(try DocumentKey(parsing: test.path), fields), updateMask: mask, precondition: .exists(true))], auth: who)
            case "delete":
                _ = try await db.commit([.delete(try DocumentKey(parsing: test.path))], auth: who)
            default:
                return FlintError.invalidArgument("unknown op \(test.op)")
            }
            return nil
        } catch {
            return error
        }
    }
}
