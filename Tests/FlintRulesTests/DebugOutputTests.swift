@testable import FlintRules
import Testing

/// What `debug()` records, against the reference emulator's log for the same expressions: the
/// same protobuf text, gathered onto one line.
struct DebugOutputTests {
    static func recorded(_ source: String) -> [String] {
        var parser = Parser(source)
        guard let expr = try? parser.expression(), !parser.diagnostics.hasErrors else { return ["parse error"] }
        let ruleset = Ruleset(version: 2, functions: [], services: [], ranges: parser.ranges, source: source)
        let evaluator = Evaluator(ruleset: ruleset, reader: NoDocuments(), maxReads: 10)
        _ = evaluator.evaluate(expr, Scope(parent: nil, variables: [("request", .map(["auth": .null])), ("resource", .null)]))
        return evaluator.debugLog
    }

    static let cases: [(String, String)] = [
        (#"debug('a"b')"#, #"string_value: "a\"b""#),
        (#"debug('back\\slash')"#, #"string_value: "back\\slash""#),
        (#"debug('nl\nx')"#, #"string_value: "nl\nx""#),
        (#"debug('it\'s')"#, #"string_value: "it\'s""#),
        (#"debug('bell\x07')"#, #"string_value: "bell\a""#),
        ("debug('\u{e9}')", "string_value: \"\u{e9}\""),
        ("debug(-3)", "int_value: -3"),
        ("debug(100000000.0)", "float_value: 1.0E8"),
        ("debug(-0.0)", "float_value: -0.0"),
        ("debug(null)", "null_value: NULL_VALUE"),
        ("debug([])", "list_value { }"),
        ("debug([[1], []])", "list_value { values { list_value { values { int_value: 1 } } } values { list_value { } } }"),
        ("debug({'b': 1, 'a': [true]})",
         #"map_value { fields { key: "a" value { list_value { values { bool_value: true } } } } fields { key: "b" value { int_value: 1 } } }"#),
        ("debug({'': 1})", #"map_value { fields { key: "" value { int_value: 1 } } }"#),
        ("debug([1, 2].toSet())", "set_value { values { int_value: 1 } values { int_value: 2 } }"),
        ("debug({'a': 1, 'b': 2, 'c': 3}.diff({'a': 2, 'c': 3, 'd': 4}))",
         #"map_diff_value { key_statuses { key: "a" value: CHANGED } key_statuses { key: "b" value: ADDED } key_statuses { key: "c" value: UNCHANGED } key_statuses { key: "d" value: REMOVED } }"#),
        ("debug(timestamp.value(0))", "timestamp_value { }"),
        ("debug(timestamp.date(2020, 1, 1))", "timestamp_value { seconds: 1577836800 }"),
        ("debug(duration.value(-1500, 'ms'))", "duration_value { seconds: -1 nanos: -500000000 }"),
        ("debug(duration.value(0, 's'))", "duration_value { }"),
        ("debug(latlng.value(-1.5, 0))", "latlng_value { latitude: -1.5 }"),
        ("debug(latlng.value(1, 2))", "latlng_value { latitude: 1.0 longitude: 2.0 }"),
        (#"debug(b'\x01\xff')"#, #"bytes_value: "\001\377""#),
        ("debug(b'abc')", #"bytes_value: "abc""#),
        ("debug(/databases/x/documents/a)",
         #"path_value { segments { simple: "databases" } segments { simple: "x" } segments { simple: "documents" } segments { simple: "a" } }"#),
        // Several values: the reference logs the first only.
        ("debug(1, 'two')", "int_value: 1"),
    ]

    /// Vectors come only from documents, so they are written directly.
    @Test func vectorsPrintTheirValues() {
        #expect(Stdlib.debugDescription(.vector([1, 2.5])) == "vector_value { values { float_value: 1.0 } values { float_value: 2.5 } }")
        #expect(Coverage.json(.vector([1, 2.5])) == #"{"vectorValue":{"values":[{"floatValue":1.0},{"floatValue":2.5}]}}"#)
    }

    @Test(arguments: cases.indices) func printsWhatTheReferencePrints(_ i: Int) {
        let (source, expected) = Self.cases[i]
        #expect(Self.recorded(source) == [expected], "\(source)")
    }
}
