import FlintModel
import Testing

@testable import FlintEngine

/// `request.writeFields` in the reference's order. Every expected list here was read off the
/// reference emulator, one `writeFields[i] == '…'` rule per place.
struct ReferenceMaskOrderTests {
    static func listed(_ masks: [String]...) throws -> [String] {
        let parsed = try masks.map { mask in try mask.map { try FieldPath(parsing: $0) } }
        return ReferenceMaskOrder.listed(parsed).map(FoldedWrites.rulesName)
    }

    @Test func namesComeInTheOrderOfAJavaHashMap() throws {
        #expect(try Self.listed(["n", "m"]) == ["m", "n"])
        #expect(try Self.listed(["zz", "a", "m", "b"]) == ["zz", "a", "b", "m"])
        #expect(try Self.listed(["a.b", "a_b", "ab"]) == ["ab", "a.b", "a_b"])
        #expect(try Self.listed(["B", "a", "_"]) == ["a", "B", "_"])
        // Sharing a bucket, names keep the order they were put in.
        #expect(try Self.listed(["q", "a"]) == ["q", "a"])
        #expect(try Self.listed(["a", "q"]) == ["a", "q"])
    }

    @Test func eachLevelIsItsOwnMapAndPathEndsComeFirst() throws {
        #expect(try Self.listed(["b.c", "a", "b.a"]) == ["a", "b.a", "b.c"])
        // `m.x.z` is ordered by `m`, the field `m.x` by its own name.
        #expect(try Self.listed(["`m.x`", "m.x.z"]) == [#"m\.x"#, "m.x.z"])
        #expect(try Self.listed(["m.x.z", "`m.x`"]) == [#"m\.x"#, "m.x.z"])
        // `q` and `a` share a bucket: a name ending a path is put in before one leading on.
        #expect(try Self.listed(["a.x", "q"]) == ["q", "a.x"])
        #expect(try Self.listed(["q.x", "a"]) == ["a", "q.x"])
        #expect(try Self.listed(["a.x", "q.x"]) == ["a.x", "q.x"])
        #expect(try Self.listed(["y.a", "`é`"]) == ["é", "y.a"])
    }

    /// `é` as one scalar and as `e` with a combining accent are two names, at every level;
    /// compared by the bytes of the listed names, since Swift's strings hold them equal.
    @Test func namesThatDifferOnlyInNormalizationAreTwo() throws {
        let bytes = { (names: [String]) in names.map { Array($0.utf8) } }
        #expect(bytes(try Self.listed(["`\u{E9}`", "`e\u{301}`"])) == bytes(["\u{E9}", "e\u{301}"]))
        #expect(bytes(try Self.listed(["`\u{E9}`.x", "`e\u{301}`.y"])) == bytes(["\u{E9}.x", "e\u{301}.y"]))
        #expect(bytes(try Self.listed(["`\u{E9}`", "`e\u{301}`.y"])) == bytes(["\u{E9}", "e\u{301}.y"]))
    }

    @Test func aPathTakesInThePathsInsideIt() throws {
        #expect(try Self.listed(["m", "m.y"]) == ["m"])
        #expect(try Self.listed(["m.x.z", "m.x", "m"]) == ["m"])
        #expect(try Self.listed(["n", "m.y", "m"]) == ["m", "n"])
        #expect(try Self.listed(["m.x", "m.y"]) == ["m.x", "m.y"])
    }

    @Test func laterWritesMasksArePutInFirst() throws {
        #expect(try Self.listed(["q"], ["a"]) == ["a", "q"])
        #expect(try Self.listed(["q.x"], ["q.y", "a.b"]) == ["q.x", "q.y", "a.b"])
        #expect(try Self.listed(["m.y"], ["m", "b"]) == ["b", "m"])
        #expect(try Self.listed(["b", "q.x"], ["a", "q.y"]) == ["a", "q.x", "q.y", "b"])
    }

    @Test func theTableGrowsAsNamesArePutIn() throws {
        // Twelve names fit 16 buckets (a table sized for twelve at once would have 32).
        #expect(
            try Self.listed(["s", "u", "q", "r", "p3", "zz", "t", "k", "p2", "c", "_x", "Z"])
                == ["zz", "q", "r", "p2", "s", "p3", "c", "t", "u", "_x", "Z", "k"])
        // Thirteen take 32.
        #expect(
            try Self.listed(["p3", "aa", "a", "s", "_x", "k", "n", "q", "w", "c", "ab", "x", "b"])
                == ["aa", "a", "ab", "b", "p3", "c", "k", "n", "q", "s", "w", "x", "_x"])
    }

    @Test func namesAreEscapedAsTheReferenceWritesThem() throws {
        #expect(try Self.listed(["`a.b`"]) == [#"a\.b"#])
        #expect(try Self.listed([#"`a\\b`"#]) == [#"a\\b"#])
        #expect(try Self.listed(["`a\\`b`"]) == ["a`b"])
        #expect(try Self.listed(["m.`x y`"]) == ["m.x y"])
    }
}
