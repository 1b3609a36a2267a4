/// One token of a rules source.
struct Token: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case identifier(String)
        case int(UInt64)  // the sign is an operator; 2^63 is kept for `-9223372036854775808`
        case float(Double)
        case string(String)
        case bytes([UInt8])
        case symbol(String)  // punctuation and operators
        /// A bare segment right after a `/`, URL-decoded (`b%20c` and `b+c` are `b c`).
        case pathSegment(String)
        /// The name after `service`: letters, digits, `.` and `-` (`cloud.firestore`).
        case serviceName(String)
        case end
    }

    var kind: Kind
    var start: SourcePosition
    var end: SourcePosition
    /// No whitespace or comment between this token and the previous one (path literals need it).
    var adjacent: Bool
}

/// Splits a rules source into tokens, recording problems instead of stopping at them.
struct Lexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var column = 1
    private(set) var diagnostics = Diagnostics()
    /// Where the last `*/` starts: a `/*` before it opens a comment, any later one a path.
    private let lastCommentClose: Int
    /// A `/*` with no `*/` after it, read as a path; named in a message if the rules do not parse.
    private(set) var unclosedComment: SourcePosition?

    init(_ source: String) {
        let scalars = Array(source.unicodeScalars)
        self.scalars = scalars
        lastCommentClose = scalars.indices.dropLast().last { scalars[$0] == "*" && scalars[$0 + 1] == "/" } ?? -1
    }

    private static let symbols = ["==", "!=", "<=", ">=", "&&", "||", "$(", "<", ">", "=", "!", "+", "-", "*", "/", "%", "(", ")",
        "[", "]", "{", "}", ",", ".", ":", ";", "?"]

    var position: SourcePosition { SourcePosition(line: line, column: column, offset: index) }

    mutating func tokens() -> [Token] {
        var out: [Token] = []
        while true {
            // The reference reads a service's name in a mode of its own, where only spaces may
            // part it from `service`: a comment there is refused.
            let afterService = out.last?.kind == .identifier("service")
            let skipped = skipTrivia(comments: !afterService)
            let start = position
            guard index < scalars.count else {
                out.append(Token(kind: .end, start: start, end: start, adjacent: !skipped))
                return out
            }
            let afterSlash = !skipped && out.last?.kind == .symbol("/")
            let kind = afterSlash ? pathSegment() ?? next() : afterService ? serviceName() ?? next() : next()
            let last = SourcePosition(line: line, column: max(column - 1, 1), offset: max(index - 1, start.offset))
            if let kind { out.append(Token(kind: kind, start: start, end: last, adjacent: !skipped)) }
        }
    }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        index + ahead < scalars.count ? scalars[index + ahead] : nil
    }

    private mutating func advance() -> Unicode.Scalar {
        let c = scalars[index]
        index += 1
        if c == "\n" {
            line += 1
            column = 1
        } else {
            column += 1
        }
        return c
    }

    /// Skips spaces and (unless told not to) comments; true when anything was skipped.
    private mutating func skipTrivia(comments: Bool = true) -> Bool {
        var skipped = false
        while let c = peek() {
            // A form feed is a space too, as on the reference; a vertical tab is not.
            if c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\u{0C}" {
                _ = advance()
            } else if !comments {
                break
            } else if c == "/", peek(1) == "/" {
                while let d = peek(), d != "\n" { _ = advance() }
            } else if c == "/", peek(1) == "*" {
                // The reference's lexer takes the longest token, so a `/*` with no `*/` after it
                // starts a path: `/a/*b` has the segment `*b`.
                guard lastCommentClose >= index + 2 else {
                    if unclosedComment == nil { unclosedComment = position }
                    break
                }
                _ = advance()
                _ = advance()
                while !(peek() == "*" && peek(1) == "/") { _ = advance() }
                _ = advance()
                _ = advance()
            } else {
                break
            }
            skipped = true
        }
        return skipped
    }

    private static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c == "_"
    }

    /// Names may hold `$` anywhere, as on the reference: `a$()` calls `a$`. A `$(` opens an
    /// interpolation only where no name goes on.
    private static func isIdentifierCharacter(_ c: Unicode.Scalar) -> Bool { isIdentifierStart(c) || isDigit(c) || c == "$" }

    private static func isDigit(_ c: Unicode.Scalar) -> Bool { c >= "0" && c <= "9" }

    private mutating func next() -> Token.Kind? {
        let start = position
        let c = peek()!
        // A lone `$` is no name (`$$` is).
        if Self.isIdentifierStart(c) || (c == "$" && peek(1) != "(" && peek(1).map(Self.isIdentifierCharacter) == true) {
            if c == "b" || c == "B", let q = peek(1), q == "'" || q == "\"" {
                _ = advance()
                return bytesLiteral(start)
            }
            var name = ""
            while let d = peek(), Self.isIdentifierCharacter(d) { name.unicodeScalars.append(advance()) }
            return .identifier(name)
        }
        if Self.isDigit(c) || (c == "." && peek(1).map(Self.isDigit) == true) { return number(start) }
        if c == "'" || c == "\"" { return .string(stringLiteral(start)) }
        // Spaces and comments may stand between `$` and `(`, as on the reference: `$ (db)`.
        if c == "$", peek(1) != "(" {
            let saved = (index, line, column, unclosedComment)
            _ = advance()
            if skipTrivia(), peek() == "(" {
                _ = advance()
                return .symbol("$(")
            }
            (index, line, column, unclosedComment) = saved
        }
        for symbol in Self.symbols where matches(symbol) {
            for _ in symbol.unicodeScalars { _ = advance() }
            return .symbol(symbol)
        }
        _ = advance()
        diagnostics.error("Unexpected character \(Self.visible(c)).", at: start)
        return nil
    }

    /// How many characters of `scalars` from `start` make a bare path segment as the reference
    /// reads them: a run of letters, digits, `_ - . ~ @ : & * ' +` and `%XX`, or one such run in
    /// parentheses (`(default)`). A `%` goes only before two hex digits, so `/a/b%2` is `/a/b`
    /// modulo 2. Zero when none starts there.
    static func segmentLength(_ scalars: [Unicode.Scalar], from start: Int) -> Int {
        func at(_ i: Int) -> Unicode.Scalar? { start + i < scalars.count ? scalars[start + i] : nil }
        func isSegmentCharacter(_ i: Int) -> Bool {
            guard let c = at(i) else { return false }
            if isIdentifierStart(c) || isDigit(c) { return true }
            if c == "%" { return [1, 2].allSatisfy { at(i + $0)?.properties.isASCIIHexDigit == true } }
            return "-.~@:&*'+".unicodeScalars.contains(c)
        }
        let parenthesized = at(0) == "("
        var length = parenthesized ? 1 : 0
        while isSegmentCharacter(length) { length += at(length) == "%" ? 3 : 1 }
        guard parenthesized else { return length }
        return length > 1 && at(length) == ")" ? length + 1 : 0
    }

    /// The segment after a `/` with nothing between, URL-decoded; nil, consuming nothing, when
    /// none follows.
    private mutating func pathSegment() -> Token.Kind? {
        let length = Self.segmentLength(scalars, from: index)
        guard length > 0 else { return nil }
        var raw = ""
        for _ in 0..<length { raw.unicodeScalars.append(advance()) }
        // Only whole `%XX` escapes were taken, so decoding cannot fail.
        return .pathSegment((try? RulesPath.urlDecoded(raw).get()) ?? raw)
    }

    /// A service's name, which the reference reads as its own kind of word: `cloud.firestore-`
    /// and `1a` are names (that it warns of), `cloud_firestore` is `cloud` and then `_firestore`.
    /// Nil, consuming nothing, when none follows.
    private mutating func serviceName() -> Token.Kind? {
        func isNameCharacter(_ c: Unicode.Scalar) -> Bool {
            (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || Self.isDigit(c) || c == "." || c == "-"
        }
        var name = ""
        while let c = peek(), isNameCharacter(c) { name.unicodeScalars.append(advance()) }
        return name.isEmpty ? nil : .serviceName(name)
    }

    /// A character for a message: quoted, or by code point when it would not show (a byte
    /// order mark, a control character, a non-breaking space).
    static func visible(_ c: Unicode.Scalar) -> String {
        switch c.properties.generalCategory {
        case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator, .unassigned, .privateUse, .surrogate:
            let name = c.value == 0xFEFF ? " (a byte order mark)" : ""
            return "U+" + String(c.value, radix: 16, uppercase: true).leftPadded(to: 4) + name
        default:
            return "'\(c)'"
        }
    }

    private func matches(_ symbol: String) -> Bool {
        for (i, s) in symbol.unicodeScalars.enumerated() where peek(i) != s { return false }
        return true
    }

    /// Numbers as the reference emulator reads them: `0` or digits without a leading zero, and
    /// floats with a point and digits on either side or both (`1.5`, `1.`, `.5`). There is no
    /// exponent: `1e3` is the number 1 followed by the name `e3`, which does not parse; nor does
    /// a method on a number literal (`1.size()` is `1.` and `size`).
    private mutating func number(_ start: SourcePosition) -> Token.Kind {
        var text = ""
        if peek() == "0" {
            // A leading zero is a number of its own: `007` is `0` followed by `07`.
            text.unicodeScalars.append(advance())
        } else {
            while let d = peek(), Self.isDigit(d) { text.unicodeScalars.append(advance()) }
        }
        var isFloat = false
        // `1.5` and `1.`; as on the reference, also before a name, so `1.size()` does not parse.
        if peek() == "." {
            isFloat = true
            text.unicodeScalars.append(advance())
            while let d = peek(), Self.isDigit(d) { text.unicodeScalars.append(advance()) }
        }
        if isFloat { return .float(Double(text.hasPrefix(".") ? "0" + text : text) ?? .nan) }
        guard let value = UInt64(text), value <= UInt64(Int64.max) + 1 else {
            diagnostics.error("Invalid number literal \(text).", at: start)
            return .int(0)
        }
        return .int(value)
    }

    /// The text of a quoted literal with its escapes; a bad escape is reported and skipped, so
    /// parsing goes on.
    private mutating func stringLiteral(_ start: SourcePosition) -> String {
        let quote = advance()
        var out = ""
        while true {
            guard let c = peek(), c != "\n" else {
                diagnostics.error("Unterminated string literal.", at: start)
                return out
            }
            if refusedRaw(c) { continue }
            _ = advance()
            if c == quote { break }
            guard c == "\\" else {
                out.unicodeScalars.append(c)
                continue
            }
            guard let v = escape(allowingUnicode: true), let scalar = Unicode.Scalar(v) else { continue }
            out.unicodeScalars.append(scalar)
        }
        return out
    }

    /// Reports and skips a backspace, form feed or carriage return written as itself in a
    /// quoted literal, which the reference refuses there; each has its escape.
    private mutating func refusedRaw(_ c: Unicode.Scalar) -> Bool {
        let escaped: String
        switch c {
        case "\u{08}": escaped = "\\b"
        case "\u{0C}": escaped = "\\f"
        case "\r": escaped = "\\r"
        default: return false
        }
        diagnostics.error("\(Self.visible(c)) cannot stand in a quoted literal; write \(escaped).", at: position)
        _ = advance()
        return true
    }

    /// The character an escape after a backslash stands for, as the reference reads them in
    /// string and bytes literals: `\\ \' \" \n \r \t \b \f`, two hex digits after `\x`,
    /// three octal digits up to `\377`, and (strings only) four hex digits after `\u`. Anything
    /// else is reported, and nil returned so that lexing goes on.
    private mutating func escape(allowingUnicode: Bool) -> UInt32? {
        let escapeAt = position
        guard let e = peek() else { return nil }
        _ = advance()
        func digits(_ count: Int, radix: UInt32, _ isDigit: (Unicode.Scalar) -> Bool) -> UInt32? {
            var text = ""
            for _ in 0..<count where peek().map(isDigit) == true { text.unicodeScalars.append(advance()) }
            return text.unicodeScalars.count == count ? UInt32(text, radix: Int(radix)) : nil
        }
        switch e {
        case "\\": return 0x5C
        case "'": return 0x27
        case "\"": return 0x22
        case "n": return 0x0A
        case "r": return 0x0D
        case "t": return 0x09
        case "b": return 0x08
        case "f": return 0x0C
        case "x":
            if let v = digits(2, radix: 16, \.properties.isASCIIHexDigit) { return v }
            diagnostics.error("Invalid \\x escape: two hex digits expected.", at: escapeAt)
        case "0"..."7":
            if let rest = digits(2, radix: 8, { $0 >= "0" && $0 <= "7" }), e.value <= 0x33 { return (e.value - 0x30) << 6 | rest }
            diagnostics.error("Invalid octal escape: three octal digits up to \\377 expected.", at: escapeAt)
        case "u" where allowingUnicode:
            if let v = digits(4, radix: 16, \.properties.isASCIIHexDigit) {
                guard (0xD800...0xDFFF).contains(v) else { return v }
                // Strings there are UTF-16: a high and a low surrogate escaped one after the
                // other make one character; a surrogate alone stands as U+FFFD here.
                let low = (2..<6).compactMap { peek($0) }
                if v < 0xDC00, peek() == "\\", peek(1) == "u", low.count == 4, low.allSatisfy(\.properties.isASCIIHexDigit),
                    let l = UInt32(String(String.UnicodeScalarView(low)), radix: 16), (0xDC00...0xDFFF).contains(l)
                {
                    for _ in 0..<6 { _ = advance() }
                    return 0x10000 + ((v - 0xD800) << 10) + (l - 0xDC00)
                }
                return 0xFFFD
            }
            diagnostics.error("Invalid \\u escape: four hex digits expected.", at: escapeAt)
        default:
            diagnostics.error("Invalid escape sequence '\\\(e)'.", at: escapeAt)
        }
        return nil
    }

    private mutating func bytesLiteral(_ start: SourcePosition) -> Token.Kind {
        let quote = advance()
        var out: [UInt8] = []
        while true {
            guard let c = peek(), c != "\n" else {
                diagnostics.error("Unterminated bytes literal.", at: start)
                return .bytes(out)
            }
            if refusedRaw(c) { continue }
            _ = advance()
            if c == quote { break }
            guard c == "\\" else {
                out += Array(String(c).utf8)
                continue
            }
            if let v = escape(allowingUnicode: false) { out.append(UInt8(v)) }
        }
        return .bytes(out)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
