import FlintEngine
import FlintModel
import Testing

/// Expected values come from the reference emulator given the same writes.
struct TransformTests {
    static let start: MapValue = [
        "i": .integer(9_223_372_036_854_775_800), "d": 1.5, "s": "x", "z": 0,
        "arr": [1, 2.0, .null], "small": 3,
    ]

    func run(_ transforms: [FieldTransform], on fields: MapValue = start) async throws -> (MapValue, [Value]) {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("t/a"), fields)])
        let r = try await db.commit([.transform("t/a", transforms)])
        return (try #require(try await db.get(key("t/a"))).fields, r.writeResults[0].transformResults)
    }

    @Test func incrementSaturatesWidensAndReplacesNonNumbers() async throws {
        let (doc, results) = try await run([
            .inc("i", 100), .inc("d", 2), .inc("s", 3), .inc("missing", 2.5), .inc("small", -5),
        ])
        #expect(same(doc["i"], .integer(.max)))
        #expect(same(doc["d"], .double(3.5)))
        #expect(same(doc["s"], .integer(3)))
        #expect(same(doc["missing"], .double(2.5)))
        #expect(same(doc["small"], .integer(-2)))
        #expect(zip(results, [Value.integer(.max), .double(3.5), .integer(3), .double(2.5), .integer(-2)]).allSatisfy { same($0, $1) })
    }

    @Test func incrementSaturatesDownwardAndIntPlusDoubleIsDouble() async throws {
        let (doc, _) = try await run([.inc("i", .integer(.min)), .inc("i", .integer(.min)), .inc("z", 0.5)],
                                     on: ["i": .integer(-10), "z": 1])
        #expect(same(doc["i"], .integer(.min)))
        #expect(same(doc["z"], .double(1.5)))
        let (widened, _) = try await run([.inc("i", .integer(.min)), .inc("i", .integer(.min))], on: ["i": 1.0])
        #expect(same(widened["i"], .double(-18_446_744_073_709_551_615.0)))
    }

    @Test func maximumAndMinimumFollowFirestoresTypeRules() async throws {
        let (doc, results) = try await run([
            .max("z", .double(-0.0)), .min("i", 1.0), .max("d", 4), .min("small", 3), .max("s", 7), .max("new", 2),
        ])
        #expect(same(doc["z"], .integer(0)))  // equal values keep the stored one
        #expect(same(doc["i"], .double(1.0)))  // the smaller operand's type wins
        #expect(same(doc["d"], .integer(4)))
        #expect(same(doc["small"], .integer(3)))
        #expect(same(doc["s"], .integer(7)))  // non-numbers are replaced
        #expect(same(doc["new"], .integer(2)))
        #expect(same(results[0], .integer(0)))
    }

    @Test func nanWinsMaximumAndMinimum() async throws {
        let (doc, results) = try await run([.inc("d", .double(.nan)), .max("z", .double(.nan)), .min("small", .double(.nan))])
        #expect(doc["d"]?.isNaN == true)
        #expect(doc["z"]?.isNaN == true)
        #expect(doc["small"]?.isNaN == true)
        #expect(results.allSatisfy { $0.isNaN })
        let (kept, _) = try await run([.max("n", 5), .min("n", 5)], on: ["n": .double(.nan)])
        #expect(kept["n"]?.isNaN == true)
    }

    @Test func arrayUnionAndRemoveCompareNumbersByValue() async throws {
        let (doc, results) = try await run([
            FieldTransform(field("arr"), .appendMissingElements([1.0, 2, 5, 5, .null])),
            FieldTransform(field("s"), .removeAllFromArray([1])),
            FieldTransform(field("fresh"), .appendMissingElements(["a", "a"])),
        ])
        #expect(same(doc["arr"], [.integer(1), .double(2.0), .null, .integer(5)]))
        #expect(doc["s"] == [])
        #expect(doc["fresh"] == ["a"])
        #expect(results == [.null, .null, .null])
        let (removed, _) = try await run([FieldTransform(field("arr"), .removeAllFromArray([5.0, .null, 1.0]))],
                                         on: ["arr": [1, 2.0, .null, 5, 1]])
        #expect(same(removed["arr"], [.double(2.0)]))
    }

    @Test func serverTimestampIsTheCommitTime() async throws {
        let (db, _) = makeDatabase()
        let r = try await db.commit([
            .merge("t/ts", ["n": 1], mask: ["n"], transforms: [FieldTransform(field("meta.at"), .serverTimestamp)])
        ])
        #expect(r.writeResults[0].transformResults == [.timestamp(r.commitTime)])
        #expect(try await db.get(key("t/ts"))?.fields == ["n": 1, "meta": ["at": .timestamp(r.commitTime)]])
    }

    @Test func badOperandsAreRejected() async throws {
        let (db, _) = makeDatabase()
        await #expect(throws: FlintError.invalidArgument("Input must be int64 or double.")) {
            try await db.commit([.transform("t/a", [.max("n", "s")])])
        }
        await #expect(throws: FlintError.invalidArgument("Cannot convert an array value in an array value.")) {
            try await db.commit([.transform("t/a", [FieldTransform(field("a"), .appendMissingElements([[1]]))])])
        }
        await #expect(throws: FlintError.self) {
            try await db.commit([.transform("t/a", [FieldTransform(.documentID, .serverTimestamp)])])
        }
        // What the transform leaves is checked as a stored field, under that field's name.
        await #expect(throws: FlintError.invalidArgument("Property a contains an invalid nested entity.")) {
            try await db.commit([.transform("t/a", [FieldTransform(field("a"), .appendMissingElements([["": 1]]))])])
        }
    }

    /// Every write is checked for what is refused wherever it stands (here, a transform's
    /// operand or an array in an array) before any is checked for what only a stored value
    /// must keep (here, NaN in a vector), as the reference checks a commit.
    @Test func problemsRefusedAnywhereAreNamedBeforeStoredOnesInAnyWrite() async throws {
        let (db, _) = makeDatabase()
        let nan: MapValue = ["v": .vector([.nan])]
        let withOperand = Write(.update(key("t/a"), nan), transforms: [.max("n", "s")])
        await #expect(throws: FlintError.invalidArgument("Input must be int64 or double.")) { try await db.commit([withOperand]) }
        await #expect(throws: FlintError.invalidArgument("Cannot convert an array value in an array value.")) {
            try await db.commit([.set(key("t/a"), nan), .set(key("t/b"), ["a": [[1]]])])
        }
        await #expect(throws: FlintError.invalidArgument("Vector cannot contain NaN values.")) {
            try await db.commit([.set(key("t/a"), ["a": 1]), .set(key("t/b"), nan)])
        }
        #expect(try await db.get(key("t/a")) == nil)
    }
}
