import Testing

@testable import FlintModel

/// One array in ascending Firestore order (checked against the reference emulator with an
/// `orderBy` over one document per value); every pair i < j must compare as less.
struct ValueOrderTests {
    static let db = DatabaseID(project: "ord")
    static let other = DatabaseID(project: "zz")

    static func ref(_ path: String, _ db: DatabaseID = db) -> Value {
        .reference(DocumentReference(database: db, key: try! DocumentKey(parsing: path)))
    }
    static func geo(_ lat: Double, _ lng: Double) -> Value { .geoPoint(try! GeoPoint(latitude: lat, longitude: lng)) }

    static let ascending: [(String, Value)] = [
        ("null", .null),
        ("false", false), ("true", true),
        ("nan", .double(.nan)), ("-inf", .double(-.infinity)), ("-9.3e18", .double(-9.3e18)),
        ("i64min", .integer(.min)), ("-2^53-1", .integer(-9_007_199_254_740_993)),
        ("-2^53d", .double(-9_007_199_254_740_992)), ("-1.5", -1.5), ("-1", -1), ("0", 0), ("0.5", 0.5),
        ("1", 1), ("2^53d", .double(9_007_199_254_740_992)), ("2^53+1", .integer(9_007_199_254_740_993)),
        ("i64max", .integer(.max)), ("2^63d", .double(9_223_372_036_854_775_808)), ("inf", .double(.infinity)),
        ("ts-min", .timestamp(try! Timestamp(seconds: Timestamp.minSeconds, nanos: 0))),
        ("ts-pre", .timestamp(Timestamp(microseconds: -1))), ("ts-0", .timestamp(Timestamp(microseconds: 0))),
        ("s-empty", ""), ("s-A", "A"), ("s-a", "a"), ("s-e-comb", "e\u{301}"), ("s-e-acute", "\u{e9}"),
        ("s-fffd", "\u{fffd}"), ("s-emoji", "\u{1F600}"),
        ("b-empty", .bytes([])), ("b-00", .bytes([0])), ("b-ff", .bytes([255])),
        ("r-ca", ref("c/a")), ("r-ca-sub", ref("c/a/s/x")), ("r-cb", ref("c/b")), ("r-other", ref("a/a", other)),
        ("g-1", geo(-90, 0)), ("g-2", geo(0, -180)), ("g-3", geo(0, 0)),
        ("a-empty", []), ("a-null", [.null]), ("a-1-2", [1, 2]), ("a-2", [2]),
        ("v-1d", .vector([9])), ("v-2d", .vector([1, 2])),
        ("m-empty", [:]), ("m-a1", ["a": 1]), ("m-a1b", ["a": 1, "b": 0]), ("m-b", ["b": 0]),
    ]

    @Test func everyPairIsOrdered() {
        #expect(Self.ascending.count * (Self.ascending.count - 1) / 2 >= 100)
        for i in Self.ascending.indices {
            for j in Self.ascending.indices where j > i {
                let (na, a) = Self.ascending[i]
                let (nb, b) = Self.ascending[j]
                #expect(Value.compare(a, b) == -1, "\(na) < \(nb)")
                #expect(Value.compare(b, a) == 1, "\(nb) > \(na)")
                #expect(a != b, "\(na) != \(nb)")
            }
            let (n, v) = Self.ascending[i]
            #expect(Value.compare(v, v) == 0, "\(n) == itself")
        }
    }

    static let equalPairs: [(Value, Value)] = [
        (0, -0.0), (.double(0), .double(-0.0)), (.double(.nan), .double(.nan)), (1, 1.0),
        (.integer(9_007_199_254_740_992), .double(9_007_199_254_740_992)),
        (.integer(.min), .double(-9_223_372_036_854_775_808)),
        (["a": 1], ["a": 1.0]), ([1, 2], [1.0, 2.0]), (.vector([1]), .vector([1])),
        (["b": 1, "a": 2], ["a": 2, "b": 1]),
    ]

    @Test func equalValuesHashAlike() {
        for (a, b) in Self.equalPairs {
            #expect(a == b, "\(a) == \(b)")
            #expect(a.hashValue == b.hashValue, "hash(\(a)) == hash(\(b))")
        }
        var set = Set<Value>()
        for (a, b) in Self.equalPairs { set.insert(a); set.insert(b) }
        #expect(set.count == Self.equalPairs.count - 1)  // the first two pairs are one number: zero
    }

    static let unequalNumbers: [(Value, Value)] = [
        (.integer(9_007_199_254_740_993), .double(9_007_199_254_740_992)),
        (.integer(.max), .double(9_223_372_036_854_775_808)),
        (.integer(1), .double(1.0000000000000002)),
        (.double(.nan), .integer(0)),
    ]

    @Test func nearlyEqualNumbersDiffer() {
        for (a, b) in Self.unequalNumbers {
            #expect(a != b)
            #expect(Value.compare(a, b) == -Value.compare(b, a))
        }
        #expect(Value.compare(.integer(9_007_199_254_740_993), .double(9_007_199_254_740_992)) == 1)
        #expect(Value.compare(.integer(.max), .double(9_223_372_036_854_775_808)) == -1)
    }

    @Test func stringsCompareByUTF8NotUnicodeEquivalence() {
        let composed: Value = "\u{e9}"
        let decomposed: Value = "e\u{301}"
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        #expect(compareUTF8("\u{fffd}", "\u{1F600}") == -1)
    }

    @Test func mapsKeepKeysInUTF8Order() {
        var m = MapValue()
        m["b"] = 1
        m["a"] = 2
        m["\u{e9}"] = 3
        m["e\u{301}"] = 4
        #expect(m.keys == ["a", "b", "e\u{301}", "\u{e9}"])
        m["b"] = nil
        #expect(m.keys == ["a", "e\u{301}", "\u{e9}"])
        #expect(m["\u{e9}"] == 3)
    }

    @Test func typeOrderIsFirestores() {
        let ranks: [TypeOrder] = Self.ascending.map { $0.1.typeOrder }
        #expect(ranks == ranks.sorted())
        #expect(Set(ranks).count == 11)
    }

    /// Stored documents keep their maps for a long time: one built from pairs is allocated at
    /// its size (give or take malloc's rounding) instead of at the next power of two.
    @Test func aMapBuiltFromPairsHoldsNoSlack() {
        let map = MapValue((0..<5).map { ("f\($0)", Value.integer(Int64($0))) })
        #expect(map.count == 5)
        #expect(map.entries.capacity < 8)
        var reserved = MapValue()
        reserved.reserveCapacity(3)
        for k in ["c", "a", "b"] { reserved[k] = .string(k) }
        #expect(reserved.keys == ["a", "b", "c"])
        #expect(reserved.entries.capacity < 4)
    }

    /// Identity is stricter than `==` exactly where a reader could tell two values apart.
    @Test func identicalValuesAreTheSameTypeAndBits() {
        let pairs: [(Value, Value, equal: Bool, identical: Bool)] = [
            (1, 1.0, true, false),
            (0.0, -0.0, true, false),
            (.double(.nan), .double(-.nan), true, true),
            (Self.geo(0, 1), Self.geo(-0.0, 1), true, false),
            (.vector([1, 0]), .vector([1, -0.0]), true, false),
            ([1, "a"], [1.0, "a"], true, false),
            (["a": 1, "b": [2]], ["b": [2], "a": 1], true, true),
            (["a": ["x": 1]], ["a": ["x": 1.0]], true, false),
            ("e\u{301}", "\u{e9}", false, false),
            (.bytes([1, 2]), .bytes([1, 2]), true, true),
            (1, "1", false, false),
        ]
        for (a, b, equal, identical) in pairs {
            #expect((a == b) == equal, "\(a) == \(b)")
            #expect(a.isIdentical(to: b) == identical, "\(a) identical to \(b)")
            #expect(b.isIdentical(to: a) == identical)
            #expect(a.isIdentical(to: a))
        }
    }
}
