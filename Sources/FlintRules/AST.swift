/// A compiled ruleset's tree. Every expression has an id (its index in the ruleset's node
/// table) and a range, for messages and coverage.
public struct Ruleset: Sendable {
    /// 1 or 2, from `rules_version`.
    public var version: Int
    public var functions: [FunctionDecl]
    /// Every service, in source order (a ruleset that compiles names each once).
    public var services: [Service]
    /// Every expression's range, by id.
    public var ranges: [SourceRange]
    public var source: String
    /// Where the name of each call is written (by the call's id): `g` in `f.g(x)`.
    public var callNames: [Int: SourcePosition] = [:]
    /// The parentheses around expressions, by id, which the tree itself does not keep.
    public var parentheses: [Int: Parenthesized] = [:]
}

/// The parentheses written around one expression.
public struct Parenthesized: Sendable {
    /// Where each opens, outermost first.
    public var opens: [SourcePosition]
    /// Where the expression itself starts, inside them.
    public var inner: SourcePosition
}

extension Ruleset {
    /// The service Firestore's requests are decided by. Other services load, are checked as
    /// the reference checks them, and decide nothing.
    public var service: Service? { services.first { $0.name == Service.firestore } }
}

public struct Service: Sendable {
    public var name: String
    public var functions: [FunctionDecl]
    public var matches: [Match]

    public static let firestore = "cloud.firestore"
    /// Cloud Storage's rules, which the reference reads with their own names (no `get()`).
    public static let storage = "firebase.storage"
}

public struct Match: Sendable {
    public var pattern: [PatternSegment]
    public var functions: [FunctionDecl]
    public var matches: [Match]
    public var allows: [Allow]
    public var position: SourcePosition
}

public enum PatternSegment: Sendable, Equatable {
    case literal(String)
    /// `{name}`: one segment, bound as a string.
    case variable(String)
    /// `{name=**}`: a run of segments, bound as a path.
    case recursive(String)
}

public enum Method: String, Sendable, CaseIterable {
    case read, write, get, list, create, update, delete

    /// Whether an allow for this method covers a request's concrete method.
    public func covers(_ request: Method) -> Bool {
        switch self {
        case .read: request == .get || request == .list || request == .read
        case .write: request == .create || request == .update || request == .delete || request == .write
        default: self == request
        }
    }
}

public struct Allow: Sendable {
    public var methods: [Method]
    /// nil: `allow read;`, always granted.
    public var condition: Expr?
    public var position: SourcePosition
}

public struct FunctionDecl: Sendable {
    public var name: String
    public var parameters: [String]
    public var lets: [(name: String, value: Expr)]
    public var body: Expr
    public var position: SourcePosition
    /// Where its name is written, which recursion errors point at, as the reference's do.
    public var namePosition: SourcePosition
    /// Where each parameter's and each let's name is written, for warnings about unused ones.
    public var parameterPositions: [SourcePosition] = []
    public var letPositions: [SourcePosition] = []
    /// Where each `let` is written, which the reference points at for what a let hands on.
    public var letKeywordPositions: [SourcePosition] = []
}

public struct Expr: Sendable {
    public var id: Int
    public var kind: ExprKind
}

public indirect enum ExprKind: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Double)
    case string(String)
    case bytes([UInt8])
    case identifier(String)
    case list([Expr])
    case map([(key: Expr, value: Expr)])
    case path([PathPart])
    case member(Expr, String)
    case index(Expr, Expr)
    /// `x[i:j]`; either bound may be left out (`x[i:]`, `x[:j]`).
    case slice(Expr, Expr?, Expr?)
    /// A call of a name (`f(x)`, `math.abs(x)` as "math.abs") or of a method on a receiver.
    case call(name: String, receiver: Expr?, arguments: [Expr])
    case unary(String, Expr)
    case binary(String, Expr, Expr)
    case isType(Expr, String)
    case ternary(Expr, Expr, Expr)
}

extension ExprKind {
    /// Calls `body` with each direct subexpression, in source order.
    func forEachChild(_ body: (Expr) -> Void) {
        switch self {
        case .list(let items): items.forEach(body)
        case .map(let entries):
            for (k, v) in entries {
                body(k)
                body(v)
            }
        case .path(let parts): for case .interpolated(let inner) in parts { body(inner) }
        case .member(let b, _): body(b)
        case .index(let b, let i):
            body(b)
            body(i)
        case .slice(let b, let i, let j): for x in [b, i, j].compactMap({ $0 }) { body(x) }
        case .call(_, let receiver, let arguments):
            if let receiver { body(receiver) }
            arguments.forEach(body)
        case .unary(_, let o), .isType(let o, _): body(o)
        case .binary(_, let l, let r):
            body(l)
            body(r)
        case .ternary(let c, let t, let f):
            body(c)
            body(t)
            body(f)
        case .null, .bool, .int, .float, .string, .bytes, .identifier: break
        }
    }
}

public enum PathPart: Sendable {
    case literal(String)
    case interpolated(Expr)
    /// `{name}` or `{name=**}`, left for `bind`.
    case capture(String, recursive: Bool)
}
