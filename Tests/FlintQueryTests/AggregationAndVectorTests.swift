import FlintEngine
import FlintModel
import FlintQuery
import Testing

struct AggregationTests {
    static let documents: [String: MapValue] = [
        "a": ["x": .integer(9_223_372_036_854_775_797), "y": 1], "b": ["x": 100, "y": 2.5], "c": ["x": "s", "y": 3],
        "d": ["z": 1], "e": ["y": .double(.nan)],
    ]

    func aggregate(_ aggregations: [Aggregation], _ query: Query = Query(collectionID: "c")) async throws -> AggregationResult {
        try await database(Self.documents).runAggregation(query, aggregations: aggregations)
    }

    /// Values as the reference emulator computes them.
    @Test func sumsAveragesAndCounts() async throws {
        let overflow = try await aggregate([Aggregation(alias: "s", .sum(path("x")))])
        #expect(same(overflow["s"], .double(9.223372036854776e18)))
        let withNaN = try await aggregate([Aggregation(alias: "s", .sum(path("y"))), Aggregation(alias: "a", .average(path("y")))])
        #expect(withNaN["s"]?.isNaN == true && withNaN["a"]?.isNaN == true)
        let single = try await aggregate([Aggregation(alias: "s", .sum(path("z"))), Aggregation(alias: "a", .average(path("z")))])
        #expect(same(single["s"], .integer(1)))
        #expect(same(single["a"], .double(1.0)))
        let none = try await aggregate([Aggregation(alias: "s", .sum(path("nope"))), Aggregation(alias: "a", .average(path("nope"))), Aggregation(alias: "c", .count(upTo: nil))])
        #expect(same(none["s"], .integer(0)))
        #expect(none["a"] == .null)
        // Counted beside a sum, only documents with the summed field count.
        #expect(same(none["c"], .integer(0)))
        #expect(try await aggregate([Aggregation(alias: "c", .count(upTo: 2))])["c"] == 2)
        #expect(try await aggregate([Aggregation(alias: "c", .count(upTo: 0))])["c"] == 0)
        #expect(try await aggregate([Aggregation(alias: "c", .count(upTo: nil))], Query(collectionID: "c", limit: 3))["c"] == 3)
        let ints = try await aggregate([Aggregation(alias: "s", .sum(path("x")))], Query(collectionID: "c", filter: F("x", .equal, 100)))
        #expect(same(ints["s"], .integer(100)))
    }

    /// The subnormal double nearest 1e-320.
    static let tinyDouble = Double.leastNonzeroMagnitude * 2024
    static let tiny = Value.double(tinyDouble)

    /// Sums and averages by the exact rule, where adding one number after another gives
    /// something else. Where the reference was asked, it gave these answers; for some sums of
    /// three or more doubles (`1e308 + 1e308 - 1e308`) it also gives others from run to run.
    @Test(arguments: [
        ([0.1, 0.2, 0.3], Value.double(0.6), 0.19999999999999998),
        ([0.1, 0.2], .double(0.30000000000000004), 0.15000000000000002),
        (Array(repeating: 0.1, count: 10), .double(1.0), 0.1),
        ([1e308, 1e308, -1e308], .double(1e308), 3.333333333333333e307),
        ([1e308, 1e308, -1e308, -1e308], .double(0), 0),
        ([1e308, 1e308], .double(.infinity), .infinity),
        ([1.0000000000000002, 1e-16, 1e-16], .double(1.0000000000000004), 0.3333333333333335),
        ([1, 0.1, 2, 0.2], .double(3.3), 0.825),
        ([3.0, .integer(.max), .integer(.min)], .double(2), 0.6666666666666666),
        ([.integer(.max), 1, -1], .integer(.max), 3.0744573456182584e18),
        ([.integer(.max), .integer(.max), .integer(.min), .integer(.min)], .integer(-2), -0.5),
        ([.integer(.max), 1], .double(9.223372036854776e18), 4.611686018427388e18),
        ([Self.tiny, 9_007_199_254_740_993], .double(9_007_199_254_740_992), 4_503_599_627_370_496),
        ([0.5, 9_007_199_254_740_993], .double(9_007_199_254_740_992), 4_503_599_627_370_496),
        // The doubles' total and the integers' are each rounded before they are added.
        ([1, 9_007_199_254_740_992.0, 0.5], .double(9_007_199_254_740_992), 3_002_399_751_580_330.5),
        ([1e16, 1.0, 1], .double(1e16), 3_333_333_333_333_333.5),
        ([9_007_199_254_740_993, 1], .integer(9_007_199_254_740_994), 4_503_599_627_370_497),
        ([1e308, 1e308, -1e308, -1e308, .integer(.max), .integer(.max)], .double(1.8446744073709552e19), 3.0744573456182584e18),
        ([.double(.infinity), .double(-.infinity), 1], .double(.nan), .nan),
        ([.double(.infinity), .integer(.max), 1], .double(.infinity), .infinity),
        ([.double(-Self.tinyDouble), "x", true, .null], .double(-Self.tinyDouble), -Self.tinyDouble),
    ] as [([Value], Value, Double)])
    func sumsAndAveragesAreExactUntilTheyAreRounded(values: [Value], sum: Value, average: Double) {
        let documents = values.map { MapValue([("v", $0)]) }
        let results = Aggregator.aggregate([Aggregation(.sum(path("v"))), Aggregation(.average(path("v")))], over: documents)
        #expect(results.count == 2)
        #expect(same(results[0], sum), "sum of \(values): \(results[0])")
        #expect(same(results[1], .double(average)), "average of \(values): \(results[1])")
    }

    /// A sum or an average reads its field's index: its field joins the order, so documents
    /// without it are left out (of a count beside it too) and a limit takes the first in that
    /// order. Values as the reference gives them.
    @Test func summedFieldsJoinTheOrder() async throws {
        let documents: [String: MapValue] = [
            "p": ["a": 1, "b": 10], "q": ["a": 2], "r": ["b": 20], "s": ["a": 3, "b": 5], "u": ["c": 7], "v": ["a": "x", "b": 1],
            "w": ["a": .null, "b": 2.5],
        ]
        let db = try await database(documents)
        let count = Aggregation(alias: "n", .count(upTo: nil))
        let sumA = Aggregation(alias: "a", .sum(path("a")))
        let sumB = Aggregation(alias: "b", .sum(path("b")))
        let all = try await db.runAggregation(Query(collectionID: "c"), aggregations: [sumA, sumB, count])
        #expect(same(all["n"], .integer(4)) && same(all["a"], .integer(4)) && same(all["b"], .double(18.5)))
        // Ordered by a, then b: w (a is null) comes first.
        let first = try await db.runAggregation(Query(collectionID: "c", limit: 1), aggregations: [sumB, sumA, count])
        #expect(same(first["n"], .integer(1)) && same(first["a"], .integer(0)) && same(first["b"], .double(2.5)))
        let skipped = try await db.runAggregation(Query(collectionID: "c", offset: 1), aggregations: [sumA, count])
        #expect(same(skipped["n"], .integer(4)) && same(skipped["a"], .integer(6)))
        let byB = try await db.runAggregation(Query(collectionID: "c", orderBy: [desc("b")], limit: 1), aggregations: [count, sumA])
        #expect(same(byB["n"], .integer(1)) && same(byB["a"], .integer(1)))
        await #expect(throws: FlintError.invalidArgument(
            "This query requires an index that has fields [a, b] after __name__ and Firestore does not currently support such an index. Please try the query again with additional ordering on those fields."
        )) {
            try await db.runAggregation(Query(collectionID: "c", orderBy: [asc("__name__")]), aggregations: [sumB, sumA])
        }
        // Named as the reference names them: by their segments, unquoted.
        let quoted = Aggregation(alias: "q", .sum(try FieldPath(parsing: "`a-b`.`x\\`y`")))
        await #expect(throws: FlintError.invalidArgument(
            "This query requires an index that has fields [a-b.x`y, b] after __name__ and Firestore does not currently support such an index. Please try the query again with additional ordering on those fields."
        )) {
            try await db.runAggregation(Query(collectionID: "c", orderBy: [asc("__name__")]), aggregations: [sumB, quoted])
        }
        // `__name__` anywhere in the order, or a group below a document (a range of names), puts
        // the name first too; this is told before a repeated ordering and before disjunctions.
        let afterName = FlintError.invalidArgument(
            "This query requires an index that has fields [b] after __name__ and Firestore does not currently support such an index. Please try the query again with additional ordering on those fields.")
        let beforeOthers: [Query] = [
            Query(collectionID: "c", orderBy: [asc("__name__"), asc("a")]),
            Query(collectionID: "c", orderBy: [asc("a"), asc("a"), asc("__name__")]),
            Query(collectionID: "c", filter: AND(F("__name__", .greaterThan, ref("c/p")), F("a", .in, [1, 2, 3, 4, 5, 6]), F("c", .in, [1, 2, 3, 4, 5, 6]))),
            Query(parent: try DocumentKey(parsing: "c/p").path, collectionID: "c", allDescendants: true),
            Query(parent: try DocumentKey(parsing: "c/p").path, collectionID: nil, allDescendants: true),
        ]
        for query in beforeOthers {
            await #expect(throws: afterName, "\(query)") { try await db.runAggregation(query, aggregations: [sumB]) }
        }
        // A count reads no field, so a group below a document is counted.
        #expect(same(try await db.runAggregation(Query(parent: try DocumentKey(parsing: "c/p").path, collectionID: "c", allDescendants: true), aggregations: [count])["n"], .integer(0)))
        // A plain query of the same collection is not changed by any of this.
        #expect(try await db.ids(Query(collectionID: "c", limit: 2)) == ["p", "q"])
    }

    @Test func aliasesDefaultByPositionAndMustBeUnique() async throws {
        let r = try await aggregate([Aggregation(.count(upTo: nil)), Aggregation(.sum(path("z")))])
        #expect(r.values.map(\.0) == ["field_1", "field_2"])
        // Numbered among the unnamed ones.
        let named = try await aggregate([Aggregation(alias: "a", .count(upTo: nil)), Aggregation(.count(upTo: nil))])
        #expect(named.values.map(\.0) == ["a", "field_1"])
        await #expect(throws: FlintError.invalidArgument("Aggregation aliases contain duplicate alias: field_1.")) {
            try await aggregate([Aggregation(.count(upTo: nil)), Aggregation(alias: "field_1", .count(upTo: nil))])
        }
        await #expect(throws: FlintError.invalidArgument("Aggregation aliases contain duplicate alias: c.")) {
            try await aggregate([Aggregation(alias: "c", .count(upTo: nil)), Aggregation(alias: "c", .count(upTo: nil))])
        }
        let longest = String(repeating: "a", count: 1500)
        #expect(try await aggregate([Aggregation(alias: longest, .count(upTo: nil))]).values.map(\.0) == [longest])
        await #expect(throws: FlintError.invalidArgument("The property.name is longer than 1500 bytes.")) {
            try await aggregate([Aggregation(alias: longest + "a", .count(upTo: nil))])
        }
        await #expect(throws: FlintError.invalidArgument("The `up_to` value in a COUNT aggregation must be greater than or equal to zero.")) {
            try await aggregate([Aggregation(alias: "c", .count(upTo: -1))])
        }
        let six = (1...6).map { Aggregation(alias: "a\($0)", .count(upTo: nil)) }
        let e = await #expect(throws: FlintError.self) { try await aggregate(six) }
        #expect(e?.code == .invalidArgument)
    }
}

extension AggregationTests {
    /// A projection may stand beside a count but not beside a sum or an average; the reference
    /// names a summed field the projection lacks, or a keys-only projection, before refusing.
    @Test func projectionsRefuseSumsAndAverages() async throws {
        func projected(_ fields: [String]) -> Query { Query(collectionID: "c", projection: fields.map(path)) }
        let counted = try await aggregate([Aggregation(alias: "n", .count(upTo: nil))], projected(["x"]))
        #expect(same(counted["n"], 5))
        let cases: [([String], [Aggregation], String)] = [
            (["x"], [Aggregation(alias: "s", .sum(path("x")))], "Cannot apply property masks when aggregation fields are present."),
            (["m"], [Aggregation(alias: "s", .sum(path("m.k")))], "Cannot apply property masks when aggregation fields are present."),
            (["x"], [Aggregation(alias: "s", .sum(path("__name__")))], "Cannot apply property masks when aggregation fields are present."),
            (["m.k"], [Aggregation(alias: "s", .average(path("m")))], "The aggregation property m is not present in the base query's property mask."),
            (["x"], [Aggregation(alias: "s", .sum(path("x"))), Aggregation(alias: "a", .average(path("`y z`.w")))],
             "The aggregation property y z.w is not present in the base query's property mask."),
            // Before the duplicate alias.
            (["x"], [Aggregation(alias: "d", .sum(path("y"))), Aggregation(alias: "d", .count(upTo: nil))],
             "The aggregation property y is not present in the base query's property mask."),
            ([], [Aggregation(alias: "s", .sum(path("x")))], "Aggregation over non-key properties is not supported for base query that only returns keys."),
            (["__name__"], [Aggregation(alias: "s", .average(path("x")))],
             "Aggregation over non-key properties is not supported for base query that only returns keys."),
        ]
        for (fields, aggregations, message) in cases {
            let query = projected(fields)
            await #expect(throws: FlintError.invalidArgument(message), "\(fields)") { try await aggregate(aggregations, query) }
        }
        // The query's lists come before the aggregation's own checks, which come before its limit.
        let in31 = Query(collectionID: "c", filter: F("x", .in, .array((0..<31).map { .integer($0) })))
        await #expect(throws: FlintError.invalidArgument("'IN' supports up to 30 comparison values.")) {
            try await aggregate([Aggregation(alias: "d", .count(upTo: nil)), Aggregation(alias: "d", .count(upTo: nil))], in31)
        }
        var negative = projected(["x"])
        negative.limit = -1
        await #expect(throws: FlintError.invalidArgument("The aggregation property y is not present in the base query's property mask.")) {
            try await aggregate([Aggregation(alias: "s", .sum(path("y")))], negative)
        }
        // A reserved alias is still named first.
        await #expect(throws: FlintError.invalidArgument(#"The property.name "__s__" is reserved."#)) {
            try await aggregate([Aggregation(alias: "__s__", .sum(path("y")))], projected(["x"]))
        }
    }
}

struct VectorSearchTests {
    static let documents: [String: MapValue] = [
        "a": ["e": .vector([1, 0]), "t": "x"], "b": ["e": .vector([0, 1]), "t": "y"], "c": ["e": .vector([1, 1]), "t": "x"],
        "d": ["e": .vector([3, 4]), "t": "x"], "e3": ["e": .vector([1, 2, 3])], "nov": ["e": [1.0, 0.0]], "zero": ["e": .vector([0, 0])],
    ]

    func nearest(_ measure: FindNearest.DistanceMeasure, threshold: Double? = nil, limit: Int = 10, filter: Filter? = nil,
                 distanceField: String? = nil) async throws -> [Document] {
        let f = FindNearest(field: path("e"), queryVector: [1, 0], measure: measure, limit: limit,
                            distanceResultField: distanceField, distanceThreshold: threshold)
        return try await database(Self.documents).runQuery(Query(collectionID: "c", filter: filter, findNearest: f)).documents
    }

    /// Orders as the reference emulator returns them.
    @Test func measuresOrderAsTheReference() async throws {
        #expect(try await nearest(.euclidean).map(\.key.documentID) == ["a", "c", "zero", "b", "d"])
        #expect(try await nearest(.cosine).map(\.key.documentID) == ["a", "c", "d", "b", "zero"])
        #expect(try await nearest(.dotProduct).map(\.key.documentID) == ["d", "a", "c", "b", "zero"])
        #expect(try await nearest(.euclidean, limit: 2).map(\.key.documentID) == ["a", "c"])
    }

    @Test func thresholdsPrefiltersAndDistanceField() async throws {
        #expect(try await nearest(.euclidean, threshold: 1.0).map(\.key.documentID) == ["a", "c", "zero"])
        #expect(try await nearest(.dotProduct, threshold: 1.0).map(\.key.documentID) == ["d", "a", "c"])
        #expect(try await nearest(.cosine, threshold: 0.5).map(\.key.documentID) == ["a", "c", "d"])
        #expect(try await nearest(.euclidean, filter: F("t", .equal, "x")).map(\.key.documentID) == ["a", "c", "d"])
        let withDistance = try await nearest(.euclidean, distanceField: "dist")
        #expect(withDistance.map { $0.fields["dist"] } == [0.0, 1.0, 1.0, .double(2.0.squareRoot()), .double(20.0.squareRoot())])
        // A name, not a path: one top-level field spelled with the dot.
        let dotted = try await nearest(.euclidean, limit: 1, distanceField: "t.x")
        #expect(dotted.first?.fields["t.x"] == 0.0)
        #expect(dotted.first?.fields["t"] == "x")
    }

    static func distance(_ v: [Double], _ q: [Double], _ measure: FindNearest.DistanceMeasure) -> Double? {
        FindNearestRules.distance(v, FindNearest(field: path("e"), queryVector: q, measure: measure, limit: 1))
    }

    /// Distances to the last bit, as the reference emulator gives them (each expected value was
    /// read from it; rounding each product on its own gives the neighbouring double).
    @Test func distancesRoundAsOnTheReference() {
        // A vector is at cosine distance exactly 0 from itself and its multiples, 2 from its opposite.
        #expect(Self.distance([1, 1], [1, 1], .cosine) == 0)
        #expect(Self.distance([2, 2], [1, 1], .cosine) == 0)
        #expect(Self.distance([-1, -1], [1, 1], .cosine) == 2)
        #expect(Self.distance([1, 2, 3], [1, 1], .cosine) == nil)
        #expect(Self.distance([0, 0], [1, 1], .cosine)?.isNaN == true)
        let q5 = [1.395507101918887, -1.6131002951904923, 0.9900200995076958, -2.0533190750909363, -2.6727984356465324]
        #expect(Self.distance([0.0008718233955185053, 1, 0.0007203279757334558, 0.0005939284362976338, -5.0342667982429035], q5, .euclidean)
            == 4.421210943212462)
        #expect(Self.distance([3, 0.0006211439444141274, 0.00044985383744394395, 0.00024010459764042336, 5.306088158859852], q5, .cosine)
            == 1.399059225047112)
        let q9 = [-1.8749406192840736, -1.3725540563527827, -2.5923988127621573, 0.7762645484545025, -1.6177662768443763,
                  2.9274721486471353, -1.4545865277797423, 0.43278653220030616, -1.5573532864640809]
        let v9 = [0.0007412656789167053, 0.0005486803890632357, 0.0007164274209301075, 5, 6.120310313309659,
                  -7.847507444586621, -0.7427481403764435, 2, 0.10271157479271054]
        #expect(Self.distance(v9, q9, .dotProduct) == -27.211262260606944)
        #expect(Self.distance(v9, q9, .euclidean) == 14.548693525861532)
    }

    /// NaN counts as larger than every distance: last by distance, first by dot product, and
    /// only a dot product's minimum lets it through.
    @Test func nanDistancesSortAsTheLargest() {
        #expect(FindNearestRules.nearer(.nan, .infinity, .dotProduct) == true)
        #expect(FindNearestRules.nearer(.infinity, .nan, .dotProduct) == false)
        #expect(FindNearestRules.nearer(.nan, .infinity, .euclidean) == false)
        #expect(FindNearestRules.nearer(.infinity, .nan, .cosine) == true)
        #expect(FindNearestRules.nearer(.nan, .nan, .dotProduct) == nil)
        let dot = FindNearest(field: path("e"), queryVector: [1], measure: .dotProduct, limit: 1, distanceThreshold: 1)
        let euclidean = FindNearest(field: path("e"), queryVector: [1], measure: .euclidean, limit: 1, distanceThreshold: 1)
        #expect(FindNearestRules.withinThreshold(.nan, dot))
        #expect(!FindNearestRules.withinThreshold(.nan, euclidean))
        #expect(FindNearestRules.withinThreshold(1, dot) && FindNearestRules.withinThreshold(1, euclidean))
        #expect(!FindNearestRules.withinThreshold(0.5, dot) && !FindNearestRules.withinThreshold(1.5, euclidean))
    }

    /// An infinite component makes NaN distances; the documents with them come first by dot product.
    @Test func nanDistancesComeFirstByDotProduct() async throws {
        let db = try await database(["inf": ["e": .vector([.infinity, 1])], "one": ["e": .vector([1, 1])], "zero": ["e": .vector([0, 0])]])
        let f = FindNearest(field: path("e"), queryVector: [0, 1], measure: .dotProduct, limit: 5, distanceThreshold: 0.5)
        #expect(try await db.runQuery(Query(collectionID: "c", findNearest: f)).documents.map(\.key.documentID) == ["inf", "one"])
    }
}

/// Exact representation: `Value.==` treats 1 and 1.0 as equal, but results must keep the type.
func same(_ a: Value?, _ b: Value?) -> Bool {
    switch (a, b) {
    case (.integer(let x)?, .integer(let y)?): x == y
    case (.double(let x)?, .double(let y)?): x == y || (x.isNaN && y.isNaN)
    default: false
    }
}
