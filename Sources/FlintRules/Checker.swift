/// Compile-time checks the reference emulator makes when a ruleset is loaded: wildcard shapes,
/// function limits and recursion, `is` type names, and constant regular expressions.
struct Checker {
    let version: Int
    var diagnostics = Diagnostics()
    /// Errors the reference finds while reading expressions, before its other checks: after
    /// one of them it reports no warnings, as after a syntax error.
    var syntax = Diagnostics()
    private let ranges: [SourceRange]
    private let callNames: [Int: SourcePosition]
    private let parentheses: [Int: Parenthesized]
    private var types: TypeWarnings
    /// Functions no allow condition reaches, by where their names stand: the reference checks
    /// them without a request, so the names only a request brings are unknown there.
    private let unreachable: Set<Int>
    /// The ruleset's functions and conditions with their scopes, worked out once.
    private let scoped: Scoped

    init(_ ruleset: Ruleset) {
        scoped = Self.scoped(ruleset)
        unreachable = Set(Self.unusedFunctions(scoped).map(\.namePosition.offset))
        version = ruleset.version
        ranges = ruleset.ranges
        callNames = ruleset.callNames
        parentheses = ruleset.parentheses
        types = TypeWarnings(
            source: ruleset.source, ranges: ruleset.ranges, callNames: ruleset.callNames, parentheses: ruleset.parentheses,
            functions: scoped.functions)
    }

    /// Functions callable without a receiver, and method names of any type: calls of other names
    /// get the reference's "Invalid function name" warning.
    static let globalFunctions: Set<String> = Set(Signatures.functions.keys).union(["debug"])
    static let methods: Set<String> = Set(Signatures.methods.keys.map { String($0.split(separator: ".")[1]) })
    /// Variables every condition and function can read.
    static let globalVariables: Set<String> = ["request", "resource"]
    /// Global functions that need a request to run.
    static let requestFunctions: Set<String> = ["get", "exists", "getAfter", "existsAfter", "debug"]

    /// The variables and global functions rules can name, which depend on the service.
    struct Names {
        var variables: Set<String>
        var functions: Set<String>

        static let firestore = Names(variables: globalVariables, functions: globalFunctions)
        /// Firestore's, without the document functions.
        static let storage = Names(variables: globalVariables, functions: globalFunctions.subtracting(["get", "exists", "getAfter", "existsAfter"]))
        /// Where there is no request: a function no condition reaches, or an unknown service.
        static let withoutRequest = Names(variables: [], functions: globalFunctions.subtracting(requestFunctions))

        static func of(_ service: Service) -> Names {
            switch service.name {
            case Service.firestore: .firestore
            case Service.storage: .storage
            default: .withoutRequest
            }
        }

        func intersection(_ other: Names) -> Names {
            Names(variables: variables.intersection(other.variables), functions: functions.intersection(other.functions))
        }
    }

    static let maxParameters = 7
    static let maxCallDepth = 20
    /// Whether checks may follow calls from function to function: not past a call chain
    /// deeper than the reference allows.
    private var followsCalls = true
    static let maxLets = 10
    static let maxMatchDepth = 10

    mutating func check(_ ruleset: Ruleset) {
        if version < 2 {
            diagnostics.warning("Ruleset uses old version (version [1]). Please update to the latest version (version [2]).", at: .nowhere)
        }
        for f in Self.uncalledFunctions(scoped) {
            diagnostics.warning("Unused function: \(f.name).", at: f.namePosition, through: Self.end(of: f.name, at: f.namePosition))
        }
        let declared = scoped.functions
        let calls = Self.calls(among: declared)
        // Past the reference's depth, calls are not followed any further: type checks follow
        // them, and a chain of thousands would run out of stack.
        followsCalls = checkCallDepth(declared, calls)
        checkRecursion(declared, calls)
        let file = Scope(ruleset.functions)
        checkFunctions(ruleset.functions, scopes: [file], wildcards: [:], names: .firestore)
        for service in ruleset.services {
            let names = Names.of(service)
            let scopes = [file, Scope(service.functions)]
            checkFunctions(service.functions, scopes: scopes, wildcards: [:], names: names)
            for m in service.matches { checkMatch(m, scopes: scopes, depth: 1, wildcards: [:], names: names) }
        }
        for found in types.found { diagnostics.warning(found.message, at: found.position, through: found.end) }
    }

    /// The offset of a name's last code point.
    static func end(of name: String, at position: SourcePosition) -> Int { position.offset + name.unicodeScalars.count - 1 }

    /// The functions declared at one level (the file, a service, a match), and the first of
    /// each name, which a call of that name there runs.
    struct Scope {
        let functions: [FunctionDecl]
        let byName: [String: FunctionDecl]

        init(_ functions: [FunctionDecl]) {
            self.functions = functions
            byName = Dictionary(functions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// The functions in scope somewhere, innermost last.
    typealias Scopes = [Scope]

    /// A function as it is declared: the scopes its body calls in (where it is declared, not
    /// where it is called from) and the wildcards of the matches around it.
    typealias Declared = (function: FunctionDecl, scopes: Scopes, wildcards: [String: TypeWarnings.StaticType])

    typealias Scoped = (functions: [Declared], conditions: [(condition: Expr, scopes: Scopes)])

    /// Every function as declared, and every allow condition with the scopes of its match.
    static func scoped(_ ruleset: Ruleset) -> Scoped {
        let file = Scope(ruleset.functions)
        var functions: [Declared] = ruleset.functions.map { ($0, [file], [:]) }
        var conditions: [(condition: Expr, scopes: Scopes)] = []
        func collect(_ m: Match, _ scopes: Scopes, _ outer: [String: TypeWarnings.StaticType]) {
            let inner = scopes + [Scope(m.functions)]
            let wildcards = Self.wildcards(of: m, within: outer)
            functions += m.functions.map { ($0, inner, wildcards) }
            for a in m.allows { if let c = a.condition { conditions.append((c, inner)) } }
            for child in m.matches { collect(child, inner, wildcards) }
        }
        for service in ruleset.services {
            let scopes = [file, Scope(service.functions)]
            functions += service.functions.map { ($0, scopes, [:]) }
            for m in service.matches { collect(m, scopes, [:]) }
        }
        return (functions, conditions)
    }

    /// The wildcards in scope inside a match, with their types: a segment's is a string, a
    /// recursive one's a path.
    static func wildcards(of m: Match, within outer: [String: TypeWarnings.StaticType]) -> [String: TypeWarnings.StaticType] {
        var wildcards = outer
        for segment in m.pattern {
            switch segment {
            case .variable(let n): wildcards[n] = .string
            case .recursive(let n): wildcards[n] = .path
            case .literal: break
            }
        }
        return wildcards
    }

    /// The function a call of `name` written in `scopes` runs: the innermost of that name.
    static func resolve(_ name: String, in scopes: Scopes) -> FunctionDecl? {
        scopes.reversed().lazy.compactMap { $0.byName[name] }.first
    }

    /// The ruleset's functions that `e` calls, each resolved in `scopes`.
    static func callees(of e: Expr, in scopes: Scopes) -> [FunctionDecl] {
        var names: [String] = []
        callNames(e, into: &names)
        return names.compactMap { resolve($0, in: scopes) }
    }

    /// A function's own expressions: its lets' values, then its body.
    static func expressions(of f: FunctionDecl) -> [Expr] { f.lets.map(\.value) + [f.body] }

    /// Functions no expression calls, not even another function (the reference's "unused"). A
    /// function shadowed wherever its name is called is unused.
    static func uncalledFunctions(_ scoped: Scoped) -> [FunctionDecl] {
        let (functions, conditions) = scoped
        let uses = conditions + functions.flatMap { f, scopes, _ in expressions(of: f).map { (condition: $0, scopes: scopes) } }
        var called = Set<Int>()
        for (e, scopes) in uses { for f in callees(of: e, in: scopes) { called.insert(f.namePosition.offset) } }
        return functions.map(\.function).filter { !called.contains($0.namePosition.offset) }
    }

    /// The names an expression reads and calls, resolved as the reference resolves them when
    /// loading: unknown variables and functions and wrong argument counts are warnings (they
    /// fail when evaluated), a package name used as a variable is an error.
    /// `names` are the service's globals: without a request, as in a function no condition
    /// reaches, the request's own names are unknown too.
    private mutating func checkNames(_ e: Expr, variables: Set<String>, scopes: Scopes, names: Names) {
        var found: [(error: Bool, at: SourcePosition, end: Int, message: String)] = []
        let globals = names.variables
        let functions = names.functions
        Self.visit(e) { node in
            switch node.kind {
            case .identifier(let name) where !variables.contains(name) && !globals.contains(name):
                // The name itself, inside any parentheses around it.
                let at = parentheses[node.id]?.inner ?? ranges[node.id].start
                let end = Self.end(of: name, at: at)
                if Parser.namespaces.contains(name) {
                    found.append((true, at, end, "\(name) is a package and cannot be used as variable name."))
                } else {
                    found.append((false, at, end, "Invalid variable name: \(name)."))
                }
            case .call(let name, let receiver, let arguments):
                let at = callNames[node.id] ?? ranges[node.id].start
                let end = Self.end(of: receiver == nil ? String(name.split(separator: ".").last ?? "") : name, at: at)
                let wrongCount = (false, at, end, "Incorrect number of arguments supplied to function: \(name).")
                if receiver != nil {
                    if !Self.methods.contains(name) {
                        found.append((false, at, end, "Invalid function name: \(name)."))
                    } else if !Signatures.takes(name, arguments.count, method: true) {
                        found.append(wrongCount)
                    }
                } else if let f = Self.resolve(name, in: scopes) {
                    if f.parameters.count != arguments.count { found.append(wrongCount) }
                } else if !functions.contains(name) {
                    found.append((false, at, end, "Invalid function name: \(name)."))
                } else if !Signatures.takes(name, arguments.count, method: false) {
                    found.append(wrongCount)
                }
            default: break
            }
        }
        for f in found {
            if f.error { diagnostics.error(f.message, at: f.at, through: f.end) } else { diagnostics.warning(f.message, at: f.at, through: f.end) }
        }
    }

    /// Lets that bind a name the function has bound already, and parameters and lets nothing
    /// reads. A binding is read by the let values after it, through the value of the next let
    /// of its name (`let x = x + 1` reads the earlier `x`), and by the body when no such let
    /// follows.
    private mutating func checkVariables(_ f: FunctionDecl) {
        // What may read a binding, in order: each let's value, then the body.
        let readers = f.lets.map(\.value) + [f.body]
        let reads: [Set<String>] = readers.map { e in
            var names = Set<String>()
            Self.visit(e) { if case .identifier(let name) = $0.kind { names.insert(name) } }
            return names
        }
        let bindings = Array(zip(f.parameters, f.parameterPositions)) + Array(zip(f.lets.map(\.name), f.letPositions))
        for (i, (name, at)) in bindings.enumerated() {
            let letIndex = i - f.parameters.count
            if letIndex >= 0, bindings[..<i].contains(where: { $0.0 == name }) {
                diagnostics.error("The identifier [\(name)] is already bound in the current scope.", at: at, through: Self.end(of: name, at: at))
            }
            let first = max(letIndex + 1, 0)
            let rebound = f.lets.indices.dropFirst(first).first { f.lets[$0].name == name }
            let last = rebound ?? readers.count - 1
            if first > last || !reads[first...last].contains(where: { $0.contains(name) }) {
                diagnostics.warning("Unused variable: \(name).", at: at, through: Self.end(of: name, at: at))
            }
        }
    }

    /// Functions that no allow condition can reach, directly or through other functions.
    static func unusedFunctions(_ ruleset: Ruleset) -> [FunctionDecl] { unusedFunctions(scoped(ruleset)) }

    static func unusedFunctions(_ scoped: Scoped) -> [FunctionDecl] {
        let (functions, conditions) = scoped
        let scopesOf = Dictionary(functions.map { ($0.function.namePosition.offset, $0.scopes) }, uniquingKeysWith: { first, _ in first })
        var reached = Set<Int>()
        var frontier = conditions
        while let (e, scopes) = frontier.popLast() {
            for f in callees(of: e, in: scopes) where reached.insert(f.namePosition.offset).inserted {
                let inner = scopesOf[f.namePosition.offset] ?? scopes
                frontier += expressions(of: f).map { ($0, inner) }
            }
        }
        return functions.map(\.function).filter { !reached.contains($0.namePosition.offset) }
    }

    private mutating func checkMatch(
        _ m: Match, scopes: Scopes, depth: Int, wildcards outer: [String: TypeWarnings.StaticType], names: Names
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
        let wildcards = Self.wildcards(of: m, within: outer)
        let inner = scopes + [Scope(m.functions)]
        checkFunctions(m.functions, scopes: inner, wildcards: wildcards, names: names)
        for a in m.allows {
            guard let c = a.condition else { continue }
            checkExpression(c)
            checkNames(c, variables: Set(wildcards.keys), scopes: inner, names: names)
            if followsCalls { types.checkCondition(c, wildcards: wildcards, scopes: inner) }
        }
        for child in m.matches { checkMatch(child, scopes: inner, depth: depth + 1, wildcards: wildcards, names: names) }
    }

    private mutating func checkFunctions(
        _ functions: [FunctionDecl], scopes: Scopes, wildcards: [String: TypeWarnings.StaticType], names: Names
    ) {
        var seen = Set<String>()
        for f in functions {
            if !seen.insert(f.name).inserted { diagnostics.error("Function \(f.name) is already defined.", at: f.namePosition) }
            checkVariables(f)
            // A let's value sees the parameters and the lets before it; the body sees them all.
            let reached = !unreachable.contains(f.namePosition.offset)
            for (i, e) in (f.lets.map(\.value) + [f.body]).enumerated() {
                let variables = Set(f.parameters).union(f.lets.prefix(i).map(\.name)).union(wildcards.keys)
                checkNames(e, variables: variables, scopes: scopes, names: reached ? names : names.intersection(.withoutRequest))
            }
            if f.parameters.count > Self.maxParameters {
                diagnostics.error("Maximum allowed function arguments of \(Self.maxParameters) for function \(f.name) is reached.", at: f.namePosition)
            }
            if f.lets.count > Self.maxLets {
                diagnostics.error("Function \(f.name) has \(f.lets.count) let bindings; at most \(Self.maxLets) are allowed.", at: f.position)
            }
            if version < 2, !f.lets.isEmpty { diagnostics.error("let bindings need rules_version = '2'.", at: f.position) }
            for l in f.lets { checkExpression(l.value) }
            checkExpression(f.body)
            if followsCalls { types.checkFunction(f) }
        }
    }

    /// Which of `declared` each one calls, by index, in the order written.
    static func calls(among declared: [Declared]) -> [[Int]] {
        let index = Dictionary(declared.enumerated().map { ($1.function.namePosition.offset, $0) }, uniquingKeysWith: { first, _ in first })
        return declared.map { f, scopes, _ in
            expressions(of: f).flatMap { callees(of: $0, in: scopes) }.compactMap { index[$0.namePosition.offset] }
        }
    }

    /// Call chains longer than the reference allows, found as it finds them: from each function
    /// no other function calls, the first chain in call order that makes a 21st call is told at
    /// the function that call would enter, with the functions before it. The reference hangs
    /// on a chain of thousands; this walks each function once. False when any chain, from any
    /// function, is too deep or comes back on itself.
    private mutating func checkCallDepth(_ declared: [Declared], _ callees: [[Int]]) -> Bool {
        // The longest chain of calls below each function, worked out without recursion (a call
        // back up a chain counts nothing; cycles are told by checkRecursion).
        var height = [Int](repeating: -1, count: declared.count)
        var onStack = [Bool](repeating: false, count: declared.count)
        var fine = true
        for start in declared.indices where height[start] < 0 {
            var stack: [(function: Int, next: Int)] = [(start, 0)]
            onStack[start] = true
            while let (f, next) = stack.last {
                if next < callees[f].count {
                    stack[stack.count - 1].next += 1
                    let c = callees[f][next]
                    if onStack[c] { fine = false }
                    if height[c] < 0, !onStack[c] {
                        onStack[c] = true
                        stack.append((c, 0))
                    }
                    continue
                }
                height[f] = callees[f].map { onStack[$0] ? 0 : height[$0] + 1 }.max() ?? 0
                onStack[f] = false
                stack.removeLast()
            }
        }
        if height.contains(where: { $0 > Self.maxCallDepth }) { fine = false }
        let called = Set(callees.joined())
        for root in declared.indices where !called.contains(root) && height[root] > Self.maxCallDepth {
            var path = [root]
            while let next = callees[path[path.count - 1]].first(where: { height[$0] > Self.maxCallDepth - path.count }) {
                guard path.count <= Self.maxCallDepth else {
                    let names = path.map { declared[$0].function.name }.joined(separator: "->")
                    diagnostics.error(
                        "Maximum allowed call depth of \(Self.maxCallDepth) is reached for [\(names)] call stack.", at: declared[next].function.namePosition)
                    break
                }
                path.append(next)
            }
        }
        return fine
    }

    /// Recursion, found as the reference finds it: a walk of the calls from each function in
    /// the order they are declared, each call resolved where its function is declared, and
    /// each function walked once. A function calling itself is `Recursive call is not
    /// allowed.`; a call back to a function further up the walk is a cycle, named at that
    /// function with the functions of the cycle in the order walked.
    private mutating func checkRecursion(_ declared: [Declared], _ callees: [[Int]]) {
        enum Walk { case unseen, onPath, done }
        var walk = [Walk](repeating: .unseen, count: declared.count)
        var path: [Int] = []
        var found: [(at: SourcePosition, message: String)] = []
        // Depth first without recursion, so a chain of thousands cannot run out of stack: each
        // function on the path with the index of the next call to follow from it.
        var next: [Int] = []
        for start in declared.indices where walk[start] == .unseen {
            walk[start] = .onPath
            path = [start]
            next = [0]
            while let i = path.last {
                guard next[next.count - 1] < callees[i].count else {
                    walk[i] = .done
                    path.removeLast()
                    next.removeLast()
                    continue
                }
                let callee = callees[i][next[next.count - 1]]
                next[next.count - 1] += 1
                switch walk[callee] {
                case .unseen:
                    walk[callee] = .onPath
                    path.append(callee)
                    next.append(0)
                case .done: break
                case .onPath where callee == i:
                    found.append((declared[i].function.namePosition, "Recursive call is not allowed."))
                case .onPath:
                    let cycle = path[(path.lastIndex(of: callee) ?? 0)...].map { declared[$0].function.name }
                    found.append((declared[callee].function.namePosition, "Detected a call cycle between [\(cycle.joined(separator: ","))] functions."))
                }
            }
        }
        for f in found { diagnostics.error(f.message, at: f.at) }
    }

    private static func callNames(_ e: Expr, into names: inout [String]) {
        visit(e) { node in
            if case .call(let name, nil, _) = node.kind { names.append(name) }
        }
    }

    private static func visit(_ e: Expr, _ body: (Expr) -> Void) {
        body(e)
        e.kind.forEachChild { visit($0, body) }
    }

    /// The reference refuses an expression with anything nested `complexityLimit` levels deep,
    /// naming each expression at that level. Every operator, literal, name, call, list, map,
    /// path and pair of parentheses is a level; `.`, `[]` and method calls after an operand are
    /// not (their arguments are a level below the operand), and a `-` is one level with its
    /// operand, named at the `-`.
    static let complexityLimit = 100

    private mutating func checkComplexity(_ e: Expr) {
        var found: [SourcePosition] = []
        func visit(_ e: Expr, _ depth: Int, at sign: SourcePosition? = nil) {
            var depth = depth
            var sign = sign
            var start = ranges[e.id].start
            if let p = parentheses[e.id] {
                for open in p.opens {
                    if depth == Self.complexityLimit { return found.append(sign ?? open) }
                    depth += 1
                    sign = nil
                }
                start = p.inner
            }
            func below(_ argument: Expr) { if depth < Self.complexityLimit { visit(argument, depth + 1) } }
            switch e.kind {
            case .member(let base, _): visit(base, depth, at: sign)
            case .index(let base, let i):
                visit(base, depth, at: sign)
                below(i)
            case .slice(let base, let i, let j):
                visit(base, depth, at: sign)
                for x in [i, j].compactMap({ $0 }) { below(x) }
            case .call(_, let receiver?, let arguments):
                visit(receiver, depth, at: sign)
                arguments.forEach(below)
            case .unary("-", let operand): visit(operand, depth, at: sign ?? start)
            default:
                if depth == Self.complexityLimit { return found.append(sign ?? start) }
                e.kind.forEachChild { visit($0, depth + 1) }
            }
        }
        visit(e, 1)
        for at in found { syntax.error(Parser.tooComplex, at: at) }
    }

    private mutating func checkExpression(_ e: Expr) {
        checkComplexity(e)
        var found: [(SourcePosition, String)] = []
        var syntaxFound: [(SourcePosition, String)] = []
        Self.visit(e) { node in
            switch node.kind {
            case .isType(_, let name):
                if !Stdlib.typeNames.contains(name) {
                    // The emulator points just past the type name.
                    let end = ranges[node.id].end
                    let after = SourcePosition(line: end.line, column: end.column + 1, offset: end.offset + 1)
                    syntaxFound.append((after, "An unsupported type identifier was used with the 'is' operator. Received \(name). Expected one of "
                        + Stdlib.typeNameList.joined(separator: ",")))
                }
                if name == "null" {
                    // `null` is a keyword, not a type name; `x is null` is refused as the reference
                    // refuses it (`null is int` is fine, and false).
                    let end = ranges[node.id].end
                    let typeStart = SourcePosition(line: end.line, column: end.column - 3, offset: end.offset - 3)
                    syntaxFound.append((typeStart, "mismatched input 'null' expecting IDENTIFIER"))
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
        for (at, message) in syntaxFound { syntax.error(message, at: at) }
    }
}
