import FlintModel

/// Reads documents for `get`, `exists`, `getAfter` and `existsAfter`: the resource map
/// (`data`, `id`, `__name__`) or nil when the document does not exist.
public protocol DocumentReader {
    /// The document at `path`; nil when there is none, or null when it is known to be absent
    /// (deleted by the commit being judged, for `afterWrites`).
    func document(at path: RulesPath, afterWrites: Bool) -> RulesValue?
    /// The database the request is in, whose documents alone rules may read; nil: any.
    var requestDatabase: String? { get }
}

extension DocumentReader {
    public var requestDatabase: String? { nil }
}

/// Names visible where an expression is evaluated: variables and the functions declared there.
final class Scope {
    let parent: Scope?
    /// Variables and functions are few per scope, so a scan beats hashing.
    private(set) var variables: [(name: String, value: RulesValue)]
    let functions: [FunctionDecl]

    init(parent: Scope?, variables: [(name: String, value: RulesValue)] = [], functions: [FunctionDecl] = []) {
        self.parent = parent
        self.variables = variables
        self.functions = functions
    }

    /// Binds a name here; a later binding of the same name wins.
    func bind(_ name: String, _ value: RulesValue) {
        variables.insert((name, value), at: 0)
    }

    func variable(_ name: String) -> RulesValue? {
        var scope: Scope? = self
        while let s = scope {
            for v in s.variables where v.name == name { return v.value }
            scope = s.parent
        }
        return nil
    }

    /// The function and the scope it was declared in (its body sees that scope).
    func function(_ name: String) -> (FunctionDecl, Scope)? {
        var scope: Scope? = self
        while let s = scope {
            if let f = s.functions.first(where: { $0.name == name }) { return (f, s) }
            scope = s.parent
        }
        return nil
    }
}

/// Evaluates expressions of one ruleset for one request: counts expressions and document
/// reads against the limits, and records what each expression evaluated to.
final class Evaluator {
    let ruleset: Ruleset
    let reader: any DocumentReader
    /// Distinct documents read through get/exists (or their After forms); repeated reads are
    /// cached and free. At most 10, so a scan beats hashing paths.
    private var reads: [(after: Bool, path: RulesPath, document: RulesValue?)] = []
    /// Distinct documents one decision may read: 10, whatever the request.
    let maxReads: Int
    /// The request's reads across all its decisions, when it decides several documents.
    let budget: RulesReadBudget?
    private var expressions = 0
    private var depth = 0
    var debugLog: [String] = []
    /// Values each expression produced, by node id, when recording coverage; and the
    /// expressions skipped by `&&`, `||` and `?:`.
    var observed: [Int: [RulesValue]]?
    var skipped: [Int] = []

    static let maxExpressions = 1000
    static let maxDepth = 20

    /// The document the request is about: reading it when it is missing gives null, not an error.
    let target: RulesPath?
    /// Set for the reference's first pass, made before any document is read: get, exists and
    /// their After forms answer `unread` instead of reading.
    var withoutReads = false
    /// What an unread document evaluates to in that pass.
    static let unreadText = "\u{0}unread"
    static let unread = RulesValue.error(unreadText)

    init(ruleset: Ruleset, reader: any DocumentReader, maxReads: Int, budget: RulesReadBudget? = nil, target: RulesPath? = nil) {
        self.ruleset = ruleset
        self.reader = reader
        self.maxReads = maxReads
        self.budget = budget
        self.target = target
    }

    func evaluate(_ e: Expr, _ scope: Scope) -> RulesValue {
        expressions += 1
        if expressions > Self.maxExpressions {
            return .error("Exceeded maximum of \(Self.maxExpressions) expressions evaluated per request.")
        }
        let v = value(e, scope)
        observed?[e.id, default: []].append(v)
        return v
    }

    private func value(_ e: Expr, _ scope: Scope) -> RulesValue {
        switch e.kind {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .float(let f): return .float(f)
        case .string(let s): return .string(s)
        case .bytes(let b): return .bytes(b)
        case .identifier(let name):
            // An unknown name reads as null on the reference.
            return scope.variable(name) ?? .error("Null value error.")
        case .list(let items):
            var out: [RulesValue] = []
            for item in items {
                let v = evaluate(item, scope)
                if v.isError { return v }
                out.append(v)
            }
            return .list(out)
        case .map(let entries):
            var out: [UTF8Key: RulesValue] = [:]
            for (k, v) in entries {
                let key = evaluate(k, scope)
                if key.isError { return key }
                guard case .string(let name) = key else { return .error("Map keys must be strings.") }
                let value = evaluate(v, scope)
                if value.isError { return value }
                out[UTF8Key(name)] = value
            }
            return .map(out)
        case .path(let parts):
            var segments: [String] = []
            var captures: [Int: String] = [:]
            for part in parts {
                switch part {
                case .literal(let s): segments.append(s)
                case .capture(let name, let recursive):
                    captures[segments.count] = name
                    segments.append(recursive ? "{\(name)=**}" : "{\(name)}")
                case .interpolated(let inner):
                    let v = evaluate(inner, scope)
                    switch v {
                    case .error: return v
                    case .path(let p):
                        if let unbound = p.unboundError { return unbound }
                        segments += p.segments
                    default:
                        // Interpolation writes the value as `string()` would.
                        guard let text = Stdlib.stringify(v) else { return Stdlib.mismatch("string", [v]) }
                        segments.append(text)
                    }
                }
            }
            var path = RulesPath(segments)
            path.captures = captures
            return .path(path)
        case .member(let base, let name):
            let b = evaluate(base, scope)
            return Stdlib.member(b, name)
        case .index(let base, let index):
            let b = evaluate(base, scope)
            if b.isError { return b }
            let i = evaluate(index, scope)
            if i.isError { return i }
            return Stdlib.index(b, i)
        case .slice(let base, let from, let to):
            let b = evaluate(base, scope)
            if b.isError { return b }
            let i = from.map { evaluate($0, scope) }
            if let i, i.isError { return i }
            let j = to.map { evaluate($0, scope) }
            if let j, j.isError { return j }
            return Stdlib.slice(b, i, j)
        case .call(let name, let receiver, let arguments):
            return call(name, receiver, arguments, scope)
        case .unary(let op, let operand):
            let v = evaluate(operand, scope)
            if v.isError { return v }
            if op == "!" {
                guard case .bool(let b) = v else { return Operators.unsupported("!\(v.typeName)", "!bool") }
                return .bool(!b)
            }
            switch v {
            case .int(let i): return i == Int64.min ? Operators.integerOutOfRange : .int(-i)
            case .float(let f): return .float(-f)
            case .duration(let d): return .duration(d.negated)
            default: return Operators.unsupported("-\(v.typeName)", "-int, -float, -duration")
            }
        case .binary(let op, let l, let r): return binary(op, l, r, scope)
        case .isType(let operand, let typeName):
            let v = evaluate(operand, scope)
            if v.isError { return v }
            return .bool(Stdlib.isType(v, typeName))
        case .ternary(let c, let t, let f):
            let condition = evaluate(c, scope)
            if condition.isError { return condition }
            guard case .bool(let b) = condition else { return Operators.typeError(received: condition.typeName, expected: "bool") }
            if observed != nil { skip(b ? f : t) }
            return evaluate(b ? t : f, scope)
        }
    }

    /// A skipped expression counts as short-circuited, with everything inside it.
    private func skip(_ e: Expr) {
        skipped.append(e.id)
        for child in Coverage.children(e) { skip(child) }
    }

    private func binary(_ op: String, _ l: Expr, _ r: Expr, _ scope: Scope) -> RulesValue {
        if op == "&&" || op == "||" {
            // Errors are absorbed when the other side decides; the right side runs only when needed.
            let decisive = op == "||"
            let left = evaluate(l, scope)
            if case .bool(let b) = left, b == decisive {
                if observed != nil { skip(r) }
                return .bool(decisive)
            }
            let right = evaluate(r, scope)
            if case .bool(let b) = right, b == decisive { return .bool(decisive) }
            // Otherwise the left side speaks first, then the right, as on the reference.
            for side in [left, right] {
                if side.isError { return side }
                guard case .bool = side else { return .error("Type error. Received: [\(side.typeName)] Expected: [bool].") }
            }
            return .bool(!decisive)
        }
        let left = evaluate(l, scope)
        let right = evaluate(r, scope)
        if op == "in" {
            if right.isError { return right }
            // Only lists, sets and maps have `in`; on anything else the call is not found,
            // whatever the left side holds.
            switch right {
            case .list, .set, .map, .constraint: break
            case .null: return .error("Null value error.")
            default: return Stdlib.notFound("in")
            }
            if left.isError { return left }
            return Operators.contains(right, left)
        }
        if left.isError { return left }
        if right.isError { return right }
        switch op {
        case "==", "!=": return Operators.equality(op, left, right)
        case "<", "<=", ">", ">=": return Operators.relational(op, left, right)
        default: return Operators.arithmetic(op, left, right)
        }
    }

    // MARK: - Calls

    private func call(_ name: String, _ receiver: Expr?, _ arguments: [Expr], _ scope: Scope) -> RulesValue {
        if let receiver {
            let target = evaluate(receiver, scope)
            if target.isError { return target }
            if case .null = target { return .error("Null value error.") }
            // A name the library lacks fails before the arguments are evaluated.
            if Signatures.methods["\(target.typeName).\(name)"] == nil, !target.isConstraint { return Stdlib.notFound(name) }
            let args = arguments.map { evaluate($0, scope) }
            if let error = args.first(where: \.isError) { return error }
            return Stdlib.method(target, name, args)
        }
        if let (function, home) = scope.function(name) {
            guard function.parameters.count == arguments.count else {
                let signature = "\(name)(\(function.parameters.joined(separator: ", ")))"
                return .error("Incorrect number of arguments. Received: \(arguments.count). Expected: \(signature).")
            }
            // Arguments are evaluated once each and bound as they are, errors too: as on the
            // reference, an error matters only where the body uses it.
            let args = arguments.map { evaluate($0, scope) }
            let bound = Array(zip(function.parameters, args)).map { (name: $0.0, value: $0.1) }
            guard depth < Self.maxDepth else { return .error("Maximum function call depth (\(Self.maxDepth)) exceeded.") }
            depth += 1
            defer { depth -= 1 }
            let local = Scope(parent: home, variables: bound)
            for (letName, letValue) in function.lets { local.bind(letName, evaluate(letValue, local)) }
            return evaluate(function.body, local)
        }
        guard Signatures.functions[name] != nil || name == "debug" else { return Stdlib.notFound(name) }
        let args = arguments.map { evaluate($0, scope) }
        if let error = args.first(where: \.isError) { return error }
        switch name {
        case "get": return read(name, args, after: false, exists: false)
        case "exists": return read(name, args, after: false, exists: true)
        case "getAfter": return read(name, args, after: true, exists: false)
        case "existsAfter": return read(name, args, after: true, exists: true)
        case "debug":
            // As on the reference: any number of values, the first logged and returned.
            guard let first = args.first else { return .error("Service call error. Function: [debug], Argument: [].") }
            debugLog.append(Stdlib.debugDescription(first))
            return first
        default:
            return Stdlib.function(name, args)
        }
    }

    private func read(_ name: String, _ args: [RulesValue], after: Bool, exists: Bool) -> RulesValue {
        if let wrongCount = Signatures.arityError(name, args.count) { return wrongCount }
        guard case .path(let path) = args[0] else { return Stdlib.mismatch(name, args) }
        if let unbound = path.unboundError { return unbound }
        // A path no document can have fails before anything is read, in the first pass too.
        guard path.segments.count >= 5, path.segments.count % 2 == 1, path.segments[0] == "databases", path.segments[2] == "documents" else {
            return .error(
                "Service call error. Function: [\(name)], Argument: [\(path.text)]: not a document path, which is "
                    + "/databases/{database}/documents/{collection}/{document}.")
        }
        if let own = reader.requestDatabase, path.segments[1] != own {
            // The reference fails the call, as for a missing document.
            return .error("Service call error. Function: [\(name)], Argument: [\(path.text)]: rules read only their own database, \(own).")
        }
        if withoutReads { return Self.unread }
        let document: RulesValue?
        if let cached = reads.first(where: { $0.after == after && $0.path == path }) {
            document = cached.document
        } else {
            // The request's bound speaks first: for a single document or a query it is also
            // the decision's.
            if let budget, !budget.fits(after: after, path: path) {
                return .error("Exceeded maximum of \(budget.limit) get, exists, getAfter and existsAfter calls per request.")
            }
            guard reads.count < maxReads else {
                return .error("Exceeded maximum of \(maxReads) get, exists, getAfter and existsAfter calls per document.")
            }
            budget?.count(after: after, path: path)
            document = reader.document(at: path, afterWrites: after)
            reads.append((after, path, document))
        }
        if exists {
            if case .null? = document { return .bool(false) }
            return .bool(document != nil)
        }
        // A reader's null is a document known to be absent (one the commit deletes). Any other
        // missing document fails the call, as on the reference, except the request's own
        // target, which the reference has at hand: `get(p) == null` holds only for that one.
        if let document { return document }
        if path == target { return .null }
        return .error("Service call error. Function: [\(name)], Argument: [\(path.text)]: there is no document at this path.")
    }
}

/// The distinct documents a request's rules read across all the documents it decides (a
/// batch get, a commit): each decision may read 10, and the request as a whole `limit`, as
/// on the reference; a document read by two decisions counts once.
public final class RulesReadBudget {
    public let limit: Int
    private var read: [(after: Bool, path: RulesPath)] = []

    public init(limit: Int) { self.limit = limit }

    /// Whether this read fits: counted already, or room for one more.
    func fits(after: Bool, path: RulesPath) -> Bool {
        read.count < limit || read.contains { $0.after == after && $0.path == path }
    }

    /// Counts a read made, once per document.
    func count(after: Bool, path: RulesPath) {
        if !read.contains(where: { $0.after == after && $0.path == path }) { read.append((after, path)) }
    }
}
