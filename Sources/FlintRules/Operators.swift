import FlintModel

/// Equality, ordering and arithmetic of rules values, with the rules language's error texts.
enum Operators {
    static func unsupported(_ received: String, _ expected: String) -> RulesValue {
        .error("Unsupported operation error. Received: \(received). Expected: \(expected).")
    }

    /// Where an int equals the float of the same value, as the reference compares them.
    enum Numbers {
        /// `==`: at its own level; inside lists and maps they are different kinds.
        case topLevel
        /// A list's `in`, `hasAll`, `hasAny`, `hasOnly` and `removeAll`: never.
        case never
        /// Sets (members, `==`, `in` and their methods) and map diffs: at every depth, so
        /// `[[1], [1.0]].toSet()` has one member.
        case everywhere
    }

    /// Equality: never an error; different kinds are unequal.
    static func equal(_ a: RulesValue, _ b: RulesValue, numbers: Numbers = .topLevel) -> Bool {
        let inner: Numbers = numbers == .everywhere ? .everywhere : .never
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.float(let x), .float(let y)): return x == y
        case (.int(let x), .float(let y)), (.float(let y), .int(let x)): return numbers != .never && Double(x) == y
        // Exact code units, never Unicode canonical equivalence ("é" precomposed ≠ decomposed).
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.list(let x), .list(let y)): return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1, numbers: inner) }
        case (.map(let x), .map(let y)):
            return x.count == y.count && x.allSatisfy { k, v in y[k].map { equal(v, $0, numbers: inner) } ?? false }
        case (.set(let x), .set(let y)):
            guard x.count == y.count else { return false }
            let members = Membership(y, numbers: .everywhere)
            return x.allSatisfy(members.contains)
        // A template with a variable left unbound equals nothing at the top level, not even
        // itself; inside lists and maps paths compare as they are (the reference's answers).
        case (.path(let x), .path(let y)): return numbers == .topLevel && (x.unbound != nil || y.unbound != nil) ? false : x == y
        case (.timestamp(let x), .timestamp(let y)): return x == y
        case (.duration(let x), .duration(let y)): return x == y
        case (.latlng(let a1, let o1), .latlng(let a2, let o2)): return a1 == a2 && o1 == o2
        case (.vector(let x), .vector(let y)): return x == y
        case (.mapDiff, .mapDiff): return false
        default: return false
        }
    }

    /// A hash that equal values share, under any of the `Numbers` rules (unequal ones may share
    /// it too), so long lists can be searched by bucket instead of end to end.
    static func bucket(_ v: RulesValue) -> Int {
        var h = Hasher()
        func add(_ v: RulesValue) {
            switch v {
            case .null: h.combine(0)
            case .bool(let b): h.combine(b)
            // An int equals the float it converts to, so both hash as that float.
            case .int(let x): h.combine(Double(x))
            case .float(let x): h.combine(x)
            case .string(let x): h.combine(x)
            case .bytes(let x): h.combine(x)
            case .list(let x):
                h.combine(x.count)
                x.forEach(add)
            // Maps and sets compare without order: their sizes (and a map's keys) are enough.
            case .map(let x): h.combine(Set(x.keys))
            case .set(let x): h.combine(x.count)
            case .path(let x): h.combine(x.segments)
            case .timestamp(let x):
                h.combine(x.seconds)
                h.combine(x.nanos)
            case .duration(let x): h.combine(x.nanos)
            case .latlng(let a, let o):
                h.combine(a)
                h.combine(o)
            case .vector(let x): h.combine(x)
            case .mapDiff, .constraint, .error: h.combine(1)
            }
        }
        add(v)
        return h.finalize()
    }

    /// Order within numbers, strings (UTF-16 units), bytes, timestamps and durations; nil otherwise.
    static func compare(_ a: RulesValue, _ b: RulesValue) -> Int? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.float(let x), .float(let y)): return x < y ? -1 : (x > y ? 1 : (x == y ? 0 : nil))
        case (.int(let x), .float(let y)): return compare(.float(Double(x)), .float(y))
        case (.float(let x), .int(let y)): return compare(.float(x), .float(Double(y)))
        case (.string(let x), .string(let y)):
            if x.utf8.elementsEqual(y.utf8) { return 0 }
            return x.utf16.lexicographicallyPrecedes(y.utf16) ? -1 : 1
        case (.bytes(let x), .bytes(let y)): return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
        case (.timestamp(let x), .timestamp(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.duration(let x), .duration(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        default: return nil
        }
    }

    static func relational(_ op: String, _ a: RulesValue, _ b: RulesValue) -> RulesValue {
        switch (a, b) {
        case (.constraint, .constraint): return typeError(received: "constraint", expected: orderedTypes)
        case (.constraint(let c), _): return isOrdered(b) ? implied(c, op, b) : typeError(received: b.typeName, expected: orderedTypes)
        case (_, .constraint(let c)): return isOrdered(a) ? implied(c, flipped(op), a) : typeError(received: a.typeName, expected: orderedTypes)
        default: break
        }
        guard let c = compare(a, b) else {
            // NaN is unordered among numbers; against any other type it is a type error.
            if case .float(let x) = a, x.isNaN, number(b) != nil { return .bool(false) }
            if case .float(let y) = b, y.isNaN, number(a) != nil { return .bool(false) }
            let expected = ["string", "bytes", "int", "float", "duration", "timestamp"].map { "\($0) \(op) \($0)" }
                + ["constraint \(op) any", "any \(op) constraint"]
            return unsupported("\(a.typeName) \(op) \(b.typeName)", expected.joined(separator: ", "))
        }
        switch op {
        case "<": return .bool(c < 0)
        case "<=": return .bool(c <= 0)
        case ">": return .bool(c > 0)
        default: return .bool(c >= 0)
        }
    }

    static func flipped(_ op: String) -> String {
        switch op {
        case "<": ">"
        case "<=": ">="
        case ">": "<"
        case ">=": "<="
        default: op
        }
    }

    /// What a comparison with a constraint answers when no fact proves it: an error without a
    /// message, which the reference's denial names as an evaluation error at the condition.
    static let notImplied = "\u{0}not implied"

    /// Whether one of the constraint's facts alone proves `value op rhs` for every value it
    /// allows.
    static func implied(_ c: FieldConstraint, _ op: String, _ rhs: RulesValue) -> RulesValue {
        c.facts.contains { proves($0, op, rhs) } ? .bool(true) : .error(notImplied)
    }

    /// One fact against a comparison, as the reference weighs it: an int fact is widened to a
    /// float right-hand side, and otherwise only values of one type are weighed, so a float
    /// fact proves nothing of an int. A NaN equality (`IS_NAN` on a field other filters also
    /// constrain) proves any comparison with a number.
    private static func proves(_ fact: FieldConstraint.Fact, _ op: String, _ rhs: RulesValue) -> Bool {
        var value = fact.value
        if case .int(let i) = value, case .float = rhs { value = .float(Double(i)) }
        let sameType = value.typeName == rhs.typeName
        switch (fact.op, op) {
        case (.listContains, _): return false
        case (.equal, _) where value.isNaN: return number(rhs) != nil
        case (.equal, "=="): return sameType && equal(value, rhs)
        // Two numbers of different types are unequal, as the reference compares them.
        case (.equal, "!="): return sameType ? !equal(value, rhs) : number(value) != nil && number(rhs) != nil
        case (.notEqual, "!="): return sameType && equal(value, rhs)
        default: break
        }
        guard sameType, let k = compare(value, rhs) else { return false }
        switch (fact.op, op) {
        case (.equal, "<"): return k < 0
        case (.equal, "<="): return k <= 0
        case (.equal, ">"): return k > 0
        case (.equal, ">="): return k >= 0
        case (.greaterThan, ">"), (.greaterThan, ">="), (.greaterThan, "!="): return k >= 0
        case (.greaterThanOrEqual, ">"), (.greaterThanOrEqual, "!="): return k > 0
        case (.greaterThanOrEqual, ">="): return k >= 0
        case (.lessThan, "<"), (.lessThan, "<="), (.lessThan, "!="): return k <= 0
        case (.lessThanOrEqual, "<"), (.lessThanOrEqual, "!="): return k < 0
        case (.lessThanOrEqual, "<="): return k <= 0
        default: return false
        }
    }

    /// `==` or `!=`. Against a constraint, equality holds only by an equality fact.
    static func equality(_ op: String, _ a: RulesValue, _ b: RulesValue) -> RulesValue {
        let c: FieldConstraint
        let other: RulesValue
        switch (a, b) {
        case (.constraint, .constraint): return typeError(received: "constraint", expected: equatableTypes)
        case (.constraint(let x), _): (c, other) = (x, b)
        case (_, .constraint(let x)): (c, other) = (x, a)
        default: return .bool(op == "==" ? equal(a, b) : !equal(a, b))
        }
        if op == "!=", case .null = other {
            return c.facts.contains(where: provesNotNull) ? .bool(true) : .error(notImplied)
        }
        return implied(c, op, other)
    }

    /// Whether a fact keeps null out: an equality with a value, any `!=` or contained element,
    /// and a range over values that have an order (not one over booleans).
    private static func provesNotNull(_ fact: FieldConstraint.Fact) -> Bool {
        switch fact.op {
        case .equal: if case .null = fact.value { false } else { true }
        case .notEqual, .listContains: true
        default: isOrdered(fact.value)
        }
    }

    static let equatableTypes = "bool,duration,float,int,latlng,map,null,string,bytes,timestamp,path,list,vector,set"
    static let orderedTypes = "timestamp,duration,float,int,string,bytes"

    /// The reference's error for a constraint compared with a value it cannot weigh.
    static func typeError(received: String, expected: String) -> RulesValue {
        .error("Type error. Received: [\(received)] Expected: [\(expected)].")
    }

    private static func isOrdered(_ v: RulesValue) -> Bool {
        switch v {
        case .int, .float, .string, .bytes, .timestamp, .duration: true
        default: false
        }
    }

    static func arithmetic(_ op: String, _ a: RulesValue, _ b: RulesValue) -> RulesValue {
        switch (a, b) {
        case (.int(let x), .int(let y)):
            switch op {
            case "+": return overflowChecked(x.addingReportingOverflow(y))
            case "-": return overflowChecked(x.subtractingReportingOverflow(y))
            case "*": return overflowChecked(x.multipliedReportingOverflow(by: y))
            case "/":
                guard y != 0 else { return .error("Divide by zero error.") }
                // As on the JVM, the lowest integer over -1 is itself.
                return .int(x.dividedReportingOverflow(by: y).partialValue)
            default:
                guard y != 0 else { return .error("Divide by zero error.") }
                return .int(x.remainderReportingOverflow(dividingBy: y).partialValue)
            }
        case (.int, .float), (.float, .int), (.float, .float):
            let x = number(a)!, y = number(b)!
            switch op {
            case "+": return .float(x + y)
            case "-": return .float(x - y)
            case "*": return .float(x * y)
            case "/": return .float(x / y)
            default: return .float(x.truncatingRemainder(dividingBy: y))
            }
        case (.string(let x), .string(let y)) where op == "+": return .string(x + y)
        case (.timestamp(let t), .duration(let d)) where op == "+" || op == "-":
            let signed = op == "+" ? d : d.negated
            return t.adding(signed).map { .timestamp($0) } ?? .error(RulesTimestamp.invalid)
        case (.duration(let d), .timestamp(let t)) where op == "+":
            return t.adding(d).map { .timestamp($0) } ?? .error(RulesTimestamp.invalid)
        case (.timestamp(let x), .timestamp(let y)) where op == "-":
            // Years 1 to 9999 apart at most: always within a duration's range.
            return RulesDuration.value(nanos: Int128(x.seconds - y.seconds) * 1_000_000_000 + Int128(x.nanos) - Int128(y.nanos))
        case (.duration(let x), .duration(let y)) where op == "+" || op == "-":
            return RulesDuration.value(nanos: op == "+" ? x.nanos + y.nanos : x.nanos - y.nanos)
        default:
            let expected: String
            switch op {
            case "+": expected = "int + int, float + float, string + string, duration + duration, duration + timestamp, timestamp + duration"
            case "-": expected = "int - int, float - float, duration - duration, timestamp - duration, timestamp - timestamp"
            default: expected = "int \(op) int, float \(op) float"
            }
            return unsupported("\(a.typeName) \(op) \(b.typeName)", expected)
        }
    }

    static let integerOutOfRange = RulesValue.error("Integer value is out of the [-9223372036854775808, 9223372036854775807] range.")

    private static func overflowChecked(_ r: (partialValue: Int64, overflow: Bool)) -> RulesValue {
        r.overflow ? integerOutOfRange : .int(r.partialValue)
    }

    static func number(_ v: RulesValue) -> Double? {
        switch v {
        case .int(let i): Double(i)
        case .float(let f): f
        default: nil
        }
    }

    static func contains(_ container: RulesValue, _ item: RulesValue) -> RulesValue {
        switch container {
        case .list(let items):
            // A template with a variable left unbound is in no list, as it equals nothing.
            if case .path(let p) = item, p.unbound != nil { return .bool(false) }
            return .bool(items.contains { equal($0, item, numbers: .never) })
        case .set(let items): return .bool(items.contains { equal($0, item, numbers: .everywhere) })
        // Only a known element is in the array; anything else is not implied.
        case .constraint(let c): return c.contained.contains { equal($0, item) } ? .bool(true) : .error(notImplied)
        case .map(let m):
            guard case .string(let key) = item else { return unsupported("map.in(\(item.typeName))", "map.in(string)") }
            return .bool(m[UTF8Key(key)] != nil)
        default: return Stdlib.notFound("in")
        }
    }
}

/// A list searched as `Operators.equal` compares: end to end when short, by
/// `Operators.bucket` when long, so set operations on lists of thousands stay linear.
struct Membership {
    private let values: [RulesValue]
    private let numbers: Operators.Numbers
    private let buckets: [Int: [Int]]?

    init(_ values: [RulesValue], numbers: Operators.Numbers) {
        self.values = values
        self.numbers = numbers
        guard values.count > 8 else {
            buckets = nil
            return
        }
        var buckets: [Int: [Int]] = [:]
        for (i, v) in values.enumerated() { buckets[Operators.bucket(v), default: []].append(i) }
        self.buckets = buckets
    }

    func contains(_ v: RulesValue) -> Bool {
        guard let buckets else { return values.contains { Operators.equal($0, v, numbers: numbers) } }
        return buckets[Operators.bucket(v)]?.contains { Operators.equal(values[$0], v, numbers: numbers) } ?? false
    }

    /// A set's members: the values without repeats, first ones kept.
    static func unique(_ values: [RulesValue]) -> [RulesValue] {
        var out: [RulesValue] = []
        var seen: [Int: [Int]] = [:]
        for v in values {
            let b = Operators.bucket(v)
            if seen[b]?.contains(where: { Operators.equal(out[$0], v, numbers: .everywhere) }) == true { continue }
            seen[b, default: []].append(out.count)
            out.append(v)
        }
        return out
    }
}
