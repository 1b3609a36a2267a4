/// The warnings the reference gives when a ruleset is loaded for expressions whose types it can
/// work out from the source: literals, wildcards, operators, and what the standard library's
/// functions and methods return. Comparing values that can never be equal, a condition that
/// is not a bool, an operand or argument of the wrong type, a ternary whose branches differ.
/// They do not stop the rules from loading; they point at conditions that are always false or
/// an error.
struct TypeWarnings {
    /// A type of the rules language, in the order the reference lists them.
    enum Base: Int, Comparable, CaseIterable {
        case null, bool, int, float, string, bytes, duration, timestamp, list, set, map, mapDiff, constraint, path, latlng

        static func < (a: Base, b: Base) -> Bool { a.rawValue < b.rawValue }

        var name: String {
            switch self {
            case .mapDiff: "map_diff"
            default: String(describing: self)
            }
        }
    }

    /// What the source says a value can be: one of `bases`, or, when empty, anything (only the
    /// run time knows).
    struct StaticType: Equatable {
        let bases: Set<Base>
        /// The order a warning lists an expected type's bases in, where the reference's differs
        /// from the usual one.
        private var listed: [Base] = []

        init(_ bases: Set<Base>) { self.bases = bases }

        /// An expected type whose bases a warning lists in this order.
        init(listing bases: [Base]) {
            self.bases = Set(bases)
            listed = bases
        }

        static func == (a: StaticType, b: StaticType) -> Bool { a.bases == b.bases }

        static let unknown = StaticType([])
        static let string = StaticType([.string])
        static let path = StaticType([.path])
        static let bool = StaticType([.bool])
        static let numbers = StaticType([.int, .float])
        static let collections = StaticType([.list, .set])
        static let pathSegment = StaticType(listing: [.path, .null, .int, .float, .string, .bool])

        /// Anything, as a compared value may be; what later uses of a name compared first need
        /// is listed with `first` ahead of the usual order, as the reference lists it.
        static func anything(listingFirst first: [Base]) -> StaticType {
            var type = StaticType([])
            type.listed = first + Base.allCases.filter { !first.contains($0) }
            return type
        }

        /// What an operand of `==` or `!=` may be.
        static let equalityOperand = anything(listingFirst: [.int, .float])
        /// What the left operand of `<`, `<=`, `>` or `>=` may be: a query's constraint too.
        static let orderedLeftOperand = anything(listingFirst: [.string, .int, .float, .constraint])
        /// What the right operand of `<`, `<=`, `>` or `>=` may be.
        static let orderedRightOperand = anything(listingFirst: [.string, .int, .float])

        var isKnown: Bool { !bases.isEmpty }
        var text: String { (listed.isEmpty ? bases.sorted() : listed).map(\.name).joined(separator: ", ") }

        /// Whether a value of one can equal a value of the other: unknown types might, and
        /// integers and floats compare with each other.
        func mayEqual(_ other: StaticType) -> Bool {
            guard isKnown, other.isKnown else { return true }
            func widened(_ s: Set<Base>) -> Set<Base> { s.isDisjoint(with: [.int, .float]) ? s : s.union([.int, .float]) }
            return !widened(bases).isDisjoint(with: widened(other.bases))
        }

        /// What of this type is also `expected`, when anything is.
        func narrowed(to expected: StaticType?) -> StaticType {
            guard let expected, expected.isKnown, isKnown else { return self }
            let common = bases.intersection(expected.bases)
            return common.isEmpty ? self : StaticType(common)
        }

        /// Whether a value of this type can be one that `expected` accepts.
        func fits(_ expected: StaticType) -> Bool { !isKnown || !bases.isDisjoint(with: expected.bases) }

        /// What a name needed so far still allows once `other` is needed of it too, in the order
        /// the earlier needs listed it, as the reference narrows a parameter use by use: nil when
        /// nothing is left. A first use that needed nothing lists what follows in the usual order,
        /// or in the order a comparison lists it.
        func narrowed(by other: StaticType) -> StaticType? {
            guard other.isKnown else { return self }
            guard isKnown else {
                return listed.isEmpty ? StaticType(other.bases) : StaticType(listing: listed.filter(other.bases.contains))
            }
            let both = bases.intersection(other.bases)
            if both.isEmpty { return nil }
            return listed.isEmpty ? StaticType(both) : StaticType(listing: listed.filter(both.contains))
        }
    }

    /// What the uses of names inside one expression need them to be, gathered from its parts;
    /// parts that need a name to be types with none in common are told at the expression.
    struct Frame {
        var needs: [String: StaticType] = [:]
        var at: SourcePosition
        var end: Int
    }

    /// What a function's parameters must be, from how its body uses them, and where uses of its
    /// names need types with none in common.
    struct Parameters {
        var types: [StaticType?]
        /// For a parameter whose uses need nothing, how they order what a caller's use of its
        /// argument needs (a parameter compared first lists int and float first).
        var orders: [StaticType] = []
        /// What the uses of each let's name need it to be.
        var letTypes: [StaticType?] = []
        var conflicts: [(name: String, at: SourcePosition, end: Int)]
    }

    /// The result type of each standard-library function the reference types.
    static let functionResults: [String: StaticType] = [
        "int": StaticType([.int]), "float": StaticType([.float]), "string": .string, "path": .path,
        "math.abs": .numbers, "math.ceil": StaticType([.float]), "math.floor": StaticType([.float]), "math.round": StaticType([.int]),
        "math.sqrt": StaticType([.float]), "math.pow": StaticType([.float]), "math.isNaN": .bool,
        "hashing.md5": StaticType([.bytes]), "hashing.sha256": StaticType([.bytes]), "hashing.crc32": StaticType([.bytes]),
        "hashing.crc32c": StaticType([.bytes]),
        "timestamp.date": StaticType([.timestamp]), "timestamp.value": StaticType([.timestamp]),
        "duration.value": StaticType([.duration]), "duration.time": StaticType([.duration]), "duration.abs": StaticType([.duration]),
        "latlng.value": StaticType([.latlng]),
    ]

    /// The result type of each method the reference types, whatever its receiver.
    static let methodResults: [String: StaticType] = {
        var out: [String: StaticType] = [:]
        let groups: [(StaticType, [String])] = [
            (StaticType([.int]), ["size", "toMillis", "year", "month", "day", "hours", "minutes", "seconds", "nanos", "dayOfWeek", "dayOfYear"]),
            (.string, ["lower", "upper", "trim", "replace", "join", "toBase64", "toHexString"]),
            (StaticType([.list]), ["split", "keys", "values", "concat", "removeAll"]),
            (StaticType([.set]), ["toSet", "union", "intersection", "difference", "addedKeys", "removedKeys", "changedKeys", "unchangedKeys", "affectedKeys"]),
            (.bool, ["matches", "hasAll", "hasAny", "hasOnly"]),
            (StaticType([.timestamp]), ["date"]),
            (StaticType([.duration]), ["time"]),
            (StaticType([.bytes]), ["toUtf8"]),
            (.path, ["bind"]),
            (StaticType([.mapDiff]), ["diff"]),
            (StaticType([.float]), ["latitude", "longitude", "distance"]),
        ]
        for (type, names) in groups { for n in names { out[n] = type } }
        return out
    }()

    /// The type each standard-library function's arguments must have, in order, listed as the
    /// reference lists them.
    static let functionArguments: [String: [StaticType]] = {
        let numbers = StaticType(listing: [.float, .int])
        let hashable = StaticType(listing: [.bytes, .string])
        let path = StaticType.path
        let int = StaticType([.int])
        var out: [String: [StaticType]] = [
            "int": [StaticType(listing: [.int, .float, .string])], "float": [StaticType(listing: [.int, .float, .string])],
            "string": [StaticType(listing: [.int, .float, .null, .string, .bool, .path])], "path": [.string],
            "math.abs": [StaticType(listing: [.int, .float])], "math.pow": [numbers, numbers],
            "timestamp.date": [int, int, int], "timestamp.value": [StaticType(listing: [.int, .string])],
            "duration.value": [int, .string], "duration.time": [int, int, int, int], "duration.abs": [StaticType([.duration])],
            "latlng.value": [numbers, numbers],
        ]
        for name in ["math.ceil", "math.floor", "math.round", "math.sqrt", "math.isNaN"] { out[name] = [numbers] }
        for name in ["hashing.md5", "hashing.sha256", "hashing.crc32", "hashing.crc32c"] { out[name] = [hashable] }
        for name in ["exists", "get", "existsAfter", "getAfter"] { out[name] = [path] }
        return out
    }()

    /// The type each method's arguments must have, in order.
    static let methodArguments: [String: [StaticType]] = [
        "matches": [.string], "split": [.string], "replace": [.string, .string], "join": [.string],
        "hasAll": [.collections], "hasAny": [.collections], "hasOnly": [.collections],
        "concat": [StaticType([.list])], "removeAll": [StaticType([.list])], "union": [StaticType([.set])],
        "intersection": [StaticType([.set])], "difference": [StaticType([.set])], "get": [StaticType([.string, .list])],
        "diff": [StaticType([.map])], "distance": [StaticType([.latlng])], "bind": [StaticType([.map])],
    ]

    /// The types that have each method, which its receiver must be one of.
    static let methodReceivers: [String: StaticType] = {
        let byName = Dictionary(uniqueKeysWithValues: [Base.string, .list, .set, .map, .mapDiff, .bytes, .timestamp, .duration, .latlng, .path].map { ($0.name, $0) })
        var out: [String: Set<Base>] = [:]
        for qualified in Signatures.methods.keys {
            let parts = qualified.split(separator: ".").map(String.init)
            if let base = byName[parts[0]] { out[parts[1], default: []].insert(base) }
        }
        return out.mapValues { StaticType($0) }
    }()

    let source: [Unicode.Scalar]
    let ranges: [SourceRange]
    let callNames: [Int: SourcePosition]
    let parentheses: [Int: Parenthesized]
    /// The ruleset's functions as declared, by where their names stand: comparisons see through
    /// a function's result, and a call's arguments are held to what its parameters must be.
    private let declared: [Int: Checker.Declared]
    /// The functions in scope where the expression being checked is written.
    private var scopes: Checker.Scopes = []
    private var returnTypes: [Int: StaticType] = [:]
    /// By function and the type its call's place expects (nil: none).
    private var parameterTypes: [NeedsKey: Parameters] = [:]

    struct NeedsKey: Hashable {
        let function: Int
        let expected: [Base]?
    }
    /// While a function's parameters are worked out: its parameters' and lets' names, and a
    /// frame for each expression being checked, outermost first. Nothing is told meanwhile;
    /// the body is checked on its own.
    private var inferred: Set<String> = []
    private var frames: [Frame] = []
    private var conflicts: [(name: String, at: SourcePosition, end: Int)] = []
    private var inferring: Set<Int> = []
    private(set) var found: [(position: SourcePosition, end: Int, message: String)] = []

    init(
        source: String, ranges: [SourceRange], callNames: [Int: SourcePosition], parentheses: [Int: Parenthesized],
        functions: [Checker.Declared]
    ) {
        self.source = Array(source.unicodeScalars)
        self.ranges = ranges
        self.callNames = callNames
        self.parentheses = parentheses
        declared = Dictionary(functions.map { ($0.function.namePosition.offset, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Checks an allow condition, which must be a bool.
    mutating func checkCondition(_ e: Expr, wildcards: [String: StaticType], scopes: Checker.Scopes) {
        self.scopes = scopes
        check(e, wildcards, expecting: .bool, statement: true)
    }

    /// The ruleset function a call of `name` runs, as declared.
    private func function(_ name: String, in scopes: Checker.Scopes) -> Checker.Declared? {
        guard let f = Checker.resolve(name, in: scopes) else { return nil }
        return declared[f.namePosition.offset] ?? (f, scopes, [:])
    }

    /// Checks a function: its body, each let's value against what the uses of its name need,
    /// and the uses of its names that need types with none in common. Parameters and lets are
    /// known only at run time; literals and the wildcards of the matches around the function
    /// (unless a parameter or let hides one) still are.
    mutating func checkFunction(_ f: FunctionDecl) {
        guard let d = declared[f.namePosition.offset] else { return }
        let worked = parameters(of: d)
        scopes = d.scopes
        let bound = Set(f.parameters + f.lets.map(\.name))
        let wildcards = d.wildcards.filter { !bound.contains($0.key) }
        for (i, l) in f.lets.enumerated() { check(l.value, wildcards, expecting: i < worked.letTypes.count ? worked.letTypes[i] : nil) }
        check(f.body, wildcards, expecting: nil)
        for c in worked.conflicts {
            warn(at: c.at, through: c.end, "Invalid type. There is no type for variable '\(c.name)' that satisfies all clauses.")
        }
    }

    /// What each parameter of a function must be, as the reference works it out: its body is
    /// checked against what the call's place expects (`expected`), a use of a name where a
    /// type is expected needs it to be that type, and each expression gathers what its parts
    /// need (a conflict told there forgets what they needed of that name); a let's value is
    /// held to what its name's uses need, and gathered at the `let`, last first. A body that
    /// cannot be what the call's place expects needs nothing more of its parts, so a parameter
    /// returned as it is must be what the place expects.
    private mutating func parameters(of called: Checker.Declared, expecting expected: StaticType? = nil) -> Parameters {
        let f = called.function
        let id = f.namePosition.offset
        let key = NeedsKey(function: id, expected: expected.map { $0.bases.sorted() })
        if let known = parameterTypes[key] { return known }
        // Recursion is refused anyway.
        guard inferring.insert(id).inserted else { return Parameters(types: f.parameters.map { _ in nil }, conflicts: []) }
        let names = f.parameters + f.lets.map(\.name)
        let outer = (scopes, inferred, frames, conflicts)
        (scopes, inferred, conflicts) = (called.scopes, Set(names), [])
        // The function's own frame gathers its body's needs, then each let's, told at the `let`.
        frames = [Frame(at: f.position, end: f.position.offset)]
        let wildcards = called.wildcards.filter { !inferred.contains($0.key) }
        check(f.body, wildcards, expecting: expected)
        var letTypes = [StaticType?](repeating: nil, count: f.lets.count)
        var letOrders = [StaticType](repeating: .unknown, count: f.lets.count)
        for (i, (name, value)) in f.lets.enumerated().reversed() {
            if i < f.letKeywordPositions.count {
                let at = f.letKeywordPositions[i]
                (frames[0].at, frames[0].end) = (at, at.offset + 2)
            }
            let need = frames[0].needs[name] ?? .unknown
            (letTypes[i], letOrders[i]) = need.isKnown ? (need, .unknown) : (nil, need)
            // A let's value sees the parameters and the lets before it, not itself.
            inferred = Set(f.parameters + f.lets.prefix(i).map(\.name))
            check(value, wildcards, expecting: letTypes[i], compared: letOrders[i])
        }
        let known = { (t: StaticType?) in t?.isKnown == true ? t : nil }
        let needs = frames[0].needs
        let found = conflicts
        var inOrder = needs
        if !f.lets.isEmpty {
            // The reference meets a parameter's uses in source order, the lets' values before
            // the body, and lists what they need in that order: gathered again so, with the
            // lets' types found above, for the order alone.
            frames = [Frame(at: f.position, end: f.position.offset)]
            for (i, (_, value)) in f.lets.enumerated() {
                inferred = Set(f.parameters + f.lets.prefix(i).map(\.name))
                check(value, wildcards, expecting: letTypes[i], compared: letOrders[i])
            }
            inferred = Set(names)
            check(f.body, wildcards, expecting: expected)
            inOrder = frames[0].needs
        }
        let types = f.parameters.map { name -> StaticType? in
            guard let type = known(needs[name]) else { return nil }
            return inOrder[name].flatMap { $0.bases == type.bases ? $0 : nil } ?? type
        }
        let orders = f.parameters.map { name in (inOrder[name] ?? needs[name]).flatMap { $0.isKnown ? nil : $0 } ?? .unknown }
        let result = Parameters(types: types, orders: orders, letTypes: letTypes.map(known), conflicts: found)
        (scopes, inferred, frames, conflicts) = outer
        inferring.remove(id)
        parameterTypes[key] = result
        return result
    }

    /// Gathers what one part of the innermost expression being checked needs.
    private mutating func gather(_ needs: [String: StaticType]) {
        let i = frames.count - 1
        for (name, type) in needs {
            guard let earlier = frames[i].needs[name] else {
                frames[i].needs[name] = type
                continue
            }
            if let both = earlier.narrowed(by: type) {
                frames[i].needs[name] = both
            } else {
                conflicts.append((name, frames[i].at, frames[i].end))
                // Forgotten, as a use that needed nothing: what later uses need is listed in
                // the usual order.
                frames[i].needs[name] = .unknown
            }
        }
    }

    /// Where an expression starts, parentheses included.
    private func start(of e: Expr) -> SourcePosition { parentheses[e.id]?.opens.first ?? ranges[e.id].start }

    /// The offset of the last character of the token starting at `offset`: a name, a number,
    /// a quoted string, or one character.
    private func tokenEnd(from offset: Int) -> Int {
        guard offset < source.count else { return offset }
        let c = source[offset]
        func isName(_ c: Unicode.Scalar) -> Bool { c.properties.isAlphabetic && c.isASCII || c == "_" || c == "$" || ("0"..."9").contains(c) }
        var i = offset
        if isName(c) {
            while i + 1 < source.count, isName(source[i + 1]) || (("0"..."9").contains(c) && source[i + 1] == ".") { i += 1 }
        } else if c == "'" || c == "\"" {
            i += 1
            while i < source.count, source[i] != c {
                if source[i] == "\\" { i += 1 }
                i += 1
            }
        }
        return min(i, source.count - 1)
    }

    // MARK: - Checking

    /// Checks `e` from the top down, as the reference does: an expression that cannot be what
    /// its place expects is named, and its parts are then held only to what their own parts
    /// need. A method's receiver and a sign's operand are named inside their outermost
    /// parentheses (`(d).get(…)` at `d`), as the reference names them (`unwrapped`); anything
    /// else at its first parenthesis. A name `compared` needs nothing, but orders what its later
    /// uses need.
    private mutating func check(
        _ e: Expr, _ wildcards: [String: StaticType], expecting expected: StaticType?, statement: Bool = false, unwrapped: Bool = false,
        compared: StaticType = .unknown
    ) {
        guard !frames.isEmpty else { return checkNode(e, wildcards, expecting: expected, statement: statement, unwrapped: unwrapped) }
        // While parameters are worked out, each expression gathers what its parts need, and
        // hands that to the expression around it.
        let at = start(of: e)
        frames.append(Frame(at: at, end: tokenEnd(from: at.offset)))
        // Every use counts, one that needs nothing too: after a first use that needed nothing,
        // later needs are listed in the usual order, whatever order their place listed them in.
        if case .identifier(let name) = e.kind, inferred.contains(name) { gather([name: expected ?? compared]) }
        checkNode(e, wildcards, expecting: expected, statement: statement, unwrapped: unwrapped)
        gather(frames.removeLast().needs)
    }

    private mutating func checkNode(
        _ e: Expr, _ wildcards: [String: StaticType], expecting expected: StaticType?, statement: Bool, unwrapped: Bool
    ) {
        // Inside an expression already named, its parts are checked only against what their own
        // parts require: what it would have required of them is not told again.
        var named = false
        if let expected, !isTernary(e) {
            let t = type(of: e, wildcards)
            if !t.fits(expected) {
                let (at, end) = anchor(e, unwrapped: unwrapped)
                warn(at: at, through: end, statement
                    ? "Invalid type. Permission statements expect a boolean value. Received one of [\(t.text)]."
                    : "Invalid type. Received one of [\(t.text)]. Expected one of [\(expected.text)].")
                noTypeFits(e, at: at, through: end)
                named = true
            }
        }
        func want(_ type: StaticType?) -> StaticType? { named ? nil : type }
        switch e.kind {
        case .int where isSigned(e):
            // `-1` is a sign applied to `1`, whose digits must then give what the sign's place
            // expects.
            if let digits = want(Self.signOperand(giving: expected)), !StaticType([.int]).fits(digits) {
                let (at, end) = digitsAnchor(e)
                warn(at: at, through: end, "Invalid type. Received one of [int]. Expected one of [\(digits.text)].")
            }
        case .null, .bool, .int, .float, .string, .bytes, .identifier: break
        case .path(let parts):
            // What a path segment can be written from.
            for case .interpolated(let inner) in parts { check(inner, wildcards, expecting: want(.pathSegment)) }
        case .list(let items):
            for i in items { check(i, wildcards, expecting: nil) }
        case .map(let entries):
            for (k, v) in entries {
                check(k, wildcards, expecting: want(.string))
                check(v, wildcards, expecting: nil)
            }
        case .unary(let op, let operand):
            if op == "!" {
                check(operand, wildcards, expecting: want(.bool))
            } else {
                check(operand, wildcards, expecting: want(Self.signOperand(giving: expected)), unwrapped: true)
            }
        case .binary(let op, let left, let right):
            switch op {
            case "==", "!=":
                check(left, wildcards, expecting: nil, compared: .equalityOperand)
                check(right, wildcards, expecting: nil, compared: .equalityOperand)
                // A function's result is seen through here, and only here, as the reference does.
                let l = comparisonType(left, wildcards)
                if !named, !l.mayEqual(comparisonType(right, wildcards)) {
                    let at = operatorPosition(op, between: left, right)
                    warn(at: at, through: at.offset + op.count - 1,
                         "The sub-expressions are not comparable, so this comparison will always return \(op == "!=").")
                }
            case "in":
                check(left, wildcards, expecting: nil)
                check(right, wildcards, expecting: want(StaticType([.list, .set, .map, .constraint])))
            case "&&", "||":
                check(left, wildcards, expecting: want(.bool))
                check(right, wildcards, expecting: want(.bool))
            case "+", "-", "*", "/", "%":
                // Each operand must be what some form of the operator giving what its place
                // expects takes.
                check(left, wildcards, expecting: want(Self.operandTypes(op, left: true, giving: expected)))
                check(right, wildcards, expecting: want(Self.operandTypes(op, left: false, giving: expected)))
            case "<", "<=", ">", ">=":
                check(left, wildcards, expecting: nil, compared: .orderedLeftOperand)
                check(right, wildcards, expecting: nil, compared: .orderedRightOperand)
            default:
                check(left, wildcards, expecting: nil)
                check(right, wildcards, expecting: nil)
            }
        // What has members, indexes and slices, named as receivers are.
        case .member(let base, _):
            check(base, wildcards, expecting: want(StaticType([.map])), unwrapped: true)
        case .index(let base, let i):
            // A string's element is a string, so a string may be indexed only where one fits.
            let indexable: Set<Base> = expected.map { !$0.fits(.string) } ?? false ? [.list, .map, .path] : [.string, .list, .map, .path]
            check(base, wildcards, expecting: want(StaticType(indexable)), unwrapped: true)
            // A list's position or a map's key, whatever is indexed.
            check(i, wildcards, expecting: want(StaticType([.int, .string])))
        case .slice(let base, let i, let j):
            // A slice is of its base's type, so the base must also be what the slice's place expects.
            check(base, wildcards, expecting: want(StaticType([.string, .list, .path]).narrowed(to: expected)), unwrapped: true)
            for bound in [i, j].compactMap({ $0 }) { check(bound, wildcards, expecting: want(StaticType([.null, .int]))) }
        case .call(let name, let receiver, let arguments):
            // A library call with the wrong number of arguments is not held to its types (its
            // parts still are to their own), and a ruleset function of a library function's
            // name is called instead of it.
            let called = receiver == nil ? function(name, in: scopes) : nil
            let library = called == nil
            let typed = library && Signatures.takes(name, arguments.count, method: receiver != nil)
            if let receiver {
                check(receiver, wildcards, expecting: want(typed ? Self.methodReceivers[name] : nil), unwrapped: true)
            }
            var expectations: [StaticType?] = !typed ? [] : receiver == nil ? Self.functionArguments[name] ?? [] : Self.methodArguments[name] ?? []
            var orders: [StaticType] = []
            // A ruleset function's arguments must be what its parameters must be where the call
            // stands.
            if let called, called.function.parameters.count == arguments.count {
                let worked = parameters(of: called, expecting: want(expected))
                (expectations, orders) = (worked.types.map(want), worked.orders)
            }
            for (i, argument) in arguments.enumerated() {
                check(argument, wildcards, expecting: want(i < expectations.count ? expectations[i] : nil), compared: i < orders.count ? orders[i] : .unknown)
            }
        case .isType(let operand, _):
            check(operand, wildcards, expecting: nil)
        case .ternary(let c, let t, let f):
            check(c, wildcards, expecting: want(.bool))
            let whenTrue = type(of: t, wildcards)
            let whenFalse = type(of: f, wildcards)
            // A branch that is not what its place expects is told instead.
            let fit = expected.map { whenTrue.fits($0) && whenFalse.fits($0) } ?? true
            if fit, whenTrue.isKnown, whenFalse.isKnown, whenTrue.bases.isDisjoint(with: whenFalse.bases) {
                let at = operatorPosition("?", between: c, t)
                warn(at: at, through: at.offset, "Ternary operator result if condition is true has a different type than if condition is false.")
            }
            check(t, wildcards, expecting: want(expected))
            check(f, wildcards, expecting: want(expected))
        }
    }

    /// The expression a chain of members, indexes, slices and method calls starts from.
    /// A part in parentheses starts the chain as written.
    private func chainStart(_ e: Expr) -> Expr {
        guard parentheses[e.id] == nil else { return e }
        switch e.kind {
        case .member(let base, _), .index(let base, _), .slice(let base, _, _): return chainStart(base)
        case .call(_, let receiver?, _): return chainStart(receiver)
        default: return e
        }
    }

    /// Whether `e`, in parentheses, is named from its first parenthesis: a literal, a name, a
    /// list, a map or a path is; a call, an operator or a member access is named where it
    /// would be without them.
    private static func namedWithParentheses(_ e: Expr) -> Bool {
        switch e.kind {
        case .null, .bool, .int, .float, .string, .bytes, .identifier, .list, .map, .path: true
        default: false
        }
    }

    /// Whether `e` is a `-` applied to something, or a number written with a sign.
    private func isSigned(_ e: Expr) -> Bool {
        switch e.kind {
        case .unary(let op, _): return op == "-"
        case .int, .float:
            let start = (parentheses[e.id]?.inner ?? ranges[e.id].start).offset
            return start < source.count && source[start] == "-"
        default: return false
        }
    }

    /// Where a signed number's digits start and end, past the sign and any space after it.
    private func digitsAnchor(_ e: Expr) -> (SourcePosition, Int) {
        var at = parentheses[e.id]?.inner ?? ranges[e.id].start
        repeat {
            at.offset += 1
            at.column += 1
        } while at.offset < source.count && (source[at.offset] == " " || source[at.offset] == "\t")
        return (at, ranges[e.id].end.offset)
    }

    private func isTernary(_ e: Expr) -> Bool {
        if case .ternary = e.kind { true } else { false }
    }

    /// The operand types of each operator that computes, with what each gives, in the order the
    /// reference lists them; a `-` with one operand is `"neg"`.
    private static let arithmetic: [String: [(left: Base, right: Base, result: Base)]] = {
        let numeric: [(Base, Base, Base)] = [(.int, .int, .int), (.float, .float, .float)]
        return [
            "+": numeric + [(.string, .string, .string), (.duration, .duration, .duration), (.duration, .timestamp, .timestamp),
                            (.timestamp, .duration, .timestamp)],
            "-": numeric + [(.duration, .duration, .duration), (.timestamp, .timestamp, .duration), (.timestamp, .duration, .timestamp)],
            "*": numeric, "/": numeric, "%": numeric,
            "neg": numeric + [(.duration, .duration, .duration)],
        ]
    }()

    /// What `op` can give.
    private static func results(_ op: String) -> StaticType { StaticType(Set((arithmetic[op] ?? []).map(\.result))) }

    /// What a sign's operand must be for the sign to give what `expected` accepts.
    private static func signOperand(giving expected: StaticType?) -> StaticType { operandTypes("neg", left: true, giving: expected) }

    /// What one operand of `op` must be for its result to be what `expected` accepts: the
    /// operand types of every form giving such a result. The reference takes an int and a
    /// float for each other here, so a place wanting either accepts both numeric forms.
    private static func operandTypes(_ op: String, left: Bool, giving expected: StaticType?) -> StaticType {
        let forms = arithmetic[op] ?? []
        let numbers: Set<Base> = [.int, .float]
        var listed: [Base] = []
        func accepted(_ result: Base) -> Bool {
            guard let expected, expected.isKnown else { return true }
            return expected.bases.contains(result) || (numbers.contains(result) && !expected.bases.isDisjoint(with: numbers))
        }
        for form in forms where accepted(form.result) {
            let operand = left ? form.left : form.right
            if !listed.contains(operand) { listed.append(operand) }
        }
        // Nothing gives what the place wants: the operator itself is named there, not its operands.
        if listed.isEmpty { return operandTypes(op, left: left, giving: nil) }
        return StaticType(listing: listed)
    }

    // MARK: - Types

    /// What the source says `e` can be. Only what the reference types is typed; everything
    /// else, such as data read at run time, is unknown.
    private func type(of e: Expr, _ wildcards: [String: StaticType]) -> StaticType {
        switch e.kind {
        case .null: return StaticType([.null])
        case .bool: return .bool
        // A negative number is a `-` applied to it there.
        case .int: return isSigned(e) ? Self.results("neg") : StaticType([.int])
        case .float: return isSigned(e) ? Self.results("neg") : StaticType([.float])
        case .string: return .string
        case .bytes: return StaticType([.bytes])
        case .path: return .path
        case .identifier(let name): return wildcards[name] ?? .unknown
        case .list: return StaticType([.list])
        case .map: return StaticType([.map])
        case .unary(let op, _):
            // The reference types `-x` as any number or duration, even `-1`.
            return op == "!" ? .bool : Self.results("neg")
        case .binary(let op, _, _):
            switch op {
            case "==", "!=", "<", "<=", ">", ">=", "&&", "||", "in": return .bool
            case "+", "-", "*", "/", "%": return Self.results(op)
            default: return .unknown
            }
        case .member, .index, .ternary: return .unknown
        case .slice: return StaticType([.string, .list, .path])
        case .call(let name, let receiver, let arguments):
            guard Signatures.takes(name, arguments.count, method: receiver != nil) else { return .unknown }
            return (receiver == nil ? Self.functionResults[name] : Self.methodResults[name]) ?? .unknown
        case .isType: return .bool
        }
    }

    /// The type a comparison sees: a call of a ruleset function has the type of what it returns.
    private mutating func comparisonType(_ e: Expr, _ wildcards: [String: StaticType]) -> StaticType {
        if case .call(let name, nil, let arguments) = e.kind, let called = function(name, in: scopes) {
            // With the wrong number of arguments the call fails, whatever the function returns.
            return called.function.parameters.count == arguments.count ? returnType(of: called, visiting: []) : .unknown
        }
        return type(of: e, wildcards)
    }

    /// What a ruleset function returns, its parameters and lets unknown.
    private mutating func returnType(of called: Checker.Declared, visiting: Set<Int>) -> StaticType {
        let (f, inner) = (called.function, called.scopes)
        let id = f.namePosition.offset
        if let known = returnTypes[id] { return known }
        guard !visiting.contains(id) else { return .unknown }
        // What it returns may be a wildcard around it, unless a parameter or let hides it.
        let bound = Set(f.parameters + f.lets.map(\.name))
        var result = type(of: f.body, called.wildcards.filter { !bound.contains($0.key) })
        // Through a call only with the callee's number of arguments; with another, it fails.
        if case .call(let callee, nil, let arguments) = f.body.kind, let next = function(callee, in: inner),
            next.function.parameters.count == arguments.count
        {
            result = returnType(of: next, visiting: visiting.union([id]))
        }
        returnTypes[id] = result
        return result
    }

    // MARK: - Warnings

    /// A wildcard used where its type does not fit gets a second warning naming it.
    private mutating func noTypeFits(_ operand: Expr, at: SourcePosition, through end: Int) {
        guard case .identifier(let name) = operand.kind else { return }
        warn(at: at, through: end, "Invalid type. There is no type for variable '\(name)' that satisfies all clauses.")
    }

    private mutating func warn(at position: SourcePosition, through end: Int, _ message: String) {
        guard frames.isEmpty else { return }
        found.append((position, end, message))
    }

    /// Where the reference points for an expression of the wrong type: the name of a call,
    /// the operator of a binary expression or `is`, the opening bracket of a list or map, a
    /// path's first segment, the value a member or index is read from, the start of a sliced
    /// chain, a sign, the first parenthesis around a literal or name, or the expression itself.
    /// `unwrapped` (a receiver) sheds the outermost pair of parentheses.
    private func anchor(_ e: Expr, unwrapped: Bool = false) -> (SourcePosition, Int) {
        let opens = parentheses[e.id].map { unwrapped ? Array($0.opens.dropFirst()) : $0.opens } ?? []
        if let open = opens.first, !isSigned(e), Self.namedWithParentheses(e) { return (open, open.offset) }
        // Where a receiver starts once its outermost parentheses are shed.
        let inner = unwrapped ? opens.first ?? parentheses[e.id]?.inner : nil
        switch e.kind {
        case .call(let name, _, _):
            let at = callNames[e.id] ?? ranges[e.id].start
            let last = name.split(separator: ".").last.map(String.init) ?? name
            return (at, at.offset + last.unicodeScalars.count - 1)
        case .binary(let op, let left, let right):
            let at = operatorPosition(op, between: left, right)
            return (at, at.offset + op.count - 1)
        case .list, .map:
            let start = inner ?? ranges[e.id].start
            return (start, start.offset)
        case .path(let parts):
            // The slash and the first segment.
            let start = inner ?? ranges[e.id].start
            guard case .literal? = parts.first else { return (start, start.offset) }
            // As written: `%41` is three characters there.
            return (start, start.offset + Lexer.segmentLength(source, from: start.offset + 1))
        case .member(let base, _), .index(let base, _): return anchor(base, unwrapped: unwrapped)
        // A slice is named at the start of what it slices: the first name of a chain of members
        // and calls, or the first parenthesis around it.
        case .slice(let base, _, _):
            let first = chainStart(base)
            if let open = parentheses[first.id]?.opens.first { return (open, open.offset) }
            guard case .call(_, nil, _) = first.kind else { return anchor(first, unwrapped: unwrapped) }
            // A library function's call is named by its first word there (`duration`).
            let start = ranges[first.id].start
            var end = start.offset
            while end + 1 < source.count, source[end + 1].properties.isAlphabetic || source[end + 1] == "_" { end += 1 }
            return (start, end)
        case .isType(let operand, _):
            let at = operatorPosition("is", after: operand, before: ranges[e.id].end.offset + 1)
            return (at, at.offset + 1)
        // A sign or a `!` is named alone, inside any parentheses.
        case _ where isSigned(e), .unary:
            let start = parentheses[e.id]?.inner ?? ranges[e.id].start
            return (start, start.offset)
        default:
            return (inner ?? ranges[e.id].start, ranges[e.id].end.offset)
        }
    }

    /// Where the operator between two operands starts, as the reference points at it; the
    /// start of the left operand when it cannot be found.
    private func operatorPosition(_ op: String, between left: Expr, _ right: Expr) -> SourcePosition {
        operatorPosition(op, after: left, before: ranges[right.id].start.offset)
    }

    private func operatorPosition(_ op: String, after left: Expr, before end: Int) -> SourcePosition {
        let from = ranges[left.id].end
        let limit = min(end, source.count)
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
