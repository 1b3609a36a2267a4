import FlintEngine
import FlintModel
import FlintQuery
import Testing

/// Every operator against every kind of value; expected ids and order are the reference
/// emulator's answers to the same queries over the same documents.
struct FilterSemanticsTests {
    static let cases: [(String, Filter, [String])] = [
        ("== 1", F("v", .equal, 1), ["d1", "n1"]),
        ("== NaN", F("v", .equal, .double(.nan)), []),
        ("== null", F("v", .equal, .null), []),
        ("!= 1", F("v", .notEqual, 1), ["b", "nan", "d15", "t", "s", "arr", "m"]),
        ("!= NaN", F("v", .notEqual, .double(.nan)), ["b", "nan", "d1", "n1", "d15", "t", "s", "arr", "m"]),
        ("!= null", F("v", .notEqual, .null), []),
        ("> 0", F("v", .greaterThan, 0), ["d1", "n1", "d15"]),
        ("< 2", F("v", .lessThan, 2), ["d1", "n1", "d15"]),
        (">= NaN", F("v", .greaterThanOrEqual, .double(.nan)), []),
        ("< null", F("v", .lessThan, .null), []),
        ("<= null", F("v", .lessThanOrEqual, .null), []),
        ("> ''", F("v", .greaterThan, ""), ["s"]),
        ("in [1, null]", F("v", .in, [1, .null]), ["d1", "n1"]),
        ("in [NaN]", F("v", .in, [.double(.nan)]), []),
        ("not-in [1]", F("v", .notIn, [1]), ["b", "nan", "d15", "t", "s", "arr", "m"]),
        ("not-in [null]", F("v", .notIn, [.null]), []),
        ("not-in [NaN]", F("v", .notIn, [.double(.nan)]), ["b", "nan", "d1", "n1", "d15", "t", "s", "arr", "m"]),
        ("array-contains 1", F("v", .arrayContains, 1), ["arr"]),
        ("array-contains 1.0", F("v", .arrayContains, 1.0), ["arr"]),
        ("array-contains null", F("v", .arrayContains, .null), []),
        ("array-contains NaN", F("v", .arrayContains, .double(.nan)), []),
        ("array-contains-any [a, null]", F("v", .arrayContainsAny, ["a", .null]), ["arr"]),
        ("is null", U("v", .isNull), ["null"]),
        ("is nan", U("v", .isNaN), ["nan"]),
        ("is not null", U("v", .isNotNull), ["b", "nan", "d1", "n1", "d15", "t", "s", "arr", "m"]),
        ("is not nan", U("v", .isNotNaN), ["b", "d1", "n1", "d15", "t", "s", "arr", "m"]),
        ("> {}", F("v", .greaterThan, [:]), ["m"]),
        ("or", OR(F("v", .equal, 1), F("w", .equal, 1)), ["d1", "missing", "n1"]),
        ("or of in", OR(F("v", .in, [0, 1, 2, 3, 4, 5]), F("w", .in, [0, 1, 2, 3, 4, 5])), ["d1", "missing", "n1"]),
        ("or of ranges", OR(F("v", .greaterThan, 1), F("v", .lessThan, "z")), ["d15", "s"]),
        ("or of ranges on two fields", OR(F("v", .greaterThan, 1), F("w", .lessThan, 5)), []),
        ("empty and", AND(), ["arr", "b", "d1", "d15", "m", "missing", "n1", "nan", "null", "s", "t"]),
        ("name in", F("__name__", .in, [ref("c/n1"), ref("c/s")]), ["n1", "s"]),
        ("name in another collection", F("__name__", .equal, ref("zz/x")), []),
    ]

    @Test func operatorsMatchTheReference() async throws {
        let database = try await database(mixed)
        for (name, filter, expected) in Self.cases {
            let got = try await database.ids(Query(collectionID: "c", filter: filter))
            #expect(got == expected, "\(name)")
        }
    }

    @Test func rangesOnTwoFieldsOrderByBoth() async throws {
        let database = try await database([
            "a": ["x": 2, "y": 1], "b": ["x": 1, "y": 5], "c": ["x": 1, "y": 2], "d": ["x": 3], "e": ["y": 3],
        ])
        #expect(try await database.ids(Query(collectionID: "c", filter: AND(F("x", .greaterThan, 0), F("y", .greaterThan, 0)))) == ["c", "b", "a"])
        #expect(try await database.ids(Query(collectionID: "c", filter: F("x", .greaterThan, 0), orderBy: [desc("y")])) == ["b", "c", "a"])
    }

    @Test func nestedAndDottedFieldsMatch() async throws {
        let database = try await database([
            "a": ["m": ["k": 1, "l": ["z": "q"]]], "b": ["m": ["k": 2]], "c": ["m.k": 1], "d": ["m": 1],
        ])
        #expect(try await database.ids(Query(collectionID: "c", filter: F("m.k", .equal, 1))) == ["a"])
        #expect(try await database.ids(Query(collectionID: "c", filter: .field(FieldFilter(try FieldPath(["m.k"]), .equal, 1)))) == ["c"])
        #expect(try await database.ids(Query(collectionID: "c", filter: F("m.l.z", .equal, "q"))) == ["a"])
        #expect(try await database.ids(Query(collectionID: "c", filter: F("m.k", .greaterThanOrEqual, 1))) == ["a", "b"])
    }

    /// `é` as one scalar and as `e` with a combining accent are two fields, so two filters that
    /// differ only so are not repeats: an OR of them matches either.
    @Test func fieldsThatDifferOnlyInNormalizationAreTwoFilters() async throws {
        let composed = try FieldPath(["\u{E9}"]), decomposed = try FieldPath(["e\u{301}"])
        let database = try await database(["a": ["\u{E9}": 1], "b": ["e\u{301}": 1], "c": ["\u{E9}": 2]])
        let either = Filter.composite(CompositeFilter(.or, [.field(FieldFilter(composed, .equal, 1)), .field(FieldFilter(decomposed, .equal, 1))]))
        #expect(try await database.ids(Query(collectionID: "c", filter: either)) == ["a", "b"])
        let both = Filter.composite(CompositeFilter(.and, [.field(FieldFilter(composed, .equal, 1)), .field(FieldFilter(decomposed, .equal, 1))]))
        #expect(try await database.ids(Query(collectionID: "c", filter: both)) == [])
    }
}
