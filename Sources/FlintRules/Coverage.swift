import FlintModel
import Foundation
import Synchronization

/// What each expression of a ruleset evaluated to across requests, for coverage reports in the
/// reference emulator's shape: per expression, every distinct value with a count, `{}` for
/// short-circuited, an `undefined` cause for errors, and nothing at all when never evaluated.
public final class Coverage: Sendable {
    private struct Counts {
        /// Distinct values by their JSON, in first-seen order.
        var values: [String: Int] = [:]
        var order: [String] = []
    }

    private let state = Mutex<[Int: Counts]>([:])
    /// Distinct values kept per expression; `request` differs on every request.
    static let maxDistinctValues = 20

    public init() {}

    public func reset() { state.withLock { $0 = [:] } }

    func record(_ observed: [Int: [RulesValue]], skipped: [Int]) {
        var encoded: [(Int, String)] = []
        for (id, values) in observed { for v in values { encoded.append((id, Self.json(v))) } }
        for id in skipped { encoded.append((id, "{}")) }
        state.withLock { all in
            for (id, json) in encoded {
                var counts = all[id] ?? Counts()
                if counts.values[json] == nil {
                    guard counts.order.count < Self.maxDistinctValues else { continue }
                    counts.order.append(json)
                }
                counts.values[json, default: 0] += 1
                all[id] = counts
            }
        }
    }

    // MARK: - Reports

    /// How an expression fared: every value it produced, summarised for the HTML report.
    private enum Outcome: String {
        case never, shortCircuited = "skipped", error, alwaysTrue = "true", alwaysFalse = "false", both = "both", value
    }

    private static func outcome(_ c: Counts?) -> Outcome {
        guard let c else { return .never }
        let kinds = Set(c.order.map { json -> Outcome in
            switch json {
            case "{}": .shortCircuited
            case #"{"boolValue":true}"#: .alwaysTrue
            case #"{"boolValue":false}"#: .alwaysFalse
            default: json.hasPrefix(#"{"undefined""#) ? .error : .value
            }
        })
        if kinds.contains(.alwaysTrue) && (kinds.contains(.alwaysFalse) || kinds.contains(.error)) { return .both }
        for k in [Outcome.alwaysTrue, .alwaysFalse, .error, .value] where kinds.contains(k) { return k }
        return .shortCircuited
    }

    /// The rules source with every reported expression highlighted by outcome (green: true,
    /// red: false, orange: error, blue: both true and not, grey: never evaluated, dashed:
    /// only short-circuited), each with its values and counts on hover.
    public func reportHTML(_ ruleset: Ruleset) -> String {
        let counts = state.withLock { $0 }
        let scalars = Array(ruleset.source.unicodeScalars)
        // Opening and closing tags by offset; outer expressions open first and close last.
        var opens: [Int: [String]] = [:]
        var closes: [Int: Int] = [:]
        func visit(_ e: Expr) {
            let r = ruleset.ranges[e.id]
            let c = counts[e.id]
            let title = c.map { c in c.order.map { "\(c.values[$0] ?? 0)× \($0)" }.joined(separator: "\n") } ?? "never evaluated"
            opens[r.start.offset, default: []].append("<span class=\"\(Self.outcome(c).rawValue)\" title=\"\(Self.escape(title))\">")
            closes[r.end.offset, default: 0] += 1
            for child in Self.children(e) { visit(child) }
        }
        for root in Self.roots(ruleset) { visit(root) }
        var body = ""
        for (i, scalar) in scalars.enumerated() {
            for tag in opens[i] ?? [] { body += tag }
            body += Self.escape(String(scalar))
            body += String(repeating: "</span>", count: closes[i] ?? 0)
        }
        return """
            <!DOCTYPE html>
            <html><head><meta charset="utf-8"><title>Rules coverage</title><style>
            body { font-family: sans-serif; } pre { line-height: 1.5; }
            span { border-bottom: 2px solid transparent; }
            .true { background: #d8f5d0; } .false { background: #fbd9d9; } .error { background: #fde2bf; }
            .both { background: #d6e6fb; } .value { background: #eeeeee; } .never { color: #888; }
            .skipped { border-bottom: 2px dashed #999; }
            </style></head><body>
            <h1>Rules coverage</h1>
            <p>Green: always true. Red: false. Orange: an error. Blue: true and not true. Grey text: never evaluated. Dashed: only short-circuited. Hover for values and counts.</p>
            <pre>\(body)</pre>
            <script type="application/json" id="coverage">\(reportJSON(ruleset).replacingOccurrences(of: "</", with: "<\\/"))</script>
            </body></html>
            """
    }

    private static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// Expressions on `line` of the rules (inside allow conditions and functions), outermost
    /// first, with the values they took: for explaining a verdict. A condition that starts on
    /// the line is given whole, the lines it goes on over too, as a denial names it by its first.
    public func values(onLine line: Int, of ruleset: Ruleset) -> [(expression: String, values: String)] {
        let counts = state.withLock { $0 }
        let scalars = Array(ruleset.source.unicodeScalars)
        var out: [(String, String)] = []
        func visit(_ e: Expr, whole: Bool) {
            let r = ruleset.ranges[e.id]
            guard whole || (r.start.line <= line && r.end.line >= line) else { return }
            if whole || r.start.line == line, let c = counts[e.id], r.end.offset < scalars.count {
                let text = String(String.UnicodeScalarView(scalars[r.start.offset...r.end.offset]))
                    .split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).joined(separator: " ")
                // The whole request or resource says nothing its parts do not, at length.
                if text != "request" && text != "resource" { out.append((text, c.order.map(Self.readable).joined(separator: " | "))) }
            }
            for child in Self.children(e) { visit(child, whole: whole) }
        }
        for root in Self.roots(ruleset) { visit(root, whole: ruleset.ranges[root.id].start.line == line) }
        return out
    }

    /// Why a decision went as it did, from what this coverage saw of it alone: each statement
    /// a denial's `message` names (`@ L<n>`), or for an allowed request each condition that
    /// held, then the lets and bodies of the functions the decision called, each with the
    /// values its expressions took.
    public func explain(_ message: String, in ruleset: Ruleset) -> [ExplainedLine] {
        let lineCount = ruleset.source.split(separator: "\n", omittingEmptySubsequences: false).count
        var mentioned = Set(message.matches(of: /@ L(\d+)/).compactMap { Int($0.1) }).filter { $0 >= 1 && $0 <= lineCount }.sorted()
        if mentioned.isEmpty { mentioned = heldConditionLines(ruleset) }
        // Without a statement to explain, the functions explain nothing.
        guard !mentioned.isEmpty else { return [] }
        var out = mentioned.map { line in
            ExplainedLine(line: line, function: nil, text: Self.statement(onLine: line, of: ruleset), values: values(onLine: line, of: ruleset))
        }
        var shown = Set(mentioned)
        let evaluated = state.withLock { Set($0.keys) }
        for f in Self.functions(ruleset) {
            let parts = f.lets.map(\.value) + [f.body]
            guard parts.contains(where: { evaluated.contains($0.id) }) else { continue }
            for line in parts.map({ ruleset.ranges[$0.id].start.line }) where shown.insert(line).inserted {
                out.append(ExplainedLine(line: line, function: f.name, text: Self.statement(onLine: line, of: ruleset), values: values(onLine: line, of: ruleset)))
            }
        }
        return out
    }

    /// The lines allow conditions that held start on: what granted an allowed request.
    private func heldConditionLines(_ r: Ruleset) -> [Int] {
        let counts = state.withLock { $0 }
        func inMatch(_ m: Match) -> [Expr] { m.allows.compactMap(\.condition) + m.matches.flatMap(inMatch) }
        let held = r.services.flatMap { $0.matches.flatMap(inMatch) }.filter { condition in
            counts[condition.id]?.order.contains { Self.readable($0) == "true" } == true
        }
        return Set(held.map { r.ranges[$0.id].start.line }).sorted()
    }

    /// Every function the rules declare, in source order.
    static func functions(_ r: Ruleset) -> [FunctionDecl] {
        func inMatch(_ m: Match) -> [FunctionDecl] { m.functions + m.matches.flatMap(inMatch) }
        let all = r.functions + r.services.flatMap { $0.functions + $0.matches.flatMap(inMatch) }
        return all.sorted { $0.position.offset < $1.position.offset }
    }

    /// The rules' text on `line`, and on to the end of a condition that starts on it, each
    /// line trimmed: the statement a denial names by that line.
    public static func statement(onLine line: Int, of ruleset: Ruleset) -> String {
        let lines = ruleset.source.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count else { return "" }
        let last = roots(ruleset).map { ruleset.ranges[$0.id] }.filter { $0.start.line == line }.map(\.end.line).max() ?? line
        return lines[(line - 1)..<min(last, lines.count)].map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    /// How many reported expressions were evaluated (beyond being short-circuited), of all
    /// that can be: the bodies of functions no rule can reach are left out (`flint rules check`
    /// warns about them).
    public func summary(_ ruleset: Ruleset) -> (evaluated: Int, total: Int) {
        let counts = state.withLock { $0 }
        let unused = Set(Checker.unusedFunctions(ruleset).flatMap { f in [f.body.id] + f.lets.map(\.value.id) })
        var evaluated = 0
        var total = 0
        func visit(_ e: Expr) {
            total += 1
            if let c = counts[e.id], c.order.contains(where: { $0 != "{}" }) { evaluated += 1 }
            for child in Self.children(e) { visit(child) }
        }
        for root in Self.roots(ruleset) where !unused.contains(root.id) { visit(root) }
        return (evaluated, total)
    }

    /// The expressions never evaluated (or only short-circuited), as `line:column: text`.
    public func uncovered(_ ruleset: Ruleset) -> [String] {
        let counts = state.withLock { $0 }
        let unused = Set(Checker.unusedFunctions(ruleset).flatMap { f in [f.body.id] + f.lets.map(\.value.id) })
        let scalars = Array(ruleset.source.unicodeScalars)
        var out: [String] = []
        func visit(_ e: Expr) {
            let r = ruleset.ranges[e.id]
            if counts[e.id].map({ !$0.order.contains(where: { $0 != "{}" }) }) ?? true, r.end.offset < scalars.count {
                let text = String(String.UnicodeScalarView(scalars[r.start.offset...r.end.offset]))
                    .split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
                out.append("\(r.start.line):\(r.start.column): \(text)")
            }
            for child in Self.children(e) { visit(child) }
        }
        for root in Self.roots(ruleset) where !unused.contains(root.id) { visit(root) }
        return out
    }

    /// A value's JSON in a short form: `true`, `"alice"`, `error: Null value error.`.
    static func readable(_ json: String) -> String {
        if json == "{}" { return "(short-circuited)" }
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], let (kind, v) = object.first else { return json }
        switch kind {
        case "boolValue": return (v as? Bool).map { $0 ? "true" : "false" } ?? "\(v)"
        case "stringValue": return "\"\(v)\""
        case "intValue": return "\(v)"
        case "nullValue": return "null"
        case "undefined": return "error: " + (((v as? [String: Any])?["causeMessage"] as? String) ?? "")
        default: return json.count > 120 ? String(json.prefix(117)) + "..." : json
        }
    }

    /// `{"rules": {"files": [{"content": …}]}, "report": [nodes]}`.
    public func reportJSON(_ ruleset: Ruleset) -> String {
        let counts = state.withLock { $0 }
        let scalars = Array(ruleset.source.unicodeScalars)
        let nodes = Self.roots(ruleset).map { node($0, ruleset, counts, scalars) }
        // An empty list is left out, as proto3 JSON leaves it out on the reference.
        let report = nodes.isEmpty ? "" : #","report":["# + nodes.joined(separator: ",") + "]"
        return #"{"rules":{"files":[{"content":"# + JSONString.quoted(ruleset.source) + #"}]}"# + report + "}"
    }

    private func node(_ e: Expr, _ ruleset: Ruleset, _ counts: [Int: Counts], _ scalars: [Unicode.Scalar]) -> String {
        let r = ruleset.ranges[e.id]
        let end = Self.reportedEnd(e, ruleset.ranges, scalars)
        var out = #"{"sourcePosition":{"line":\#(r.start.line),"column":\#(r.start.column),"currentOffset":\#(r.start.offset),"endOffset":\#(end)}"#
        if let c = counts[e.id] {
            out += #","values":["# + c.order.map { #"{"value":\#($0),"count":\#(c.values[$0] ?? 0)}"# }.joined(separator: ",") + "]"
        }
        let children = Self.children(e).map { node($0, ruleset, counts, scalars) }
        if !children.isEmpty { out += #","children":["# + children.joined(separator: ",") + "]" }
        return out + "}"
    }

    /// The reference ends an expression that ends with a closing bracket where its last part
    /// ends (itself reported so), or, with nothing inside the brackets, at the opening one or
    /// at a call's name: `f(g(x`, `s.size`, `a[0`, `[1, 2`, `{`, `/c/$(d`.
    static func reportedEnd(_ e: Expr, _ ranges: [SourceRange], _ scalars: [Unicode.Scalar]) -> Int {
        let r = ranges[e.id]
        guard r.end.offset < scalars.count, ["]", ")", "}"].contains(scalars[r.end.offset]) else { return r.end.offset }
        let last: Expr?
        switch e.kind {
        case .call(_, _, let arguments): last = arguments.last
        case .index(_, let i): last = i
        case .slice(_, _, let j): last = j
        case .list(let items): last = items.last
        case .map(let entries): last = entries.last?.value
        case .path(let parts): if case .interpolated(let x)? = parts.last { last = x } else { last = nil }
        case .unary(_, let o): last = o
        case .binary(_, _, let right): last = right
        case .ternary(_, _, let f): last = f
        case .null, .bool, .int, .float, .string, .bytes, .identifier, .member, .isType: last = nil
        }
        if let last { return reportedEnd(last, ranges, scalars) }
        var i = r.end.offset - 1
        func skipSpaces() { while i > r.start.offset, scalars[i].properties.isWhitespace { i -= 1 } }
        skipSpaces()
        if case .call = e.kind, scalars[i] == "(" {
            i -= 1
            skipSpaces()
        }
        return i
    }

    /// Function bodies and allow conditions, in the order the reference lists them.
    static func roots(_ r: Ruleset) -> [Expr] {
        var out: [Expr] = []
        func functions(_ fs: [FunctionDecl]) {
            for f in fs {
                for l in f.lets where isReported(l.value) { out.append(l.value) }
                if isReported(f.body) { out.append(f.body) }
            }
        }
        func match(_ m: Match) {
            functions(m.functions)
            for child in m.matches { match(child) }
            for a in m.allows { if let c = a.condition, isReported(c) { out.append(c) } }
        }
        functions(r.functions)
        // Every service's, as the reference reports them, though only Firestore's are run.
        for service in r.services {
            functions(service.functions)
            for m in service.matches { match(m) }
        }
        return out
    }

    static func isReported(_ e: Expr) -> Bool {
        switch e.kind {
        // A negative integer is read as one literal, but the reference reports it as a negation.
        case .int(let n): n < 0
        case .null, .bool, .float, .string, .bytes: false
        default: true
        }
    }

    /// Sub-expressions in source order, literals left out; `x in y` lists `y` first.
    static func children(_ e: Expr) -> [Expr] {
        let all: [Expr]
        switch e.kind {
        case .null, .bool, .int, .float, .string, .bytes, .identifier: all = []
        case .list(let items): all = items
        case .map(let entries): all = entries.flatMap { [$0.key, $0.value] }
        case .path(let parts): all = parts.compactMap { if case .interpolated(let x) = $0 { x } else { nil } }
        case .member(let b, _): all = [b]
        case .index(let b, let i): all = [b, i]
        case .slice(let b, let i, let j): all = [b, i, j].compactMap { $0 }
        case .call(_, let receiver, let arguments): all = (receiver.map { [$0] } ?? []) + arguments
        case .unary(_, let o): all = [o]
        case .binary(let op, let l, let r): all = op == "in" ? [r, l] : [l, r]
        case .isType(let o, _): all = [o]
        case .ternary(let c, let t, let f): all = [c, t, f]
        }
        return all.filter(isReported)
    }

    /// The reference's typed value union.
    static func json(_ v: RulesValue) -> String {
        let str = JSONString.quoted
        switch v {
        case .null: return #"{"nullValue":null}"#
        case .bool(let b): return #"{"boolValue":\#(b)}"#
        case .int(let i): return #"{"intValue":"\#(i)"}"#
        case .float(let f): return f.isFinite ? #"{"floatValue":\#(f)}"# : #"{"floatValue":"\#(f.isNaN ? "NaN" : (f > 0 ? "Infinity" : "-Infinity"))"}"#
        case .string(let s): return #"{"stringValue":\#(str(s))}"#
        case .bytes(let b): return #"{"bytesValue":"\#(Data(b).base64EncodedString())"}"#
        // Empty lists and maps leave their field out, as proto3 JSON does.
        case .list(let items):
            return items.isEmpty ? #"{"listValue":{}}"# : #"{"listValue":{"values":["# + items.map(json).joined(separator: ",") + "]}}"
        case .set(let items):
            return items.isEmpty ? #"{"setValue":{}}"# : #"{"setValue":{"values":["# + items.map(json).joined(separator: ",") + "]}}"
        case .map(let m):
            if m.isEmpty { return #"{"mapValue":{}}"# }
            return #"{"mapValue":{"fields":{"# + m.keys.sorted().map { str($0.string) + ":" + json(m[$0]!) }.joined(separator: ",") + "}}}"
        case .mapDiff(let d):
            let statuses = d.statuses
            if statuses.isEmpty { return #"{"mapDiffValue":{}}"# }
            return #"{"mapDiffValue":{"keyStatuses":{"# + statuses.map { str($0.key) + #":""# + $0.status.rawValue + #"""# }.joined(separator: ",") + "}}}"
        case .path(let p): return #"{"pathValue":{"segments":["# + p.segments.map { #"{"simple":\#(str($0))}"# }.joined(separator: ",") + "]}}"
        case .timestamp(let t):
            let micros = t.seconds * 1_000_000 + Int64(t.nanos / 1000)
            return #"{"timestampValue":"\#(RFC3339.format(Timestamp(microseconds: micros)))"}"#
        case .duration(let d): return #"{"durationValue":"\#(Double(d.nanos) / 1e9)s"}"#
        case .latlng(let lat, let lng): return #"{"latlngValue":{"latitude":\#(lat),"longitude":\#(lng)}}"#
        case .vector(let values): return #"{"vectorValue":{"values":["# + values.map { json(.float($0)) }.joined(separator: ",") + "]}}"
        case .constraint(let c):
            if c.facts.isEmpty { return #"{"constraintValue":{}}"# }
            let facts = c.facts.map { #"{"comparator":"\#($0.op.rawValue)","value":\#(json($0.value))}"# }
            return #"{"constraintValue":{"simpleConstraints":["# + facts.joined(separator: ",") + "]}}"
        // A comparison a query's filter does not decide carries no message there.
        case .error(Operators.notImplied): return #"{"undefined":{}}"#
        case .error(let m): return #"{"undefined":{"causeMessage":\#(str(m))}}"#
        }
    }
}

/// A line of the rules that explains a decision: a statement the denial names, or a line of a
/// function it called (`function` names it), with the values its expressions took.
public struct ExplainedLine: Sendable {
    public var line: Int
    public var function: String?
    public var text: String
    public var values: [(expression: String, values: String)]
}
