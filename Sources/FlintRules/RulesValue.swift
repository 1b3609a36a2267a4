import FlintModel

/// A value during rules evaluation. Errors are values too: they flow through evaluation and
/// `&&`, `||` and `?:` may absorb them, as the rules language defines.
public indirect enum RulesValue: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Double)
    case string(String)
    case bytes([UInt8])
    case list([RulesValue])
    /// Keys are strings, told apart by their bytes as Firestore tells names apart (`é` as one
    /// scalar and as `e` with a combining accent are two keys); `keys()` answers them in byte order.
    case map([UTF8Key: RulesValue])
    /// Unique elements in first-seen order.
    case set([RulesValue])
    case mapDiff(MapDiff)
    case path(RulesPath)
    case timestamp(RulesTimestamp)
    case duration(RulesDuration)
    case latlng(Double, Double)
    /// A vector field (`FieldValue.vector`): only `is vector`, equality and `debug` take one.
    case vector([Double])
    /// What a list query's filter says about a field it does not pin to one value.
    case constraint(FieldConstraint)
    case error(String)

    public var isError: Bool { if case .error = self { true } else { false } }
    public var isConstraint: Bool { if case .constraint = self { true } else { false } }
    var isNaN: Bool { if case .float(let f) = self { f.isNaN } else { false } }
    /// The value as the coverage report writes it: equal texts are the same value of the same
    /// type, constraints included, so it tells repeated query ways apart.
    public var reportText: String { Coverage.json(self) }

    /// Equal as the rules' `==` sees it (an int equals the float of the same value).
    public func equals(_ other: RulesValue) -> Bool { Operators.equal(self, other) }

    /// The type's name in messages (`Received: int + string`).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .string: "string"
        case .bytes: "bytes"
        case .list: "list"
        case .map: "map"
        case .set: "set"
        case .mapDiff: "map_diff"
        case .path: "path"
        case .timestamp: "timestamp"
        case .duration: "duration"
        case .latlng: "latlng"
        case .vector: "vector"
        case .constraint: "constraint"
        case .error: "error"
        }
    }
}

public struct MapDiff: Sendable {
    public var new: [UTF8Key: RulesValue]
    public var old: [UTF8Key: RulesValue]

    /// What became of a key, named as the reference's `debug()` names it.
    enum Status: String {
        case added = "ADDED", removed = "REMOVED", changed = "CHANGED", unchanged = "UNCHANGED"
    }

    /// Every key of either map with its status; nested values compare strictly (`1 != 1.0`).
    var statuses: [(key: String, status: Status)] {
        Set(new.keys).union(old.keys).sorted().map { key in
            switch (new[key], old[key]) {
            case (let n?, let o?): (key.string, Operators.equal(n, o, numbers: .everywhere) ? .unchanged : .changed)
            case (_?, nil): (key.string, .added)
            default: (key.string, .removed)
            }
        }
    }
}

/// A path: segments, some of which may be `{name}` placeholders for `bind`.
public struct RulesPath: Sendable, Equatable {
    public var segments: [String]
    /// The capture segments of a `path()` template not yet bound: position → variable name.
    /// While one is left the path equals nothing and its segments cannot be read, as on the
    /// reference.
    public var captures: [Int: String] = [:]
    /// Variables `bind` has filled in: binding one again is the reference's error.
    var bound: Set<String> = []

    public init(_ segments: [String]) { self.segments = segments }

    /// Paths are equal by what they name, segment by segment in bytes (`é` as one scalar and as
    /// `e` with a combining accent name two documents); what was bound to make them does not count.
    public static func == (a: RulesPath, b: RulesPath) -> Bool {
        a.segments.elementsEqual(b.segments, by: equalUTF8) && a.captures == b.captures
    }

    /// The first variable left unbound, by position.
    var unbound: String? { captures.min { $0.key < $1.key }?.value }

    /// `string(p)`: unbound captures write as empty segments.
    var rendered: String { "/" + segments.indices.map { captures[$0] == nil ? segments[$0] : "" }.joined(separator: "/") }

    /// `'/a/b'` or `'a/b'`.
    public init(parsing text: String) {
        segments = text.split(onASCII: "/", omittingEmptySubsequences: true).map(String.init)
    }

    /// `path(text)`: segments split on `/` after an optional leading one, each trimmed as Java
    /// trims (characters up to U+0020), then URL-decoded as Java's `URLDecoder` decodes (`+` is
    /// a space, `%2F` a slash inside the segment); an empty text or segment is the reference's
    /// error, and so is a `%` escape that does not decode.
    static func template(_ text: String) -> RulesValue {
        guard !text.isEmpty else { return .error("Empty Path Template is not allowed.") }
        var parts = text.split(onASCII: "/")
        if text.hasPrefix("/") { parts.removeFirst() }
        var path = RulesPath([])
        for part in parts {
            let trimmed = part.drop { $0.unicodeScalars.allSatisfy { $0.value <= 0x20 } }
            let segment = String(trimmed.reversed().drop { $0.unicodeScalars.allSatisfy { $0.value <= 0x20 } }.reversed())
            guard !segment.isEmpty else { return .error("Invalid Path Template \(text). Empty segment is not allowed.") }
            if segment.hasPrefix("{") {
                // `{name}`, `{name=*}` or `{name=**}`.
                guard segment.count > 1, segment.hasSuffix("}") else { return .error("Invalid Path Template \(text). The capture segment is not closed.") }
                let name = String(segment.dropFirst().dropLast().prefix { $0 != "=" })
                guard isIdentifier(name) else {
                    return .error("Invalid Path Template \(text). [Identifier [\(name)] should start with letter, dollar sign, or underscore and should not start with digit and must not contain spaces.")
                }
                path.captures[path.segments.count] = name
                path.segments.append(segment)
                continue
            }
            switch urlDecoded(segment) {
            case .success(let decoded): path.segments.append(decoded)
            case .failure(let problem): return .error("Unable to decode \(segment) to url. Error: URLDecoder: \(problem.message)")
            }
        }
        return .path(path)
    }

    struct DecodingProblem: Error { var message: String }

    /// Java's `URLDecoder.decode(text, UTF-8)`, with its errors in its words: `+` is a space, and
    /// each run of `%XX` escapes is UTF-8 (a malformed run gives U+FFFD). Each escape's two
    /// characters are read as `Integer.parseInt(…, 16)` reads them, so a sign may lead (`%+1`),
    /// but a negative value is refused.
    static func urlDecoded(_ text: String) -> Result<String, DecodingProblem> {
        let chars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        while i < chars.count {
            switch chars[i] {
            case "+":
                out.append(" ")
                i += 1
            case "%":
                var bytes: [UInt8] = []
                while i + 2 < chars.count, chars[i] == "%" {
                    switch hexByte(chars[i + 1], chars[i + 2]) {
                    case .success(let byte): bytes.append(byte)
                    case .failure(let problem): return .failure(problem)
                    }
                    i += 3
                }
                if i < chars.count, chars[i] == "%" { return .failure(DecodingProblem(message: "Incomplete trailing escape (%) pattern")) }
                out.append(contentsOf: String(decoding: bytes, as: UTF8.self).unicodeScalars)
            default:
                out.append(chars[i])
                i += 1
            }
        }
        return .success(String(out))
    }

    /// Two characters as `Integer.parseInt` reads them in base 16, as one byte.
    private static func hexByte(_ a: Unicode.Scalar, _ b: Unicode.Scalar) -> Result<UInt8, DecodingProblem> {
        func illegal(_ index: Int) -> DecodingProblem {
            DecodingProblem(message: "Illegal hex characters in escape (%) pattern - Error at index \(index) in: \"\(Character(a))\(Character(b))\"")
        }
        func digit(_ c: Unicode.Scalar) -> Int? { c.isASCII ? Int(String(c), radix: 16) : nil }
        if a == "-" || a == "+" {
            guard let low = digit(b) else { return .failure(illegal(1)) }
            guard a == "+" || low == 0 else { return .failure(DecodingProblem(message: "Illegal hex characters in escape (%) pattern - negative value")) }
            return .success(UInt8(low))
        }
        guard let high = digit(a) else { return .failure(illegal(0)) }
        guard let low = digit(b) else { return .failure(illegal(1)) }
        return .success(UInt8(high * 16 + low))
    }

    private static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.first, first.isLetter || first == "$" || first == "_" else { return false }
        return name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "$" || $0 == "_" }
    }

    /// The error for reading a path with a capture left unbound, if it has one.
    var unboundError: RulesValue? { unbound.map { .error("Variable \($0) is not bound in path template.") } }

    /// Whether `bind` can fill in `key`: a capture of that name. A `{key}` segment that is not one
    /// (interpolated, or decoded from `%7B…%7D`) is plain text, as on the reference.
    func hasVariable(_ key: String) -> Bool { captures.values.contains(key) }

    /// Binds `key` (see `hasVariable`) to `value`; a `{name=**}` capture takes a path, whose
    /// segments replace it.
    func binding(_ key: String, to value: RulesValue) -> RulesValue {
        var out = self
        guard let i = captures.first(where: { $0.value == key })?.key else { return .path(out) }
        if captures[i] != nil, segments[i].hasSuffix("=**}") {
            guard case .path(let inner) = value else { return .error("Type error. Received: [\(value.typeName)] Expected: [path].") }
            out.segments.replaceSubrange(i...i, with: inner.segments)
            out.captures = Dictionary(uniqueKeysWithValues: captures.compactMap { k, v in
                k == i ? nil : (k > i ? k + inner.segments.count - 1 : k, v)
            })
            return .path(out)
        }
        guard let text = Stdlib.stringify(value) else { return Stdlib.mismatch("string", [value]) }
        guard !text.isEmpty else { return .error("Cannot bind empty value to path template variable \(key).") }
        out.segments[i] = text
        out.captures[i] = nil
        return .path(out)
    }

    public var text: String { "/" + segments.joined(separator: "/") }
}

/// UTC instant with nanosecond precision.
public struct RulesTimestamp: Sendable, Equatable, Comparable {
    public var seconds: Int64
    public var nanos: Int32

    public init(seconds: Int64, nanos: Int32) {
        self.seconds = seconds
        self.nanos = nanos
    }

    public init(_ t: Timestamp) {
        seconds = t.seconds
        nanos = t.nanos
    }

    /// A timestamp string as `timestamp.value(string)` reads it on the reference, which is lenient:
    /// `Y-M-DTh:m:s[.fraction](Z|±h:m)` after optional spaces, with up to four digits of year,
    /// three of offset hours and two of anything else, fields past their range carried over
    /// (`2020-02-30` is March 1st, `24:00:00` the next day), and a fraction of any length cut to
    /// nanoseconds.
    init?(rfc3339 text: String) {
        var rest = Substring(text).drop { $0 == " " }
        func number(_ digits: ClosedRange<Int>) -> Int? {
            let run = rest.prefix { $0.isASCII && $0.isNumber }
            guard digits.contains(run.count), let n = Int(run) else { return nil }
            rest = rest.dropFirst(run.count)
            return n
        }
        func skip(_ c: Character) -> Bool {
            guard rest.first == c else { return false }
            rest = rest.dropFirst()
            return true
        }
        guard let year = number(1...4), skip("-"), let month = number(1...2), skip("-"), let day = number(1...2), skip("T"),
            let hour = number(1...2), skip(":"), let minute = number(1...2), skip(":"), let second = number(1...2)
        else { return nil }
        var nanos = 0
        if skip(".") {
            let fraction = rest.prefix { $0.isASCII && $0.isNumber }
            rest = rest.dropFirst(fraction.count)
            nanos = Int(String((fraction + "000000000").prefix(9))) ?? 0
        }
        var offset = 0
        if !skip("Z") {
            guard let sign = rest.first, sign == "+" || sign == "-" else { return nil }
            rest = rest.dropFirst()
            guard let h = number(1...3), skip(":"), let m = number(1...2) else { return nil }
            offset = (h * 60 + m) * 60 * (sign == "+" ? 1 : -1)
        }
        guard rest.isEmpty else { return nil }
        // Months past 12 (or 0) carry into the year; days past the month's end into the next.
        let months = year * 12 + month - 1
        let days = Stdlib.daysFromCivil(months / 12, months % 12 + 1, 1) + Int64(day - 1)
        let secs = days * 86_400 + Int64(hour * 3600 + minute * 60 + second - offset)
        guard Self.validSeconds.contains(secs) else { return nil }
        seconds = secs
        self.nanos = Int32(nanos)
    }

    /// Years 1 to 9999, as Firestore's timestamps.
    static let validSeconds = Timestamp.minSeconds...Timestamp.maxSeconds
    /// The reference's words for a timestamp outside them.
    static let invalid = "Timestamp is not valid. Seconds must be in range [-62,135,596,800, +253,402,300,799]. Nanos must be in range [0, +999,999,999]."

    public static func < (a: RulesTimestamp, b: RulesTimestamp) -> Bool { (a.seconds, a.nanos) < (b.seconds, b.nanos) }

    /// Adds a duration; nil outside Firestore's years 1 to 9999.
    func adding(_ d: RulesDuration) -> RulesTimestamp? {
        // No overflow in 128 bits: both are within about 2^69 nanoseconds of the epoch.
        let total = Int128(seconds) * 1_000_000_000 + Int128(nanos) + d.nanos
        var secs = total / 1_000_000_000
        var n = total % 1_000_000_000
        if n < 0 {
            n += 1_000_000_000
            secs -= 1
        }
        guard secs >= Int128(Self.validSeconds.lowerBound), secs <= Int128(Self.validSeconds.upperBound) else { return nil }
        return RulesTimestamp(seconds: Int64(secs), nanos: Int32(n))
    }
}

/// A signed span of time in nanoseconds, within Firestore's ±315,576,000,000.999999999 seconds
/// (10,000 years, as the reference's durations; more than an Int64 of nanoseconds holds).
public struct RulesDuration: Sendable, Equatable, Comparable {
    public let nanos: Int128

    static let limit: Int128 = 315_576_000_000 * 1_000_000_000 + 999_999_999
    /// The reference's words for a duration outside the range.
    static let outOfRange = "Duration is not valid. Seconds must be in range [-315,576,000,000, +315,576,000,000]. "
        + "Nanos must be in range [-999,999,999, +999,999,999]. Nanos must have the same sign as seconds."

    /// nil outside the range.
    public init?(nanos: Int128) {
        guard -Self.limit...Self.limit ~= nanos else { return nil }
        self.nanos = nanos
    }

    /// The duration, or the rules error for one outside the range.
    static func value(nanos: Int128) -> RulesValue {
        RulesDuration(nanos: nanos).map { .duration($0) } ?? .error(outOfRange)
    }

    /// Whole seconds, and the nanoseconds left over, both with the duration's sign.
    public var seconds: Int64 { Int64(nanos / 1_000_000_000) }
    public var nanosOfSecond: Int64 { Int64(nanos % 1_000_000_000) }

    /// The range is symmetric, so the negation of a duration is one.
    var negated: RulesDuration { RulesDuration(nanos: -nanos)! }

    public static func < (a: RulesDuration, b: RulesDuration) -> Bool { a.nanos < b.nanos }
}

/// What a list query's filter says of a field it does not pin to one value: one fact per
/// filter, in the filter's order, that every returned document satisfies. A comparison against
/// it holds when one fact alone implies it; otherwise it is an evaluation error, as on the
/// reference.
public struct FieldConstraint: Sendable {
    public enum Op: String, Sendable {
        case equal = "EQ", notEqual = "NEQ", lessThan = "LT", lessThanOrEqual = "LTE", greaterThan = "GT"
        case greaterThanOrEqual = "GTE", listContains = "LIST_CONTAINS"
    }

    public struct Fact: Sendable {
        public var op: Op
        public var value: RulesValue

        public init(_ op: Op, _ value: RulesValue) {
            self.op = op
            self.value = value
        }
    }

    public var facts: [Fact]

    /// What the reference records for a filter no value can satisfy (an equality or a range
    /// against null or NaN): the field equals both `true` and `false`.
    public static let impossible = [Fact(.equal, .bool(true)), Fact(.equal, .bool(false))]

    public init(_ facts: [Fact] = []) {
        self.facts = facts
    }

    /// Elements an array field is known to hold (`array-contains`).
    public var contained: [RulesValue] { facts.filter { $0.op == .listContains }.map(\.value) }
}
