import FlintModel
import Testing

@testable import FlintStore

/// The key text of the reference's "Invalid base version" message; every expected string here
/// is what the reference emulator printed for the same key.
struct EntityKeyTextTests {
    static func text(_ path: String, database: String = "(default)") throws -> String {
        EntityKeyText.of(try DocumentKey(parsing: path), in: DatabaseID(project: "pp", database: database))
    }

    @Test func elementsFollowThePathAndANamedDatabaseComesLast() throws {
        #expect(try Self.text("c/a/sub/b") == """
            app: "dev~pp"
            path <
              Element {
                type: "c"
                name: "a"
              }
              Element {
                type: "sub"
                name: "b"
              }
            >

            """)
        #expect(try Self.text("c/a", database: "named-db").hasSuffix(">\ndatabase_id: \"named-db\"\n"))
    }

    @Test(arguments: [
        ("__id5__", "id: 5"), ("__id-1__", "id: -1"), ("__id1999999999__", "id: 1999999999"),
        ("__id2000000000__", "id: 0x77359400"), ("__id-2000000000__", "id: 0xffffffff88ca6c00"),
        ("__id-1999999999__", "id: -1999999999"), ("__id9223372036854775807__", "id: 0x7fffffffffffffff"),
        ("__id-9223372036854775808__", "id: 0x8000000000000000"),
    ])
    func numericIDsArePrintedAsIntegers(id: String, line: String) throws {
        #expect(try Self.text("c/" + id).contains("\n    \(line)\n"))
    }

    @Test(arguments: [
        ("é \"q\"", #"\351 \"q\""#), ("€", #"\u20ac"#), ("😀", #"\ud83d\ude00"#), ("\u{1}\u{7F}", #"\001\177"#),
        ("a\tb\\", #"a\tb\\"#), ("'\r\u{7}\u{8}\u{C}\u{B}\u{80}?", #"'\r\007\b\f\013\200?"#), ("a\nb", #"a\nb"#),
    ])
    func namesAreEscapedPerUTF16Unit(id: String, escaped: String) throws {
        #expect(try Self.text("c/" + id).contains("\n    name: \"\(escaped)\"\n"))
    }
}
