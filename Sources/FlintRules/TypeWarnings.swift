/// The warnings the reference gives when a ruleset is loaded for expressions whose types are
/// known from the source alone (literals and match wildcards) and can never work: comparing
/// values that are never equal, `in` on a value that holds nothing, `-` on a non-number. They
/// do not stop the rules from loading; they point at conditions that are always false or an error.
struct TypeWarnings {
    /// What the source alone says about a value; `unknown` for everything read at run time.
    enum StaticType: String {
        case null, bool, int, float, string, bytes, list, map, path, unknown
    }

    let source: [Unicode.Scalar]
    let ranges: [SourceRange]
    private(set) var found: [(position: SourcePosition, end: Int, message: String)] = []

    init(source: String, ranges: [SourceRange]) {
        self.source = Array(source.unicodeScalars)
        self.ranges = ranges
    }

    /// Checks `e`, where `wildcards` are the match variables in scope with their types.
    mutating func check(_ e: Expr, wildcards: [String: StaticType]) {
        _ = type(of: e, wildcards)
    }

    private mutating func type(of e: Expr, _ wildcards: [String: StaticType]) -> StaticType {
        switch e.kind {
        case .null: return .null
        case .bool: return .bool
        case .int: return .int
        case .float: return .float
        case .string: return .string
        case .bytes: return .bytes
        case .path(let parts):
            for case .interpolated(let inner) in parts { _ = type(of: inner, wildcards) }
            return .path
        case .identifier(let name): return wildcards[name] ?? .unknown
        case .list(let items):
            for i in items { _ = type(of: i, wildcards) }
            return .list
        case .map(let entries):
            for (k, v) in entries {
                _ = type(of: k, wildcards)
                _ = type(of: v, wildcards)
            }
            return .map
        case .unary(let op, let operand):
            let t = type(of: operand, wildcards)
            if op == "-", t != .unknown, t != .int, t != .float {
                warn(at: ranges[operand.id].start, through: ranges[operand.id].end.offset,
                     "Invalid type. Received one of [\(t.rawValue)]. Expected one of [int, float, duration].")
                noTypeFits(operand)
            }
            return op == "!" ? .bool : (t == .int || t == .float ? t : .unknown)
        case .binary(let op, let left, let right):
            let l = type(of: left, wildcards)
            let r = type(of: right, wildcards)
            switch op {
            case "==", "!=":
                if !Self.comparable(l, r) {
                    let at = operatorPosition(op, between: left, right)
                    warn(at: at, through: at.offset + op.count - 1,
                         "The sub-expressions are not comparable, so this comparison will always return false.")
                }
                return .bool
            case "in":
                if r != .unknown, r != .list, r != .map {
                    warn(at: ranges[right.id].start, through: ranges[right.id].end.offset, "Invalid type. Received one of [\(r.rawValue)]. Expected one of [list, set, map, constraint].")
                    noTypeFits(right)
                }
                return .bool
            case "&&", "||", "<", "<=", ">", ">=": return .bool
            default: return .unknown
            }
        case .member(let base, _):
            _ = type(of: base, wildcards)
            return .unknown
        case .index(let base, let i):
            _ = type(of: base, wildcards)
            _ = type(of: i, wildcards)
            return .unknown
        case .slice(let base, let i, let j):
            for x in [base, i, j].compactMap({ $0 }) { _ = type(of: x, wildcards) }
            return .unknown
        case .call(_, let receiver, let arguments):
            if let receiver { _ = type(of: receiver, wildcards) }
            for a in arguments { _ = type(of: a, wildcards) }
            return .unknown
        case .isType(let operand, _):
            _ = type(of: operand, wildcards)
            return .bool
        case .ternary(let c, let t, let f):
            for x in [c, t, f] { _ = type(of: x, wildcards) }
            return .unknown
        }
    }

    /// Known types that can never be equal; integers and floats compare with each other.
    static func comparable(_ a: StaticType, _ b: StaticType) -> Bool {
        if a == .unknown || b == .unknown || a == b { return true }
        let numbers: Set<StaticType> = [.int, .float]
        return numbers.contains(a) && numbers.contains(b)
    }

    /// A wildcard used where its type does not fit gets a second warning naming it.
    private mutating func noTypeFits(_ operand: Expr) {
        guard case .identifier(let name) = operand.kind else { return }
        warn(at: ranges[operand.id].start, through: ranges[operand.id].end.offset, "Invalid type. There is no type for variable '\(name)' that satisfies all clauses.")
    }

    private mutating func warn(at position: SourcePosition, through end: Int, _ message: String) {
        found.append((position, end, message))
    }

    /// Where the operator between two operands starts, as the reference points at it; the
    /// start of the left operand when it cannot be found.
    private func operatorPosition(_ op: String, between left: Expr, _ right: Expr) -> SourcePosition {
        let from = ranges[left.id].end
        let limit = min(ranges[right.id].start.offset, source.count)
        let wanted = Array(op.unicodeScalars)
        var position = from
        var i = from.offset
        while i < limit {
            if source[i] == "\n" {
                position.line += 1
                position.column = 0
            }
            i += 1
            position.column += 1
            position.offset = i
            if i + wanted.count <= limit, Array(source[i..<(i + wanted.count)]) == wanted { return position }
        }
        return ranges[left.id].start
    }
}
