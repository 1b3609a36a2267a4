import FlintModel
import Foundation

/// The rules standard library: member access, indexing, the methods of each type and the
/// global and namespaced functions, with the reference emulator's results and error texts.
enum Stdlib {
    static func notFound(_ name: String) -> RulesValue { .error("Function not found error: Name: [\(name)].") }

    /// The reference's refusal of arguments of the wrong types: `qualified` is a function's
    /// name, or a method's as `type.name`. Counts were checked before (`Signatures`).
    static func mismatch(_ qualified: String, _ args: [RulesValue], method: Bool = false) -> RulesValue {
        let expected = (method ? Signatures.methods[qualified] : Signatures.functions[qualified]) ?? qualified
        return Operators.unsupported("\(qualified)(\(args.map(\.typeName).joined(separator: ", ")))", expected)
    }

    // MARK: - Access

    static func member(_ base: RulesValue, _ name: String) -> RulesValue {
        switch base {
        case .error: return base
        case .null: return .error("Null value error.")
        case .map(let m): return m[UTF8Key(name)] ?? .error("Property \(name) is undefined on object.")
        case .path(let p): return p.unboundError ?? .error("Property \(name) is undefined on object.")
        case .constraint: return .error("Property \(name) is undefined on object.")
        default: return .error("Type error. Received: [\(base.typeName)] Expected: [map,path].")
        }
    }

    static func index(_ base: RulesValue, _ i: RulesValue) -> RulesValue {
        switch (base, i) {
        case (.null, _): return .error("Null value error.")
        case (.map(let m), .string(let key)): return m[UTF8Key(key)] ?? .error("Property \(key) is undefined on object.")
        case (.list(let items), .int(let n)):
            guard n >= 0, n < items.count else { return outOfBounds(n, items.count) }
            return items[Int(n)]
        case (.string(let s), .int(let n)):
            let units = Array(s.utf16)
            guard n >= 0, n < units.count else { return outOfBounds(n, units.count) }
            return .string(String(decoding: [units[Int(n)]], as: UTF16.self))
        case (.path(let p), _) where p.unbound != nil: return p.unboundError!
        case (.path(let p), .int(let n)):
            guard n >= 0, n < p.segments.count else { return outOfBounds(n, p.segments.count) }
            return .string(p.segments[Int(n)])
        // The reference's answers for the rest: each indexable type names its own index type.
        case (.path, .string(let key)): return .error("Property \(key) is undefined on object.")
        case (.list, _): return Operators.unsupported("list[\(i.typeName)]", "list[int]")
        case (.string, _): return Operators.unsupported("string[\(i.typeName)]", "string[int]")
        case (.map, _): return Operators.unsupported("map[\(i.typeName)]", "map[string]")
        case (.path, _): return Operators.unsupported("path[\(i.typeName)]", "path[int]")
        default: return .error("Function not found error: Name: [[]].")
        }
    }

    static func conversionError(_ text: String, to type: String) -> RulesValue {
        .error("Type conversion error. Argument: [\(text)], From type: [string], To type: [\(type)].")
    }

    static func outOfBounds(_ i: Int64, _ size: Int) -> RulesValue {
        .error("Index out of bound error. Index: [\(i)] , size: [\(size)].")
    }

    /// `x[i:j]` of a list, string or path, with a missing or null `i` as 0 and `j` as the size.
    /// As the emulator checks: the first index `i` and the last one `j - 1` must both be in
    /// range, and `i <= j`; so `x[0:0]` and `x[size:]` are errors, and `x[i:i]` inside is empty.
    static func slice(_ base: RulesValue, _ from: RulesValue?, _ to: RulesValue?) -> RulesValue {
        let size: Int
        let expected: String
        switch base {
        case .list(let items): (size, expected) = (items.count, "list[null:null], list[null:int], list[int:null], list[int:int]")
        case .string(let s): (size, expected) = (s.utf16.count, "string[null:null], string[null:int], string[int:null], string[int:int]")
        case .path(let p):
            if let unbound = p.unboundError { return unbound }
            (size, expected) = (p.segments.count, "path[null:null], path[int:int], path[int:null], path[null:int]")
        case .null: return .error("Null value error.")
        default: return notFound("@range")
        }
        let bound = { (v: RulesValue?, missing: Int64) -> Int64? in
            switch v {
            case nil, .null?: missing
            case .int(let n)?: n
            default: nil
            }
        }
        guard let i = bound(from, 0), let j = bound(to, Int64(size)) else {
            let type = { (v: RulesValue?) in v?.typeName ?? "null" }
            return Operators.unsupported("\(base.typeName)[\(type(from)):\(type(to))]", expected)
        }
        // Bounds past 32 bits are named as they are, the start first, before any range check.
        if Int32(exactly: i) == nil { return outOfBounds(i, size) }
        if Int32(exactly: j) == nil { return outOfBounds(j, size) }
        if i < 0 || i >= size { return outOfBounds(i, size) }
        if j < 1 || j > size { return outOfBounds(j - 1, size) }
        if i > j { return .error("Illegal range error. From index: [\(i)] , To index: [\(j)].") }
        switch base {
        case .list(let items): return .list(Array(items[Int(i)..<Int(j)]))
        case .string(let s): return .string(String(decoding: Array(s.utf16)[Int(i)..<Int(j)], as: UTF16.self))
        case .path(let p): return .path(RulesPath(Array(p.segments[Int(i)..<Int(j)])))
        default: return .error("Null value error.")
        }
    }

    static func isType(_ v: RulesValue, _ name: String) -> Bool {
        switch (v, name) {
        case (.bool, "bool"), (.int, "int"), (.float, "float"), (.int, "number"), (.float, "number"), (.string, "string"),
            (.list, "list"), (.map, "map"), (.timestamp, "timestamp"), (.duration, "duration"), (.path, "path"),
            (.latlng, "latlng"), (.bytes, "bytes"), (.mapDiff, "map_diff"), (.vector, "vector"), (.constraint, "constraint"):
            return true
        default:
            return false
        }
    }

    /// The names `is` accepts, in the emulator's order for its message. `set` compiles but, as
    /// on the emulator, no value answers true to it; `constraint` is a field a list query's
    /// filter constrains without pinning it.
    static let typeNameList = ["bool", "bytes", "constraint", "duration", "float", "int", "latlng", "list", "vector", "set", "number", "map", "string", "timestamp", "path", "map_diff"]
    static let typeNames = Set(typeNameList)

    // MARK: - Strings

    /// `string(x)` and path interpolation.
    static func stringify(_ v: RulesValue) -> String? {
        switch v {
        case .string(let s): return s
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .float(let f): return f.jvmDescription
        case .null: return "null"
        case .path(let p): return p.rendered
        default: return nil
        }
    }

    /// An integer as the reference (a JVM) reads one: an optional sign, then decimal digits of
    /// any script (`'+12'`, `'٣'`), nothing else, within 64 bits.
    static func javaInteger(_ s: String) -> Int64? {
        var scalars = Substring(s).unicodeScalars[...]
        var negative = false
        if let sign = scalars.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            scalars = scalars.dropFirst()
        }
        guard !scalars.isEmpty else { return nil }
        // Accumulated negatively, so the lowest integer fits.
        var value: Int64 = 0
        for c in scalars {
            guard c.properties.generalCategory == .decimalNumber, let digit = c.properties.numericValue.map({ Int64($0) }) else { return nil }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = times.subtractingReportingOverflow(digit)
            guard !o1, !o2 else { return nil }
            value = next
        }
        if negative { return value }
        return value == Int64.min ? nil : -value
    }

    /// A float as the reference (a JVM) reads one: surrounding blanks ignored, an optional sign,
    /// `NaN`, `Infinity`, or decimal digits with an optional point and exponent, and an optional
    /// `f` or `d` suffix. Swift's own reader would also take `inf` and `nan`; the JVM does not.
    static func javaDouble(_ s: String) -> Double? {
        var t = Substring(s).unicodeScalars[...]
        while let c = t.first, c.value <= 0x20 { t = t.dropFirst() }
        while let c = t.last, c.value <= 0x20 { t = t.dropLast() }
        var sign = ""
        if let c = t.first, c == "+" || c == "-" {
            sign = String(c)
            t = t.dropFirst()
        }
        let body = String(String.UnicodeScalarView(t))
        if body == "NaN" { return .nan }
        if body == "Infinity" { return sign == "-" ? -.infinity : .infinity }
        var digits = Array(body.unicodeScalars)
        if let last = digits.last, "fFdD".unicodeScalars.contains(last) { digits.removeLast() }
        if digits.count > 2, digits[0] == "0", digits[1] == "x" || digits[1] == "X" {
            // Hexadecimal, which needs its binary exponent: `0x1p3`.
            guard digits.contains(where: { $0 == "p" || $0 == "P" }) else { return nil }
            return Double(sign + String(String.UnicodeScalarView(digits)))
        }
        // digits [. digits] [e [sign] digits], with a digit before or after the point.
        var i = 0
        var mantissa = 0
        let isDigit = { (c: Unicode.Scalar) in c >= "0" && c <= "9" }
        while i < digits.count, isDigit(digits[i]) { i += 1; mantissa += 1 }
        if i < digits.count, digits[i] == "." {
            i += 1
            while i < digits.count, isDigit(digits[i]) { i += 1; mantissa += 1 }
        }
        guard mantissa > 0 else { return nil }
        if i < digits.count, digits[i] == "e" || digits[i] == "E" {
            i += 1
            if i < digits.count, digits[i] == "+" || digits[i] == "-" { i += 1 }
            let start = i
            while i < digits.count, isDigit(digits[i]) { i += 1 }
            guard i > start else { return nil }
        }
        guard i == digits.count else { return nil }
        var text = String(String.UnicodeScalarView(digits))
        if text.hasPrefix(".") { text = "0" + text }
        if text.hasSuffix(".") { text += "0" }
        return Double(sign + text)
    }

    /// A value as the reference's `debug()` prints it: the protobuf text form of its value
    /// message, fields at their defaults left out, written on one line (protobuf's short form)
    /// so that each value stays one log line. Strings keep non-ASCII text readable, where the
    /// reference writes octal escapes of its UTF-8.
    static func debugDescription(_ v: RulesValue) -> String {
        func message(_ name: String, _ fields: [String]) -> String { name + " { " + fields.map { $0 + " " }.joined() + "}" }
        func numbers(_ name: String, _ fields: [(String, String, Bool)]) -> String {
            message(name, fields.filter { $0.2 }.map { "\($0.0): \($0.1)" })
        }
        switch v {
        case .null: return "null_value: NULL_VALUE"
        case .bool(let b): return "bool_value: \(b)"
        case .int(let i): return "int_value: \(i)"
        case .float(let f): return "float_value: \(f.jvmDescription)"
        case .string(let s): return "string_value: " + textQuoted(Array(s.utf8), keepingUTF8: true)
        case .bytes(let b): return "bytes_value: " + textQuoted(b, keepingUTF8: false)
        case .list(let items): return message("list_value", items.map { message("values", [debugDescription($0)]) })
        case .set(let items): return message("set_value", items.map { message("values", [debugDescription($0)]) })
        case .map(let m):
            return message("map_value", m.keys.sorted().map { key in
                message("fields", ["key: " + textQuoted(Array(key.string.utf8), keepingUTF8: true), message("value", [debugDescription(m[key]!)])])
            })
        case .mapDiff(let d):
            return message("map_diff_value", d.statuses.map { key, status in
                message("key_statuses", ["key: " + textQuoted(Array(key.utf8), keepingUTF8: true), "value: " + status.rawValue])
            })
        case .path(let p):
            return message("path_value", p.segments.map { message("segments", ["simple: " + textQuoted(Array($0.utf8), keepingUTF8: true)]) })
        case .timestamp(let t):
            return numbers("timestamp_value", [("seconds", "\(t.seconds)", t.seconds != 0), ("nanos", "\(t.nanos)", t.nanos != 0)])
        case .duration(let d):
            let (seconds, nanos) = (d.seconds, d.nanosOfSecond)
            return numbers("duration_value", [("seconds", "\(seconds)", seconds != 0), ("nanos", "\(nanos)", nanos != 0)])
        case .latlng(let lat, let lng):
            return numbers("latlng_value", [("latitude", lat.jvmDescription, lat != 0), ("longitude", lng.jvmDescription, lng != 0)])
        case .vector(let values): return message("vector_value", values.map { message("values", ["float_value: \($0.jvmDescription)"]) })
        case .constraint: return message("constraint_value", [])
        case .error(let e): return "error: \(e)"
        }
    }

    /// A protobuf text-format string literal: C escapes for quotes, backslashes and control
    /// characters, octal for other bytes outside printable ASCII (unless kept as UTF-8).
    private static func textQuoted(_ bytes: [UInt8], keepingUTF8: Bool) -> String {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in bytes {
            let escape: Character?
            switch byte {
            case 0x07: escape = "a"
            case 0x08: escape = "b"
            case 0x0C: escape = "f"
            case 0x0A: escape = "n"
            case 0x0D: escape = "r"
            case 0x09: escape = "t"
            case 0x0B: escape = "v"
            case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""): escape = Character(Unicode.Scalar(byte))
            default: escape = nil
            }
            if let escape {
                out += [UInt8(ascii: "\\")] + Array(String(escape).utf8)
            } else if byte < 0x20 || byte == 0x7F || (byte > 0x7F && !keepingUTF8) {
                out += [UInt8(ascii: "\\"), 0x30 + (byte >> 6), 0x30 + ((byte >> 3) & 7), 0x30 + (byte & 7)]
            } else {
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }

    private static func regex(_ pattern: String) -> Result<RE2, RE2.SyntaxError> {
        RegexCache.shared.regex(pattern)
    }

    static func stringMethod(_ s: String, _ name: String, _ args: [RulesValue]) -> RulesValue {
        switch name {
        case "size":
            return .int(Int64(s.utf16.count))
        case "lower", "upper":
            var out = String.UnicodeScalarView()
            for c in s.unicodeScalars {
                if name == "lower", c >= "A", c <= "Z" { out.append(Unicode.Scalar(c.value + 32)!) }
                else if name == "upper", c >= "a", c <= "z" { out.append(Unicode.Scalar(c.value - 32)!) }
                else { out.append(c) }
            }
            return .string(String(out))
        case "trim":
            // As Java's `String.trim`: every control character and the space, U+0000 to U+0020,
            // and nothing beyond (not U+00A0, not U+2028).
            var scalars = Substring(s).unicodeScalars[...]
            while let f = scalars.first, f.value <= 0x20 { scalars = scalars.dropFirst() }
            while let l = scalars.last, l.value <= 0x20 { scalars = scalars.dropLast() }
            return .string(String(String.UnicodeScalarView(scalars)))
        case "toUtf8":
            return .bytes(Array(s.utf8))
        case "matches":
            guard args.count == 1, case .string(let pattern) = args[0] else { return mismatch("string.matches", args, method: true) }
            switch regex(pattern) {
            case .success(let re): return .bool(re.matchesWhole(s))
            case .failure(let e): return .error("Invalid regular expression \"\(pattern)\": \(e.message).")
            }
        case "replace":
            guard args.count == 2, case .string(let pattern) = args[0], case .string(let replacement) = args[1] else {
                return mismatch("string.replace", args, method: true)
            }
            switch regex(pattern) {
            case .failure(let e): return .error("Invalid regular expression \"\(pattern)\": \(e.message).")
            case .success(let re):
                // Built as an array: appending slices to a string's scalars copies it each time.
                let text = Array(s.unicodeScalars)
                var out: [Unicode.Scalar] = []
                out.reserveCapacity(text.count)
                var last = 0
                for m in re.allMatches(in: text) {
                    guard let whole = m[0] else { continue }
                    out += text[last..<whole.lowerBound]
                    if let missing = expand(replacement, m, re.groupNames, text, into: &out) {
                        return .error("No group \(missing) in regular expression \"\(pattern)\" for replacement \"\(replacement)\".")
                    }
                    last = whole.upperBound
                }
                out += text[last...]
                return .string(String(String.UnicodeScalarView(out)))
            }
        case "split":
            guard args.count == 1, case .string(let pattern) = args[0] else { return mismatch("string.split", args, method: true) }
            switch regex(pattern) {
            case .failure(let e): return .error("Invalid regular expression \"\(pattern)\": \(e.message).")
            case .success(let re):
                // As the reference splits: at every match, empty ones too (so `'ab'.split('')` is
                // `['', 'a', 'b']`), then trailing empty pieces are dropped, though never the first.
                let text = Array(s.unicodeScalars)
                var parts: [ArraySlice<Unicode.Scalar>] = []
                var last = 0
                for m in re.allMatches(in: text) {
                    guard let whole = m[0] else { continue }
                    parts.append(text[last..<whole.lowerBound])
                    last = whole.upperBound
                }
                parts.append(text[last...])
                while parts.count > 1, parts.last?.isEmpty == true { parts.removeLast() }
                return .list(parts.map { .string(String(String.UnicodeScalarView($0))) })
            }
        default:
            return notFound(name)
        }
    }

    /// A group a replacement names that the pattern does not have.
    struct MissingGroup: CustomStringConvertible {
        let description: String
    }

    /// Appends the replacement for one match to `out`, with `$0`…`$9` and `${name}` expanded;
    /// naming a group the pattern lacks is an error, as on the reference: that group is returned.
    private static func expand(
        _ replacement: String, _ groups: [Range<Int>?], _ names: [String: Int], _ text: [Unicode.Scalar], into out: inout [Unicode.Scalar]
    ) -> MissingGroup? {
        var scalars = Array(replacement.unicodeScalars)[...]
        while let c = scalars.first {
            scalars = scalars.dropFirst()
            if c == "$", let d = scalars.first, let n = Int(String(d)) {
                scalars = scalars.dropFirst()
                guard n < groups.count else { return MissingGroup(description: String(n)) }
                if let r = groups[n] { out += text[r] }
            } else if c == "$", scalars.first == "{", let close = scalars.firstIndex(of: "}") {
                let name = String(String.UnicodeScalarView(scalars[scalars.index(after: scalars.startIndex)..<close]))
                guard let n = names[name], n < groups.count else { return MissingGroup(description: "<\(name)>") }
                scalars = scalars[scalars.index(after: close)...]
                if let r = groups[n] { out += text[r] }
            } else if c == "\\", let d = scalars.first {
                scalars = scalars.dropFirst()
                out.append(d)
            } else {
                out.append(c)
            }
        }
        return nil
    }

    // MARK: - Methods

    static func method(_ target: RulesValue, _ name: String, _ args: [RulesValue]) -> RulesValue {
        if let wrongCount = Signatures.arityError("\(target.typeName).\(name)", args.count, method: true) { return wrongCount }
        switch target {
        case .null: return .error("Null value error.")
        case .string(let s): return stringMethod(s, name, args)
        case .bytes(let b):
            switch name {
            case "size": return .int(Int64(b.count))
            case "toBase64":
                return .string(Data(b).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"))
            case "toHexString":
                return .string(b.map { String(format: "%02X", $0) }.joined())
            default: return notFound(name)
            }
        case .list(let items): return listMethod(items, name, args, isSet: false)
        case .set(let items): return listMethod(items, name, args, isSet: true)
        case .constraint(let c) where name == "hasAny" && !c.contained.isEmpty:
            // Every document the query returns holds one of these elements.
            guard args.count == 1, case .list(let candidates) = args[0] else { return Operators.unsupported("constraint.hasAny", "list.hasAny(list)") }
            return .bool(c.contained.contains { known in candidates.contains { Operators.equal($0, known) } })
        case .map(let m): return mapMethod(m, name, args)
        case .mapDiff(let d):
            let wanted: Set<MapDiff.Status>
            switch name {
            case "addedKeys": wanted = [.added]
            case "removedKeys": wanted = [.removed]
            case "changedKeys": wanted = [.changed]
            case "unchangedKeys": wanted = [.unchanged]
            case "affectedKeys": wanted = [.added, .removed, .changed]
            default: return notFound(name)
            }
            return .set(d.statuses.filter { wanted.contains($0.status) }.map { .string($0.key) })
        case .path(let p):
            guard name == "bind" else { return notFound(name) }
            guard args.count == 1, case .map(let bindings) = args[0] else { return mismatch("path.bind", args, method: true) }
            // The reference refuses a name bound before, then every name the template lacks.
            let keys = bindings.keys.sorted().map(\.string)
            if let again = keys.first(where: p.bound.contains) { return .error("Variable \(again) is already bound.") }
            let missing = keys.filter { !p.hasVariable($0) }
            if !missing.isEmpty { return .error("Variable(s) \(missing.joined(separator: ",")) do not exist in the path template.") }
            var bound = p
            for (key, value) in bindings.sorted(by: { $0.key < $1.key }) {
                let next = bound.binding(key.string, to: value)
                guard case .path(let path) = next else { return next }
                bound = path
            }
            // What bind makes is a path: the captures it leaves unbound are dropped.
            bound.segments = bound.segments.indices.filter { bound.captures[$0] == nil }.map { bound.segments[$0] }
            bound.captures = [:]
            bound.bound.formUnion(keys)
            return .path(bound)
        case .timestamp(let t): return timestampMethod(t, name, args)
        case .duration(let d):
            switch name {
            case "seconds": return .int(d.seconds)
            case "nanos": return .int(d.nanosOfSecond)
            default: return notFound(name)
            }
        case .latlng(let lat, let lng):
            switch name {
            case "latitude": return .float(lat)
            case "longitude": return .float(lng)
            case "distance":
                guard args.count == 1, case .latlng(let lat2, let lng2) = args[0] else { return mismatch("latlng.distance", args, method: true) }
                return .float(haversine(lat, lng, lat2, lng2))
            default: return notFound(name)
            }
        default:
            return notFound(name)
        }
    }

    static func listMethod(_ items: [RulesValue], _ name: String, _ args: [RulesValue], isSet: Bool) -> RulesValue {
        // A set takes a list or a set; a list only a list, as on the reference.
        func elements(_ v: RulesValue) -> [RulesValue]? {
            switch v {
            case .list(let x): x
            case .set(let x) where isSet: x
            default: nil
            }
        }
        let kind = isSet ? "set" : "list"
        let numbers: Operators.Numbers = isSet ? .everywhere : .never
        switch name {
        case "size": return .int(Int64(items.count))
        case "hasAll", "hasAny", "hasOnly":
            guard args.count == 1, let other = elements(args[0]) else { return mismatch("\(kind).\(name)", args, method: true) }
            switch name {
            case "hasAll": return .bool(other.allSatisfy(Membership(items, numbers: numbers).contains))
            case "hasAny": return .bool(other.contains(where: Membership(items, numbers: numbers).contains))
            default: return .bool(items.allSatisfy(Membership(other, numbers: numbers).contains))
            }
        case "union", "intersection", "difference":
            guard isSet else { return notFound(name) }
            guard args.count == 1, case .set(let other) = args[0] else {
                return mismatch("set.\(name)", args, method: true)
            }
            switch name {
            case "union": return .set(Membership.unique(items + other))
            case "intersection": return .set(items.filter(Membership(other, numbers: .everywhere).contains))
            default:
                let others = Membership(other, numbers: .everywhere)
                return .set(items.filter { !others.contains($0) })
            }
        case "concat" where !isSet:
            guard args.count == 1, case .list(let other) = args[0] else { return mismatch("list.concat", args, method: true) }
            return .list(items + other)
        case "join" where !isSet:
            guard args.count == 1, case .string(let separator) = args[0] else { return mismatch("list.join", args, method: true) }
            var parts: [String] = []
            for item in items {
                guard let text = stringify(item) else { return mismatch("string", [item]) }
                parts.append(text)
            }
            return .string(parts.joined(separator: separator))
        case "removeAll" where !isSet:
            guard args.count == 1, let other = elements(args[0]) else { return mismatch("list.removeAll", args, method: true) }
            let others = Membership(other, numbers: .never)
            return .list(items.filter { !others.contains($0) })
        case "toSet" where !isSet:
            return .set(Membership.unique(items))
        default:
            return notFound(name)
        }
    }

    static func mapMethod(_ m: [UTF8Key: RulesValue], _ name: String, _ args: [RulesValue]) -> RulesValue {
        // Keys in code point order (their UTF-8 bytes'), as the reference lists them: `Ａ`
        // (U+FF21) before `😀` (U+1F600), which UTF-16 would put first.
        let sortedKeys = { m.keys.sorted() }
        switch name {
        case "size": return .int(Int64(m.count))
        case "keys": return .list(sortedKeys().map { .string($0.string) })
        case "values":
            return .list(sortedKeys().map { m[$0]! })
        case "get":
            var path: [String]
            switch args[0] {
            case .string(let key): path = [key]
            case .list(let keys):
                path = []
                for k in keys {
                    guard case .string(let s) = k else { return .error("Type error. Received: [\(k.typeName)] Expected: [string].") }
                    path.append(s)
                }
            default: return mismatch("map.get", args, method: true)
            }
            var current: RulesValue = .map(m)
            for key in path {
                guard case .map(let inner) = current, let next = inner[UTF8Key(key)] else { return args[1] }
                current = next
            }
            return current
        case "diff":
            guard args.count == 1, case .map(let old) = args[0] else { return mismatch("map.diff", args, method: true) }
            return .mapDiff(MapDiff(new: m, old: old))
        default:
            return notFound(name)
        }
    }

    static func timestampMethod(_ t: RulesTimestamp, _ name: String, _ args: [RulesValue]) -> RulesValue {
        let days = floorDiv(t.seconds, 86_400)
        let secondOfDay = t.seconds - days * 86_400
        let (y, m, d) = civil(days)
        switch name {
        case "year": return .int(Int64(y))
        case "month": return .int(Int64(m))
        case "day": return .int(Int64(d))
        case "hours": return .int(secondOfDay / 3600)
        case "minutes": return .int(secondOfDay % 3600 / 60)
        case "seconds": return .int(secondOfDay % 60)
        case "nanos": return .int(Int64(t.nanos))
        case "dayOfWeek": return .int((days % 7 + 7 + 3) % 7 + 1)  // 1970-01-01 was a Thursday (4)
        case "dayOfYear": return .int(days - daysFromCivil(y, 1, 1) + 1)
        case "date": return .timestamp(RulesTimestamp(seconds: days * 86_400, nanos: 0))
        case "time": return RulesDuration.value(nanos: Int128(secondOfDay) * 1_000_000_000 + Int128(t.nanos))
        case "toMillis": return .int(t.seconds * 1000 + Int64(t.nanos / 1_000_000))
        default: return notFound(name)
        }
    }

    // MARK: - Functions

    /// A double as a Java `long` cast makes it: toward zero, NaN as 0, beyond the range the
    /// nearest bound (the reference's `int(x)` and `math.round(x)`).
    static func javaLong(_ d: Double) -> Int64 {
        if d.isNaN { return 0 }
        if d >= 9_223_372_036_854_775_808.0 { return .max }
        if d <= -9_223_372_036_854_775_808.0 { return .min }
        return Int64(d.rounded(.towardZero))
    }

    static func function(_ name: String, _ args: [RulesValue]) -> RulesValue {
        if let wrongCount = Signatures.arityError(name, args.count) { return wrongCount }
        switch name {
        case "int":
            switch args[0] {
            case .int: return args[0]
            case .float(let f): return .int(javaLong(f))
            case .string(let s):
                guard let i = javaInteger(s) else { return conversionError(s, to: "int") }
                return .int(i)
            default: return mismatch(name, args)
            }
        case "float":
            switch args[0] {
            case .float: return args[0]
            case .int(let i): return .float(Double(i))
            case .string(let s):
                guard let f = javaDouble(s) else { return conversionError(s, to: "float") }
                return .float(f)
            default: return mismatch(name, args)
            }
        case "string":
            guard let text = stringify(args[0]) else {
                return mismatch(name, args)
            }
            return .string(text)
        case "path":
            guard case .string(let text) = args[0] else { return mismatch(name, args) }
            return RulesPath.template(text)
        case "math.abs":
            switch args[0] {
            // As on the JVM, the lowest integer is its own absolute value.
            case .int(let i): return .int(i == Int64.min ? i : abs(i))
            case .float(let f): return .float(abs(f))
            default: return mismatch(name, args)
            }
        case "math.ceil", "math.floor", "math.round", "math.sqrt", "math.isNaN":
            guard let x = Operators.number(args[0]) else { return mismatch(name, args) }
            switch name {
            case "math.ceil": return .float(x.rounded(.up))
            case "math.floor": return .float(x.rounded(.down))
            case "math.round":
                // Half up, as Java's Math.round: x - floor(x) is exact, where x + 0.5 may round.
                let floor = x.rounded(.down)
                return .int(javaLong(x - floor >= 0.5 ? floor + 1 : floor))
            case "math.sqrt": return .float(x.squareRoot())
            default: return .bool(x.isNaN)
            }
        case "math.pow":
            guard let b = Operators.number(args[0]), let x = Operators.number(args[1]) else { return mismatch(name, args) }
            return .float(Foundation.pow(b, x))
        case "hashing.md5", "hashing.sha256", "hashing.crc32", "hashing.crc32c":
            let bytes: [UInt8]
            switch args[0] {
            case .string(let s): bytes = Array(s.utf8)
            case .bytes(let b): bytes = b
            default: return mismatch(name, args)
            }
            switch name {
            case "hashing.md5": return .bytes(MD5.digest(bytes))
            case "hashing.sha256": return .bytes(SHA256.digest(bytes))
            case "hashing.crc32": return .bytes(CRC32.littleEndian(CRC32.checksum(bytes, polynomial: CRC32.ieee)))
            default: return .bytes(CRC32.littleEndian(CRC32.checksum(bytes, polynomial: CRC32.castagnoli)))
            }
        case "timestamp.date":
            guard args.count == 3, case .int(let y) = args[0], case .int(let m) = args[1], case .int(let d) = args[2] else {
                return mismatch(name, args)
            }
            guard (1...9999).contains(y) else {
                return .error("Timestamp should be between 0001-01-01T00.00.00Z and 9999-12-31T23.59.59Z. year: \(y).")
            }
            guard (1...12).contains(m), d >= 1, d <= daysIn(Int(m), Int(y)) else {
                return .error("Date is not valid. year: \(y), month: \(m) day: \(d).")
            }
            return .timestamp(RulesTimestamp(seconds: daysFromCivil(Int(y), Int(m), Int(d)) * 86_400, nanos: 0))
        case "timestamp.value":
            // An RFC 3339 string is read as the reference reads it; anything else in one is invalid.
            if args.count == 1, case .string(let text) = args[0] {
                return RulesTimestamp(rfc3339: text).map { .timestamp($0) } ?? .error(RulesTimestamp.invalid)
            }
            guard args.count == 1, case .int(let millis) = args[0] else {
                return mismatch(name, args)
            }
            let seconds = floorDiv(millis, 1000)
            guard RulesTimestamp.validSeconds.contains(seconds) else { return .error(RulesTimestamp.invalid) }
            return .timestamp(RulesTimestamp(seconds: seconds, nanos: Int32((millis - seconds * 1000) * 1_000_000)))
        case "duration.value":
            guard args.count == 2, case .int(let n) = args[0], case .string(let unit) = args[1] else {
                return mismatch(name, args)
            }
            let scale: Int64
            switch unit {
            case "w": scale = 604_800_000_000_000
            case "d": scale = 86_400_000_000_000
            case "h": scale = 3_600_000_000_000
            case "m": scale = 60_000_000_000
            case "s": scale = 1_000_000_000
            case "ms": scale = 1_000_000
            case "ns": scale = 1
            // The reference's words for a unit it does not know.
            default: return .error("Invalid regular expression pattern. Pattern: \(unit).")
            }
            return RulesDuration.value(nanos: Int128(n) * Int128(scale))
        case "duration.time":
            var parts: [Int128] = []
            for a in args {
                guard case .int(let i) = a else { return mismatch(name, args) }
                parts.append(Int128(i))
            }
            // Int64 hours make at most about 2^105 nanoseconds: no overflow in 128 bits. Past a
            // duration's range the reference words it as a timestamp's.
            let nanos = ((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1_000_000_000 + parts[3]
            return RulesDuration(nanos: nanos).map { .duration($0) } ?? .error(RulesTimestamp.invalid)
        case "duration.abs":
            guard args.count == 1, case .duration(let d) = args[0] else { return mismatch(name, args) }
            return .duration(d.nanos < 0 ? d.negated : d)
        case "latlng.value":
            guard args.count == 2, let lat = Operators.number(args[0]), let lng = Operators.number(args[1]) else {
                return mismatch(name, args)
            }
            guard (-90...90).contains(lat), (-180...180).contains(lng) else {
                return .error("Latitude should be in [-90,90] range and longitude should be in [-180,180] range. latitude: \(lat.jvmDescription), longitude: \(lng.jvmDescription).")
            }
            return .latlng(lat, lng)
        default:
            return notFound(name)
        }
    }

    // MARK: - Calendar and geometry

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : (a - b + 1) / b }

    static func daysIn(_ month: Int, _ year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int64 {
        let y = Int64(m <= 2 ? y0 - 1 : y0)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64((m + 9) % 12)
        let doy = (153 * mp + 2) / 5 + Int64(d) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(_ z0: Int64) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (Int(m <= 2 ? y + 1 : y), Int(m), Int(d))
    }

    static func haversine(_ lat1: Double, _ lng1: Double, _ lat2: Double, _ lng2: Double) -> Double {
        // The reference's radius: its distances match haversine with 6,371,009 m to the last bit.
        let r = 6_371_009.0
        let (p1, p2) = (lat1 * .pi / 180, lat2 * .pi / 180)
        let dp = p2 - p1
        let dl = (lng2 - lng1) * .pi / 180
        let a = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * r * asin(min(1, a.squareRoot()))
    }
}
