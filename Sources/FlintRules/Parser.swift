/// Builds a `Ruleset` from source. Problems are collected in `diagnostics`; after one, the
/// parser skips to the next statement and goes on, so a file reports all its mistakes at once.
struct Parser {
    private var tokens: [Token]
    private var index = 0
    /// Nesting of expressions and of match blocks, bounded so hostile input cannot exhaust the stack.
    private var depth = 0
    private var matchDepth = 0
    /// Whether the service being read has methods to allow (an unknown one has none).
    private var serviceHasMethods = true
    /// Recursion through nested expressions, and the height of the tree built (chains of
    /// operators and of `.`, `[]` and calls are built by loops, not recursion). Both sit above the
    /// reference's own limit, which the checker applies with the reference's messages; these
    /// only keep every later pass over the tree within the stack.
    static let maxExpressionDepth = 256
    static let maxTreeHeight = 256
    static let tooComplex = "Expression is too complex to evaluate safely."
    static let maxMatchNesting = 20
    static let maxSourceBytes = 256 * 1024
    private(set) var diagnostics: Diagnostics
    /// Problems with the names of services and methods, which the reference finds once the
    /// file is read: like the checker's, its warnings are dropped after a syntax error.
    private(set) var declarations = Diagnostics()
    private(set) var ranges: [SourceRange] = []
    /// Each expression's height in the tree, by id.
    private var heights: [Int] = []
    private var parentheses: [Int: Parenthesized] = [:]
    private var callNames: [Int: SourcePosition] = [:]

    static let namespaces: Set<String> = ["math", "hashing", "timestamp", "duration", "latlng"]

    /// Words the reference's grammar keeps for itself: none names a variable, function,
    /// parameter, `let` or wildcard, or is called as a method. A field may still be read by one
    /// (`request.auth.match`).
    static let reservedWords: Set<String> = [
        "allow", "arguments", "break", "case", "continue", "default", "deny", "do", "each", "else", "extends", "for",
        "function", "goto", "if", "import", "in", "is", "let", "match", "not", "package", "return", "rules_version",
        "service", "switch", "then", "var", "while",
    ]

    /// What a rule may not define or call: a reserved word or a literal's name.
    static func isReservedName(_ word: String) -> Bool {
        reservedWords.contains(word) || word == "true" || word == "false" || word == "null"
    }

    struct Failure: Error {}

    /// A `/*` that the lexer read as a path for want of a `*/`.
    private let unclosedComment: SourcePosition?

    /// The source, for quoting tokens as written in messages.
    private let scalars: [Unicode.Scalar]

    init(_ source: String) {
        var lexer = Lexer(source)
        tokens = lexer.tokens()
        diagnostics = lexer.diagnostics
        unclosedComment = lexer.unclosedComment
        scalars = Array(source.unicodeScalars)
    }

    // MARK: - Tokens

    private var current: Token { tokens[index] }
    private var atEnd: Bool { if case .end = current.kind { true } else { false } }

    private func isSymbol(_ s: String, _ ahead: Int = 0) -> Bool {
        guard index + ahead < tokens.count, case .symbol(let t) = tokens[index + ahead].kind else { return false }
        return t == s
    }

    private func isWord(_ w: String) -> Bool {
        if case .identifier(let t) = current.kind { return t == w }
        return false
    }

    private mutating func advance() -> Token {
        let t = current
        if !atEnd { index += 1 }
        return t
    }

    private var previousEnd: SourcePosition { tokens[max(index - 1, 0)].end }

    private mutating func fail(_ message: String, at token: Token? = nil) -> Failure {
        diagnostics.error(message, at: (token ?? current).start)
        return Failure()
    }

    private mutating func expect(_ symbol: String, _ what: String? = nil) throws(Failure) {
        guard isSymbol(symbol) else { throw fail(what ?? "Expected '\(symbol)'.") }
        _ = advance()
    }

    private mutating func identifier(_ what: String) throws(Failure) -> String {
        guard case .identifier(let name) = current.kind else { throw fail("Expected \(what).") }
        _ = advance()
        return name
    }

    /// A name the rules define: an identifier that is not a reserved word.
    private mutating func definedName(_ what: String) throws(Failure) -> String {
        if case .identifier(let name) = current.kind, Self.isReservedName(name) {
            // Past the word, so that recovery does not read `match` or `allow` as a statement.
            let failure = reserved(name)
            _ = advance()
            throw failure
        }
        return try identifier(what)
    }

    /// A name that binds a value (a parameter, a `let`, a capture): nor may it be a package's.
    private mutating func variableName(_ what: String) throws(Failure) -> String {
        let at = current.start
        let name = try definedName(what)
        if Self.namespaces.contains(name) { diagnostics.error("\(name) is a package and cannot be used as variable name.", at: at) }
        return name
    }

    private mutating func reserved(_ word: String, at token: Token? = nil) -> Failure {
        fail("Unexpected '\(word)': it is a reserved word.", at: token)
    }

    /// Skips to just after the next `;` or before the next `}` or statement keyword.
    private mutating func synchronize() {
        var depth = 0
        while !atEnd {
            if depth == 0, isWord("allow") || isWord("match") || isWord("function") { return }
            if isSymbol("{") { depth += 1 }
            if isSymbol("}") {
                if depth == 0 { return }
                depth -= 1
            }
            let t = advance()
            if depth == 0, case .symbol(";") = t.kind { return }
        }
    }

    // MARK: - File structure

    mutating func parseRuleset(source: String) -> Ruleset {
        var version = 1
        if source.utf8.count > Self.maxSourceBytes {
            diagnostics.error("The ruleset is larger than 256 KB.", at: SourcePosition(line: 1, column: 1, offset: 0))
            return Ruleset(version: 2, functions: [], services: [], ranges: [], source: source)
        }
        var functions: [FunctionDecl] = []
        var services: [Service] = []
        var serviceNames = Set<String>()
        if isWord("rules_version") {
            let versionStart = advance()
            do throws(Failure) {
                try expect("=")
                guard case .string(let v) = current.kind else { throw fail("mismatched input '\(spelling(current) ?? "<EOF>")' expecting STRING") }
                guard v == "1" || v == "2" else { throw fail("Unsupported rules version \(v).", at: versionStart) }
                version = Int(v) ?? 1
                _ = advance()
                if isSymbol(";") { _ = advance() }
            } catch {
                synchronize()
            }
        }
        while !atEnd {
            if isWord("function") {
                if let f = function() { functions.append(f) }
            } else if isWord("service") {
                if let parsed = service(named: serviceNames) {
                    services.append(parsed)
                    serviceNames.insert(parsed.name)
                }
            } else if isWord("rules_version") {
                diagnostics.error("Unexpected 'rules_version': it must come first.", at: current.start)
                _ = advance()
                synchronize()
            } else {
                diagnostics.error("Expected 'service' or 'function'.", at: current.start)
                _ = advance()
                synchronize()
            }
        }
        if services.isEmpty, !diagnostics.hasErrors {
            diagnostics.error("A ruleset needs a 'service cloud.firestore { ... }' block.", at: current.start)
        }
        // Firestore reads such a `/*` as a path too; the likelier mistake is worth naming.
        if let unclosedComment, diagnostics.hasErrors {
            diagnostics.error("Unterminated comment: with no '*/' after it, '/*' starts a path.", at: unclosedComment)
        }
        return Ruleset(
            version: version, functions: functions, services: services, ranges: ranges, source: source, callNames: callNames,
            parentheses: parentheses)
    }

    /// A service block. As on the reference, a file may hold several with different names;
    /// a name other than Firestore's or Storage's loads with a warning, and so does every
    /// method its rules name, since such a service has none.
    private mutating func service(named earlier: Set<String>) -> Service? {
        _ = advance()
        let nameToken = current
        guard case .serviceName(let name) = nameToken.kind else {
            diagnostics.error("Expected a service name.", at: current.start)
            synchronize()
            return nil
        }
        _ = advance()
        if earlier.contains(name) { declarations.error("Duplicate service name declaration.", at: nameToken.start) }
        if name != Service.firestore, name != Service.storage {
            declarations.warning("Invalid service name: \(name).", at: nameToken.start, through: nameToken.end.offset)
        }
        serviceHasMethods = name == Service.firestore || name == Service.storage
        do throws(Failure) {
            try expect("{")
        } catch {
            synchronize()
            return nil
        }
        var functions: [FunctionDecl] = []
        var matches: [Match] = []
        var declarations = 0
        while !atEnd, !isSymbol("}") {
            declarations += 1
            if isWord("function") {
                if let f = function() { functions.append(f) }
            } else if isWord("match") {
                if let m = match() { matches.append(m) }
            } else {
                diagnostics.error("Expected 'match' or 'function' in a service.", at: current.start)
                _ = advance()
                synchronize()
            }
        }
        if declarations == 0, isSymbol("}") { diagnostics.error("The 'service' body must contain at least one declaration.", at: current.start) }
        if isSymbol("}") { _ = advance() } else { diagnostics.error("Expected '}' to close the service.", at: current.start) }
        return Service(name: name, functions: functions, matches: matches)
    }

    private mutating func match() -> Match? {
        let start = advance().start
        matchDepth += 1
        defer { matchDepth -= 1 }
        guard matchDepth <= Self.maxMatchNesting else {
            diagnostics.error("Too many nested match blocks (at most 10).", at: start)
            synchronize()
            if isSymbol("{") { skipBlock() }
            return nil
        }
        let pattern: [PatternSegment]
        do throws(Failure) {
            pattern = try matchPattern()
            try expect("{", "Expected '{' after the match pattern.")
        } catch {
            synchronize()
            if isSymbol("{") { skipBlock() }
            return nil
        }
        var functions: [FunctionDecl] = []
        var matches: [Match] = []
        var allows: [Allow] = []
        var declarations = 0
        while !atEnd, !isSymbol("}") {
            declarations += 1
            if isWord("function") {
                if let f = function() { functions.append(f) }
            } else if isWord("match") {
                if let m = match() { matches.append(m) }
            } else if isWord("allow") {
                if let a = allow() { allows.append(a) }
            } else {
                diagnostics.error("Expected 'allow', 'match' or 'function'.", at: current.start)
                _ = advance()
                synchronize()
            }
        }
        if declarations == 0, isSymbol("}") { diagnostics.error("The 'match' body must contain at least one declaration.", at: current.start) }
        if isSymbol("}") { _ = advance() } else { diagnostics.error("Expected '}' to close the match.", at: current.start) }
        return Match(pattern: pattern, functions: functions, matches: matches, allows: allows, position: start)
    }

    private mutating func skipBlock() {
        var depth = 0
        repeat {
            if isSymbol("{") { depth += 1 }
            if isSymbol("}") { depth -= 1 }
            _ = advance()
        } while depth > 0 && !atEnd
    }

    private mutating func matchPattern() throws(Failure) -> [PatternSegment] {
        var segments: [PatternSegment] = []
        var names = Set<String>()
        guard isSymbol("/") else { throw fail("A match pattern starts with '/'.") }
        while isSymbol("/") {
            _ = advance()
            if isSymbol("{") {
                let (name, recursive) = try capture(&names)
                segments.append(recursive ? .recursive(name) : .variable(name))
            } else {
                guard let word = pathWord() else { throw fail("Expected a path segment.") }
                segments.append(.literal(word))
            }
        }
        return segments
    }

    /// `{name}`, `{name=*}` (the same) or `{name=**}`, from its `{`: the name, and whether it
    /// takes any number of segments. Spaces may come between the parts, not between the stars.
    private mutating func capture(_ names: inout Set<String>) throws(Failure) -> (name: String, recursive: Bool) {
        _ = advance()
        let nameAt = current.start
        let name = try variableName("a wildcard name")
        if !names.insert(name).inserted { diagnostics.error("Variable \(name) already exists in the PathTemplate.", at: nameAt) }
        var recursive = false
        if isSymbol("=") {
            _ = advance()
            guard isSymbol("*") else { throw fail("Expected '*' or '**' after '='.") }
            _ = advance()
            if isSymbol("*"), current.adjacent {
                _ = advance()
                recursive = true
            }
        }
        try expect("}", "Expected '}' to close the wildcard.")
        return (name, recursive)
    }

    /// A bare path segment, as the lexer read it after its `/`.
    private mutating func pathWord() -> String? {
        guard case .pathSegment(let word) = current.kind else { return nil }
        _ = advance()
        return word
    }

    private mutating func allow() -> Allow? {
        let start = advance().start
        var methods: [Method] = []
        do throws(Failure) {
            var first = true
            repeat {
                if !first { _ = advance() }
                first = false
                let token = current
                let what = "a method (read, write, get, list, create, update, delete)"
                // A reserved word is no name at all there, not an unknown method.
                if case .identifier(let word) = token.kind, Self.isReservedName(word) { throw fail("Expected \(what).") }
                let name = try identifier(what)
                // Case does not matter (`allow Read` grants reads, as on the reference). Another
                // name loads with a warning and grants nothing.
                guard serviceHasMethods, let method = Method(rawValue: name.lowercased()) else {
                    declarations.warning("Invalid method name: \(name).", at: token.start, through: token.end.offset)
                    continue
                }
                methods.append(method)
            } while isSymbol(",")
            var condition: Expr?
            if isSymbol(":") {
                _ = advance()
                guard isWord("if") else { throw fail("Missing 'if' before conditional expression.") }
                _ = advance()
                if isSymbol(";") || isSymbol("}") { throw fail("Missing conditional expression after 'if'.") }
                condition = try expression()
                // What may follow a condition: `;`, the end of the match, or (`;` being optional)
                // the next statement. Anything else is reported as the reference reports it.
                if !isSymbol(";"), !isSymbol("}"), !isWord("allow"), !isWord("match"), !isWord("function"),
                    let text = spelling(current)
                {
                    throw fail("Unexpected '\(text)'.")
                }
            } else if isWord("if") {
                throw fail("Expected ':' before 'if'.")
            }
            if isSymbol(";") { _ = advance() }
            return Allow(methods: methods, condition: condition, position: start)
        } catch {
            synchronize()
            return nil
        }
    }

    /// A token as written, for messages; nil for the end of the source.
    private func spelling(_ token: Token) -> String? {
        guard token.kind != .end, token.start.offset <= token.end.offset, token.end.offset < scalars.count else { return nil }
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars[token.start.offset...token.end.offset])
        return text
    }

    private mutating func function() -> FunctionDecl? {
        let start = advance().start
        let nameStart = current.start
        do throws(Failure) {
            let name = try definedName("a function name")
            try expect("(")
            var parameters: [String] = []
            var parameterPositions: [SourcePosition] = []
            while !isSymbol(")") {
                let at = current.start
                let parameter = try variableName("a parameter name")
                if parameters.contains(parameter) { diagnostics.error("Variable \(parameter) is already defined.", at: at) }
                parameters.append(parameter)
                parameterPositions.append(at)
                guard isSymbol(",") else { break }
                _ = advance()
                // Unlike a call's arguments, parameters take no comma after the last.
                if isSymbol(")") { throw fail("Expected a parameter name after ','.") }
            }
            try expect(")")
            try expect("{")
            var lets: [(String, Expr)] = []
            var letPositions: [SourcePosition] = []
            var letKeywordPositions: [SourcePosition] = []
            while isWord("let") {
                letKeywordPositions.append(advance().start)
                letPositions.append(current.start)
                let letName = try variableName("a name after 'let'")
                try expect("=")
                let value = try expression()
                try expect(";", "Let assignments must end with ';'.")
                lets.append((letName, value))
            }
            guard isWord("return") else { throw fail("A function body needs 'return'.") }
            _ = advance()
            let body = try expression()
            if isSymbol(";") { _ = advance() }
            try expect("}", "Expected '}' to close the function.")
            return FunctionDecl(
                name: name, parameters: parameters, lets: lets, body: body, position: start, namePosition: nameStart,
                parameterPositions: parameterPositions, letPositions: letPositions, letKeywordPositions: letKeywordPositions)
        } catch {
            synchronize()
            if isSymbol("}") { _ = advance() }
            return nil
        }
    }

    // MARK: - Expressions

    private mutating func node(_ kind: ExprKind, from start: SourcePosition) throws(Failure) -> Expr {
        var height = 1
        kind.forEachChild { height = max(height, heights[$0.id] + 1) }
        guard height <= Self.maxTreeHeight else {
            diagnostics.error(Self.tooComplex, at: start)
            throw Failure()
        }
        ranges.append(SourceRange(start, previousEnd))
        heights.append(height)
        return Expr(id: ranges.count - 1, kind: kind)
    }

    mutating func expression() throws(Failure) -> Expr {
        let start = current.start
        let condition = try binary(0)
        guard isSymbol("?") else { return condition }
        _ = advance()
        let then = try expression()
        try expect(":", "Expected ':' in a conditional expression.")
        let otherwise = try expression()
        return try node(.ternary(condition, then, otherwise), from: start)
    }

    /// Binary operators from loosest to tightest, as Firestore's grammar orders them: `in` is
    /// looser than `is` and equality (`a in b == c` is `a in (b == c)`), and `is` looser than
    /// equality (`a == b is bool` is `(a == b) is bool`).
    private static let levels: [[String]] = [["||"], ["&&"], ["in"], ["is"], ["==", "!="], ["<", "<=", ">", ">="], ["+", "-"], ["*", "/", "%"]]

    /// Whether the token at `i`, after a '/', makes that '/' the start of a path as the
    /// reference reads it: a bare segment right after it (`b`, `1`, `(default)`; the lexer reads
    /// one only there), or an interpolation or a wildcard (`{x}`, `{x=**}`), even with spaces
    /// between. Anything else (`((2))`, `[2][0]`, `!x`, a map, `/ b`) leaves it a division.
    private func startsPath(at i: Int) -> Bool {
        guard i < tokens.count else { return false }
        switch tokens[i].kind {
        case .pathSegment, .symbol("$("): return true
        case .symbol("{"):
            guard i + 2 < tokens.count, case .identifier = tokens[i + 1].kind else { return false }
            return tokens[i + 2].kind == .symbol("}") || tokens[i + 2].kind == .symbol("=")
        default: return false
        }
    }

    private func binaryOperator() -> (op: String, level: Int)? {
        for (level, ops) in Self.levels.enumerated() {
            for op in ops {
                if op == "is" || op == "in" { if isWord(op) { return (op, level) } } else if isSymbol(op) { return (op, level) }
            }
        }
        return nil
    }

    /// Precedence climbing: operators of `minLevel` or tighter extend `left`, each taking a right
    /// side of strictly tighter ones (all are left-associative). `is` takes a type name and no
    /// right side, so any operator may follow it: `x is int == true` is `(x is int) == true`.
    private mutating func binary(_ minLevel: Int) throws(Failure) -> Expr {
        let start = current.start
        var left = try unary()
        while let (op, level) = binaryOperator().flatMap({ $0.level >= minLevel ? $0 : nil }) {
            try refuseIncrement()
            // Firestore's lexer reads a '/' with a path segment right after it as the start of
            // a path, so `a/b` does not load there; refuse it here too, with the way out.
            if op == "/", startsPath(at: index + 1) {
                if case .pathSegment = tokens[index + 1].kind {
                    throw fail("Division needs a space after '/': Firestore reads '/' followed directly by a name, a number or '(' as the start of a path.")
                }
                throw fail("'$(' and '{' go only in paths: Firestore reads the '/' before them as the start of a path, not a division.")
            }
            _ = advance()
            if op == "is" {
                let typeName = try identifier("a type name after 'is'")
                left = try node(.isType(left, typeName), from: start)
            } else {
                let right = try binary(level + 1)
                left = try node(.binary(op, left, right), from: start)
            }
        }
        return left
    }

    /// `++` and `--` (two signs with nothing between) are refused as the reference refuses
    /// them, at the token after the pair.
    private mutating func refuseIncrement() throws(Failure) {
        for sign in ["+", "-"] where isSymbol(sign) && isSymbol(sign, 1) && tokens[index + 1].adjacent {
            throw fail("Increment (++) and decrement (--) operators are not supported.", at: tokens[min(index + 2, tokens.count - 1)])
        }
    }

    /// Every nesting (parentheses, lists, maps, calls, `!` and `-`) passes through here once per
    /// level, so this is where depth is bounded.
    private mutating func unary() throws(Failure) -> Expr {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxExpressionDepth else { throw fail(Self.tooComplex) }
        let start = current.start
        if isSymbol("!") {
            _ = advance()
            return try node(.unary("!", try unary()), from: start)
        }
        if isSymbol("-") {
            try refuseIncrement()
            _ = advance()
            // One sign only, as in Firestore's grammar: `- -1` and `-!x` do not load.
            if isSymbol("-") || isSymbol("!") { throw fail("Unexpected '\(isSymbol("-") ? "-" : "!")'.") }
            // `-9223372036854775808` is a literal, not the negation of an overflowing one; a
            // member, index or call after a number binds to it before the sign (`-1[0]` is
            // `-(1[0])`), as in the reference's grammar.
            if case .int(let n) = current.kind, n > UInt64(Int64.max) || !(isSymbol(".", 1) || isSymbol("[", 1)) {
                _ = advance()
                let literal = try node(.int(n == UInt64(Int64.max) + 1 ? Int64.min : -Int64(n)), from: start)
                return try postfix(literal, start)
            }
            return try node(.unary("-", try unary()), from: start)
        }
        return try postfix(try primary(), start)
    }

    private mutating func postfix(_ base: Expr, _ start: SourcePosition) throws(Failure) -> Expr {
        var e = base
        while true {
            if isSymbol(".") {
                _ = advance()
                let nameAt = current.start
                // The two words that open a file are not even field names there.
                if case .identifier(let word) = current.kind, word == "rules_version" || word == "service" { throw reserved(word) }
                let name = try identifier("a field or method name after '.'")
                if isSymbol("(") {
                    if Self.isReservedName(name) { throw fail("Unexpected '(': '\(name)' is a reserved word and names no method.") }
                    let arguments = try callArguments()
                    if case .identifier(let ns) = e.kind, Self.namespaces.contains(ns) {
                        e = try node(.call(name: ns + "." + name, receiver: nil, arguments: arguments), from: start)
                    } else {
                        e = try node(.call(name: name, receiver: e, arguments: arguments), from: start)
                    }
                    callNames[e.id] = nameAt
                } else {
                    e = try node(.member(e, name), from: start)
                }
            } else if isSymbol("[") {
                _ = advance()
                // A slice may leave out either bound: `x[i:]`, `x[:j]`, `x[:]`.
                let first = isSymbol(":") ? nil : try expression()
                if isSymbol(":") {
                    _ = advance()
                    let second = isSymbol("]") ? nil : try expression()
                    try expect("]")
                    e = try node(.slice(e, first, second), from: start)
                } else if let first {
                    try expect("]")
                    e = try node(.index(e, first), from: start)
                }
            } else {
                return e
            }
        }
    }

    private mutating func callArguments() throws(Failure) -> [Expr] {
        try expect("(")
        var arguments: [Expr] = []
        while !isSymbol(")") {
            arguments.append(try expression())
            if isSymbol(",") { _ = advance() } else { break }
        }
        try expect(")", "Expected ')' after the arguments.")
        return arguments
    }

    private mutating func primary() throws(Failure) -> Expr {
        let start = current.start
        let token = current
        switch token.kind {
        case .int(let n):
            _ = advance()
            guard n <= UInt64(Int64.max) else { throw fail("Integer literal \(n) is out of range.", at: token) }
            return try node(.int(Int64(n)), from: start)
        case .float(let f):
            _ = advance()
            return try node(.float(f), from: start)
        case .string(let s):
            _ = advance()
            return try node(.string(s), from: start)
        case .bytes(let b):
            _ = advance()
            return try node(.bytes(b), from: start)
        case .identifier(let name):
            _ = advance()
            if Self.reservedWords.contains(name) { throw reserved(name, at: token) }
            switch name {
            case "true": return try node(.bool(true), from: start)
            case "false": return try node(.bool(false), from: start)
            case "null": return try node(.null, from: start)
            default: break
            }
            if isSymbol("(") {
                let arguments = try callArguments()
                let call = try node(.call(name: name, receiver: nil, arguments: arguments), from: start)
                callNames[call.id] = start
                return call
            }
            return try node(.identifier(name), from: start)
        case .symbol("("):
            _ = advance()
            let inner = try expression()
            try expect(")", "Expected ')'.")
            // A parenthesised expression starts at its parenthesis; the checker still counts each
            // pair of parentheses as a level, as the reference does.
            parentheses[inner.id, default: Parenthesized(opens: [], inner: ranges[inner.id].start)].opens.insert(start, at: 0)
            ranges[inner.id] = SourceRange(start, ranges[inner.id].end)
            return inner
        case .symbol("["):
            _ = advance()
            var items: [Expr] = []
            while !isSymbol("]") {
                items.append(try expression())
                if isSymbol(",") { _ = advance() } else { break }
            }
            try expect("]", "Expected ']' to close the list.")
            return try node(.list(items), from: start)
        case .symbol("{"):
            _ = advance()
            var entries: [(Expr, Expr)] = []
            while !isSymbol("}") {
                let key = try expression()
                try expect(":", "Expected ':' after a map key.")
                entries.append((key, try expression()))
                if isSymbol(",") { _ = advance() } else { break }
            }
            try expect("}", "Expected '}' to close the map.")
            return try node(.map(entries), from: start)
        case .symbol("/"):
            return try pathLiteral(start)
        case .end:
            throw fail("Unexpected end of the ruleset.")
        default:
            throw fail("Unexpected token in an expression.")
        }
    }

    private mutating func pathLiteral(_ start: SourcePosition) throws(Failure) -> Expr {
        var parts: [PathPart] = []
        var captureNames = Set<String>()
        var first = true
        // As on the reference, a path goes on across spaces, line breaks and comments wherever a
        // '/' starts a segment (`startsPath`): `/databases/$(db)/documents` then `/users/$(uid)`
        // on the next line is one path. A '/' before anything else ends the path and divides.
        while isSymbol("/"), first || startsPath(at: index + 1) {
            first = false
            _ = advance()
            if isSymbol("$(") {
                _ = advance()
                let inner = try expression()
                try expect(")", "Expected ')' to close '$('.")
                parts.append(.interpolated(inner))
            } else if isSymbol("{") {
                // A capture makes the path a template, as `path('/a/{x}')` is.
                let (name, recursive) = try capture(&captureNames)
                parts.append(.capture(name, recursive: recursive))
            } else if let word = pathWord() {
                parts.append(.literal(word))
            } else {
                throw fail("Expected a path segment.")
            }
        }
        // The reference's parser, still in the path, refuses a '/' after it that is followed
        // (past a space) by '/', '-' or '[', where anything else makes a division.
        if isSymbol("/"), index + 1 < tokens.count, [.symbol("/"), .symbol("-"), .symbol("[")].contains(tokens[index + 1].kind) {
            throw fail("Forward slash '/' found where identifier or binding expected.")
        }
        return try node(.path(parts), from: start)
    }
}
