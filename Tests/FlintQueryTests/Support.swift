import FlintEngine
import FlintModel
import FlintQuery
import FlintTesting

let db = DatabaseID(project: "q1")

/// A query built in process may name `__key__`, which parsing a path refuses at once.
func path(_ s: String) -> FieldPath {
    let segments = s.split(separator: ".").map(String.init)
    return segments.contains("__key__") ? try! FieldPath(segments) : try! FieldPath(parsing: s)
}
func ref(_ s: String) -> Value { .reference(DocumentReference(database: db, key: try! DocumentKey(parsing: s))) }
let otherRef = Value.reference(DocumentReference(database: DatabaseID(project: "zz"), key: try! DocumentKey(parsing: "c/a")))
let impossibleRef = Value.reference(DocumentReference(database: DatabaseID(project: "q1", database: "(foo)"), key: try! DocumentKey(parsing: "c/a")))
func F(_ field: String, _ op: FieldFilter.Operator, _ value: Value) -> Filter { .field(FieldFilter(path(field), op, value)) }
func U(_ field: String, _ op: UnaryFilter.Operator) -> Filter { .unary(UnaryFilter(path(field), op)) }
func AND(_ filters: Filter...) -> Filter { .composite(CompositeFilter(.and, filters)) }
func OR(_ filters: Filter...) -> Filter { .composite(CompositeFilter(.or, filters)) }
func asc(_ f: String) -> Ordering { Ordering(path(f)) }
func desc(_ f: String) -> Ordering { Ordering(path(f), descending: true) }

/// A database holding `documents` under collection `c` (name → fields).
func database(_ documents: [String: MapValue], collection: String = "c") async throws -> Database {
    let database = Database(id: db, clock: ManualClock())
    _ = try await database.commit(documents.map { .set(try! DocumentKey(parsing: "\(collection)/\($0.key)"), $0.value) })
    return database
}

extension Database {
    /// Ids of the query's result, in order.
    func ids(_ query: Query) throws -> [String] {
        try runQuery(query).documents.map(\.key.documentID)
    }
}

/// One document per interesting value of `v`, as probed against the reference emulator.
let mixed: [String: MapValue] = [
    "n1": ["v": 1], "d1": ["v": 1.0], "d15": ["v": 1.5], "nan": ["v": .double(.nan)], "null": ["v": .null],
    "s": ["v": "a"], "arr": ["v": [1, "a", .null, .double(.nan)]], "missing": ["w": 1],
    "t": ["v": .timestamp(RFC3339.parse("2020-01-01T00:00:00Z")!)], "b": ["v": true], "m": ["v": ["a": 1]],
]

enum ManualClockBox {
    static func make() -> ManualClock { ManualClock() }
}
