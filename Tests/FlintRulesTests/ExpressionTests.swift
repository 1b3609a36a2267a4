@testable import FlintRules
import Testing

/// Evaluates one expression with `request` and `resource` bound, as an allow condition would.
func evaluate(_ source: String, request: RulesValue = .map(["auth": .null]), reader: any DocumentReader = NoDocuments()) -> RulesValue {
    var parser = Parser(source)
    guard let expr = try? parser.expression(), !parser.diagnostics.hasErrors else {
        return .error("parse error: \(parser.diagnostics.sorted.map(\.description))")
    }
    let ruleset = Ruleset(version: 2, functions: [], services: [], ranges: parser.ranges, source: source)
    let evaluator = Evaluator(ruleset: ruleset, reader: reader, maxReads: 10)
    return evaluator.evaluate(expr, Scope(parent: nil, variables: [("request", request), ("resource", .null)]))
}

struct NoDocuments: DocumentReader {
    func document(at path: RulesPath, afterWrites: Bool) -> RulesValue? { nil }
}

/// `true` for expressions the reference emulator evaluates to true.
private let truths: [String] = [
    "-9223372036854775807 - 1 == -9223372036854775808",
    "'\\u00e9'.size() == 1",
    "1 == 1.0", "!({'a': 1} == {'a': 1.0})", "!([1, 2].toSet() == [1, 2])", "!(1 == '1')", "!(true == 1)",
    "'A' < 'a'", "'' < 'a'", "null == null", "null != 1",
    "-5 / 2 == -2", "-7 / 2 == -3", "-5 % 3 == -2", "5 % -3 == 2", "10 / 4.0 == 2.5", "!(1.0 / 0.0 == 1.0)",
    "(1 / 0 == 1) || true", "true || (1 / 0 == 1)", "!((1 / 0 == 1) && false)", "!(false && (1 / 0 == 1))",
    "true ? true : (1 / 0 == 1)", "!true == false", "'a' in {'a': null}", "!('toString' in {'a': 1})",
    "2 in [1, 2]", "(2 in [1, 2]) == true", "!(1 is float)", "!(1.0 is int)", "1 is number", "1.5 is number",
    "!([1].toSet() is set)", "!([1].toSet() is list)", "'a' is string", "{} is map", "[] is list",
    "{'a': null}.a == null", "[1, 2, 3][1:3] == [2, 3]", "[1, 2, 3][1:1] == []", "'abc'[2:3] == 'c'", "'abc'[1] == 'b'",
    "int('12') == 12", "int('-3') == -3", "int(1.9) == 1", "int(-1.9) == -1", "float('1.5') == 1.5", "float(1) == 1.0",
    "'  a  '.trim() == 'a'", #"'\u000ba\u000c'.trim() == 'a'"#, #"'\u0000a\u001f'.trim() == 'a'"#, #"'\u00a0a'.trim() == '\u00a0a'"#, "'AbC'.lower() == 'abc'", "'é'.upper() == 'é'",
    "!('hello world'.matches('world'))", "'hello world'.matches('.*world')", "'ABC'.matches('(?i)abc')",
    "!('a\\nb'.matches('a.b'))", "'a\\nb'.matches('(?s)a.b')", "'user@acme.com'.matches('.*@acme\\\\.com')",
    "'héllo'.matches('\\\\p{L}+')", "'ab1'.matches('[[:alpha:]]+[0-9]')", "'aaa'.matches('a{2,3}')", "!('aaaa'.matches('a{2,3}'))",
    // A form feed separates tokens as a space does.
    "1 ==\u{0C}1",
    // `[:` with no `:]` after it is no named class: `[` and `:` are themselves, as in RE2.
    "'a'.matches('[[:a]')", "'['.matches('[[:a]')", "':'.matches('[[:a]')", "'a'.matches('[[:alpha]')", "'a]'.matches('[[:a]]')",
    "!(']'.matches('[[:a]]'))", "'[:a'.matches('[[:a]+')", "!('a'.matches('[[:^]'))", "'5'.matches('[a[:digit:]b]')",
    "'('.matches('[\\\\(]')", "'()'.matches('[(a)]+')", "!('('.matches('[(][)]'))",
    "'abc'.replace('(a)(b)', '$2$1') == 'bac'", "'a'.replace('a', '$0$0') == 'aa'", "'foo@test.com'.replace('.', '-') == '------------'",
    "'a/b/c'.split('/') == ['a', 'b', 'c']", "'a'.split(',') == ['a']",
    "string(2.0) == '2.0'", "string(null) == 'null'", "string(path('/a/b')) == '/a/b'", "string(true) == 'true'", "string(7) == '7'",
    "b'\\xFB\\xEF\\xBE'.toBase64() == '----'", "'ab'.toUtf8().toBase64() == 'YWI='", "b'\\x2A'.toHexString() == '2A'",
    "b'*' == b'\\x2A'", "b'\\052' == b'*'", "b'a' < b'b'",
    "[1, 2].hasAll([])", "!([].hasAny([1]))", "['a', 'b'].hasOnly(['b', 'a'])", "['a', 'a', 'b'].hasOnly(['a', 'b', 'b', 'c'])",
    "[1, 2].join(',') == '1,2'", "[1, 2, 2].removeAll([2]) == [1]", "[1].concat([1]) == [1, 1]", "[1, 1, 2].toSet().size() == 2",
    "{'b': 2, 'a': 1}.keys() == ['a', 'b']", "{'a': 1, 'b': 2}.values() == [1, 2]", "{'a': {'b': 1}}.get(['a', 'b'], 7) == 1",
    "{'a': 1}.get('x', 7) == 7", "{'a': 1}.get(['a', 'b'], 7) == 7", "{'a': null}.get('a', 7) == null",
    "{'a': 1, 'b': 2}.diff({'a': 1, 'c': 3}).addedKeys() == ['b'].toSet()",
    "{'a': 1, 'b': 2}.diff({'a': 1, 'c': 3}).removedKeys() == ['c'].toSet()",
    "{'a': 1, 'b': 2}.diff({'a': 9, 'b': 2}).changedKeys() == ['a'].toSet()",
    "{'a': 1, 'b': 2}.diff({'a': 9, 'b': 2}).unchangedKeys() == ['b'].toSet()",
    "{'a': 1, 'b': 2}.diff({'a': 9, 'c': 2}).affectedKeys().hasOnly(['a', 'b', 'c'])",
    "['a', 'b'].toSet().difference(['a', 'c'].toSet()) == ['b'].toSet()",
    "['a'].toSet().union(['b'].toSet()) == ['b', 'a'].toSet()", "['a', 'b'].toSet().intersection(['b'].toSet()) == ['b'].toSet()",
    "['a', 'b'].toSet().hasAll(['a'])", "'a' in ['a'].toSet()",
    "path('/a/{x}').bind({'x': 'b'}) == path('/a/b')", "path('/a/b')[0] == 'a'", "path('users/alice') == path('/users/alice')",
    "/databases/$('(default)')/documents/users/$(1) == path('/databases/(default)/documents/users/1')",
    "timestamp.date(2020, 1, 2).dayOfWeek() == 4", "timestamp.date(2020, 3, 1).dayOfYear() == 61",
    "timestamp.value(1500).toMillis() == 1500", "timestamp.date(2020, 1, 2).year() == 2020",
    "timestamp.value(90061000).hours() == 1", "timestamp.value(90061000).minutes() == 1", "timestamp.value(90061000).seconds() == 1",
    "timestamp.value(90061000).date() == timestamp.date(1970, 1, 2)", "timestamp.value(90061000).time() == duration.value(3661, 's')",
    "timestamp.date(2020, 1, 2) + duration.value(1, 'd') == timestamp.date(2020, 1, 3)",
    "timestamp.date(2020, 1, 3) - timestamp.date(2020, 1, 2) == duration.value(24, 'h')",
    "timestamp.date(2020, 1, 3) > timestamp.date(2020, 1, 2)",
    "duration.time(1, 2, 3, 4).seconds() == 3723", "duration.time(1, 2, 3, 4).nanos() == 4",
    "duration.abs(duration.value(-5, 's')) == duration.value(5, 's')", "duration.value(1, 'm') < duration.value(61, 's')",
    "latlng.value(1, 2).latitude() == 1.0", "latlng.value(0, 0).distance(latlng.value(1, 0)) > 111000",
    "latlng.value(0, 0).distance(latlng.value(1, 0)) < 112000",
    "math.abs(-1) == 1", "math.abs(-1) is int", "math.ceil(1.2) == 2", "math.ceil(1.2) is float", "math.floor(1.8) is float",
    "math.round(2.5) == 3", "math.round(-1.5) == -1", "math.round(-1.6) == -2", "math.isNaN(math.sqrt(-1.0))", "math.pow(2, 10) == 1024",
    "hashing.crc32('abc').toHexString() == 'C2412435'", "hashing.crc32c('abc').toHexString() == 'B73F4B36'",
    "hashing.md5('abc').toHexString() == '900150983CD24FB0D6963F7D28E17F72'",
    "hashing.sha256('abc').toHexString() == 'BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD'",
    "debug(1) == 1", "'auth' in request", "!('resource' in request)", "request.auth == null",
]

/// Expressions that are errors on the reference emulator, with the error text where known.
private let errors: [(String, String?)] = [
    ("1 / 0", "Divide by zero error."), ("1 % 0", "Divide by zero error."), ("9223372036854775807 + 1", nil),
    ("'a' + 1", nil), ("[1] + [2]", nil), ("null + 1", nil), ("true < false", nil), ("null < 1", nil),
    ("[1] < [2]", nil), ("1 < 'a'", nil), ("1 && true", nil), ("!1", nil), ("1 ? true : false", nil), ("!null", nil),
    ("(1 / 0 == 1) || false", "Divide by zero error."), ("(1 / 0 == 1) && true", "Divide by zero error."),
    ("'x' in path('/a')", nil), ("{}.a", "Property a is undefined on object."), ("null.a", "Null value error."),
    ("request.auth.uid", "Null value error."), ("[1, 2, 3, 4][98]", "Index out of bound error. Index: [98] , size: [4]."),
    // Slices, with the reference emulator's messages: the first index, then the last (j - 1), then the order.
    ("[1, 2, 3][0:0]", "Index out of bound error. Index: [-1] , size: [3]."), ("[1, 2, 3][3:3]", "Index out of bound error. Index: [3] , size: [3]."),
    ("[1, 2, 3][2:1]", "Illegal range error. From index: [2] , To index: [1]."), ("[1, 2, 3][1:5]", "Index out of bound error. Index: [4] , size: [3]."),
    ("[1, 2, 3][-1:1]", "Index out of bound error. Index: [-1] , size: [3]."), ("[1, 2, 3][3:]", "Index out of bound error. Index: [3] , size: [3]."),
    ("[1, 2, 3][:0]", "Index out of bound error. Index: [-1] , size: [3]."), ("'abc'[0:0]", "Index out of bound error. Index: [-1] , size: [3]."),
    ("''[0:0]", nil), ("[1][:-9223372036854775808]", nil), ("(0 % 0.0) >= '10'", nil),
    ("float('inf')", nil), ("float('nan')", nil), ("int('1_000')", nil),
    ("timestamp.value(253402300800000)", "Timestamp is not valid. Seconds must be in range [-62,135,596,800, +253,402,300,799]. Nanos must be in range [0, +999,999,999]."),
    ("timestamp.date(9999, 12, 31) + duration.value(1, 'd')", "Timestamp is not valid. Seconds must be in range [-62,135,596,800, +253,402,300,799]. Nanos must be in range [0, +999,999,999]."),
    ("'abc'.replace('b', '$1')", "No group 1 in regular expression \"b\" for replacement \"$1\"."),
    ("'abc'.replace('(b)', '${m}')", "No group <m> in regular expression \"(b)\" for replacement \"${m}\"."), ("int('12abc')", nil), ("int(' 12 ')", nil), ("int('')", nil), ("int('0x10')", nil), ("int(true)", nil),
    ("float('abc')", nil), ("string([1])", nil), ("string({})", nil), ("string(timestamp.value(0))", nil),
    ("bool('true')", "Function not found error: Name: [bool]."), ("bytes('a')", nil),
    ("math.isInfinite(1.0)", "Function not found error: Name: [math.isInfinite]."),
    ("{'a': 1}.keys().difference(['a'])", "Function not found error: Name: [difference]."),
    ("['a'].toSet().difference(['a'])", "Unsupported operation error. Received: set.difference(list). Expected: set.difference(set)."),
    ("['a'].toSet().toSet()", nil), ("{'a': 1}.hasAll(['a'])", nil), ("path(path('/a'))", nil), ("path('/a') < path('/b')", nil),
    ("path('/a/b').bind({'x': 'b'})", nil), ("timestamp.date(2020, 13, 1)", nil), ("timestamp.date(2019, 2, 29)", nil),
    ("duration.value(1, 'x')", nil),
    // Every unescaped parenthesis is counted, in brackets too, as on the reference.
    ("'('.matches(['[(]'][0])", nil), ("'x(y'.replace('[(]', '-')", nil), ("'a'.matches(['\\\\Q(\\\\E'][0])", nil),
    ("latlng.value(-100, -122.08)", "Latitude should be in [-90,90] range and longitude should be in [-180,180] range. latitude: -100.0, longitude: -122.08."),
    ("'a'.matches('(')", nil), ("get(/databases/x)", nil),
]


/// More of the same, by area.
private let moreTruths: [String] = [
    // numbers
    "1 + 2 * 3 == 7", "(1 + 2) * 3 == 9", "7 % 3 == 1", "-7 % 3 == -1", "2.5 * 2 == 5", "1 / 2 == 0", "1.0 / 2 == 0.5",
    "-(-3) == 3", "3 - 5 == -2", "0.1 + 0.2 > 0.3", "1 < 1.5", "2 >= 2.0", "-1 < 0", "9223372036854775807 > 0",
    "int('9223372036854775807') == 9223372036854775807", "float('-0.5') == -0.5", "int(2.999) == 2", "float(3) / 2 == 1.5",
    "math.abs(-2.5) == 2.5", "math.floor(-1.5) == -2", "math.ceil(-1.5) == -1", "math.round(0.49) == 0", "math.sqrt(16) == 4",
    "math.pow(2, -1) == 0.5", "!math.isNaN(1.0)", "string(-1) == '-1'", "string(1.5) == '1.5'", "string(false) == 'false'",
    // strings
    "'abc' + 'def' == 'abcdef'", "'abc'.size() == 3", "''.size() == 0", "'😀'.size() == 2", "'abc'[0] == 'a'", "'abc'[0:1] == 'a'",
    "'abc' < 'abd'", "'Z' < 'a'", "'b' > 'a'", "'abc' >= 'abc'", "'a' in ['a', 'b']", "!('c' in ['a', 'b'])",
    "'Hello'.lower() == 'hello'", "'Hello'.upper() == 'HELLO'", "'a-b-c'.split('-').size() == 3", "'a1b2'.replace('[0-9]', '') == 'ab'",
    "'x'.toUtf8() == b'x'", "'é'.toUtf8().size() == 2", "'2020-01-01'.matches('^\\\\d{4}-\\\\d{2}-\\\\d{2}$')",
    "'abc'.matches('a(b|x)c')", "'ac'.matches('ab?c')", "'abbbc'.matches('ab+c')", "'ABC'.matches('[A-Z]+')",
    "!('abc'.matches('[^a-z]+'))", "'a b'.matches('a\\\\sb')", "'word1'.matches('\\\\w+')", "'tab\\there'.matches('tab\\\\there')",
    "'abc'.matches('(?:ab)c')", "'aaa'.matches('a*?a')", "'x.y'.matches('x\\\\.y')", "!('xzy'.matches('x\\\\.y'))",
    "'mañana'.matches('ma.ana')", "'ÀB'.matches('(?i)àb')", "'abc'.replace('b', 'X') == 'aXc'", "'aaa'.replace('a', 'b') == 'bbb'",
    // lists, sets, maps
    "[1, [2, 3]][1][0] == 2", "[] == []", "[1, 2] != [1]", "[1, 2].size() == 2", "[1, 2, 3].hasAny([3, 4])",
    "![1, 2, 3].hasAll([3, 4])", "[1, 2].toSet().hasAll([2].toSet())", "[1, 2].toSet() == [2, 1].toSet()", "[1, 1].toSet() == [1].toSet()",
    "[1.0].toSet() == [1].toSet()", "!(1 in [1.0])", "['b', 'a'].join('') == 'ba'", "[true, false].join('/') == 'true/false'",
    "{'a': 1}.size() == 1", "{} == {}", "{'a': {'b': 1}}.a.b == 1", "{'a': 1}['a'] == 1", "'a' in {'a': 1}.keys()",
    "{'a': 1, 'b': 2}.values().hasAll([1, 2])", "{'a': [1]} == {'a': [1]}", "{'a': 1} != {'b': 1}",
    "{'a': 1}.diff({}).addedKeys() == ['a'].toSet()", "{}.diff({'a': 1}).removedKeys() == ['a'].toSet()",
    "{'a': 1}.diff({'a': 1}).affectedKeys().size() == 0", "{'a': {'x': 1}}.diff({'a': {'x': 2}}).changedKeys() == ['a'].toSet()",
    // paths, timestamps, durations, latlng, bytes
    "path('/a/b/c')[2] == 'c'", "/a/b == path('/a/b')", "/a/$('b') == /a/b", "/a/$(path('b/c')) == path('/a/b/c')",
    // Spaces and comments may part `$` from its `(`, as on the reference.
    "/a/$ ('b') == /a/b", "/a/$\t('b')/c == /a/b/c", "/a/$\n /* c */ ('b') == /a/b",
    // A path goes on across spaces, line breaks and comments where a `/` has a segment right
    // after it, as on the reference; a `/` with a space after it divides.
    "/a/b /c == /a/b/c", "/a /b\n  /c == /a/b/c", "/a/b /* x */ /$('c') == /a/b/c", "/a/b /(d) == path('/a/b/(d)')",
    // An interpolation or a wildcard goes on a path even with spaces after the '/'.
    "/a/ $('b') == /a/b", "/a/b /\n  $('c') == /a/b/c", "(/a/ {x}).bind({'x': 'b'}) == /a/b",
    "string(/a/b / 2) == 'x' || true",
    // A `/` before what cannot start a path segment divides, as on the reference.
    "4/((2)) == 2", "4/[2][0] == 2", "4/{'a': 2}.a == 2", "8/((2))/((2)) == 2",
    "string(/databases/x/documents) == '/databases/x/documents'", "path('/a/{x}/{y}').bind({'x': 1, 'y': 'z'}) == path('/a/1/z')",
    "timestamp.value(0) == timestamp.date(1970, 1, 1)", "timestamp.value(-1000) < timestamp.value(0)",
    "timestamp.date(2024, 2, 29).dayOfYear() == 60", "timestamp.date(2024, 12, 31).dayOfYear() == 366",
    "timestamp.date(2021, 3, 14).dayOfWeek() == 7", "timestamp.date(2021, 3, 15).dayOfWeek() == 1",
    "timestamp.value(1500).nanos() == 500000000", "timestamp.date(2020, 1, 1).month() == 1",
    "duration.value(90, 'm') == duration.time(1, 30, 0, 0)", "duration.value(1, 'w') == duration.value(7, 'd')",
    "duration.value(1500, 'ms').seconds() == 1", "duration.value(1500, 'ms').nanos() == 500000000",
    "duration.value(2, 's') - duration.value(1, 's') == duration.value(1000, 'ms')", "duration.value(1, 'ns') > duration.value(0, 's')",
    "latlng.value(10, 20) == latlng.value(10, 20)", "latlng.value(10, 20).longitude() == 20.0", "latlng.value(0, 0).distance(latlng.value(0, 0)) == 0",
    "b'abc'.size() == 3", "b'' == b''", "b'\\x00' < b'\\x01'", "hashing.md5(b'abc') == hashing.md5('abc')",
    "hashing.sha256('').size() == 32", "hashing.crc32('').size() == 4",
    // logic
    "true && true", "!(true && false)", "true || false", "!(false || false)", "false ? false : true", "(1 > 0 ? 'a' : 'b') == 'a'",
    "!(false && (1 / 0 == 1))", "(1 / 0 == 1) || (2 > 1)", "1 == 1 && 2 == 2 || false", "true || false && false",
    "(null == null) == true", "!(1 in [])", "[] is list && {} is map && '' is string && b'' is bytes",
    "path('/a') is path && timestamp.value(0) is timestamp && duration.value(1, 's') is duration && latlng.value(0, 0) is latlng",
    "!({}.diff({}) is map)", "!(null is map)", "!(null is int)",
]

private let moreErrors: [(String, String?)] = [
    ("'abc'[3]", "Index out of bound error. Index: [3] , size: [3]."), ("'abc'[-1]", nil), ("[1][1]", "Index out of bound error. Index: [1] , size: [1]."),
    ("{'a': 1}['b']", "Property b is undefined on object."), ("{'a': 1}[1]", "Unsupported operation error. Received: map[int]. Expected: map[string]."), ("null[0]", "Null value error."),
    ("[1].size(1)", nil), ("'a'.nope()", "Function not found error: Name: [nope]."), ("nope(1)", "Function not found error: Name: [nope]."),
    ("math.nope(1)", "Function not found error: Name: [math.nope]."), ("1 + null", nil), ("true + true", nil), ("b'a' + b'b'", nil),
    ("{} + {}", nil), ("1 - 'a'", nil), ("'a' * 2", nil), ("-true", nil), ("-null", nil), ("1 in 1", nil), ("1 in {'a': 1}", nil),
    ("'a'.matches(1)", nil), ("'a'.matches('(?<=a)b')", nil), ("'a'.matches('(a)\\\\1')", nil), ("'a'.replace('(', 'x')", nil),
    ("'a'.split('[')", nil), ("[1].join(1)", nil), ("[[1]].join(',')", nil), ("{'a': 1}.get(1, 2)", nil), ("{'a': 1}.diff([1])", nil),
    ("[1].concat(1)", nil), ("['a'].toSet().union(['b'])", nil), ("[1].removeAll(1)", nil), ("path(1)", nil), ("path('/a').bind(1)", nil),
    ("timestamp.date(2020, 1)", nil), ("timestamp.value('a')", nil), ("duration.value('1', 's')", nil), ("duration.time(1, 2, 3)", nil),
    ("latlng.value(0, 200)", nil), ("latlng.value('a', 1)", nil), ("latlng.value(0, 0).distance(1)", nil), ("hashing.md5(1)", nil),
    ("int(null)", nil), ("float(true)", nil), ("int(1e300)", nil), ("math.abs('a')", nil), ("math.pow(2)", nil),
    ("-9223372036854775807 - 2", nil), ("9223372036854775807 * 2", nil),
    ("debug()", nil), ("timestamp.value(0) + 1", nil), ("duration.value(1, 's') + 1", nil), ("timestamp.value(0) < 1", nil),
]

/// Durations reach ±315,576,000,000.999999999 seconds, as on the reference: further than an
/// Int64 of nanoseconds, whose bounds once trapped.
private let longDurations: [String] = [
    "duration.time(0, 0, 315576000000, 999999999) > duration.value(0, 's')",
    "duration.value(315576000000, 's').seconds() == 315576000000",
    "(timestamp.date(9999, 12, 31) - timestamp.date(1, 1, 1)).seconds() == 315537811200",
    "timestamp.date(1, 1, 1) + (timestamp.date(9999, 12, 31) - timestamp.date(1, 1, 1)) == timestamp.date(9999, 12, 31)",
    "duration.value(106752, 'd') > duration.value(0, 's')",
    "-duration.value(-9223372036854775808, 'ns') > duration.value(0, 's')",
    "duration.abs(duration.value(-9223372036854775808, 'ns')) == duration.value(9223372036854775807, 'ns') + duration.value(1, 'ns')",
    "timestamp.value(0) - duration.value(-9223372036854775808, 'ns') > timestamp.value(0)",
    "duration.time(0, 0, 1, -1500000000).nanos() == -500000000", "duration.time(0, 0, 1, -1500000000).seconds() == 0",
]
/// Doubles become integers as a Java `long` cast makes them, and path texts are trimmed per
/// segment, as on the reference.
private let javaConversions: [String] = [
    "int(123456789012345678901234.5) == 9223372036854775807", "int(-1.0 / 0.0) == -9223372036854775808", "int(math.sqrt(-1.0)) == 0",
    "math.round(123456789012345678901234.5) == 9223372036854775807", "math.round(math.sqrt(-1.0)) == 0",
    "math.round(0.49999999999999994) == 0", "math.round(-0.5) == 0", "math.round(-2.5) == -2", "math.round(4503599627370497.0) == 4503599627370497",
    "string(path('a/ b')) == '/a/b'", "string(path(' a')) == '/a'", "string(path('a/{x}').bind({'x': ' '})) == '/a/ '",
]
/// A `path()` template with a capture left unbound equals nothing, not even itself, at the top
/// level, writes the capture as empty, and cannot be read; `bind` makes a plain path of it,
/// dropping the captures it leaves. All as on the reference.
private let pathTemplates: [String] = [
    "!(path('a/{x}') == path('a/{x}'))", "path('a/{x}') != path('a/{x}')", "[path('a/{x}')] == [path('a/{x}')]",
    "!(path('a/{x}') in [path('a/{x}')])", "string(path('a/{x}')) == '/a/'", "string(path('a/x{y}')) == '/a/x{y}'",
    "path('a/{x}').bind({'x': 'b'}) == path('a/b')", "path('a/{x}/{y}').bind({'x': 'b'}) == path('a/b').bind({})",
    "path('a/{x=**}/{y}').bind({'x': path('b/c'), 'y': 'd'}) == path('a/b/c/d')", "path('a/{x=*}').bind({'x': 'b'}) == path('a/b')",
    // Segments are URL-decoded after trimming, as Java's URLDecoder decodes; a decoded `{x}` is text.
    "path('/a/b%20c')[1] == 'b c'", "path('/a/b+c')[1] == 'b c'", "path('/a/b%2Fc')[1] == 'b/c'", "path('/a/%C3%A9')[1] == 'é'",
    "path('/a/%FF')[1] == '\u{FFFD}'", "path('/a/ %41 ')[1] == 'A'", "path('/a/%20')[1] == ' '", "path('/%61/b') == path('/a/b')",
    "string(path('/a/+')) == '/a/ '", "path('/a/%+1')[1] == '\\u0001'", "path('/a/%7Bx%7D')[1] == '{x}'",
]
/// Bare segments in path literals take what the reference's lexer takes, URL-decoded, and a
/// `/*` with no `*/` after it starts one.
private let pathLiterals: [String] = [
    "(/a/x@example.com)[1] == 'x@example.com'", "(/a/b~c:d&e)[1] == 'b~c:d&e'", "(/a/b*c)[1] == 'b*c'", "(/a/*b)[1] == '*b'",
    "(/a/**)[1] == '**'", "(/a/b'c)[1] == \"b'c\"", "(/a/b+c)[1] == 'b c'", "(/a/b%20c)[1] == 'b c'", "(/a/b%2Fc)[1] == 'b/c'",
    "(/a/%C3%A9)[1] == 'é'", "(/a/%e9)[1] == '\u{FFFD}'", "(/a/b%41)[1] == 'bA'", "(/a/(b@c))[1] == '(b@c)'", "(/a/(1))[1] == '(1)'",
    "(/a/(b+c))[1] == '(b c)'", "(/a/1.5e3)[1] == '1.5e3'", "(/a/b*/c)[2] == 'c'", "/a/b@c.com == path('/a/b@c.com')",
    // A capture makes a path literal a template, as `path()` makes one.
    "(/a/{y}).bind({'y': 'b'}) == /a/b", "(/a/{y=**}/c).bind({'y': /b/d}) == /a/b/d/c", "(/a/{y=*}).bind({'y': 'b'}) == /a/b",
    "(/a/{ y }/$('c')).bind({'y': 'b'}) == /a/b/c", "string(/a/{y}) == '/a/'", "!(/a/{y} == path('/a/{y}'))", "(/a/{y}).bind({}) == /a",
    // Reserved words name no variable, but a field may be read by one.
    "{'match': 1}.match == 1", "{'in': 1}.in == 1", "{'let': 2}.let == 2", "{'null': 2}.null == 2",
    // `B'…'` is bytes, and escaped surrogates pair up as in the reference's UTF-16 strings.
    "B'x' == b'x'", "'\\uD83D\\uDE00' == '😀'", "'\\ud83d\\ude00' == '😀'", "'\\uD83D'.size() == 1", "'\\uD83D\\u0041'.size() == 2",
    // Names may hold `$`.
    "{'a$': 1}.a$ == 1", "{'$$': 1}.$$ == 1",
]
private let unreadableTemplates: [(String, String?)] = [
    ("path('/a/%2')", "Unable to decode %2 to url. Error: URLDecoder: Incomplete trailing escape (%) pattern"),
    ("path('/a/%%41')", #"Unable to decode %%41 to url. Error: URLDecoder: Illegal hex characters in escape (%) pattern - Error at index 0 in: "%4""#),
    ("path('/a/%4z')", #"Unable to decode %4z to url. Error: URLDecoder: Illegal hex characters in escape (%) pattern - Error at index 1 in: "4z""#),
    ("path('/a/%-1')", "Unable to decode %-1 to url. Error: URLDecoder: Illegal hex characters in escape (%) pattern - negative value"),
    ("(/a/{y})[1]", "Variable y is not bound in path template."), ("exists(/databases/x/documents/a/{y})", "Variable y is not bound in path template."),
    ("path('/a/%7Bx%7D').bind({'x': 'b'})", nil), ("(/a/$('{x}')).bind({'x': 'b'})", nil),
    ("path('a/{x}')[0]", "Variable x is not bound in path template."), ("path('a/{x}').x", "Variable x is not bound in path template."),
    ("exists(path('/databases/x/documents/a/{x}'))", "Variable x is not bound in path template."),
    ("path('a/{x')", "Invalid Path Template a/{x. The capture segment is not closed."),
    ("path('a/{1x}')", "Invalid Path Template a/{1x}. [Identifier [1x] should start with letter, dollar sign, or underscore and should not start with digit and must not contain spaces."),
    ("path('a/{x=**}').bind({'x': 'b'})", "Type error. Received: [string] Expected: [path]."),
]
/// Calls that do not fit the library, in the reference's words: a missing name fails before
/// its arguments are evaluated, a wrong count after them.
private let callErrors: [(String, String?)] = [
    ("'a'.foo(1 / 0)", "Function not found error: Name: [foo]."), ("math.foo(1 / 0)", "Function not found error: Name: [math.foo]."),
    ("(1).size(1 / 0)", "Function not found error: Name: [size]."), ("timestamp.date(2020, 1, 1).foo(1 / 0)", "Function not found error: Name: [foo]."),
    ("'a'.size(1 / 0)", "Divide by zero error."), ("'a'.size(1)", "Incorrect number of arguments. Received: 1. Expected: string.size()."),
    ("{'a': 1}.get('a')", "Incorrect number of arguments. Received: 1. Expected: map.get(string, any), map.get(list, any)."),
    ("[1].toSet().hasAll()", "Incorrect number of arguments. Received: 0. Expected: set.hasAll(set), set.hasAll(list)."),
    ("timestamp.date(2020, 1, 1).date(1)", "Incorrect number of arguments. Received: 1. Expected: timestamp.date()."),
    ("timestamp.date(1)", "Incorrect number of arguments. Received: 1. Expected: timestamp.date(int, int, int)."),
    ("get()", "Incorrect number of arguments. Received: 0. Expected: get(path)."),
    ("string()", "Incorrect number of arguments. Received: 0. Expected: string(int), string(float), string(null), string(string), string(bool), string(path)."),
    ("math.abs(true)", "Unsupported operation error. Received: math.abs(bool). Expected: math.abs(int), math.abs(float)."),
    ("math.pow(true, 1)", "Unsupported operation error. Received: math.pow(bool, int). Expected: math.pow(float, float)."),
    ("hashing.md5(1)", "Unsupported operation error. Received: hashing.md5(int). Expected: hashing.md5(bytes), hashing.md5(string)."),
    ("latlng.value(true, 1)", "Unsupported operation error. Received: latlng.value(bool, int). Expected: latlng.value(float, float)."),
    ("{'a': 1}.get(true, 1)", "Unsupported operation error. Received: map.get(bool, int). Expected: map.get(string, any), map.get(list, any)."),
    ("{'a': 1}.get([1], 0)", "Type error. Received: [int] Expected: [string]."),
    ("[[1]].join(',')", "Unsupported operation error. Received: string(list). Expected: string(int), string(float), string(null), string(string), string(bool), string(path)."),
    ("debug()", "Service call error. Function: [debug], Argument: []."), ("unknown.x", "Null value error."),
]
/// Errors in the reference's words, each read from it.
private let referenceWording: [(String, String?)] = [
    ("9223372036854775807 + 1", "Integer value is out of the [-9223372036854775808, 9223372036854775807] range."),
    ("-(-9223372036854775807 - 1)", "Integer value is out of the [-9223372036854775808, 9223372036854775807] range."),
    ("timestamp.date(2021, 2, 29)", "Date is not valid. year: 2021, month: 2 day: 29."),
    ("timestamp.date(10000, 13, 1)", "Timestamp should be between 0001-01-01T00.00.00Z and 9999-12-31T23.59.59Z. year: 10000."),
    ("[1, 2][0:9223372036854775807]", "Index out of bound error. Index: [9223372036854775807] , size: [2]."),
    ("[1, 2][1:-9223372036854775807 - 1]", "Index out of bound error. Index: [-9223372036854775808] , size: [2]."),
    ("['b', 'a', 'b'][7:2147483648]", "Index out of bound error. Index: [2147483648] , size: [3]."),
    ("['b', 'a', 'b'][7:2147483647]", "Index out of bound error. Index: [7] , size: [3]."),
    ("[1, 'a'][1600000000000:9223372036854775807]", "Index out of bound error. Index: [1600000000000] , size: [2]."),
    ("b'a'[0:1]", "Function not found error: Name: [@range]."),
    ("[1, 2]['a':1]", "Unsupported operation error. Received: list[string:int]. Expected: list[null:null], list[null:int], list[int:null], list[int:int]."),
    ("path('a/b')['a':1]", "Unsupported operation error. Received: path[string:int]. Expected: path[null:null], path[int:int], path[int:null], path[null:int]."),
    ("'ab'[1.5:1]", "Unsupported operation error. Received: string[float:int]. Expected: string[null:null], string[null:int], string[int:null], string[int:int]."),
    ("path('a/{x}').bind({'z': 'b', 'y': 1})", "Variable(s) y,z do not exist in the path template."),
    ("path('a/{x}').bind({'x': 'b'}).bind({'x': 'c'})", "Variable x is already bound."),
    ("path('a/{x}').bind({'x': [1]})", "Unsupported operation error. Received: string(list). Expected: string(int), string(float), string(null), string(string), string(bool), string(path)."),
    ("3 in 'abc'", "Function not found error: Name: [in]."), ("-({}) in 'abc'", "Function not found error: Name: [in]."),
    ("1 / 0 in null", "Null value error."),
    ("/a/$(path('b/{x}'))", "Variable x is not bound in path template."),
    ("/a/$(b'x')", "Unsupported operation error. Received: string(bytes). Expected: string(int), string(float), string(null), string(string), string(bool), string(path)."),
    ("{} && (1 / 0)", "Type error. Received: [map] Expected: [bool]."), ("true && 1", "Type error. Received: [int] Expected: [bool]."),
    ("(1 / 0) && {}", "Divide by zero error."), ("false || null", "Type error. Received: [null] Expected: [bool]."),
    ("timestamp.date(2020, 1, 1) in {'a': 1}", "Unsupported operation error. Received: map.in(timestamp). Expected: map.in(string)."),
    ("latlng.value(0, latlng.value(10, 20).distance(latlng.value(-30, 40)))",
     "Latitude should be in [-90,90] range and longitude should be in [-180,180] range. latitude: 0.0, longitude: 4935809.564006635."),
]
/// What the reference answers true where Flint once erred: JVM division, path slices, lenient
/// timestamp strings, its Earth radius.
private let referenceAnswers: [String] = [
    "(-9223372036854775807 - 1) / -1 == -9223372036854775807 - 1", "(-9223372036854775807 - 1) % -1 == 0",
    "path('a/b/c')[1:3] == path('b/c')", "path('a/b/c')[null:1] == path('a')", "string(path('a/b/c')[0:2]) == '/a/b'",
    "path('a/b/c')[1:][0] == 'b'", "[1, 2, 3][null:null] == [1, 2, 3]", "timestamp.value('202-01-01T00:00:00Z').year() == 202",
    "timestamp.value('2020-01-01T00:00:00+1:00') == timestamp.value('2019-12-31T23:00:00Z')",
    "timestamp.value('2020-01-01T00:00:00-001:30') == timestamp.value('2020-01-01T01:30:00Z')",
    "latlng.value(0, 0).distance(latlng.value(0, 1)) == 111195.08372419141", "path('a/{x}/{y}').bind({'x': 'b'}) == path('a/b')",
]
private let emptyPathSegments: [(String, String?)] = [
    ("path('')", "Empty Path Template is not allowed."), ("path('/')", "Invalid Path Template /. Empty segment is not allowed."),
    ("path('a//b')", "Invalid Path Template a//b. Empty segment is not allowed."), ("path('a/ /b')", "Invalid Path Template a/ /b. Empty segment is not allowed."),
    ("path('/a/b/')", "Invalid Path Template /a/b/. Empty segment is not allowed."),
    ("path('a/{x}').bind({'x': ''})", "Cannot bind empty value to path template variable x."),
]
private let durationInvalid =
    "Duration is not valid. Seconds must be in range [-315,576,000,000, +315,576,000,000]. Nanos must be in range [-999,999,999, +999,999,999]. Nanos must have the same sign as seconds."
private let timestampInvalid = "Timestamp is not valid. Seconds must be in range [-62,135,596,800, +253,402,300,799]. Nanos must be in range [0, +999,999,999]."
private let durationsOutOfRange: [(String, String?)] = [
    ("duration.time(9223372036854775807, 0, 0, 0)", timestampInvalid), ("duration.value(315576000001, 's')", durationInvalid),
    ("duration.value(315576000000, 's') + duration.value(1000000000, 'ns')", durationInvalid),
    ("duration.time(0, 0, 315576000000, 1000000000)", timestampInvalid),
    ("timestamp.date(2000, 1, 1) + duration.value(315576000000, 's')", nil),
]

/// Plain falsehoods, so a broken evaluator cannot pass by answering true.
/// Slices that leave out a bound, which the reference emulator accepts: `i` defaults to 0, `j` to the size.
private let openSlices: [String] = [
    "[1, 2, 3][1:] == [2, 3]", "[1, 2, 3][:2] == [1, 2]", "[1, 2, 3][:] == [1, 2, 3]", "'abc'[1:] == 'bc'", "'abc'[:1] == 'a'",
    "[1, 2, 3][1:1] == []",
]

/// Number forms the reference emulator reads: a point with digits on one side only is a float.
/// Type tests the reference answers: null is of no type, a MapDiff is a `map_diff`.
private let typeTests: [String] = ["!(null is int)", "!(null is map)", "{'a': 1}.diff({'a': 2}) is map_diff", "!({'a': 1} is map_diff)"]

private let numberForms: [String] = [
    "1. == 1.0", ".5 == 0.5", "0 == 0", "10.25 * 4 == 41.0", "[1, 2].size() == 2", "0.5 + .5 == 1",
    // Path segments keep numbers as written.
    "/a/1.pdf == path('/a/1.pdf')", "/a/2.50 == path('/a/2.50')", "/a/007 == path('/a/007')",
]

/// RE2 forms the reference accepts: quoted text, named groups in replacements.
private let regexForms: [String] = [
    #"'a.*b'.matches('\\Qa.*\\Eb')"#, #"!'axxb'.matches('\\Qa.*\\Eb')"#, #"'ab'.matches('\\Qab')"#, #"'abbb'.matches('\\Qab\\E+')"#,
    "'abc'.replace('(?P<n>b)', '${n}${n}') == 'abbc'", "'abc'.replace('(b)', '$10') == 'ab0c'", "'abc'.replace('b', '$x$') == 'a$x$c'",
    // Case folding joins what the mappings alone miss (Kelvin sign, long s, final sigma); the
    // Turkish i forms stay apart.
    #"'\u212a'.matches('(?i)k')"#, "'ſ'.matches('(?i)s')", "'ς'.matches('(?i)σ')", "'ẞ'.matches('(?i)ß')", #"'\u0345'.matches('(?i)ι')"#,
    "!('I'.matches('(?i)ı'))", "!('ı'.matches('(?i)i'))", #"'\u212a'.matches('(?i)[k]')"#,
    // A class named by an escape folds too, and a negated one (`\W`, `\P{…}`, `[:^alpha:]`)
    // leaves out every case variant of what it negates, as RE2 folds.
    #"'\u212a'.matches('(?i)\\w')"#, #"!('\u212a'.matches('(?i)\\W'))"#, #"!('\u212a'.matches('(?i)[\\W]'))"#,
    #"'µ'.matches('(?i)\\p{Greek}')"#, #"!('µ'.matches('(?i)\\P{Greek}'))"#, #"!('µ'.matches('(?i)[\\P{Greek}]'))"#,
    "!('s'.matches('(?i)[[:^alpha:]]'))", "!('ſ'.matches('(?i)[[:^alpha:]]'))", "'ſ'.matches('[[:^alpha:]]')",
    "'s'.matches('(?i)[^[:^alpha:]]')", "!('S'.matches('(?i)[[:^lower:]]'))", #"'ſ'.matches('(?i)[^\\W]')"#,
    #"'s_'.split('[[:alpha:]](?i)??([[:^alpha:]]+)?') == ['', 's']"#,
    // Unicode classes fold as the reference's tables do: uppercase and titlecase letters, `Mn`
    // and the Common, Greek and Inherited scripts by every variant, lowercase letters only
    // beyond plain pairs, the rest not at all. Scalars newer than Unicode 13 fold with nothing.
    #"'a'.matches('(?i)\\p{Lu}')"#, #"!('a'.matches('(?i)\\P{Lu}'))"#, #"!('A'.matches('(?i)\\p{Ll}'))"#, #"'I'.matches('(?i)\\P{Ll}')"#,
    #"'Σ'.matches('(?i)\\p{Ll}')"#, #"'\u212a'.matches('(?i)\\p{Ll}')"#, #"'ẞ'.matches('(?i)\\p{Ll}')"#, #"!('ᾼ'.matches('(?i)\\p{Ll}'))"#,
    #"!('\u0345'.matches('(?i)\\pL'))"#, #"!('ι'.matches('(?i)\\pM'))"#, #"'ι'.matches('(?i)\\p{Mn}')"#, #"'ᾀ'.matches('(?i)\\p{Lt}')"#,
    #"!('a'.matches('(?i)\\p{^Ll}'))"#, #"!('\u212a'.matches('(?i)\\p{^Ll}'))"#, #"'a'.matches('(?i)[\\p{Lu}]')"#,
    "!('ꟑ'.matches('(?i)Ꟑ'))", "!('ᲀ'.matches('(?i)в'))", "'ꟈ'.matches('(?i)Ꟈ')",
    // A brace that opens no count is itself; a repetition after a flag group repeats what came before.
    "'{{'.matches('{{')", "'a{x}'.matches('a{x}+')", "'aa'.matches('a(?i)+')", "'aa'.matches('a*(?i)+')", "'AA'.matches('(?i)a(?-i)+')",
    "'b'.matches('a(?i)?b')", #"'é'.matches('\\é')"#,
    // Empty matches at the end of the text, and a loop whose body can match empty.
    "'abc'.replace('$', '-') == 'abc-'", #"'abc'.replace('\\b', '|') == '|abc|'"#, "'a'.replace('(a??)+', '-') == '-a-'",
    // Unicode classes: every general category, scripts by name, `Any`, negation with `^`.
    #"'ア'.matches('\\p{Katakana}')"#, #"'я'.matches('\\p{Cyrillic}')"#, #"'$'.matches('\\p{Sc}')"#, #"'('.matches('\\p{Ps}')"#,
    #"'a'.matches('\\p{Any}')"#, #"'1'.matches('\\p{^L}')"#, #"'a'.matches('\\P{^L}')"#, #"'\u0301'.matches('\\p{Mn}')"#,
    #"'\u0301'.matches('\\p{Inherited}')"#, #"'一'.matches('\\p{Lo}')"#, #"!('一'.matches('\\p{N}'))"#, #"'Ⅻ'.matches('\\p{Nl}')"#,
    #"'\u00a0'.matches('\\p{Zs}')"#, "'a'.matches('(?P<a1_>a)')",
]

/// Patterns the reference refuses, checked here as they run (a literal one is refused on loading).
private let regexRefusals: [(String, String?)] = [
    ("'aa'.matches('(?P<n>a)(?P<n>a)')", nil), ("'a'.matches('(?P<>a)')", nil), ("'a'.matches('(?P<a-b>a)')", nil),
    ("'{2}'.matches('{2}')", nil), ("'a{'.matches('a{+')", nil), ("'a'.matches('(?-)a')", nil), ("'a'.matches('(?i-)a')", nil),
    (#"'+'.matches('\\x6')"#, nil), (#"']'.matches('[\\Q]\\E]')"#, nil), (#"'a'.matches('\\p{Letter}')"#, nil),
    (#"'a'.matches('\\p{latin}')"#, nil), (#"'a'.matches('\\x{61')"#, nil), ("'a'.matches('(?i)+')", nil),
]

/// Conversions read numbers as the JVM does.
private let conversions: [String] = [
    "int('+12') == 12", "int('\\u0663') == 3", "float(' 1.5 ') == 1.5", "float('1.5f') == 1.5", "float('0x1p3') == 8.0",
    "float('1e3') == 1000.0", "float('-Infinity') < 0", "math.abs(-9223372036854775807 - 1) < 0",
]

/// String escapes the reference reads: hex and octal give code points (bytes in bytes literals).
/// Operator precedence as the reference groups: `in` looser than `is` and `==`, `is` looser than `==`.
private let precedence: [String] = [
    "[true] == [true] in [true]", "1 == 1 is bool",
    "1 + 1 == 2 is bool", "1 is int == true", "1 < 2 is bool == true", "1 < 2 in [true]", "1 in [1] && true", "true is bool in [true]",
    "1 - - 1 == 2", "1 - -1 == 2", "-(-1) == 1",
]

/// Errors in the reference's words.
private let referenceMessages: [(String, String?)] = [
    (#"{'\u00e9': 1}['e\u0301']"#, "Property e\u{301} is undefined on object."),
    ("1 + 'a'", "Unsupported operation error. Received: int + string. Expected: int + int, float + float, string + string, duration + duration, duration + timestamp, timestamp + duration."),
    ("'a' - 1", "Unsupported operation error. Received: string - int. Expected: int - int, float - float, duration - duration, timestamp - duration, timestamp - timestamp."),
    ("'a' * 1", "Unsupported operation error. Received: string * int. Expected: int * int, float * float."),
    ("-'a'", "Unsupported operation error. Received: -string. Expected: -int, -float, -duration."),
    ("!1", "Unsupported operation error. Received: !int. Expected: !bool."),
    ("(1 ? true : false)", "Type error. Received: [int] Expected: [bool]."),
    ("(null ? 1 : 2) == 1", "Type error. Received: [null] Expected: [bool]."),
    ("int('x')", "Type conversion error. Argument: [x], From type: [string], To type: [int]."),
    ("float('x')", "Type conversion error. Argument: [x], From type: [string], To type: [float]."),
    ("'s'.y", "Type error. Received: [string] Expected: [map,path]."),
    ("[1].y", "Type error. Received: [list] Expected: [map,path]."),
    ("path('/a/b').y", "Property y is undefined on object."),
    ("[1]['a']", "Unsupported operation error. Received: list[string]. Expected: list[int]."),
    ("'abc'['a']", "Unsupported operation error. Received: string[string]. Expected: string[int]."),
    ("path('/a/b')['x']", "Property x is undefined on object."),
    ("true[0]", "Function not found error: Name: [[]]."),
    ("timestamp.value(1.5)", "Unsupported operation error. Received: timestamp.value(float). Expected: timestamp.value(int), timestamp.value(string)."),
    ("timestamp.value('2020-01-01t00:00:00z')", RulesTimestamp.invalid),
    ("duration.value(1, 'xs')", "Invalid regular expression pattern. Pattern: xs."),
    ("string(timestamp.value(0))",
     "Unsupported operation error. Received: string(timestamp). Expected: string(int), string(float), string(null), string(string), string(bool), string(path)."),
]

/// Timestamp strings, read as leniently as the reference reads them.
private let timestampStrings: [String] = [
    "timestamp.value('2020-01-01T00:00:00Z') == timestamp.date(2020, 1, 1)",
    "timestamp.value('2020-01-01T00:00:00.123456789Z').nanos() == 123456789",
    "timestamp.value('2020-01-01T00:00:00.1234567891Z').nanos() == 123456789",
    "timestamp.value('2020-01-01T00:00:00.Z') == timestamp.date(2020, 1, 1)",
    "timestamp.value('2020-02-30T00:00:00Z') == timestamp.date(2020, 3, 1)",
    "timestamp.value('2020-13-01T00:00:00Z') == timestamp.date(2021, 1, 1)",
    "timestamp.value('2020-01-00T00:00:00Z') == timestamp.date(2019, 12, 31)",
    "timestamp.value('2020-01-01T24:00:00Z') == timestamp.date(2020, 1, 2)",
    "timestamp.value('2020-1-1T0:0:0Z') == timestamp.date(2020, 1, 1)",
    "timestamp.value(' 2020-01-01T00:00:00Z') == timestamp.date(2020, 1, 1)",
    "timestamp.value('2020-01-01T00:00:00-01:30') == timestamp.date(2020, 1, 1) + duration.value(90, 'm')",
]

/// Grouped as the reference groups them, these ask `in` of a bool, and `!` of an int.
private let precedenceErrors: [(String, String?)] = [("2 in [1] == false", nil), ("1 in [1] == true", nil), ("1 in [1] is bool", nil), ("!-1", nil)]

/// A '/' with a space after it divides, whatever comes before it.
private let divisions: [String] = ["4/ 2 == 2", "4 / 2 == 2", "(4)/ (2) == 2"]

private let escapes: [String] = [
    #"'\x41' == 'A'"#, #"'\xe9' == '\u00e9'"#, #"'\x411' == 'A1'"#, #"'\101' == 'A'"#, #"'\351' == '\u00e9'"#, #"'\1011' == 'A1'"#,
    #"'\b' == '\x08'"#, #"'\f' == '\x0c'"#, #"'\x00'.size() == 1"#, #"b'\b' == b'\x08'"#, #"b'\f'.size() == 1"#, #"b'\377'.size() == 1"#,
]

/// `debug` takes several values and answers the first.
private let debugForms: [String] = ["debug(1, 'x') == 1", "debug([1], 2, 3) == [1]"]

/// NaN is unordered among numbers but still of the wrong type against anything else.
private let nanComparisons: [String] = ["!((0 % 0.0) >= 1)", "!((0 % 0.0) < 1)"]

/// Ints and floats of one value: the same in sets at every depth and in map diffs, different in
/// a list's methods and `in`; short lists are scanned, long ones (over eight) searched by hash.
private let numberMembership: [String] = [
    "[1, 1.0].toSet().size() == 1", "[[1], [1.0]].toSet().size() == 1", "1.0 in [1].toSet()", "!(1.0 in [1])", "![1].hasAll([1.0])",
    "[1].removeAll([1.0]) == [1]", "{'a': [1]}.diff({'a': [1.0]}).changedKeys().size() == 0",
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, [1], [1.0]].toSet().size() == 11", "![1, 2, 3, 4, 5, 6, 7, 8, 9, 10].hasAny([1.0, 11])",
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].toSet().hasAll([10.0, 1])", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].toSet() == [10.0, 9, 8, 7, 6, 5, 4, 3, 2, 1].toSet()",
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].removeAll([1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10]) == [1, 11]",
]

/// Keys that differ only in Unicode normalization (`é` as one scalar, or as `e` and a
/// combining accent; the Ångström sign and `Å`) are two keys, as on the reference; `keys()`
/// lists them in code point order, `Ａ` (U+FF21) before `😀` (U+1F600).
private let equivalentKeys: [String] = [
    #"{'\u00e9': 1, 'e\u0301': 2}.size() == 2"#, #"{'\u212b': 1, '\u00c5': 2}.keys() == ['\u00c5', '\u212b']"#,
    #"!('e\u0301' in {'\u00e9': 1})"#, #"{'\u00e9': 1}.get('e\u0301', 5) == 5"#, #"{'\u00e9': 1} != {'e\u0301': 1}"#,
    #"{'\u00e9': 1}.diff({'e\u0301': 1}).affectedKeys() == ['\u00e9', 'e\u0301'].toSet()"#,
    "{'b': 1, 'Ａ': 2, '😀': 3, 'a': 4}.keys() == ['a', 'b', 'Ａ', '😀']",
    // The same holds of paths' segments, which split on every `/`, even one a combining mark follows.
    #"path('/a/\u00e9') != path('/a/e\u0301')"#, #"[path('/a/\u00e9'), path('/a/e\u0301')].toSet().size() == 2"#,
    #"path('/a/\u0301b')[1] == '\u0301b'"#,
]

private let falsehoods: [String] = [
    "1 == 2", "'a'.matches('b')", "[1, 2].hasAll([3])", "1 > 2", "'b' < 'a'", "null == 0", "1 is string", "'ab'.matches('a')",
    "timestamp.date(2020, 1, 1) > timestamp.date(2021, 1, 1)", "{'a': 1} == {'a': 2}", "[1, 2] == [2, 1]",
]

struct ExpressionTests {
    @Test(arguments: falsehoods) func evaluatesToFalse(_ source: String) {
        let v = evaluate(source)
        guard case .bool(false) = v else {
            Issue.record("\(source) gave \(v)")
            return
        }
    }

    @Test(arguments: truths + moreTruths + openSlices + numberForms + typeTests + nanComparisons + regexForms + debugForms + conversions + escapes + divisions + precedence + timestampStrings + numberMembership + longDurations + javaConversions + pathTemplates + pathLiterals + referenceAnswers + equivalentKeys) func evaluatesToTrue(_ source: String) {
        let v = evaluate(source)
        guard case .bool(true) = v else {
            Issue.record("\(source) gave \(v)")
            return
        }
    }

    @Test(arguments: (errors + moreErrors + precedenceErrors + referenceMessages + durationsOutOfRange + emptyPathSegments + unreadableTemplates + callErrors + referenceWording + regexRefusals).map(\.0)) func evaluatesToAnError(_ source: String) {
        let v = evaluate(source)
        guard case .error(let message) = v else {
            Issue.record("\(source) gave \(v), not an error")
            return
        }
        if let expected = (errors + moreErrors + precedenceErrors + referenceMessages + durationsOutOfRange + emptyPathSegments + unreadableTemplates + callErrors + referenceWording).first(where: { $0.0 == source })?.1 { #expect(message == expected, "\(source)") }
    }

    @Test func getAndExistsReadThroughTheReaderAndAreCached() {
        final class Counting: DocumentReader, @unchecked Sendable {
            var calls: [String] = []
            func document(at path: RulesPath, afterWrites: Bool) -> RulesValue? {
                calls.append((afterWrites ? "after " : "") + path.text)
                return path.segments.last == "alice" ? .resource(database: "(default)", path: ["users", "alice"], fields: ["admin": true]) : nil
            }
        }
        let reader = Counting()
        let v = evaluate(
            "get(/databases/(default)/documents/users/alice).data.admin && exists(/databases/(default)/documents/users/alice)"
                + " && !exists(/databases/(default)/documents/users/bob) && !existsAfter(/databases/(default)/documents/users/bob)"
                + " && get(/databases/(default)/documents/users/alice).id == 'alice'",
            reader: reader)
        #expect(v.isTrue)
        #expect(reader.calls == ["/databases/(default)/documents/users/alice", "/databases/(default)/documents/users/bob", "after /databases/(default)/documents/users/bob"])
        // A missing document is an error to get, as on the reference emulator, not null.
        for source in ["get(/databases/(default)/documents/users/bob)", "get(/databases/(default)/documents/users/bob) == null",
            "getAfter(/databases/(default)/documents/users/bob).data"]
        {
            let name = source.hasPrefix("getAfter") ? "getAfter" : "get"
            #expect(evaluate(source, reader: reader).errorText
                == "Service call error. Function: [\(name)], Argument: [/databases/(default)/documents/users/bob]: there is no document at this path.")
        }
        #expect(evaluate("exists(/databases/(default)/documents/users/bob) || get(/databases/(default)/documents/users/bob) == null", reader: reader).errorText != nil)
    }

    @Test func readsOutsideTheRequestsDatabaseAreErrors() {
        struct InDefault: DocumentReader {
            var requestDatabase: String? { "(default)" }
            func document(at path: RulesPath, afterWrites: Bool) -> RulesValue? { nil }
        }
        #expect(evaluate("exists(/databases/other/documents/a/b)", reader: InDefault()).errorText
            == "Service call error. Function: [exists], Argument: [/databases/other/documents/a/b]: rules read only their own database, (default).")
        #expect(evaluate("!exists(/databases/(default)/documents/a/b)", reader: InDefault()).isTrue)
    }

    @Test func readsBeyondTheLimitAreErrors() {
        let source = (0..<11).map { "exists(/databases/(default)/documents/c/d\($0))" }.joined(separator: " || ")
        #expect(evaluate(source).errorText == "Exceeded maximum of 10 get, exists, getAfter and existsAfter calls per document.")
    }
}

extension RulesValue {
    var isTrue: Bool { if case .bool(true) = self { true } else { false } }
    var errorText: String? { if case .error(let m) = self { m } else { nil } }
}

struct HashTests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    @Test func md5AndSHA256MatchTheirTestVectors() {
        #expect(hex(MD5.digest([])) == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(hex(MD5.digest(Array("The quick brown fox jumps over the lazy dog".utf8))) == "9e107d9d372bb6826bd81d3542a419d6")
        #expect(hex(MD5.digest(Array(String(repeating: "a", count: 1000).utf8))) == "cabe45dcc9ae5b66ba86600cca6b8ba8")
        #expect(hex(SHA256.digest([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(SHA256.digest(Array(String(repeating: "a", count: 1000).utf8))) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }
}

struct RegexCacheTests {
    @Test func theStringMethodsCompileThroughTheSharedCache() {
        // Patterns no other test uses, since the shared cache is the whole process's.
        for (method, pattern) in [("matches", "cache-probe-1[0-9]+"), ("split", "cache-probe-2,"), ("replace", "cache-probe-3")] {
            let call = method == "replace" ? "'x'.replace('\(pattern)', 'y')" : "'x'.\(method)('\(pattern)')"
            #expect(!RegexCache.shared.occupancy.patterns.contains(pattern))
            #expect(evaluate(call).isError == false)
            #expect(RegexCache.shared.occupancy.patterns.contains(pattern), "\(call)")
        }
    }

    @Test func patternsAreKeptWithinTheBudgetAndFailuresWithTheirMessage() throws {
        let cache = RegexCache(budget: 800)
        let email = try #require(try? cache.regex(".*@acme\\.com").get())
        #expect(email.matchesWhole("ann@acme.com") && !email.matchesWhole("ann@acme.org"))
        guard case .failure(let refused) = cache.regex("a\\1") else {
            Issue.record("a backreference compiled")
            return
        }
        #expect(refused.message.contains("backreferences are not supported"))
        #expect(cache.occupancy.patterns == [".*@acme\\.com", "a\\1"])
        let kept = cache.occupancy.cost
        #expect(kept == RegexCache.cost(of: ".*@acme\\.com", .success(email)) + "a\\1".utf8.count)

        // Asked again, nothing new is kept and the answers are the same.
        #expect((try? cache.regex(".*@acme\\.com").get())?.matchesWhole("bo@acme.com") == true)
        guard case .failure(let again) = cache.regex("a\\1") else {
            Issue.record("a backreference compiled the second time")
            return
        }
        #expect(again == refused)
        #expect(cache.occupancy.cost == kept)

        // More than an eighth of the budget is compiled but not kept.
        let large = "[a-z]{100}"
        let compiled = cache.regex(large)
        #expect(RegexCache.cost(of: large, compiled) > 100)
        #expect((try? compiled.get())?.matchesWhole(String(repeating: "q", count: 100)) == true)
        #expect(!cache.occupancy.patterns.contains(large))

        // Filling the budget starts over with the pattern that did not fit.
        var uid = 0
        while cache.occupancy.patterns.contains(".*@acme\\.com") {
            uid += 1
            _ = cache.regex("user\(uid)__.*")
            #expect(cache.occupancy.cost <= cache.budget)
        }
        #expect(cache.occupancy.patterns == ["user\(uid)__.*"])
        #expect(uid > 20)
    }

    @Test func canonicallyEquivalentPatternsAreKeptApart() throws {
        // Swift's `==` holds these equal; as patterns they are not.
        let cache = RegexCache(budget: 800)
        let iota = try #require(try? cache.regex("\u{03B9}").get())
        let prosgegrammeni = try #require(try? cache.regex("\u{1FBE}").get())
        #expect(iota.matchesWhole("\u{03B9}") && !iota.matchesWhole("\u{1FBE}"))
        #expect(prosgegrammeni.matchesWhole("\u{1FBE}") && !prosgegrammeni.matchesWhole("\u{03B9}"))
        // Two entries (a set of strings would count them as one).
        #expect(cache.occupancy.cost == RegexCache.cost(of: "\u{03B9}", .success(iota)) + RegexCache.cost(of: "\u{1FBE}", .success(prosgegrammeni)))
    }
}
