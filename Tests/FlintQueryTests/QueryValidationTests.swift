import FlintEngine
import FlintModel
import FlintQuery
import Testing

/// Invalid queries get INVALID_ARGUMENT with the reference emulator's message.
struct QueryValidationTests {
    static let cases: [(String, Query, String)] = [
        ("two !=", Query(collectionID: "c", filter: AND(F("v", .notEqual, 1), F("w", .notEqual, 1))),
         "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query."),
        ("!= and is not null", Query(collectionID: "c", filter: AND(F("v", .notEqual, 1), U("w", .isNotNull))),
         "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query."),
        ("not-in with in", Query(collectionID: "c", filter: AND(F("v", .notIn, [1]), F("w", .in, [2]))),
         "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."),
        ("not-in with or", Query(collectionID: "c", filter: AND(F("v", .notIn, [1]), OR(F("w", .equal, 2), F("w", .equal, 3)))),
         "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."),
        ("not-in 11", Query(collectionID: "c", filter: F("v", .notIn, .array((0..<11).map { .integer($0) }))),
         "'NOT_IN' supports up to 10 comparison values."),
        ("in 31", Query(collectionID: "c", filter: F("v", .in, .array((0..<31).map { .integer($0) }))),
         "'IN' supports up to 30 comparison values."),
        ("in empty", Query(collectionID: "c", filter: F("v", .in, [])), "'IN' requires an non-empty ArrayValue."),
        ("in scalar", Query(collectionID: "c", filter: F("v", .in, 1)), "'IN' requires an ArrayValue."),
        ("36 disjunctions", Query(collectionID: "c", filter: AND(F("v", .in, [0, 1, 2, 3, 4, 5]), F("w", .in, [0, 1, 2, 3, 4, 5]))),
         "Too many disjunctions after normalization. Result had 36 disjunctions which is more than the maximum of 30"),
        ("and of ors", Query(collectionID: "c", filter: AND(OR(F("v", .equal, 0), F("v", .equal, 1), F("v", .equal, 2), F("v", .equal, 3), F("v", .equal, 4), F("v", .equal, 5)), F("w", .in, [0, 1, 2, 3, 4, 5]))),
         "Too many disjunctions after normalization. Result had 36 disjunctions which is more than the maximum of 30"),
        ("two array-contains", Query(collectionID: "c", filter: AND(F("v", .arrayContains, 1), F("w", .arrayContains, 1))),
         "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction."),
        ("array-contains and any", Query(collectionID: "c", filter: AND(F("v", .arrayContains, 1), F("v", .arrayContainsAny, [1]))),
         "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction."),
        ("cursor too long", Query(collectionID: "c", orderBy: [asc("v")], startAt: Cursor(values: [1, ref("c/x")], before: true)),
         "Cursor has too many values."),
        ("cursor without order", Query(collectionID: "c", startAt: Cursor(values: [ref("c/n1")], before: true)), "Cursor has too many values."),
        ("name cursor not a reference", Query(collectionID: "c", orderBy: [asc("__name__")], startAt: Cursor(values: ["x"], before: true)),
         "Cursor __key__ value is not a document reference."),
        ("name filter not a reference", Query(collectionID: "c", filter: F("__name__", .equal, "x")), "__key__ filter value must be a Key"),
        ("name array-contains", Query(collectionID: "c", filter: F("__name__", .arrayContains, ref("c/s"))), "the name __key__ is reserved"),
        ("negative limit", Query(collectionID: "c", limit: -1), "limit is negative"),
        ("negative offset", Query(collectionID: "c", offset: -1), "offset is negative"),
        ("duplicate order", Query(collectionID: "c", orderBy: [asc("v"), desc("v")]), "order by clause cannot contain duplicate fields v"),
        ("key not last", Query(collectionID: "c", filter: F("v", .greaterThan, 0), orderBy: [desc("__name__")]),
         "order by clause cannot contain more fields after the key"),
        // Operands must fit an index entry: 1,500 bytes by storage size (a string counts its
        // bytes and one more), each list value on its own.
        ("collection id over 1,500 bytes", Query(collectionID: String(repeating: "c", count: 1501)), "The query kind is longer than 1500 bytes."),
        ("string operand of 1,500 bytes", Query(collectionID: "c", filter: F("v", .equal, .string(String(repeating: "x", count: 1500)))),
         "value for v is too large to be used in a query"),
        ("map operand", Query(collectionID: "c", filter: F("m.k", .lessThan, ["k": .string(String(repeating: "x", count: 1498))])),
         "value for m.k is too large to be used in a query"),
        ("array-contains operand", Query(collectionID: "c", filter: F("v", .arrayContains, .string(String(repeating: "x", count: 1500)))),
         "value for v[*] is too large to be used in a query"),
        ("in operand", Query(collectionID: "c", filter: F("v", .in, [1, .string(String(repeating: "x", count: 1500))])),
         "value for v is too large to be used in a query"),
        ("array-contains-any operand", Query(collectionID: "c", filter: OR(F("w", .equal, 1), F("v", .arrayContainsAny, [.bytes(Array(repeating: 0, count: 1501))]))),
         "value for v[*] is too large to be used in a query"),
        ("find nearest limit", Query(collectionID: "c", findNearest: FindNearest(field: path("e"), queryVector: [1], measure: .euclidean, limit: 1001)),
         "FindNearest.limit must be a positive integer of no more than 1000"),
        ("find nearest empty", Query(collectionID: "c", findNearest: FindNearest(field: path("e"), queryVector: [], measure: .euclidean, limit: 1)),
         "Cannot have a zero length vector."),
        ("find nearest with limit", Query(collectionID: "c", limit: 1, findNearest: FindNearest(field: path("e"), queryVector: [1], measure: .euclidean, limit: 1)),
         "A query limit cannot be used with FindNearest"),
        ("find nearest with offset", Query(collectionID: "c", offset: 1, findNearest: FindNearest(field: path("e"), queryVector: [1], measure: .euclidean, limit: 1)),
         "A query offset cannot be used with FindNearest"),
    ]

    @Test func operandsJustUnderTheIndexEntryLimitAreAccepted() async throws {
        let database = try await database(mixed)
        let x = { (n: Int) in Value.string(String(repeating: "x", count: n)) }
        for filter in [F("v", .equal, x(1499)), F("m.k", .equal, ["k": x(1497)]), F("v", .in, [x(1499), x(1499)]),
                       F("v", .equal, .bytes(Array(repeating: 0, count: 1500))), F("v", .arrayContains, [x(1000), x(498)])] {
            #expect(try await database.runQuery(Query(collectionID: "c", filter: filter)).documents.isEmpty)
        }
    }

    @Test func invalidQueriesAreRejectedWithTheReferenceMessage() async throws {
        let database = try await database(mixed)
        for (name, query, message) in Self.cases {
            await #expect(throws: FlintError.invalidArgument(message), "\(name)") {
                try await database.runQuery(query)
            }
        }
    }

    @Test func limitsAtTheBoundaryAreAccepted() async throws {
        let database = try await database(mixed)
        #expect(try await database.ids(Query(collectionID: "c", filter: F("v", .in, .array((0..<30).map { .integer($0) })))) == ["d1", "n1"])
        #expect(try await database.ids(Query(collectionID: "c", filter: F("v", .notIn, .array((2..<12).map { .integer($0) })))).count == 9)
        #expect(try await database.ids(Query(collectionID: "c", limit: 0)) == [])
        #expect(try await database.ids(Query(collectionID: "c", filter: AND(F("v", .arrayContainsAny, [1]), F("w", .in, [1])))) == [])
    }
}
