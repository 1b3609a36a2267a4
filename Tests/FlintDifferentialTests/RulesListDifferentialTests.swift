import FlintEngine
import FlintModel
import FlintQuery
import FlintRules
import Foundation
import Testing

/// Rules on queries (`list`), expression by expression, on Flint's engine and on the reference
/// emulator: what each kind of filter lets a rule prove about the documents it returns. Each
/// case runs one named query on a collection of its own; both allow it or both deny it. Skips
/// when the reference is absent.
struct RulesListDifferentialTests {
    static let cases: [(query: String, expression: String)] = [
        ("eq", #"resource.data.a == 1"#),
        ("gt", #"resource.data.a == 1"#),
        ("in", #"resource.data.a == 1"#),
        ("in", #"resource.data.a in [1, 2]"#),
        ("in", #"resource.data.a in [1, 2, 3]"#),
        ("all", #"resource.data.a == 1"#),
        ("all", #"true"#),
        ("gt", #"resource.data.a > 0"#),
        ("gt", #"resource.data.a > 1"#),
        ("gt", #"resource.data.a >= 1"#),
        ("range", #"resource.data.a >= 1 && resource.data.a < 5"#),
        ("range", #"resource.data.a < 10"#),
        ("range", #"resource.data.a > 0"#),
        ("ne", #"resource.data.a != 1"#),
        ("ne", #"resource.data.a != 2"#),
        ("nin", #"resource.data.a != 1"#),
        ("ac", #"resource.data.tags.hasAny(['x'])"#),
        ("ac", #"resource.data.tags.hasAll(['x'])"#),
        ("ac", #"'x' in resource.data.tags"#),
        ("aca", #"resource.data.tags.hasAny(['x', 'y'])"#),
        ("aca", #"resource.data.tags.hasAny(['x'])"#),
        ("and", #"resource.data.a == 1 && resource.data.b == 'x'"#),
        ("and", #"resource.data.a == 1"#),
        ("or", #"resource.data.a == 1"#),
        ("or", #"resource.data.a == 1 || resource.data.b == 'x'"#),
        ("lim", #"request.query.limit <= 10"#),
        ("lim", #"request.query.limit == 5"#),
        ("all", #"request.query.limit == null"#),
        ("all", #"request.query.limit <= 10"#),
        ("off", #"request.query.offset == 2"#),
        ("ord", #"request.query.orderBy.a == 'DESC'"#),
        ("ord", #"request.query.orderBy == {'a': 'DESC'}"#),
        ("all", #"request.query.orderBy == {}"#),
        ("all", #"request.query.offset == 0"#),
        ("null", #"resource.data.a == null"#),
        ("eq", #"resource.data.a is int"#),
        ("eq", #"resource.data.size() == 1"#),
        ("eq", #"resource.data.keys().hasAll(['a'])"#),
        ("eq", #"resource.data.b == null"#),
        ("eq", #"resource.data.b == 'x'"#),
        ("nested", #"resource.data.m.k == 1"#),
        ("eq", #"resource == null"#),
        ("eq", #"resource.id == 'x'"#),
        ("name", #"resource.id == 'x'"#),
        ("name", #"resource.__name__ == /databases/$(database)/documents/$(request.path[3])/x"#),
        ("all", #"request.path[3] == request.path[3]"#),
        ("eq", #"request.method == 'list'"#),
        ("eq", #"resource.data.get('a', 0) == 1"#),
        ("eq", #"resource.data.a + 1 == 2"#),
        ("gt", #"resource.data.a + 1 > 2"#),
        ("eq", #"resource.data.a.size() == 1"#),
        ("eq", #"debug(resource.data.a) == 1"#),
        ("ac", #"resource.data.tags.hasAny(['x', 'z'])"#),
        ("ac", #"resource.data.tags.hasOnly(['x'])"#),
        ("ac", #"resource.data.tags.size() > 0"#),
        ("ac", #"resource.data.tags.size() == 1"#),
        ("ac", #"resource.data.tags == ['x']"#),
        ("ac", #"resource.data.tags[0] == 'x'"#),
        ("ac", #"resource.data.tags is list"#),
        ("ac", #"resource.data.tags != null"#),
        ("ac", #"'y' in resource.data.tags"#),
        ("ac", #"resource.data.tags.hasAny(['y'])"#),
        ("aca", #"resource.data.tags.hasAny(['x', 'y', 'z'])"#),
        ("aca", #"'x' in resource.data.tags"#),
        ("aca", #"resource.data.tags.hasAll(['x', 'y'])"#),
        ("aca", #"resource.data.tags.size() > 0"#),
        ("null", #"!('a' in resource.data)"#),
        ("null", #"'a' in resource.data"#),
        ("null", #"resource.data.a != 1"#),
        ("null", #"resource.data.a == null || true"#),
        ("null", #"resource.data.get('a', 7) == 7"#),
        ("null", #"resource.data.get('a', 7) == null"#),
        ("null", #"resource.data.a is int"#),
        ("null", #"resource.data.keys().size() == 0"#),
        ("null", #"resource.data.size() == 0"#),
    ]

    static var rules: String {
        RulesDifferential.ruleset(cases.enumerated().map { i, c in "match /l\(i)/{doc} { allow list: if \(c.expression); }" })
    }

    static func field(_ path: String) -> FieldPath { try! FieldPath(parsing: path) }

    static func filter(_ path: String, _ op: FieldFilter.Operator, _ value: Value) -> Filter { .field(FieldFilter(field(path), op, value)) }

    /// Each named query, for Flint and as REST JSON for the reference.
    static func query(_ name: String, _ collection: String, _ database: DatabaseID) -> (Query, [String: Any]) {
        let json = { (f: Filter) -> [String: Any] in Self.json(f) }
        var q = Query(collectionID: collection)
        switch name {
        case "eq": q.filter = filter("a", .equal, 1)
        case "gt": q.filter = filter("a", .greaterThan, 1)
        case "in": q.filter = filter("a", .in, [1, 2])
        case "ne": q.filter = filter("a", .notEqual, 1)
        case "nin": q.filter = filter("a", .notIn, [1, 2])
        case "ac": q.filter = filter("tags", .arrayContains, "x")
        case "aca": q.filter = filter("tags", .arrayContainsAny, ["x", "y"])
        case "and": q.filter = .composite(CompositeFilter(.and, [filter("a", .equal, 1), filter("b", .equal, "x")]))
        case "or": q.filter = .composite(CompositeFilter(.or, [filter("a", .equal, 1), filter("b", .equal, "x")]))
        case "lim": q.limit = 5
        case "ord":
            q.orderBy = [Ordering(field("a"), descending: true)]
            q.limit = 20
        case "range": q.filter = .composite(CompositeFilter(.and, [filter("a", .greaterThanOrEqual, 1), filter("a", .lessThan, 5)]))
        case "null": q.filter = .unary(UnaryFilter(field("a"), .isNull))
        case "nested": q.filter = filter("m.k", .equal, 1)
        case "name":
            q.filter = filter("__name__", .equal, .reference(DocumentReference(database: database, key: try! DocumentKey(parsing: collection + "/x"))))
        case "off":
            q.offset = 2
            q.limit = 3
        default: break
        }
        var rest: [String: Any] = ["from": [["collectionId": collection]]]
        if let f = q.filter { rest["where"] = json(f) }
        if let limit = q.limit { rest["limit"] = limit }
        if q.offset > 0 { rest["offset"] = q.offset }
        if !q.orderBy.isEmpty { rest["orderBy"] = q.orderBy.map { ["field": ["fieldPath": $0.field.canonical], "direction": $0.descending ? "DESCENDING" : "ASCENDING"] } }
        return (q, rest)
    }

    static func json(_ filter: Filter) -> [String: Any] {
        switch filter {
        case .field(let f):
            return ["fieldFilter": ["field": ["fieldPath": f.field.canonical], "op": f.op.rawValue, "value": RESTJSON.value(f.value)]]
        case .unary(let u): return ["unaryFilter": ["field": ["fieldPath": u.field.canonical], "op": u.op.rawValue]]
        case .composite(let c): return ["compositeFilter": ["op": c.op.rawValue, "filters": c.filters.map(json)]]
        }
    }

    @Test func everyQueryGetsTheReferencesVerdict() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential list rules test skipped")
            return
        }
        defer { reference.stop() }
        let project = "flint-list-rules"
        let database = try await RulesDifferential.load(Self.rules, project: project, on: reference)
        let id = database.id

        var allowed = 0
        for (i, c) in Self.cases.enumerated() {
            let (query, rest) = Self.query(c.query, "l\(i)", id)
            let (status, answer) = try await reference.request("POST", "/v1/\(id.documentsRoot):runQuery", ["structuredQuery": rest], authorization: nil)
            #expect(status == 200 || status == 403, "\(c.expression): the reference answered \(status) \(answer)")
            let referenceAllows = status == 200
            await RulesDifferential.expectSameVerdict("\(c.query) \(c.expression)", referenceAllows: referenceAllows, referenceAnswer: answer) {
                _ = try await database.runQuery(query, auth: .unauthenticated)
            }
            if referenceAllows { allowed += 1 }
        }
        #expect(allowed > Self.cases.count / 3)
    }
}
