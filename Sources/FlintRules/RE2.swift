import Foundation

/// Regular expressions with RE2's syntax and its guarantee: matching takes time linear in the
/// input (a Pike VM over a compiled program; no backtracking), so no rule can hang Flint.
/// Lookaround and backreferences are not RE2 and are refused when compiling.
public struct RE2: Sendable {
    public struct SyntaxError: Error, Sendable, Equatable {
        public var message: String
    }

    private enum Anchor: Sendable {
        case lineStart, lineEnd, textStart, textEnd, wordBoundary(Bool)
    }

    private indirect enum Node: Sendable {
        case empty
        case char(Unicode.Scalar)
        case any  // `.`
        case set(CharSet)
        case anchor(Anchor)
        case concat([Node])
        case alternate([Node])
        case repeatNode(Node, min: Int, max: Int?, greedy: Bool)
        case group(Node, capture: Int?)
    }

    /// A class of characters: ranges and predicates, possibly negated.
    private struct CharSet: Sendable {
        var ranges: [ClosedRange<UInt32>] = []
        var predicates: [@Sendable (Unicode.Scalar) -> Bool] = []
        var negated = false
        /// False once the set is as `(?i)` makes it (folded, or a class that folds no further).
        var foldsWithCase = true

        /// Case folding is built into the set when it is parsed (`folded`), not asked here.
        func contains(_ c: Unicode.Scalar) -> Bool {
            test(c) != negated
        }

        private func test(_ c: Unicode.Scalar) -> Bool {
            ranges.contains { $0.contains(c.value) } || predicates.contains { $0(c) }
        }

        /// The set as RE2 folds case: a scalar belongs when one of its case variants belongs to
        /// the set's positive part, and a negation applies after, so `(?i)\W` takes no `k` and
        /// no Kelvin sign, and `(?i)\w` takes both.
        func folded(variants: @escaping @Sendable (Unicode.Scalar) -> [Unicode.Scalar] = RE2.caseVariants) -> CharSet {
            let set = self
            var folded = CharSet(predicates: [{ c in variants(c).contains { set.test($0) } != set.negated }])
            folded.foldsWithCase = false
            return folded
        }
    }

    private enum Instruction: Sendable {
        case char(Unicode.Scalar)
        case any(dotAll: Bool)
        case set(CharSet)
        case assert(Anchor)
        case split(Int, Int)  // prefer the first
        case jump(Int)
        case save(Int)
        case match
    }

    private let program: [Instruction]
    /// The size of the compiled program, which bounds the work and memory of one match.
    var instructionCount: Int { program.count }
    public let groupCount: Int
    /// The numbers of named groups, `(?P<name>…)`, for `${name}` in replacements.
    public let groupNames: [String: Int]

    // MARK: - Compiling

    public init(_ pattern: String) throws(SyntaxError) {
        let scalars = Array(pattern.unicodeScalars)
        var parser = RegexParser(Self.unquoted(scalars))
        let node = try parser.parseAll()
        try Self.checkParenthesesCounted(scalars)
        guard Self.size(node) <= Self.maxProgram else {
            throw SyntaxError(message: "expression too large")
        }
        groupCount = parser.groups
        groupNames = parser.names
        var compiler = Compiler()
        compiler.emit(.save(0))
        compiler.compile(node, flags: parser.initialFlags)
        compiler.emit(.save(1))
        compiler.emit(.match)
        program = compiler.code
    }

    private struct Flags {
        var caseInsensitive = false
        var dotAll = false
        var multiLine = false
        var ungreedy = false
    }

    private struct RegexParser {
        let s: [Unicode.Scalar]
        var i = 0
        var groups = 0
        var names: [String: Int] = [:]
        var nesting = 0
        var initialFlags = Flags()
        /// Flags apply lexically; nodes carry them through wrapper groups.
        var flags = Flags()

        init(_ s: [Unicode.Scalar]) { self.s = s }

        func peek(_ k: Int = 0) -> Unicode.Scalar? { i + k < s.count ? s[i + k] : nil }

        mutating func parseAll() throws(SyntaxError) -> Node {
            let n = try alternation()
            if i < s.count { throw SyntaxError(message: "missing argument to repetition operator or unexpected ')'") }
            return n
        }

        mutating func alternation() throws(SyntaxError) -> Node {
            var branches = [try concatenation()]
            while peek() == "|" {
                i += 1
                branches.append(try concatenation())
            }
            return branches.count == 1 ? branches[0] : .alternate(branches)
        }

        mutating func concatenation() throws(SyntaxError) -> Node {
            var items: [Node] = []
            while let c = peek(), c != "|", c != ")" {
                var atom = try self.atom()
                // A flag group such as `(?i)` matches nothing, so a repetition after it repeats
                // what came before it (`a(?i)+` is `a+`, `a*(?i)+` is `(a*)+`), as in RE2.
                if case .empty = atom {
                    guard let next = peek(), "*+?{".unicodeScalars.contains(next), next != "{" || braces() != nil else { continue }
                    atom = items.popLast().map { .group($0, capture: nil) } ?? .empty
                }
                atom = try quantified(atom)
                items.append(atom)
            }
            return items.count == 1 ? items[0] : .concat(items)
        }

        mutating func quantified(_ atom: Node) throws(SyntaxError) -> Node {
            var node = atom
            while let c = peek() {
                var minimum = 0
                var maximum: Int?
                switch c {
                case "*": i += 1
                case "+":
                    i += 1
                    minimum = 1
                case "?":
                    i += 1
                    maximum = 1
                case "{":
                    guard let (lo, hi, length) = braces() else { return node }
                    i += length
                    minimum = lo
                    maximum = hi
                    if lo > 1000 || (hi ?? 0) > 1000 { throw SyntaxError(message: "invalid repeat count") }
                    if let hi, hi < lo { throw SyntaxError(message: "invalid repeat count") }
                default: return node
                }
                if case .empty = node { throw SyntaxError(message: "missing argument to repetition operator") }
                if case .repeatNode = node { throw SyntaxError(message: "bad repetition operator") }
                var greedy = !flags.ungreedy
                if peek() == "?" {
                    i += 1
                    greedy.toggle()
                }
                node = .repeatNode(node, min: minimum, max: maximum, greedy: greedy)
            }
            return node
        }

        /// `{n}`, `{n,}` or `{n,m}` at the cursor; nil when the brace is a literal.
        func braces() -> (Int, Int?, Int)? {
            var k = 1
            var lo = ""
            while let d = peek(k), d.properties.numericType != nil, d.isASCII {
                lo.unicodeScalars.append(d)
                k += 1
            }
            guard let low = Int(lo) else { return nil }
            if peek(k) == "}" { return (low, low, k + 1) }
            guard peek(k) == "," else { return nil }
            k += 1
            var hi = ""
            while let d = peek(k), d.properties.numericType != nil, d.isASCII {
                hi.unicodeScalars.append(d)
                k += 1
            }
            guard peek(k) == "}" else { return nil }
            return (low, hi.isEmpty ? nil : Int(hi), k + 1)
        }

        mutating func atom() throws(SyntaxError) -> Node {
            let c = s[i]
            i += 1
            switch c {
            case ".": return flags.dotAll ? .set(CharSet(ranges: [0...0x10FFFF])) : .any
            case "^": return .anchor(flags.multiLine ? .lineStart : .textStart)
            case "$": return .anchor(flags.multiLine ? .lineEnd : .textEnd)
            case "(": return try group()
            case "[": return .set(try characterClass())
            case "\\":
                let node = try escape(inClass: false).node
                if flags.caseInsensitive, case .set(let set) = node, set.foldsWithCase { return .set(set.folded()) }
                return node
            case "*", "+", "?": throw SyntaxError(message: "missing argument to repetition operator: \(c)")
            case "{":
                i -= 1
                if braces() != nil { throw SyntaxError(message: "missing argument to repetition operator") }
                i += 1
                // A brace that opens no count is itself, yet (as on the reference) it takes no
                // repetition after it: `a{+` and `{{2}` are refused, `{{` and `a{x}` are not.
                if let next = peek(), next == "*" || next == "+" || next == "?" || (next == "{" && braces() != nil) {
                    throw SyntaxError(message: "bad repetition operator")
                }
                return literal(c)
            default: return literal(c)
            }
        }

        func literal(_ c: Unicode.Scalar) -> Node {
            guard flags.caseInsensitive else { return .char(c) }
            var variants = CharSet(predicates: [{ RE2.caseVariants(c).contains($0) }])
            variants.foldsWithCase = false
            return .set(variants)
        }

        mutating func group() throws(SyntaxError) -> Node {
            nesting += 1
            defer { nesting -= 1 }
            guard nesting <= 100 else { throw SyntaxError(message: "expression nests too deeply") }
            var capture: Int?
            if peek() == "?" {
                i += 1
                if peek() == "P" || peek() == "<" {
                    if peek() == "<", peek(1) == "=" || peek(1) == "!" { throw SyntaxError(message: "invalid or unsupported Perl syntax: lookbehind") }
                    // Named group (?P<name>...) or (?<name>...).
                    if peek() == "P" { i += 1 }
                    guard peek() == "<" else { throw SyntaxError(message: "invalid named capture") }
                    i += 1
                    var name = ""
                    while let d = peek(), d != ">" {
                        name.unicodeScalars.append(d)
                        i += 1
                    }
                    guard peek() == ">" else { throw SyntaxError(message: "invalid named capture") }
                    i += 1
                    guard !name.isEmpty, name.unicodeScalars.allSatisfy({ $0.isASCII && ($0 == "_" || $0.properties.isAlphabetic || $0.properties.numericType != nil) })
                    else { throw SyntaxError(message: "invalid named capture") }
                    guard names[name] == nil else { throw SyntaxError(message: "duplicate capture group name") }
                    groups += 1
                    capture = groups
                    names[name] = groups
                } else if peek() == "=" || peek() == "!" {
                    throw SyntaxError(message: "invalid or unsupported Perl syntax: lookahead")
                } else {
                    // Flags: (?i) (?s) (?m) (?U), possibly negated, then ')' or ':'.
                    // One `-` at most, and a flag after it: `(?-)` and `(?i-)` are refused.
                    var on = true
                    var sawFlag = false
                    var newFlags = flags
                    while let d = peek(), d != ")", d != ":" {
                        i += 1
                        if d != "-" { sawFlag = true }
                        switch d {
                        case "-":
                            guard on else { throw SyntaxError(message: "invalid or unsupported Perl syntax: (?-") }
                            on = false
                            sawFlag = false
                        case "i": newFlags.caseInsensitive = on
                        case "s": newFlags.dotAll = on
                        case "m": newFlags.multiLine = on
                        case "U": newFlags.ungreedy = on
                        default: throw SyntaxError(message: "invalid or unsupported Perl syntax: (?\(d)")
                        }
                    }
                    guard let end = peek() else { throw SyntaxError(message: "missing closing )") }
                    if !on, !sawFlag { throw SyntaxError(message: "invalid or unsupported Perl syntax: (?-") }
                    i += 1
                    if end == ")" {
                        flags = newFlags
                        return .empty
                    }
                    let saved = flags
                    flags = newFlags
                    let inner = try alternation()
                    flags = saved
                    guard peek() == ")" else { throw SyntaxError(message: "missing closing )") }
                    i += 1
                    return .group(inner, capture: nil)
                }
            } else {
                groups += 1
                capture = groups
            }
            let saved = flags
            let inner = try alternation()
            flags = saved
            guard peek() == ")" else { throw SyntaxError(message: "missing closing )") }
            i += 1
            return .group(inner, capture: capture)
        }

        mutating func characterClass() throws(SyntaxError) -> CharSet {
            var set = CharSet()
            if peek() == "^" {
                set.negated = true
                i += 1
            }
            var first = true
            while true {
                guard let c = peek() else { throw SyntaxError(message: "missing closing ]") }
                if c == "]", !first {
                    i += 1
                    break
                }
                first = false
                // `[:` opens a named class only when `:]` follows somewhere; else `[` is itself.
                if c == "[", peek(1) == ":", let end = posixClassEnd() {
                    set.predicates.append(member(try posixClass(through: end)))
                    continue
                }
                var low: Unicode.Scalar
                i += 1
                if c == "\\" {
                    let e = try escape(inClass: true)
                    guard let scalar = e.scalar else {
                        if case .set(let inner) = e.node { set.predicates.append(member(inner)) }
                        continue
                    }
                    low = scalar
                } else {
                    low = c
                }
                var high = low
                if peek() == "-", let next = peek(1), next != "]" {
                    i += 1
                    let h = s[i]
                    i += 1
                    if h == "\\" {
                        guard let scalar = try escape(inClass: true).scalar else { throw SyntaxError(message: "invalid character class range") }
                        high = scalar
                    } else {
                        high = h
                    }
                    guard low.value <= high.value else { throw SyntaxError(message: "invalid character class range") }
                }
                set.ranges.append(low.value...high.value)
            }
            if flags.caseInsensitive {
                // The characters and ranges fold together; the named classes among the
                // predicates were folded one by one.
                let characters = CharSet(ranges: set.ranges)
                let folded: @Sendable (Unicode.Scalar) -> Bool = { c in RE2.caseVariants(c).contains { characters.contains($0) } }
                return CharSet(predicates: [folded] + set.predicates, negated: set.negated)
            }
            return set
        }

        /// A class named inside brackets (`[:^alpha:]`, `\W`, `\p{Greek}`) as a test of the
        /// bracket's, folded by itself under `(?i)`, as RE2 folds it: a negated one leaves out
        /// every case variant of what it negates, so `(?i)[[:^alpha:]]` takes neither `s` nor `ſ`.
        func member(_ item: CharSet) -> @Sendable (Unicode.Scalar) -> Bool {
            let item = flags.caseInsensitive && item.foldsWithCase ? item.folded() : item
            return { item.contains($0) }
        }

        /// Where the `:]` closing a `[:` at `i` starts: the first one, even past a `]`, and even
        /// sharing the colon of `[:` (so `[:]` is a class with no name, an error), as in RE2.
        func posixClassEnd() -> Int? {
            var j = i + 1
            while j + 1 < s.count {
                if s[j] == ":", s[j + 1] == "]" { return j }
                j += 1
            }
            return nil
        }

        /// The named class from `[:` at `i` to the `:]` at `end`; everything between is its name.
        mutating func posixClass(through end: Int) throws(SyntaxError) -> CharSet {
            guard end > i + 1 else { throw SyntaxError(message: "invalid character class range: [:]") }
            i += 2
            var negate = false
            if peek() == "^" {
                negate = true
                i += 1
            }
            var name = ""
            while i < end {
                name.unicodeScalars.append(s[i])
                i += 1
            }
            i += 2
            let test: @Sendable (Unicode.Scalar) -> Bool
            switch name {
            case "alpha": test = { $0.isASCII && $0.properties.isAlphabetic }
            case "digit": test = { $0 >= "0" && $0 <= "9" }
            case "alnum": test = { $0.isASCII && ($0.properties.isAlphabetic || ($0 >= "0" && $0 <= "9")) }
            case "upper": test = { $0 >= "A" && $0 <= "Z" }
            case "lower": test = { $0 >= "a" && $0 <= "z" }
            case "space": test = { [" ", "\t", "\n", "\r", "\u{0B}", "\u{0C}"].contains($0) }
            case "punct": test = { $0.isASCII && $0.value > 0x20 && $0.value < 0x7F && !$0.properties.isAlphabetic && !($0 >= "0" && $0 <= "9") }
            case "xdigit": test = { $0.properties.isASCIIHexDigit }
            case "word": test = { RE2.isWord($0) }
            case "blank": test = { $0 == " " || $0 == "\t" }
            case "cntrl": test = { $0.value < 0x20 || $0.value == 0x7F }
            case "print": test = { $0.value >= 0x20 && $0.value < 0x7F }
            case "graph": test = { $0.value > 0x20 && $0.value < 0x7F }
            case "ascii": test = { $0.isASCII }
            default: throw SyntaxError(message: "invalid character class range: [:\(negate ? "^" : "")\(name):]")
            }
            return CharSet(predicates: [test], negated: negate)
        }

        /// An escape after `\`: a single scalar, or a class node.
        mutating func escape(inClass: Bool) throws(SyntaxError) -> (node: Node, scalar: Unicode.Scalar?) {
            guard let c = peek() else { throw SyntaxError(message: "trailing \\") }
            i += 1
            switch c {
            case "d": return (.set(CharSet(ranges: [48...57])), nil)
            case "D": return (.set(CharSet(ranges: [48...57], negated: true)), nil)
            case "w": return (.set(CharSet(predicates: [{ RE2.isWord($0) }])), nil)
            case "W": return (.set(CharSet(predicates: [{ RE2.isWord($0) }], negated: true)), nil)
            case "s": return (.set(CharSet(ranges: [9...10, 12...13, 32...32])), nil)
            case "S": return (.set(CharSet(ranges: [9...10, 12...13, 32...32], negated: true)), nil)
            case "b" where !inClass: return (.anchor(.wordBoundary(true)), nil)
            case "B" where !inClass: return (.anchor(.wordBoundary(false)), nil)
            case "A" where !inClass: return (.anchor(.textStart), nil)
            case "z" where !inClass: return (.anchor(.textEnd), nil)
            case "p", "P":
                var negate = c == "P"
                var name = ""
                if peek() == "{" {
                    i += 1
                    while let d = peek(), d != "}" {
                        name.unicodeScalars.append(d)
                        i += 1
                    }
                    guard peek() == "}" else { throw SyntaxError(message: "invalid character class range") }
                    i += 1
                } else if let d = peek() {
                    name = String(d)
                    i += 1
                }
                let spelled = name
                if name.hasPrefix("^"), name.count > 1 {
                    negate.toggle()
                    name.removeFirst()
                }
                guard let test = RE2.unicodeClass(name) else { throw SyntaxError(message: "invalid character class range: \\p{\(spelled)}") }
                var set = CharSet(predicates: [test], negated: negate)
                if flags.caseInsensitive {
                    switch RE2.unicodeFolding[name] {
                    case .every?: set = set.folded()
                    case .outsidePairs?: set = set.folded(variants: RE2.variantsOutsidePairs)
                    case nil: set.foldsWithCase = false
                    }
                }
                return (.set(set), nil)
            case "n": return (literal("\n"), "\n")
            case "t": return (literal("\t"), "\t")
            case "r": return (literal("\r"), "\r")
            case "f": return (literal("\u{0C}"), "\u{0C}")
            case "v": return (literal("\u{0B}"), "\u{0B}")
            case "a": return (literal("\u{07}"), "\u{07}")
            case "x":
                var hex = ""
                if peek() == "{" {
                    i += 1
                    while let d = peek(), d != "}" {
                        hex.unicodeScalars.append(d)
                        i += 1
                    }
                    guard peek() == "}" else { throw SyntaxError(message: "invalid escape sequence: \\x{\(hex)") }
                    i += 1
                } else {
                    // Exactly two digits: `\x6` at the end is refused.
                    for _ in 0..<2 {
                        guard let d = peek() else { throw SyntaxError(message: "invalid escape sequence: \\x\(hex)") }
                        hex.unicodeScalars.append(d)
                        i += 1
                    }
                }
                guard let v = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(v) else { throw SyntaxError(message: "invalid escape sequence: \\x\(hex)") }
                return (literal(scalar), scalar)
            case "0"..."7":
                if c != "0" && !inClass { throw SyntaxError(message: "invalid escape sequence: backreferences are not supported (\\\(c))") }
                var oct = String(c)
                for _ in 0..<2 {
                    if let d = peek(), d >= "0", d <= "7" {
                        oct.unicodeScalars.append(d)
                        i += 1
                    }
                }
                let scalar = Unicode.Scalar(UInt32(oct, radix: 8) ?? 0) ?? "\0"
                return (literal(scalar), scalar)
            case "8", "9": throw SyntaxError(message: "invalid escape sequence: \\\(c)")
            default:
                // Beyond ASCII, an escaped scalar is itself, as on the reference (`\\é` is `é`).
                if c.isASCII, c.properties.isAlphabetic { throw SyntaxError(message: "invalid escape sequence: \\\(c)") }
                return (literal(c), c)
            }
        }
    }

    /// `\Q…\E` (to the end when `\E` is missing) rewritten as its characters, each escaped
    /// where needed, so that a repetition after it applies to the last one only, as in RE2.
    static func unquoted(_ s: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var out: [Unicode.Scalar] = []
        var i = 0
        while i < s.count {
            // A class is copied as it is: `\Q` quotes only outside one, and inside is an invalid escape.
            if s[i] == "[" {
                let end = classEnd(s, from: i)
                out += s[i..<end]
                i = end
                continue
            }
            guard s[i] == "\\", i + 1 < s.count else {
                out.append(s[i])
                i += 1
                continue
            }
            guard s[i + 1] == "Q" else {
                out += [s[i], s[i + 1]]
                i += 2
                continue
            }
            i += 2
            while i < s.count, !(s[i] == "\\" && i + 1 < s.count && s[i + 1] == "E") {
                let c = s[i]
                // Letters and digits escaped would mean classes or references; others are literal when escaped.
                if c.isASCII, !c.properties.isAlphabetic, !("0"..."9").contains(c) { out.append("\\") }
                out.append(c)
                i += 1
            }
            i += 2
        }
        return out
    }

    /// Where the character class opening at `start` ends (just past its `]`, or the end of the
    /// pattern when it has none): a `]` first in it, escaped, or closing a `[:name:]` is a member.
    private static func classEnd(_ s: [Unicode.Scalar], from start: Int) -> Int {
        var i = start + 1
        if i < s.count, s[i] == "^" { i += 1 }
        if i < s.count, s[i] == "]" { i += 1 }
        while i < s.count {
            switch s[i] {
            case "]": return i + 1
            case "\\": i += 2
            case "[" where i + 1 < s.count && s[i + 1] == ":":
                var j = i + 2
                while j + 1 < s.count, !(s[j] == ":" && s[j + 1] == "]") { j += 1 }
                i = j + 1 < s.count ? j + 2 : i + 1
            default: i += 1
            }
        }
        return s.count
    }

    private struct Compiler {
        var code: [Instruction] = []

        mutating func emit(_ i: Instruction) { code.append(i) }

        mutating func compile(_ node: Node, flags: Flags) {
            switch node {
            case .empty: break
            case .char(let c): emit(.char(c))
            case .any: emit(.any(dotAll: false))
            case .set(let set): emit(.set(set))
            case .anchor(let anchor): emit(.assert(anchor))
            case .concat(let items): for item in items { compile(item, flags: flags) }
            case .alternate(let branches):
                var jumps: [Int] = []
                for (k, branch) in branches.enumerated() {
                    if k < branches.count - 1 {
                        let split = code.count
                        emit(.split(split + 1, -1))
                        compile(branch, flags: flags)
                        jumps.append(code.count)
                        emit(.jump(-1))
                        code[split] = .split(split + 1, code.count)
                    } else {
                        compile(branch, flags: flags)
                    }
                }
                for j in jumps { code[j] = .jump(code.count) }
            case .group(let inner, let capture):
                if let capture { emit(.save(2 * capture)) }
                compile(inner, flags: flags)
                if let capture { emit(.save(2 * capture + 1)) }
            case .repeatNode(let inner, let minimum, let maximum, let greedy):
                if let maximum {
                    for _ in 0..<minimum { compile(inner, flags: flags) }
                    // Up to max - min optional copies, each skippable.
                    var exits: [Int] = []
                    for _ in minimum..<maximum {
                        let split = code.count
                        emit(.split(-1, -1))
                        exits.append(split)
                        compile(inner, flags: flags)
                    }
                    for split in exits { code[split] = greedy ? .split(split + 1, code.count) : .split(code.count, split + 1) }
                } else if minimum > 0 || RE2.canBeEmpty(inner) {
                    // `x{n,}` as RE2 compiles it, n - 1 copies then `x+`: the operand, then a
                    // choice of going back into it. With no minimum this is `(x+)?`, which RE2
                    // uses for an operand that can match empty: a loop back to a choice already
                    // taken at the same position is dropped, and this way what follows an empty
                    // pass keeps that pass's priority (`(a??)+` matches "" at the start of "a").
                    for _ in 0..<max(minimum - 1, 0) { compile(inner, flags: flags) }
                    let quest = code.count
                    if minimum == 0 { emit(.split(-1, -1)) }
                    let body = code.count
                    compile(inner, flags: flags)
                    emit(greedy ? .split(body, code.count + 1) : .split(code.count + 1, body))
                    if minimum == 0 { code[quest] = greedy ? .split(body, code.count) : .split(code.count, body) }
                } else {
                    let split = code.count
                    emit(.split(-1, -1))
                    compile(inner, flags: flags)
                    emit(.jump(split))
                    code[split] = greedy ? .split(split + 1, code.count) : .split(code.count, split + 1)
                }
            }
        }
    }

    /// The reference also refuses a pattern whose parentheses do not pair when every unescaped
    /// one is counted, those in brackets and between `\Q` and `\E` included: `[(]` and `[)(]`
    /// are refused there, `[(a)]` and `[\(]` are not.
    private static func checkParenthesesCounted(_ s: [Unicode.Scalar]) throws(SyntaxError) {
        let hint = "a parenthesis in brackets or \\Q…\\E counts too; escape it"
        var depth = 0
        var i = 0
        while i < s.count {
            switch s[i] {
            case "\\": i += 1
            case "(": depth += 1
            case ")":
                depth -= 1
                if depth < 0 { throw SyntaxError(message: "unexpected ): \(hint)") }
            default: break
            }
            i += 1
        }
        if depth > 0 { throw SyntaxError(message: "missing closing ): \(hint)") }
    }

    /// Whether a node can match the empty string.
    private static func canBeEmpty(_ node: Node) -> Bool {
        switch node {
        case .empty, .anchor: return true
        case .char, .any, .set: return false
        case .concat(let items): return items.allSatisfy(canBeEmpty)
        case .alternate(let branches): return branches.contains(where: canBeEmpty)
        case .group(let inner, _): return canBeEmpty(inner)
        case .repeatNode(let inner, let minimum, _, _): return minimum == 0 || canBeEmpty(inner)
        }
    }

    /// Instructions a pattern may compile to, counted generously (each repeated copy with its
    /// split): repetition copies its operand. The reference takes `(a{1000}){1000}`, counted
    /// here as 2,003,000 and about a million real instructions; it takes ten times more, which
    /// Flint refuses: memory grows with the program.
    static let maxProgram = 2_500_000

    private static func size(_ node: Node) -> Int {
        switch node {
        case .empty: return 0
        case .char, .any, .set, .anchor: return 1
        case .concat(let items): return items.reduce(0) { min($0 + size($1), maxProgram + 1) }
        case .alternate(let branches): return branches.reduce(0) { min($0 + size($1) + 2, maxProgram + 1) }
        case .group(let inner, _): return size(inner) + 2
        case .repeatNode(let inner, let minimum, let maximum, _):
            let copies = max(maximum ?? (minimum + 1), minimum, 1)
            let (total, overflow) = (size(inner) + 1).multipliedReportingOverflow(by: copies)
            return overflow ? maxProgram + 1 : min(total, maxProgram + 1)
        }
    }

    // MARK: - Matching

    /// The leftmost match starting at or after `from`, as capture ranges (scalar offsets; nil
    /// for groups that did not take part); with `anchored`, only a match starting at `from`.
    public func firstMatch(in text: [Unicode.Scalar], from: Int = 0, anchored: Bool = false, mustEnd: Bool = false) -> [Range<Int>?]? {
        let slots = 2 * (groupCount + 1)
        typealias Thread = (pc: Int, caps: [Int])
        var current: [Thread] = []
        var matched: [Int]?
        var onList = [Int](repeating: -1, count: program.count)
        var generation = 0

        func add(_ list: inout [Thread], _ pc: Int, _ caps: [Int], _ at: Int) {
            guard onList[pc] != generation else { return }
            onList[pc] = generation
            switch program[pc] {
            case .jump(let target): add(&list, target, caps, at)
            case .split(let a, let b):
                add(&list, a, caps, at)
                add(&list, b, caps, at)
            case .save(let slot):
                var copy = caps
                copy[slot] = at
                add(&list, pc + 1, copy, at)
            case .assert(let anchor):
                if Self.holds(anchor, text, at) { add(&list, pc + 1, caps, at) }
            default: list.append((pc, caps))
            }
        }

        var position = from
        generation += 1
        add(&current, 0, [Int](repeating: -1, count: slots), position)
        while true {
            var next: [Thread] = []
            generation += 1
            for (pc, caps) in current {
                var cut = false
                switch program[pc] {
                case .match:
                    // Threads after this one have lower priority and are dropped.
                    if !mustEnd || position == text.count {
                        matched = caps
                        cut = true
                    }
                case .char(let c):
                    if position < text.count, text[position] == c { add(&next, pc + 1, caps, position + 1) }
                case .any(let dotAll):
                    if position < text.count, dotAll || text[position] != "\n" { add(&next, pc + 1, caps, position + 1) }
                case .set(let set):
                    if position < text.count, set.contains(text[position]) { add(&next, pc + 1, caps, position + 1) }
                case .assert, .split, .jump, .save:
                    break
                }
                if cut { break }
            }
            if position >= text.count { break }
            position += 1
            // Unanchored and nothing found yet: start a new thread at this position, lowest priority.
            if matched == nil, !anchored {
                add(&next, 0, [Int](repeating: -1, count: slots), position)
            }
            // A thread that dies at once here (an assertion that fails, such as `$` before the
            // end) must not end an unanchored search: later positions still get theirs.
            if next.isEmpty, matched != nil || anchored { break }
            current = next
        }
        guard let caps = matched else { return nil }
        return (0...groupCount).map { g in
            let a = caps[2 * g]
            let b = caps[2 * g + 1]
            return a >= 0 && b >= 0 ? a..<b : nil
        }
    }

    /// Whether the whole text matches.
    public func matchesWhole(_ text: String) -> Bool {
        firstMatch(in: Array(text.unicodeScalars), anchored: true, mustEnd: true) != nil
    }

    /// Every non-overlapping match, left to right.
    public func allMatches(in text: [Unicode.Scalar]) -> [[Range<Int>?]] {
        var out: [[Range<Int>?]] = []
        var from = 0
        while from <= text.count, let m = firstMatch(in: text, from: from), let whole = m[0] {
            out.append(m)
            from = whole.isEmpty ? whole.upperBound + 1 : whole.upperBound
        }
        return out
    }

    private static func holds(_ anchor: Anchor, _ text: [Unicode.Scalar], _ at: Int) -> Bool {
        switch anchor {
        case .textStart: return at == 0
        case .textEnd: return at == text.count
        case .lineStart: return at == 0 || text[at - 1] == "\n"
        case .lineEnd: return at == text.count || text[at] == "\n"
        case .wordBoundary(let expected):
            let before = at > 0 && isWord(text[at - 1])
            let after = at < text.count && isWord(text[at])
            return (before != after) == expected
        }
    }

    static func isWord(_ c: Unicode.Scalar) -> Bool {
        (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") || c == "_"
    }

    /// The scalars a case-insensitive match takes for one another: all those with the same
    /// simple case folding, as RE2 folds (`k`, `K` and the Kelvin sign; `s`, `S` and `ſ`; `σ`, `ς`
    /// and `Σ`). Plain mappings miss some: `ſ` uppercases to `S`, but nothing maps to `ſ`.
    static func caseVariants(_ c: Unicode.Scalar) -> [Unicode.Scalar] {
        caseOrbits[foldKey(c)] ?? [c]
    }

    /// A scalar's simple case folding, from the mappings Swift has: the lowercase of its
    /// uppercase, where each is one scalar. Dotted and dotless i fold only in Turkish, which RE2
    /// leaves out, so they stay alone.
    /// A case mapping that is one scalar; nil when it is several (`ß` uppercases to `SS`).
    private static func single(_ mapping: String) -> Unicode.Scalar? {
        var scalars = mapping.unicodeScalars.makeIterator()
        guard let first = scalars.next(), scalars.next() == nil else { return nil }
        return first
    }

    private static func foldKey(_ c: Unicode.Scalar) -> UInt32 {
        guard c.value != 0x130, c.value != 0x131, c.properties.changesWhenCaseMapped else { return c.value }
        let upper = single(c.properties.uppercaseMapping) ?? c
        return (single(upper.properties.lowercaseMapping) ?? upper).value
    }

    /// Every scalar that case folding joins to others, by its folding; built on first use from
    /// the cased scalars (all lie below U+20000).
    ///
    /// Scalars newer than Unicode 13, and the Cyrillic letters U+1C80–U+1C88 (which join
    /// orbits such as `В в ᲀ`), fold with nothing, as on the reference, whose case data stops
    /// there; it never finishes compiling `(?i)ᲀ`.
    private static let caseOrbits: [UInt32: [Unicode.Scalar]] = {
        var orbits: [UInt32: [Unicode.Scalar]] = [:]
        for value in 0..<UInt32(0x20000) {
            guard let c = Unicode.Scalar(value), c.properties.changesWhenCaseMapped, !(0x1C80...0x1C88).contains(value),
                let age = c.properties.age, age.major < 13 || (age.major == 13 && age.minor == 0)
            else { continue }
            orbits[foldKey(c), default: []].append(c)
        }
        return orbits.filter { $0.value.count > 1 }
    }()

    /// `\p{name}`: a general category (one or two letters), `Any`, or a script by its long
    /// name (`\p{^name}` is negated where the escape is read).
    static func unicodeClass(_ name: String) -> (@Sendable (Unicode.Scalar) -> Bool)? {
        if name == "Any" { return { _ in true } }
        if let categories = generalCategories[name] { return { categories.contains($0.properties.generalCategory) } }
        guard let script = ScriptClass(name) else { return nil }
        return { script.contains($0) }
    }

    enum Folding { case every, outsidePairs }

    /// The Unicode classes `(?i)` widens, as the reference's tables fold them: by every case
    /// variant, or, for lowercase letters, only by the variants of scalars outside a plain
    /// upper/lower pair (`(?i)\p{Ll}` takes `Σ`, `ẞ` and the Kelvin sign, not `A` or `É`). Every
    /// other class (`L`, `M`, `Latin`, …) folds not at all, so `(?i)\pL` leaves out U+0345,
    /// which folds to `ι`.
    static let unicodeFolding: [String: Folding] = [
        "Lu": .every, "Lt": .every, "Mn": .every, "Common": .every, "Greek": .every, "Inherited": .every, "Ll": .outsidePairs,
    ]

    /// A scalar's case variants when they are more than a plain pair, one the simple upper, lower
    /// or title case mappings join both ways (`a`, `A`); the scalar alone otherwise.
    @Sendable static func variantsOutsidePairs(_ c: Unicode.Scalar) -> [Unicode.Scalar] {
        let variants = caseVariants(c)
        guard variants.count == 2 else { return variants }
        func pairs(_ lower: Unicode.Scalar, _ upper: Unicode.Scalar) -> Bool {
            single(upper.properties.lowercaseMapping) == lower
                && (single(lower.properties.uppercaseMapping) == upper || single(lower.properties.titlecaseMapping) == upper)
        }
        return pairs(variants[0], variants[1]) || pairs(variants[1], variants[0]) ? [c] : variants
    }

    /// The general categories by their short names, the one-letter ones grouping the others.
    /// `C` leaves out unassigned code points, which RE2's tables do not list.
    static let generalCategories: [String: Set<Unicode.GeneralCategory>] = {
        let categories: [String: Unicode.GeneralCategory] = [
            "Lu": .uppercaseLetter, "Ll": .lowercaseLetter, "Lt": .titlecaseLetter, "Lm": .modifierLetter, "Lo": .otherLetter,
            "Mn": .nonspacingMark, "Mc": .spacingMark, "Me": .enclosingMark,
            "Nd": .decimalNumber, "Nl": .letterNumber, "No": .otherNumber,
            "Pc": .connectorPunctuation, "Pd": .dashPunctuation, "Ps": .openPunctuation, "Pe": .closePunctuation,
            "Pi": .initialPunctuation, "Pf": .finalPunctuation, "Po": .otherPunctuation,
            "Sm": .mathSymbol, "Sc": .currencySymbol, "Sk": .modifierSymbol, "So": .otherSymbol,
            "Zs": .spaceSeparator, "Zl": .lineSeparator, "Zp": .paragraphSeparator,
            "Cc": .control, "Cf": .format, "Cs": .surrogate, "Co": .privateUse,
        ]
        var byName = categories.mapValues { Set([$0]) }
        for (name, category) in categories { byName[String(name.prefix(1)), default: []].insert(category) }
        return byName
    }()
}

/// Membership of a Unicode script, which Swift's scalar properties do not give: asked of ICU,
/// through Foundation's regular expressions, one scalar at a time (under a microsecond each).
struct ScriptClass: @unchecked Sendable {
    // NSRegularExpression is immutable once made, so one may be shared between threads.
    private let expression: NSRegularExpression

    /// The script's long name as Unicode writes it (`Cyrillic`, `Old_Italic`), or nil.
    init?(_ name: String) {
        guard Self.names.contains(name), let expression = try? NSRegularExpression(pattern: "^\\p{Script=\(name)}$") else { return nil }
        self.expression = expression
    }

    func contains(_ c: Unicode.Scalar) -> Bool {
        let text = String(c)
        return expression.firstMatch(in: text, range: NSRange(location: 0, length: text.utf16.count)) != nil
    }

    /// Unicode's script names (the Script property's long values).
    static let names: Set<String> = [
        "Adlam", "Ahom", "Anatolian_Hieroglyphs", "Arabic", "Armenian", "Avestan", "Balinese", "Bamum", "Bassa_Vah", "Batak",
        "Bengali", "Bhaiksuki", "Bopomofo", "Brahmi", "Braille", "Buginese", "Buhid", "Canadian_Aboriginal", "Carian",
        "Caucasian_Albanian", "Chakma", "Cham", "Cherokee", "Chorasmian", "Common", "Coptic", "Cuneiform", "Cypriot",
        "Cypro_Minoan", "Cyrillic", "Deseret", "Devanagari", "Dives_Akuru", "Dogra", "Duployan", "Egyptian_Hieroglyphs",
        "Elbasan", "Elymaic", "Ethiopic", "Georgian", "Glagolitic", "Gothic", "Grantha", "Greek", "Gujarati", "Gunjala_Gondi",
        "Gurmukhi", "Han", "Hangul", "Hanifi_Rohingya", "Hanunoo", "Hatran", "Hebrew", "Hiragana", "Imperial_Aramaic",
        "Inherited", "Inscriptional_Pahlavi", "Inscriptional_Parthian", "Javanese", "Kaithi", "Kannada", "Katakana", "Kawi",
        "Kayah_Li", "Kharoshthi", "Khitan_Small_Script", "Khmer", "Khojki", "Khudawadi", "Lao", "Latin", "Lepcha", "Limbu",
        "Linear_A", "Linear_B", "Lisu", "Lycian", "Lydian", "Mahajani", "Makasar", "Malayalam", "Mandaic", "Manichaean",
        "Marchen", "Masaram_Gondi", "Medefaidrin", "Meetei_Mayek", "Mende_Kikakui", "Meroitic_Cursive", "Meroitic_Hieroglyphs",
        "Miao", "Modi", "Mongolian", "Mro", "Multani", "Myanmar", "Nabataean", "Nag_Mundari", "Nandinagari", "New_Tai_Lue",
        "Newa", "Nko", "Nushu", "Nyiakeng_Puachue_Hmong", "Ogham", "Ol_Chiki", "Old_Hungarian", "Old_Italic",
        "Old_North_Arabian", "Old_Permic", "Old_Persian", "Old_Sogdian", "Old_South_Arabian", "Old_Turkic", "Old_Uyghur",
        "Oriya", "Osage", "Osmanya", "Pahawh_Hmong", "Palmyrene", "Pau_Cin_Hau", "Phags_Pa", "Phoenician", "Psalter_Pahlavi",
        "Rejang", "Runic", "Samaritan", "Saurashtra", "Sharada", "Shavian", "Siddham", "SignWriting", "Sinhala", "Sogdian",
        "Sora_Sompeng", "Soyombo", "Sundanese", "Syloti_Nagri", "Syriac", "Tagalog", "Tagbanwa", "Tai_Le", "Tai_Tham",
        "Tai_Viet", "Takri", "Tamil", "Tangsa", "Tangut", "Telugu", "Thaana", "Thai", "Tibetan", "Tifinagh", "Tirhuta", "Toto",
        "Ugaritic", "Unknown", "Vai", "Vithkuqi", "Wancho", "Warang_Citi", "Yezidi", "Yi", "Zanabazar_Square",
    ]
}
