/// Compile-time checks the reference emulator makes when a ruleset is loaded: wildcard shapes,
/// function limits and recursion, `is` type names, and constant regular expressions.
struct Checker {
    let version: Int
    var diagnostics = Diagnostics()
    private let ranges: [SourceRange]
    private var types: TypeWarnings

    init(_ ruleset: Ruleset) {
        version = ruleset.version
        ranges = ruleset.ranges
        types = TypeWarnings(source: ruleset.source, ranges: ruleset.ranges)
    }

    static let maxParameters = 7
    static let maxLets = 10
    static let maxMatchDepth = 10

    mutating func check(_ ruleset: Ruleset) {
        for f in Self.unusedFunctions(ruleset) {
            diagnostics.warning("Function \(f.name) is never called by any rule.", at: f.position)
        }
        var scopes: [[FunctionDecl]] = [ruleset.functions]
        checkFunctions(ruleset.functions, scopes: scopes)
        guard let service = ruleset.service else { return }
        scopes.append(service.functions)
        checkFunctions(service.functions, scopes: scopes)
        for m in service.matches { checkMatch(m, scopes: scopes, depth: 1, wildcards: [:]) }
        for (at, message) in types.found { diagnostics.warning(message, at: at) }
    }

    /// Functions that no allow condition can reach, directly or through other functions.
    static func unusedFunctions(_ ruleset: Ruleset) -> [FunctionDecl] {
        var all: [FunctionDecl] = ruleset.functions
        var conditions: [Expr] = []
        func collect(_ m: Match) {
            all += m.functions
            for a in m.allows { if let c = a.condition { conditions.append(c) } }
            for child in m.matches { collect(child) }
        }
        if let service = ruleset.service {
            all += service.functions
            for m in service.matches { collect(m) }
        }
        var reached = Set<String>()
        var frontier: [Expr] = conditions
        while let e = frontier.popLast() {
            var names: [String] = []
            callNames(e, into: &names)
            for name in names where reached.insert(name).inserted {
                for f in all where f.name == name { frontier.append(f.body); frontier += f.lets.map(\.value) }
            }
        }
        return all.filter { !reached.contains($0.name) }
    }

    private mutating func checkMatch(
        _ m: Match, scopes: [[FunctionDecl]], depth: Int, wildcards outer: [String: TypeWarnings.StaticType]
    ) {
        if depth > Self.maxMatchDepth { diagnostics.error("Too many nested match blocks (at most \(Self.maxMatchDepth)).", at: m.position) }
        let recursive = m.pattern.enumerated().filter { if case .recursive = $0.element { true } else { false } }
        if version < 2 {
            if let (i, _) = recursive.first, i != m.pattern.count - 1 {
                diagnostics.error("A recursive wildcard {name=**} must be the last segment of a match in rules_version 1.", at: m.position)
            }
        } else if recursive.count > 1 {
            diagnostics.error("A match pattern may hold at most one recursive wildcard.", at: m.position)
        }
        var names = Set<String>()
        var wildcards = outer
        for segment in m.pattern {
            switch segment {
            case .variable(let n), .recursive(let n):
                if !names.insert(n).inserted { diagnostics.error("The wildcard {\(n)} is bound twice in one pattern.", at: m.position) }
                if case .recursive = segment { wildcards[n] = .path } else { wildcards[n] = .string }
            case .literal: break
            }
        }
        let inner = scopes + [m.functions]
        checkFunctions(m.functions, scopes: inner)
        for a in m.allows {
            guard let c = a.condition else { continue }
            checkExpression(c)
            types.check(c, wildcards: wildcards)
        }
        for child in m.matches { checkMatch(child, scopes: inner, depth: depth + 1, wildcards: wildcards) }
    }

    private mutating func checkFunctions(_ functions: [FunctionDecl], scopes: [[FunctionDecl]]) {
        var seen = Set<String>()
        for f in functions {
            if !seen.insert(f.name).inserted { diagnostics.error("Function \(f.name) is declared twice in one scope.", at: f.position) }
            if f.parameters.count > Self.maxParameters {
                diagnostics.error("Function \(f.name) has \(f.parameters.count) parameters; at most \(Self.maxParameters) are allowed.", at: f.position)
            }
            if f.lets.count > Self.maxLets {
                diagnostics.error("Function \(f.name) has \(f.lets.count) let bindings; at most \(Self.maxLets) are allowed.", at: f.position)
            }
            if version < 2, !f.lets.isEmpty { diagnostics.error("let bindings need rules_version = '2'.", at: f.position) }
            for l in f.lets { checkExpression(l.value) }
            checkExpression(f.body)
            // Parameters and lets are known only at run time; literals still are.
            for e in f.lets.map(\.value) + [f.body] { types.check(e, wildcards: [:]) }
            if calls(f, reaching: f.name, scopes: scopes, visited: []) {
                diagnostics.error("Function \(f.name) calls itself (directly or through other functions); recursion is not allowed.", at: f.namePosition)
            }
        }
    }

    /// Whether `f`'s body can reach a call of `target`, resolving names through the scopes.
    private func calls(_ f: FunctionDecl, reaching target: String, scopes: [[FunctionDecl]], visited: Set<String>) -> Bool {
        var names: [String] = []
        for e in [f.body] + f.lets.map(\.value) { Self.callNames(e, into: &names) }
        for name in names {
            if name == target { return true }
            guard !visited.contains(name), let callee = scopes.reversed().lazy.compactMap({ $0.first { $0.name == name } }).first else { continue }
            if calls(callee, reaching: target, scopes: scopes, visited: visited.union([name])) { return true }
        }
        return false
    }

    private static func callNames(_ e: Expr, into names: inout [String]) {
        visit(e) { node in
            if case .call(let name, nil, _) = node.kind { names.append(name) }
        }
    }

    private static func visit(_ e: Expr, _ body: (Expr) -> Void) {
        body(e)
        switch e.kind {
        case .list(let items): for i in items { visit(i, body) }
        case .map(let entries): for (k, v) in entries { visit(k, body); visit(v, body) }
        case .path(let parts): for case .interpolated(let inner) in parts { visit(inner, body) }
        case .member(let b, _): visit(b, body)
        case .index(let b, let i): visit(b, body); visit(i, body)
        case .slice(let b, let i, let j): for x in [b, i, j].compactMap({ $0 }) { visit(x, body) }
        case .call(_, let receiver, let arguments):
            if let receiver { visit(receiver, body) }
            for a in arguments { visit(a, body) }
        case .unary(_, let o): visit(o, body)
        case .binary(_, let l, let r): visit(l, body); visit(r, body)
        case .isType(let o, _): visit(o, body)
        case .ternary(let c, let t, let f): visit(c, body); visit(t, body); visit(f, body)
        case .null, .bool, .int, .float, .string, .bytes, .identifier: break
        }
    }

    private mutating func checkExpression(_ e: Expr) {
        var found: [(SourcePosition, String)] = []
        Self.visit(e) { node in
            switch node.kind {
            case .isType(_, let name):
                if !Stdlib.typeNames.contains(name) {
                    // The emulator points just past the type name.
                    let end = ranges[node.id].end
                    let after = SourcePosition(line: end.line, column: end.column + 1, offset: end.offset + 1)
                    found.append((after, "An unsupported type identifier was used with the 'is' operator. Received \(name). Expected one of "
                        + Stdlib.typeNameList.joined(separator: ",")))
                }
                if name == "null" {
                    // `null` is a keyword, not a type name; `x is null` is refused as the reference
                    // refuses it (`null is int` is fine, and false).
                    let end = ranges[node.id].end
                    let typeStart = SourcePosition(line: end.line, column: end.column - 3, offset: end.offset - 3)
                    found.append((typeStart, "mismatched input 'null' expecting IDENTIFIER"))
                }
            // The reference checks literal patterns of `matches` and `split` when loading, and those
            // of `replace` only when evaluating.
            case .call(let name, .some, let arguments) where ["matches", "split"].contains(name):
                if case .string(let pattern)? = arguments.first?.kind {
                    do throws(RE2.SyntaxError) {
                        _ = try RE2(pattern)
                    } catch {
                        found.append((ranges[arguments[0].id].start, "Invalid regular expression '\(pattern)': \(error.message)."))
                    }
                }
            default: break
            }
        }
        for (at, message) in found { diagnostics.error(message, at: at) }
    }
}
