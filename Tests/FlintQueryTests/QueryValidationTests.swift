import FlintEngine
import FlintModel
import FlintQuery
import Testing

/// A document to query below.
let docPath = ResourcePath(["r", "d"])

/// Invalid queries get INVALID_ARGUMENT with the reference emulator's message.
struct QueryValidationTests {
    static let cases: [(String, Query, String)] = [
        ("two !=", Query(collectionID: "c", filter: AND(F("v", .notEqual, 1), F("w", .notEqual, 1))),
         "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query."),
        ("!= and is not null", Query(collectionID: "c", filter: AND(F("v", .notEqual, 1), U("w", .isNotNull))),
         "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query."),
        ("not-in with in", Query(collectionID: "c", filter: AND(F("v", .notIn, [1]), F("w", .in, [2]))),
         "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."),
        ("not-in inside an or of one", Query(collectionID: "c", filter: OR(AND(F("v", .notIn, [1])))),
         "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."),
        ("empty or", Query(collectionID: "c", filter: AND(F("v", .equal, 1), OR())), "Composite filter must have at least one sub-filter."),
        ("not-in with or", Query(collectionID: "c", filter: AND(F("v", .notIn, [1]), OR(F("w", .equal, 2), F("w", .equal, 3)))),
         "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."),
        ("not-in 11", Query(collectionID: "c", filter: F("v", .notIn, .array((0..<11).map { .integer($0) }))),
         "'NOT_IN' supports up to 10 comparison values."),
        ("in 31", Query(collectionID: "c", filter: F("v", .in, .array((0..<31).map { .integer($0) }))),
         "'IN' supports up to 30 comparison values."),
        ("in empty", Query(collectionID: "c", filter: F("v", .in, [])), "'IN' requires an non-empty ArrayValue."),
        ("in scalar", Query(collectionID: "c", filter: F("v", .in, 1)), "'IN' requires an ArrayValue."),
        // The rules across filters come before each filter's list, as on the reference.
        ("empty array-contains-any with not-in", Query(collectionID: "c", filter: AND(F("v", .arrayContainsAny, []), F("w", .notIn, [1]))),
         "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."),
        ("empty not-in with in", Query(collectionID: "c", filter: AND(F("w", .notIn, []), F("v", .in, [1]))),
         "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."),
        ("scalar in with not-in", Query(collectionID: "c", filter: AND(F("v", .in, 1), F("w", .notIn, [1]))),
         "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."),
        ("empty not-in beside another", Query(collectionID: "c", filter: AND(F("w", .notIn, []), F("v", .notIn, [2]))),
         "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query."),
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
        ("name is null", Query(collectionID: "c", filter: U("__name__", .isNull)), "__key__ filter value must be a Key"),
        ("name is not nan", Query(collectionID: "c", filter: U("__name__", .isNotNaN)), "__key__ filter value must be a Key"),
        ("name in another database", Query(collectionID: "c", filter: F("__name__", .in, [ref("c/a"), otherRef])),
         "The request was for database 'projects/q1/databases/(default)' but was attempting to access database 'projects/zz/databases/(default)'"),
        ("name cursor in another database", Query(collectionID: "c", orderBy: [asc("__name__")], startAt: Cursor(values: [otherRef], before: true)),
         "The cursor key is in a different database than the query"),
        // A database no document could be stored in is named as such first.
        ("name in an impossible database", Query(collectionID: "c", filter: F("__name__", .equal, impossibleRef)),
         "Illegal string \"(foo)\" in database."),
        ("name cursor in an impossible database", Query(collectionID: "c", orderBy: [asc("__name__")], startAt: Cursor(values: [impossibleRef], before: true)),
         "The cursor key is in a different database than the query"),
        // Reserved names first, anywhere, in clause order (filter, projection, order); then
        // limits; then `__name__` inside a longer path, projection before filters before order.
        ("reserved in a filter", Query(collectionID: "c", filter: F("a.__foo__.b", .equal, 1)), "Invalid reserved name in field path __foo__.b"),
        ("name inside a reserved path", Query(collectionID: "c", filter: U("__foo__.__name__", .isNull)),
         "Invalid reserved name in field path __foo__.__key__"),
        ("the reference's own word", Query(collectionID: "c", filter: F("a.__key__", .equal, 1)), #"Invalid property path member name "__key__"."#),
        ("reserved before the limit", Query(collectionID: "c", filter: F("__bar__", .equal, 1), limit: -1), "Invalid reserved name in field path __bar__"),
        ("filter before order", Query(collectionID: "c", filter: F("__key__", .equal, 1), orderBy: [asc("__foo__")]),
         #"Invalid property path member name "__key__"."#),
        ("reserved projection", Query(collectionID: "c", orderBy: [asc("__bar__")], projection: [path("__foo__")]), "Invalid reserved name in field path __foo__"),
        ("name inside a filter path", Query(collectionID: "c", filter: F("__name__.x", .equal, 1)), "the name __key__ is reserved"),
        ("name inside an order path", Query(collectionID: "c", orderBy: [asc("a.__name__")]), "the name __key__ is reserved"),
        ("projection before filter", Query(collectionID: "c", filter: F("__name__", .equal, 1), projection: [path("__name__.x")]),
         "the name __key__ is reserved"),
        ("filter before duplicate order", Query(collectionID: "c", filter: F("__name__", .equal, 1), orderBy: [asc("a"), asc("a")]),
         "__key__ filter value must be a Key"),
        ("cursor before what the name is compared with", Query(collectionID: "c", filter: F("__name__", .equal, 1), orderBy: [asc("a")],
                                                             startAt: Cursor(values: [1, 1], before: true)), "Cursor has too many values."),
        ("lists before limit", Query(collectionID: "c", filter: F("v", .in, .array((0..<31).map { .integer($0) })), limit: -1),
         "'IN' supports up to 30 comparison values."),
        ("cursor before offset", Query(collectionID: "c", orderBy: [asc("a")], startAt: Cursor(values: [1, 1], before: true), offset: -1),
         "Cursor has too many values."),
        ("offset before limit", Query(collectionID: "c", offset: -1, limit: -1), "offset is negative"),
        ("limit before a name inside a filter path", Query(collectionID: "c", filter: F("__name__.x", .equal, 1), limit: -1), "limit is negative"),
        ("filter order for names", Query(collectionID: "c", filter: AND(F("__name__", .equal, "x"), F("__name__.x", .equal, 1))),
         "__key__ filter value must be a Key"),
        ("key equality beside an inequality", Query(collectionID: "c", filter: AND(F("__name__", .equal, ref("c/a")), F("v", .greaterThan, 1))),
         "Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities."),
        ("key in beside is-not-null", Query(collectionID: "c", filter: AND(F("__name__", .in, [ref("c/a")]), U("v", .isNotNull))),
         "Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities."),
        ("key equality in an or beside an inequality", Query(collectionID: "c", filter: OR(F("__name__", .equal, ref("c/a")), F("v", .notEqual, 1))),
         "Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities."),
        ("key equality before disjunctions", Query(collectionID: "c", filter: AND(F("__name__", .equal, ref("c/a")), F("v", .lessThan, 1), F("w", .in, [0, 1, 2, 3, 4, 5]), F("x", .in, [0, 1, 2, 3, 4, 5]))),
         "Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities."),
        ("key equality before order", Query(collectionID: "c", filter: AND(F("__name__", .equal, ref("c/a")), F("v", .lessThan, 1)), orderBy: [asc("w"), asc("w")]),
         "Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities."),
        ("array-contains before what the name is compared with",
         Query(collectionID: "c", filter: .composite(CompositeFilter(.and, [F("__name__", .arrayContains, 1), F("b", .arrayContains, 1)]))),
         "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction."),
        ("name as distance field", Query(collectionID: "c", findNearest: FindNearest(field: path("e"), queryVector: [1], measure: .euclidean, limit: 1, distanceResultField: "__name__")),
         #"The distanceResultField.property.name "__name__" is reserved."#),
        ("negative limit", Query(collectionID: "c", limit: -1), "limit is negative"),
        ("negative offset", Query(collectionID: "c", offset: -1), "offset is negative"),
        ("duplicate order", Query(collectionID: "c", orderBy: [asc("v"), desc("v")]), "order by clause cannot contain duplicate fields v"),
        // The field as the reference names it: segments joined by dots, none quoted.
        ("duplicate quoted order", Query(collectionID: "c", orderBy: [asc("`a b`.`c.d`"), desc("`a b`.`c.d`")]),
         "order by clause cannot contain duplicate fields a b.c.d"),
        ("key not last", Query(collectionID: "c", filter: F("v", .greaterThan, 0), orderBy: [desc("__name__")]),
         "order by clause cannot contain more fields after the key"),
        ("key not last with != NaN", Query(collectionID: "c", filter: F("v", .notEqual, .double(.nan)), orderBy: [desc("__name__")]),
         "order by clause cannot contain more fields after the key"),
        ("key not last with not-in [null, 1]", Query(collectionID: "c", filter: F("v", .notIn, [.null, 1]), orderBy: [asc("__name__")]),
         "order by clause cannot contain more fields after the key"),
        // Operands must fit an index entry: 1,500 bytes by storage size (a string counts its
        // bytes and one more), each list value on its own.
        ("collection id over 1,500 bytes", Query(collectionID: String(repeating: "c", count: 1501)), "The query kind is longer than 1500 bytes."),
        // Its length is told once the whole query is read, before each filter's operand and name.
        ("negative limit before the collection id's length", Query(collectionID: String(repeating: "c", count: 1501), limit: -1), "limit is negative"),
        ("reserved order before the collection id's length", Query(collectionID: String(repeating: "c", count: 1501), orderBy: [asc("__x__")]),
         "Invalid reserved name in field path __x__"),
        ("array-contains before the collection id's length",
         Query(collectionID: String(repeating: "c", count: 1501), filter: AND(F("v", .arrayContains, 1), F("w", .arrayContains, 1))),
         "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction."),
        ("the collection id's length before an operand's size",
         Query(collectionID: String(repeating: "c", count: 1501), filter: F("v", .equal, .string(String(repeating: "x", count: 1500)))),
         "The query kind is longer than 1500 bytes."),
        ("the collection id's length before a name", Query(collectionID: String(repeating: "c", count: 1501), filter: F("__name__", .equal, "x")),
         "The query kind is longer than 1500 bytes."),
        ("the collection id's length before a duplicate order", Query(collectionID: String(repeating: "c", count: 1501), orderBy: [asc("v"), asc("v")]),
         "The query kind is longer than 1500 bytes."),
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
        ("find nearest too long", Query(collectionID: "c", findNearest: FindNearest(field: path("e"), queryVector: Array(repeating: 1, count: 2049), measure: .euclidean, limit: 1)),
         "Vectors must be at most 2048 dimensions."),
        ("find nearest with limit", Query(collectionID: "c", limit: 1, findNearest: FindNearest(field: path("e"), queryVector: [1], measure: .euclidean, limit: 1)),
         "A query limit cannot be used with FindNearest"),
        ("find nearest with offset", Query(collectionID: "c", offset: 1, findNearest: FindNearest(field: path("e"), queryVector: [1], measure: .euclidean, limit: 1)),
         "A query offset cannot be used with FindNearest"),
        ("find nearest infinite threshold", Query(collectionID: "c", findNearest: FindNearest(field: path("e"), queryVector: [.nan], measure: .dotProduct, limit: 1, distanceThreshold: .infinity)),
         "distanceThreshold must be a finite number."),
        ("find nearest NaN threshold", Query(collectionID: "c", findNearest: FindNearest(field: path("e"), queryVector: [1], measure: .cosine, limit: 1, distanceThreshold: .nan)),
         "distanceThreshold must be a finite number."),
        // The threshold is checked last, as on the reference.
        ("find nearest with limit and NaN threshold", Query(collectionID: "c", limit: 1, findNearest: FindNearest(field: path("e"), queryVector: [1], measure: .euclidean, limit: 1, distanceThreshold: .nan)),
         "A query limit cannot be used with FindNearest"),
        // The rules across filters come before the collection; an empty OR is told where it stands.
        ("!= rules before the collection", Query(collectionID: "__x__", filter: AND(F("v", .notEqual, 1), F("w", .notEqual, 1))),
         "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query."),
        ("an empty OR counts as an OR beside not-in", Query(collectionID: "__x__", filter: AND(OR(), F("w", .notIn, [1]))),
         "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."),
        ("a reserved name before a later empty OR", Query(collectionID: "c", filter: AND(F("__x__", .equal, 1), OR())), "Invalid reserved name in field path __x__"),
        ("an empty OR before a later reserved name", Query(collectionID: "c", filter: AND(OR(), F("__x__", .equal, 1))), "Composite filter must have at least one sub-filter."),
        // A group below a document is held to names before offset and limit, and its ancestor
        // counts one filter more.
        ("group below a document before offset", Query(parent: docPath, collectionID: "c", allDescendants: true, filter: F("v", .equal, 1), offset: -1),
         "collection group queries are only allowed at the root parent"),
        ("group below a document before the count", Query(parent: docPath, collectionID: "c", allDescendants: true, filter: .composite(CompositeFilter(.and, (0..<101).map { F("v", .equal, .integer(Int64($0))) }))),
         "collection group queries are only allowed at the root parent"),
        ("a group's ancestor is a filter too", Query(parent: docPath, collectionID: "c", allDescendants: true, filter: .composite(CompositeFilter(.and, (0..<99).map { F("__name__", .greaterThan, ref("r/d/c/n\($0)")) }))),
         "The query may not have more than 100 filters + sort orders + ancestor total. Currently there are 100 filters, 0 sort orders, and one ancestor filter."),
        // Without a collection: the order after array-contains; then each filter in turn, its
        // name operand, or its size and then its kind (a list's first value alone).
        ("array-contains before a kindless order", Query(collectionID: nil, filter: AND(F("v", .arrayContains, 1), F("w", .arrayContains, 1)), orderBy: [asc("v")]),
         "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction."),
        ("a kindless order before names", Query(collectionID: nil, filter: F("__name__", .equal, "x"), orderBy: [asc("v")]),
         "kind is required for all orders except __key__ ascending"),
        ("a kindless filter before a later name", Query(collectionID: nil, filter: AND(F("v", .equal, 1), F("__name__", .equal, "x"))), "kind is required for filter: v"),
        ("a name before a later kindless filter", Query(collectionID: nil, filter: AND(F("__name__", .equal, "x"), F("v", .equal, 1))), "__key__ filter value must be a Key"),
        ("a size before its kind", Query(collectionID: nil, filter: F("v", .equal, .string(String(repeating: "x", count: 1500)))),
         "value for v is too large to be used in a query"),
        ("a list's first value before its kind", Query(collectionID: nil, filter: F("v", .in, [1, .string(String(repeating: "x", count: 1500))])),
         "kind is required for filter: v"),
        ("a kindless array-contains", Query(collectionID: nil, filter: F("v", .arrayContainsAny, [1])), "kind is required for filter: v[*]"),
        ("a size before a later name", Query(collectionID: "c", filter: AND(F("v", .equal, .string(String(repeating: "x", count: 1500))), F("__name__", .equal, "x"))),
         "value for v is too large to be used in a query"),
        // A cursor's database after every filter; only the first name ordering's value is read.
        ("a size before the cursor's database", Query(collectionID: "c", filter: F("v", .equal, .string(String(repeating: "x", count: 1500))), orderBy: [asc("__name__")],
                                                    startAt: Cursor(values: [otherRef], before: true)), "value for v is too large to be used in a query"),
        ("only the first name ordering's cursor value", Query(collectionID: "c", orderBy: [asc("__name__"), asc("__name__")], startAt: Cursor(values: [ref("c/a"), "x"], before: true)),
         "order by clause cannot contain more fields after the key"),
        // An operand built in process is held to what reading one off the wire refuses.
        ("reserved name in an operand", Query(collectionID: "c", filter: F("v", .equal, ["m": ["__x__": 1]])), "field name '__x__' is reserved."),
        ("reserved name in a listed operand", Query(collectionID: "c", filter: F("v", .in, [["__x__": 1]])), "field name '__x__' is reserved."),
        ("__type__ not a string in an operand", Query(collectionID: "c", filter: F("v", .equal, ["__type__": 1])), "Field __type__ is not a string."),
        ("empty vector in an operand", Query(collectionID: "c", filter: F("v", .equal, .vector([]))), "Cannot have a zero length vector."),
        ("reserved name in a cursor", Query(collectionID: "c", orderBy: [asc("v")], startAt: Cursor(values: [["__x__": 1]], before: true)),
         "field name '__x__' is reserved."),
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

    /// Disjunctions are counted as the reference counts them: in normal form, each `in` value an
    /// equality and each array-contains-any value an array-contains, with repeated terms and
    /// conjunctions (as sets) once, and parts of an AND that come out the same as one part.
    /// An AND that would multiply out past 60 is refused before it is expanded.
    @Test func disjunctionsAreCountedAsTheReferenceCountsThem() async throws {
        let database = try await database(mixed)
        let ints = { (r: ClosedRange<Int64>) in Value.array(r.map { .integer($0) }) }
        let z16 = F("z", .in, ints(0...15))
        let had = { (n: Int) in "Too many disjunctions after normalization. Result had \(n) disjunctions which is more than the maximum of 30" }
        let cases: [(String, Filter, String?)] = [
            ("an equality and an in share their values", AND(OR(F("a", .equal, 1), F("a", .in, [1, 2])), z16), had(32)),
            ("conjunctions are sets", AND(F("a", .in, ints(1...7)), F("a", .in, ints(2...8))), had(34)),
            ("a repeated term within a conjunction", AND(OR(AND(F("a", .equal, 1), F("a", .equal, 1)), F("a", .equal, 1)), F("z", .in, ints(0...29))), nil),
            ("parts of an AND that come out the same", AND(F("a", .in, ints(1...8)), .composite(CompositeFilter(.or, (1...8).map { F("a", .equal, .integer($0)) }))), nil),
            ("array-contains-any and array-contains share their values", AND(OR(F("c", .arrayContains, 1), F("c", .arrayContainsAny, [1, 2])), z16), had(32)),
            ("-0.0 is 0.0", AND(F("a", .in, [.double(-0.0), .double(0.0)]), z16), nil),
            ("1 and 1.0 are two", AND(F("a", .in, [1, 1.0]), z16), had(32)),
            ("sixty are expanded", AND(F("a", .in, ints(0...1)), F("b", .in, ints(0...29))), had(60)),
            ("more than sixty are not", AND(F("a", .in, ints(0...6)), F("b", .in, ints(0...8))),
             "Too many disjunctions after normalization, the maximum is 30"),
            ("an OR's sum is not held to sixty", OR(F("a", .in, ints(0...29)), F("b", .in, ints(0...29)), F("c", .equal, 1)), had(61)),
            // An OR of array-contains on one field is that field's array-contains-any.
            ("array-contains in an OR beside the same array-contains-any", AND(F("c", .arrayContainsAny, [1, 2]), OR(F("c", .arrayContains, 2), F("c", .arrayContains, 1))), nil),
            ("array-contains beside an OR of it", AND(F("c", .arrayContains, 1), OR(F("c", .arrayContains, 1))),
             "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction."),
            // Comparisons no value meets are one condition on their field, whatever the operator;
            // so are array-contains no array meets, which are even one filter.
            ("null and NaN compared", AND(OR(F("a", .equal, .null), F("a", .greaterThan, .double(.nan)), F("a", .in, [.null])), z16), nil),
            ("null and NaN on two fields", AND(OR(F("a", .equal, .null), F("b", .equal, .null)), z16), had(32)),
            ("an equality and an array-contains with null", AND(OR(F("a", .equal, .null), F("a", .arrayContains, .null)), z16), had(32)),
            ("null, NaN and [] looked for in arrays", AND(F("c", .arrayContainsAny, [.null, .double(.nan), [], "s"]), z16), had(32)),
            ("two array-contains no array meets", AND(F("c", .arrayContains, .double(.nan)), F("c", .arrayContains, [])), nil),
            ("an empty array compared is a value", AND(OR(F("a", .equal, []), F("a", .equal, .null)), z16), had(32)),
            // Beside a condition no value meets on its field, an equality with a boolean is no
            // further condition (but one with a number is).
            ("a boolean beside null", AND(OR(F("b", .equal, true), F("b", .equal, .null)), OR(F("b", .equal, false), F("b", .equal, .double(.nan))),
                                         F("z", .in, ints(0...14))), nil),
            ("a number beside null", AND(OR(F("b", .equal, 1), F("b", .equal, .null)), OR(F("b", .equal, 2), F("b", .equal, .double(.nan))),
                                        F("z", .in, ints(0...14))), had(60)),
            // ANDs within an AND are opened up before their parts are multiplied.
            ("an AND within an AND", AND(AND(F("a", .in, ints(1...6)), F("a", .in, [1, 2, 3, 4, 5, 7])), F("c", .in, [1, 2])),
             "Too many disjunctions after normalization, the maximum is 30"),
            ("an OR stops that", AND(OR(AND(F("a", .in, ints(1...6)), F("a", .in, [1, 2, 3, 4, 5, 7]))), F("c", .in, [1, 2])), had(52)),
            // A single condition an AND wraps alone stays apart from the same one in the OR.
            ("a condition and the same wrapped in an AND", OR(F("a", .equal, 1), AND(F("a", .equal, 1)), F("c", .in, ints(0...28))), had(31)),
            ("a condition and the same in an OR", OR(F("a", .equal, 1), OR(F("a", .equal, 1)), F("c", .in, ints(0...28))), nil),
        ]
        for (name, filter, message) in cases {
            let query = Query(collectionID: "c", filter: filter)
            if let message {
                await #expect(throws: FlintError.invalidArgument(message), "\(name)") { try await database.runQuery(query) }
            } else {
                await #expect(throws: Never.self, "\(name)") { try await database.runQuery(query) }
            }
        }
    }

    /// For any caller but the owner the reference counts disjunctions before it looks for an
    /// equality on `__name__` beside inequalities; for the owner, after.
    @Test func disjunctionsComeBeforeAKeyEqualityForCallersHeldToRules() async throws {
        let database = try await database(mixed)
        let query = Query(collectionID: "c", filter: AND(F("__name__", .equal, ref("c/a")), F("v", .lessThan, 1), F("w", .in, [0, 1, 2, 3, 4, 5]), F("x", .in, [0, 1, 2, 3, 4, 5])))
        await #expect(throws: FlintError.invalidArgument("Too many disjunctions after normalization. Result had 36 disjunctions which is more than the maximum of 30")) {
            try await database.runQuery(query, auth: .unauthenticated)
        }
        await #expect(throws: FlintError.invalidArgument("Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities.")) {
            try await database.runQuery(query, auth: .owner)
        }
        // Those callers have them counted after a cursor's database.
        let cursor = Query(collectionID: "c", filter: AND(F("w", .in, [0, 1, 2, 3, 4, 5]), F("x", .in, [0, 1, 2, 3, 4, 5])), orderBy: [asc("__name__")],
                           startAt: Cursor(values: [otherRef], before: true))
        await #expect(throws: FlintError.invalidArgument("The cursor key is in a different database than the query")) {
            try await database.runQuery(cursor, auth: .unauthenticated)
        }
    }

    /// Names the reference lets through: `____`, `__name__` as a whole path or inside the vector
    /// field of a nearest-neighbour search, and a reserved segment inside a distance field.
    @Test func namesThatAreNotReservedAreAccepted() async throws {
        let database = try await database(mixed)
        #expect(try await database.ids(Query(collectionID: "c", filter: F("____", .equal, 1), orderBy: [asc("a.____")])) == [])
        // A `__type__` naming no type may be compared with, as on the reference.
        #expect(try await database.ids(Query(collectionID: "c", filter: F("v", .equal, ["__type__": "x"]))) == [])
        #expect(try await database.ids(Query(collectionID: "c", projection: [path("__name__")])).count == mixed.count)
        let nearest = FindNearest(field: path("__name__.x"), queryVector: [1], measure: .euclidean, limit: 1, distanceResultField: "a.__d__")
        #expect(try await database.ids(Query(collectionID: "c", findNearest: nearest)) == [])
    }

    @Test func aggregatedFieldsFollowTheSameRules() async throws {
        let database = try await database(mixed)
        let cases: [([Aggregation], Filter?, String)] = [
            ([Aggregation(alias: "s", .sum(path("__name__")))], nil, "Aggregations are not supported for the property: __key__"),
            ([Aggregation(alias: "s", .average(path("__name__.x")))], nil, "the name __key__ is reserved"),
            // A reserved name in any aggregated field comes first, then in the query.
            ([Aggregation(alias: "s", .sum(path("__name__.x"))), Aggregation(alias: "t", .average(path("__foo__")))], F("__bar__", .equal, 1),
             "Invalid reserved name in field path __foo__"),
        ]
        for (aggregations, filter, message) in cases {
            await #expect(throws: FlintError.invalidArgument(message), "\(message)") {
                try await database.runAggregation(Query(collectionID: "c", filter: filter), aggregations: aggregations)
            }
        }
    }

    /// At most 100 filters, explicit orders and ancestor, counted as the reference counts them:
    /// each value of a list operand is a filter, identical filters side by side are one, and a
    /// query under a document has an ancestor.
    @Test func filtersOrdersAndAncestorAreAtMostAHundred() async throws {
        let database = try await database(mixed)
        let equalities = { (n: Int) in (0..<n).map { F("f\($0)", .equal, 1) } }
        let under = try DocumentKey(parsing: "c/d1").path
        let message = { (filters: Int, orders: Int, ancestor: Bool) in
            "The query may not have more than 100 filters + sort orders + ancestor total. Currently there are \(filters) filters, \(orders) sort orders, and \(ancestor ? "one" : "no") ancestor filter."
        }
        let refused: [(Query, String)] = [
            (Query(collectionID: "c", filter: .composite(CompositeFilter(.and, equalities(101)))), message(101, 0, false)),
            (Query(collectionID: "c", filter: .composite(CompositeFilter(.and, equalities(50))), orderBy: (0..<51).map { asc("o\($0)") }),
             message(50, 51, false)),
            (Query(parent: under, collectionID: "s", filter: .composite(CompositeFilter(.and, equalities(99))), orderBy: [asc("o")]), message(99, 1, true)),
            // A list operand counts its distinct values; an `in` and an `==` of the same field are two.
            (Query(collectionID: "c", filter: .composite(CompositeFilter(.and, equalities(91) + [F("n", .notIn, .array((0..<10).map { .integer($0) }))]))),
             message(101, 0, false)),
            (Query(collectionID: "c", filter: .composite(CompositeFilter(.and, equalities(100) + [F("f1", .in, [1])]))), message(101, 0, false)),
            // Only siblings that are identical, value type and all, are one.
            (Query(collectionID: "c", filter: .composite(CompositeFilter(.and, equalities(100) + [F("f1", .equal, 1.0)]))), message(101, 0, false)),
            (Query(collectionID: "c", filter: OR(.composite(CompositeFilter(.and, equalities(60))), .composite(CompositeFilter(.and, equalities(60) + [F("g", .equal, 1)])))),
             message(121, 0, false)),
            // Every kind below a document: the reference adds a filter as well as the ancestor.
            (Query(parent: under, collectionID: nil, allDescendants: true, filter: .composite(CompositeFilter(.and, (0..<99).map {
                F("__name__", .greaterThan, ref("c/d1/s/\($0)")) }))), message(100, 0, true)),
        ]
        for (query, text) in refused {
            await #expect(throws: FlintError.invalidArgument(text)) { try await database.runQuery(query) }
        }
        let accepted: [Query] = [
            Query(collectionID: "c", filter: .composite(CompositeFilter(.and, equalities(100)))),
            Query(collectionID: "c", filter: .composite(CompositeFilter(.and, Array(repeating: F("v", .equal, 1), count: 150)))),
            Query(collectionID: "c", filter: .composite(CompositeFilter(.or, Array(repeating: F("v", .equal, 1), count: 31)))),
            Query(collectionID: "c", filter: OR(.composite(CompositeFilter(.and, equalities(60))), .composite(CompositeFilter(.and, equalities(60).reversed())))),
            Query(collectionID: "c", filter: AND(F("v", .in, [1, 2, 3, 4, 5, 6]), F("v", .in, [6, 5, 4, 3, 2, 1]))),
            Query(collectionID: "c", filter: .composite(CompositeFilter(.and, equalities(99) + [F("v", .greaterThan, 0)]))),
            Query(parent: under, collectionID: "s", filter: .composite(CompositeFilter(.and, equalities(99)))),
            // A key equality stands beside inequalities when the key is among them, or beside
            // ones that select nothing.
            Query(collectionID: "c", filter: AND(F("__name__", .equal, ref("c/d1")), F("__name__", .notEqual, ref("c/d2")), F("v", .greaterThan, 0))),
            Query(collectionID: "c", filter: AND(F("__name__", .equal, ref("c/d1")), F("v", .notEqual, .null))),
            Query(collectionID: "c", filter: AND(F("__name__", .notEqual, ref("c/d1")), F("v", .greaterThan, 0))),
        ]
        for query in accepted { _ = try await database.runQuery(query) }
        // What runs is the filter without its repeats, and it selects the same documents.
        #expect(try await database.ids(Query(collectionID: "c", filter: OR(F("v", .equal, 1), F("v", .equal, 1), F("v", .equal, 1.0))))
            == database.ids(Query(collectionID: "c", filter: F("v", .equal, 1))))
    }

    /// Two faults at once are told in the reference's order (each pair probed on it).
    @Test func faultsAreToldInTheReferencesOrder() async throws {
        let database = try await database(mixed)
        let big = Value.string(String(repeating: "x", count: 1600))
        let many = (0..<101).map { F("f\($0)", .equal, 1) }
        let cases: [(Query, String)] = [
            (Query(collectionID: "c", filter: AND(F("s", .equal, big), F("a", .notIn, [1]), F("b", .notIn, [1]))),
             "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query."),
            (Query(collectionID: "c", filter: AND(F("__name__", .equal, "x"), F("a", .notIn, [1]), F("b", .notIn, [1]))),
             "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query."),
            (Query(collectionID: "c", filter: AND(F("a", .arrayContains, 1), F("b", .arrayContains, 1)), startAt: Cursor(values: [1], before: true)),
             "Cursor has too many values."),
            (Query(collectionID: "c", orderBy: [asc("v"), asc("v")], startAt: Cursor(values: [1, 1, 1], before: true)), "Cursor has too many values."),
            (Query(collectionID: "c", filter: .composite(CompositeFilter(.and, many)),
                   findNearest: FindNearest(field: path("e"), queryVector: [1], measure: .euclidean, limit: 0)),
             "FindNearest.limit must be a positive integer of no more than 1000"),
            (Query(collectionID: "c", filter: .composite(CompositeFilter(.and, many + [F("a", .arrayContains, 1), F("b", .arrayContains, 1)]))),
             "The query may not have more than 100 filters + sort orders + ancestor total. Currently there are 103 filters, 0 sort orders, and no ancestor filter."),
            (Query(collectionID: "c", filter: .composite(CompositeFilter(.and, many)), orderBy: [asc("v"), asc("v")]),
             "The query may not have more than 100 filters + sort orders + ancestor total. Currently there are 101 filters, 2 sort orders, and no ancestor filter."),
            (Query(collectionID: "c", filter: AND(F("s", .equal, big), F("a", .arrayContains, 1), F("b", .arrayContains, 1))),
             "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction."),
            (Query(collectionID: "c", filter: AND(F("s", .equal, big), F("a", .in, .array((0..<30).map { .integer($0) })), F("b", .in, [1, 2]))),
             "value for s is too large to be used in a query"),
            (Query(collectionID: "c", filter: AND(F("s", .equal, big)), orderBy: [asc("v"), asc("v")]), "value for s is too large to be used in a query"),
        ]
        for (query, message) in cases {
            await #expect(throws: FlintError.invalidArgument(message), "\(message)") { try await database.runQuery(query) }
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
