import Testing

@testable import FlintModel

struct PathTests {
    static let root = "projects/p1/databases/(default)/documents"

    @Test func parsesDocumentNames() throws {
        let (db, key) = try ResourceName.parseDocument(Self.root + "/users/alice/posts/p1")
        #expect(db == DatabaseID(project: "p1"))
        #expect(key.path.segments == ["users", "alice", "posts", "p1"])
        #expect(key.collectionID == "posts")
        #expect(key.documentID == "p1")
        #expect(key.collection.canonical == "users/alice/posts")
    }

    /// An id may start with a combining mark, which joins the `/` before it into one Swift
    /// `Character`; names split on the `/` byte all the same.
    @Test func idsStartingWithACombiningMarkAreSplitOff() throws {
        let mark = "\u{301}"
        let (_, key) = try ResourceName.parseDocument(Self.root + "/\(mark)c/\(mark)d")
        #expect(key.path.segments.map { Array($0.utf8) } == [Array((mark + "c").utf8), Array((mark + "d").utf8)])
        #expect(try DocumentKey(parsing: "\(mark)c/\(mark)d").path.segments.count == 2)
        #expect("a/\(mark)b//c".split(onASCII: "/").map(String.init) == ["a", mark + "b", "", "c"])
        #expect("a/\(mark)b/c".split(onASCII: "/", maxSplits: 1).map(String.init) == ["a", mark + "b/c"])
        #expect("/a//\(mark)b/".split(onASCII: "/", omittingEmptySubsequences: true).map(String.init) == ["a", mark + "b"])
        let text = "a/\(mark)b"
        #expect(text.splitAtLast(ofASCII: "/").map { [Array($0.before.utf8), Array($0.after.utf8)] } == [Array("a".utf8), Array((mark + "b").utf8)])
        #expect(text.splitAtLast(ofASCII: ":") == nil)
        #expect("a:\(mark)b:c".splitAtFirst(ofASCII: ":").map { [Array($0.before.utf8), Array($0.after.utf8)] } == [Array("a".utf8), Array((mark + "b:c").utf8)])
        // Splitting by Character finds one part where there are two.
        #expect(text.split(separator: "/").count == 1)
    }

    /// Messages and codes as the reference emulator gives them.
    @Test(arguments: [
        ("/c", "Document name \"projects/p1/databases/(default)/documents/c\" lacks \"/\" at index 43."),
        ("/c/a/b", "Document name \"projects/p1/databases/(default)/documents/c/a/b\" lacks \"/\" at index 47."),
        ("/c//a", "Document name \"projects/p1/databases/(default)/documents/c//a\" lacks a resource id at index 44."),
        ("/c/..", "Document name \"projects/p1/databases/(default)/documents/c/..\" contains a resource id \"..\" at index 44."),
        ("/c/.", "Document name \"projects/p1/databases/(default)/documents/c/.\" contains a resource id \".\" at index 44."),
        ("/./d", "Document name \"projects/p1/databases/(default)/documents/./d\" contains a collection id \".\" at index 42."),
        ("/c/d/../e", "Document name \"projects/p1/databases/(default)/documents/c/d/../e\" contains a collection id \"..\" at index 46."),
        ("/c/__x__", "Resource id \"__x__\" is invalid because it is reserved."),
        ("/__x__/d", "Collection id \"__x__\" is invalid because it is reserved."),
        ("/c/__id0__", "Resource id \"__id0__\" is invalid because it is reserved."),
        ("/c/__id05__", "Resource id \"__id05__\" is invalid because it is reserved."),
        ("/c/__id+5__", "Resource id \"__id+5__\" is invalid because it is reserved."),
        ("/c/__id-0__", "Resource id \"__id-0__\" is invalid because it is reserved."),
        ("/c/__id9223372036854775808__", "Resource id \"__id9223372036854775808__\" is invalid because it is not a 64 bit integer."),
        ("/c/__id-9223372036854775809__", "Resource id \"__id-9223372036854775809__\" is invalid because it is not a 64 bit integer."),
        ("/__id5__/d", "Collection id \"__id5__\" is invalid because it is reserved."),
        ("/c/__id5__/__id6__/d", "Collection id \"__id6__\" is invalid because it is reserved."),
        ("/c/" + String(repeating: "a", count: 1501), "The key path element name is longer than 1500 bytes."),
        ("/" + String(repeating: "a", count: 1501) + "/d", "The key path element kind is longer than 1500 bytes."),
        // Positions count UTF-16 units, as the reference's do: é is one, 😀 two.
        ("/é/d/s", "Document name \"projects/p1/databases/(default)/documents/é/d/s\" lacks \"/\" at index 47."),
        ("/😀/d/s", "Document name \"projects/p1/databases/(default)/documents/😀/d/s\" lacks \"/\" at index 48."),
        ("/é//d", "Document name \"projects/p1/databases/(default)/documents/é//d\" lacks a resource id at index 44."),
        ("x/c/d", "Document name \"projects/p1/databases/(default)/documentsx/c/d\" lacks \"/\" at index 41."),
        // A combining mark after the word is read past it too, as by bytes.
        ("\u{301}/c/d", "Document name \"projects/p1/databases/(default)/documents\u{301}/c/d\" lacks \"/\" at index 41."),
        ("/😀/./d", "Document name \"projects/p1/databases/(default)/documents/😀/./d\" contains a resource id \".\" at index 45."),
    ])
    func rejectsBadDocumentNames(suffix: String, message: String) {
        #expect(throws: FlintError.invalidArgument(message)) {
            try ResourceName.parseDocument(Self.root + suffix)
        }
    }

    /// Names only looked up or deleted may hold ids of any length; the other checks stay.
    @Test func lookupsLeaveIDLengthsUnchecked() throws {
        let long = String(repeating: "a", count: 1501)
        let (_, key) = try ResourceName.parseDocument(Self.root + "/\(long)/d/c/\(long)", checkingIDLengths: false)
        #expect(key.path.segments == [long, "d", "c", long])
        #expect(throws: FlintError.invalidArgument("Resource id \"__x__\" is invalid because it is reserved.")) {
            try ResourceName.parseDocument(Self.root + "/\(long)/__x__", checkingIDLengths: false)
        }
    }

    /// A literal element is read as a prefix: what follows it should have been a "/".
    @Test(arguments: [
        ("projectsx/p/databases/d/documents/c/d", "lacks \"/\" at index 8."),
        ("projects/p/databasesx/d/documents/c/d", "lacks \"/\" at index 20."),
        ("projects/p/databas/d/documents/c/d", "lacks \"databases\" at index 11."),
    ])
    func literalsFollowedByMoreLackASlash(name: String, problem: String) {
        #expect(throws: FlintError.invalidArgument("Document name \"\(name)\" \(problem)")) { try ResourceName.parseDocument(name) }
    }

    @Test func dotsNameNoProjectOrDatabase() {
        #expect(throws: FlintError.invalidArgument("Document name \"projects/../databases/(default)/documents/c/d\" contains a project id \"..\" at index 9.")) {
            try ResourceName.parseDocument("projects/../databases/(default)/documents/c/d")
        }
        #expect(throws: FlintError.invalidArgument("Database name \"projects/p/databases/.\" contains a database id \".\" at index 21.")) {
            try ResourceName.parseDatabase("projects/p/databases/.")
        }
        #expect(throws: FlintError.invalidArgument("Document parent name \"projects/p/databases/../documents\" contains a database id \"..\" at index 21.")) {
            try ResourceName.parseParent("projects/p/databases/../documents")
        }
    }

    @Test func acceptsLongestIDAndRejectsOversizedNames() throws {
        _ = try ResourceName.parseDocument(Self.root + "/c/" + String(repeating: "a", count: 1500))
        let big = (0..<5).map { _ in "c/" + String(repeating: "a", count: 1400) }.joined(separator: "/")
        let error = #expect(throws: FlintError.self) { try ResourceName.parseDocument(Self.root + "/" + big) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("longer than 6144 bytes") == true)
    }

    @Test func rejectsNamesOutsideDocuments() {
        for bad in ["projects/p/databases/d", "projects//databases/d/documents/c/a", "users/alice", "projects/p/dbs/d/documents"] {
            let error = #expect(throws: FlintError.self) { try ResourceName.parseDocument(bad) }
            #expect(error?.code == .invalidArgument)
        }
    }

    @Test func parentsAreRootOrDocuments() throws {
        #expect(try ResourceName.parseParent(Self.root).1 == .root)
        #expect(try ResourceName.parseParent(Self.root + "/a/b").1.segments == ["a", "b"])
        #expect(throws: FlintError.self) { try ResourceName.parseParent(Self.root + "/a") }
    }

    @Test func idValidation() {
        #expect(throws: FlintError.invalidArgument("Resource id \"a/b\" is invalid because it contains \"/\".")) {
            try Validation.validateDocumentID("a/b")
        }
        #expect(throws: FlintError.invalidArgument("Collection id \"..\" is invalid because it is reserved.")) { try Validation.validateCollectionID("..") }
        #expect(throws: FlintError.invalidArgument("Resource id \".\" is invalid because it is reserved.")) { try Validation.validateDocumentID(".") }
        #expect(throws: FlintError.self) { try Validation.validateDocumentID("") }
        #expect(Validation.isReserved("__a__"))
        #expect(Validation.isReserved("_____"))
        // `__` then `__` with nothing between is an ordinary name on the reference.
        #expect(!Validation.isReserved("____"))
        #expect(!Validation.isReserved("__a"))
        #expect(!Validation.isReserved("___"))
    }

    /// Numeric ids (`__id<n>__`, kept from Datastore) are document ids the reference accepts.
    @Test func numericDocumentIDsAreAccepted() throws {
        for id in ["__id5__", "__id-3__", "__id-9223372036854775808__", "__id9223372036854775807__"] {
            let (_, key) = try ResourceName.parseDocument(Self.root + "/c/" + id)
            #expect(key.documentID == id)
            #expect(try DocumentKey(parsing: "c/" + id + "/s/x").path.count == 4)
        }
        #expect(NumericID.parse("__id-9223372036854775808__") == .valid(Int64.min))
        #expect(NumericID.parse("__id12__") == .valid(12))
        #expect(NumericID.parse("__idx__") == .notNumeric)
        #expect(NumericID.parse("__id__") == .notNumeric)
        #expect(NumericID.parse("__id-__") == .notNumeric)
        #expect(NumericID.parse("__id99999999999999999999__") == .outOfRange)
        #expect(NumericID.value("id5") == nil)
        #expect(throws: FlintError.invalidArgument("Collection id \"__id5__\" is invalid because it is reserved.")) {
            try Validation.validateCollectionID("__id5__")
        }
    }

    /// Numeric ids sort before every other id, by value, as the reference orders them.
    @Test func numericIDsSortFirstByValue() {
        let ids = ["0", "__id-9223372036854775808__", "A", "__id5__", "__idx", "__id-3__", "\u{0}", "__id40__", "z"]
        let sorted = ids.sorted { compareSegments($0, $1) < 0 }
        #expect(sorted == ["__id-9223372036854775808__", "__id-3__", "__id5__", "__id40__", "\u{0}", "0", "A", "__idx", "z"])
        let keys = ids.map(DocumentIDKey.init).sorted()
        #expect(keys.map(\.string) == sorted)
        // The prefix never contradicts the order.
        for a in keys { for b in keys where a.prefix < b.prefix { #expect(a < b) } }
        #expect(ResourcePath(["c", "__id40__"]) < ResourcePath(["c", "0"]))
        #expect(ResourcePath(["c", "__id5__"]) < ResourcePath(["c", "__id40__"]))
        #expect(ResourcePath(["a", "__id-9223372036854775808__"]) < ResourcePath(["a", "0", "s", "x"]))
        #expect(ResourcePath(["a", "z", "s", "x"]) < ResourcePath(["a\u{0}", "__id-9223372036854775808__"]))
        #expect(ResourcePath(["a\u{0}", "__id-9223372036854775808__"]) < ResourcePath(["ab", "0"]))
    }

    @Test func pathsCompareBySegmentsAndUTF8() {
        let a = ResourcePath(["c", "a"])
        let aSub = ResourcePath(["c", "a", "s", "x"])
        let b = ResourcePath(["c", "b"])
        #expect(a < aSub && aSub < b)
        #expect(a.isPrefix(of: aSub) && !b.isPrefix(of: aSub))
        #expect(ResourcePath(["\u{e9}"]) != ResourcePath(["e\u{301}"]))
        #expect(Set([ResourcePath(["\u{e9}"]), ResourcePath(["e\u{301}"])]).count == 2)
    }

    @Test(arguments: [
        ("a", ["a"]), ("a.b", ["a", "b"]), ("_x9.Y", ["_x9", "Y"]), ("`a.b`.c", ["a.b", "c"]),
        ("`a\\`b`", ["a`b"]), ("`a\\\\b`", ["a\\b"]), ("`9`", ["9"]), ("`\u{e9}`", ["\u{e9}"]), ("__name__", ["__name__"]),
        // C-style escapes, read into the fields the reference stores for them.
        ("`a\\nb`", ["a\nb"]), ("`\\a\\b\\f\\r\\t\\v\\?\\'\\\"`", ["\u{7}\u{8}\u{c}\r\t\u{b}?'\""]),
        ("`\\x41\\X42\\x2e`", ["AB."]), ("`\\101\\000\\377`", ["A\u{0}\u{ff}"]), ("`\\u00e9`.b", ["\u{e9}", "b"]),
        ("`\\uD83D\\uDE00`", ["\u{1F600}"]), ("`\\U0001F600\\U0010FFFF`", ["\u{1F600}\u{10FFFF}"]),
        ("`\\U0000D83D\\uDE00`", ["\u{1F600}"]), ("`a\\uDE00`", ["a?"]), ("`\\uD83Dc`", ["?c"]),
        ("`\\uD83D\\uD83D\\uDE00`", ["?\u{1F600}"]), ("`\\x5f_x__`", ["__x__"]),
    ])
    func parsesFieldPaths(text: String, segments: [String]) throws {
        let path = try FieldPath(parsing: text)
        #expect(path.segments == segments)
        #expect(try FieldPath(parsing: path.canonical) == path)
    }

    /// `__key__`, the reference's word for a document's name, is refused as soon as the segment
    /// is read, before a later segment's syntax; an earlier segment's syntax comes first.
    @Test func theReferencesKeyNameIsRefusedAsItIsRead() {
        for text in ["__key__", "`__key__`", "__key__.`\\12`", "a.__key__.", "`__key__`.a-b", "__key__.``", "__key__-x", "a.__key__ b"] {
            #expect(throws: FlintError.invalidArgument("Invalid property path member name \"__key__\"."), "\(text)") { try FieldPath(parsing: text) }
        }
        for text in [".__key__", "a.`\\12`.__key__", "__key__x.a-b"] {
            #expect(throws: FlintError.invalidArgument(
                "Invalid property path \"\(text)\". Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match regex (`(?:[^`\\\\]|(?:\\\\.))+`)"
            ), "\(text)") { try FieldPath(parsing: text) }
        }
    }

    @Test func anEmptyFieldPathIsNamedSo() {
        #expect(throws: FlintError.invalidArgument("Invalid empty property path string.")) { try FieldPath(parsing: "") }
    }

    @Test(arguments: [
        "a.", ".a", "a..b", "9a", "a-b", "`a", "``", "a.`b", "`a`b", "\u{e9}",
        // Escapes the reference does not read.
        "`a\\q`", "`\\e`", "`\\s`", "`\\x4`", "`\\x4G`", "`\\xg0`", "`\\u00`", "`\\u12G4`", "`\\12`", "`\\400`", "`\\08`",
        "`\\U00110000`", "`\\\u{e9}`", "`\\.`", "`\\`", "`a\\`",
    ])
    func rejectsBadFieldPaths(text: String) {
        #expect(
            throws: FlintError.invalidArgument(
                "Invalid property path \"\(text)\". Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match regex (`(?:[^`\\\\]|(?:\\\\.))+`)"
            )
        ) { try FieldPath(parsing: text) }
    }

    /// Production's 1,500-byte field path limit, measured as the reference measures it: the
    /// segments' UTF-8 bytes joined by dots, quoting and escapes not counted, under 1,500.
    @Test func fieldPathsStayUnderFifteenHundredBytes() throws {
        let a = { (n: Int) in String(repeating: "a", count: n) }
        let accepted = [a(1499), a(749) + "." + a(749), "`" + a(1497) + "\\``", "`" + String(repeating: "\u{e9}", count: 749) + "`"]
        for text in accepted { _ = try FieldPath(parsing: text) }
        let refused = [a(1500), a(749) + "." + a(750), "`" + a(1500) + "`", "`" + String(repeating: "\u{e9}", count: 750) + "`"]
        for text in refused {
            #expect(throws: FlintError.invalidArgument("property path is longer than 1500 bytes.")) { try FieldPath(parsing: text) }
        }
        #expect(try FieldPath(parsing: a(1500), maxBytes: 1500).segments == [a(1500)])
    }

    @Test func canonicalQuotesOnlyWhenNeeded() throws {
        #expect(try FieldPath(["a", "b.c", "d`e", "f\\g", "1"]).canonical == "a.`b.c`.`d\\`e`.`f\\\\g`.`1`")
    }

    @Test func orderingListSyntax() throws {
        let list = try Ordering.parseList("priority desc, name,  `a.b` asc")
        #expect(list == [
            Ordering(try FieldPath(parsing: "priority"), descending: true),
            Ordering(try FieldPath(parsing: "name")),
            Ordering(try FieldPath(["a.b"])),
        ])
        #expect(throws: FlintError.invalidArgument("Invalid order by clause \"n sideways\".")) {
            try Ordering.parseList("n sideways")
        }
        // As the reference emulator reads them: backquotes keep spaces and commas, spaces may
        // trail but not lead, and a fault names the whole list.
        #expect(try Ordering.parseList("`a b,c` DESC ,b\tdesc ") == [
            Ordering(try FieldPath(["a b,c"]), descending: true), Ordering(try FieldPath(["b"]), descending: true),
        ])
        for bad in ["a,,b", ",a", "a,", " a", "a,1b", "a desc x", "`a"] {
            #expect(throws: FlintError.invalidArgument("Invalid order by clause \"\(bad)\".")) { try Ordering.parseList(bad) }
        }
    }

    /// The reference emulator's messages for names wrong in each of their elements.
    @Test(arguments: [
        ("", "Document name \"\" lacks \"projects\" at index 0."),
        ("projects", "Document name \"projects\" lacks \"/\" at index 8."),
        ("projects/", "Document name \"projects/\" has invalid trailing \"/\"."),
        ("projects//databases/d/documents/c/a", "Document name \"projects//databases/d/documents/c/a\" lacks a project id at index 9."),
        ("projects/p/databasez/d/documents/c/a", "Document name \"projects/p/databasez/d/documents/c/a\" lacks \"databases\" at index 11."),
        ("projects/p/databases//documents/c/a", "Document name \"projects/p/databases//documents/c/a\" lacks a database id at index 21."),
        ("projects/p/databases/d", "Document name \"projects/p/databases/d\" lacks \"/\" at index 22."),
        ("projects/p/databases/d/documentz/c/a", "Document name \"projects/p/databases/d/documentz/c/a\" lacks \"documents\" at index 23."),
        ("projects/p/databases/d/documents",
         "Document name \"projects/p/databases/d/documents\" is invalid: Omit \"/documents\" when referencing a database (except as the parent of a document)."),
        ("projects/p/databases/d/documents/", "Document name \"projects/p/databases/d/documents/\" is invalid: Omit trailing \"/\"."),
        ("projects/p/databases/d/documents//a", "Document name \"projects/p/databases/d/documents//a\" lacks a collection id at index 33."),
        ("projects/p/databases/d/documents/c/a/", "Document name \"projects/p/databases/d/documents/c/a/\" has invalid trailing \"/\"."),
    ])
    func namesAreCheckedElementByElement(name: String, message: String) {
        #expect(throws: FlintError.invalidArgument(message)) { try ResourceName.parseDocument(name) }
    }

    /// Database and parent names, as the reference words their faults.
    @Test func databaseAndParentNames() throws {
        #expect(try ResourceName.parseDatabase("projects/p/databases/d") == DatabaseID(project: "p", database: "d"))
        let faults = [
            ("", "Database name \"\" lacks \"projects\" at index 0."),
            ("projects/p", "Database name \"projects/p\" lacks \"/\" at index 10."),
            ("projects/p/databases/", "Database name \"projects/p/databases/\" has invalid trailing \"/\"."),
            ("projects/p/databases/d/", "Database name \"projects/p/databases/d/\" has invalid trailing \"/\"."),
            ("projects/p/databases/d/documents", "Database name \"projects/p/databases/d/documents\" has extra characters at index 22."),
        ]
        for (name, message) in faults {
            #expect(throws: FlintError.invalidArgument(message)) { try ResourceName.parseDatabase(name) }
        }
        #expect(throws: FlintError.invalidArgument("Document parent name \"projects/p/databases/d/documents/c\" lacks \"/\" at index 34.")) {
            try ResourceName.parseParent("projects/p/databases/d/documents/c")
        }
    }

    @Test func referenceValuesHaveMessagesOfTheirOwn() {
        #expect(throws: FlintError.invalidArgument("Non-document resource reference value not supported.")) {
            try ResourceName.parseDocument("projects/p/databases/d", reference: true)
        }
        #expect(throws: FlintError.invalidArgument("Resource \"projects/p/databases/d/documentz\" is not recognized.")) {
            try ResourceName.parseDocument("projects/p/databases/d/documentz", reference: true)
        }
        #expect(throws: FlintError.invalidArgument("Resource name \"nope\" lacks \"projects\" at index 0.")) {
            try ResourceName.parseDocument("nope", reference: true)
        }
        // Nothing where `documents` goes is no resource either, unless it is a trailing `/`.
        for tail in ["//c/d", "//", "//c"] {
            #expect(throws: FlintError.invalidArgument("Resource \"projects/p/databases/d\(tail)\" is not recognized.")) {
                try ResourceName.parseDocument("projects/p/databases/d" + tail, reference: true)
            }
        }
        #expect(throws: FlintError.invalidArgument("Resource name \"projects/p/databases/d/\" has invalid trailing \"/\".")) {
            try ResourceName.parseDocument("projects/p/databases/d/", reference: true)
        }
    }
}
