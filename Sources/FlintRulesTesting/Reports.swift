import FlintEngine
import FlintRules
import Foundation

/// Reports of a rules test run: console text, JUnit XML, and coverage.
public enum RulesTestReport {
    /// One line per case (`✓` / `✗`), explanations under failures, and a summary line.
    public static func text(_ results: [SpecResult], verbose: Bool = false) -> String {
        var out = ""
        var passed = 0
        var failed = 0
        for spec in results {
            for p in spec.problems {
                out += p + "\n"
                failed += 1
            }
            for c in spec.cases {
                if c.passed {
                    passed += 1
                    if verbose { out += "✓ \(spec.file): \(c.name)\n" }
                } else {
                    failed += 1
                    out += "✗ \(spec.file): \(c.name)\n    \(c.outcome)\n"
                    for line in c.explanation { out += "    \(line)\n" }
                }
            }
        }
        out += "\(passed) passed, \(failed) failed\n"
        return out
    }

    public static func failed(_ results: [SpecResult]) -> Bool {
        results.contains { !$0.problems.isEmpty || $0.cases.contains { !$0.passed } }
    }

    /// JUnit XML: one test suite per spec file, one test case per case.
    public static func junit(_ results: [SpecResult]) -> String {
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n<testsuites>\n"
        for spec in results {
            let failures = spec.cases.filter { !$0.passed }.count + spec.problems.count
            let time = spec.cases.reduce(0) { $0 + $1.seconds }
            out += #"  <testsuite name="\#(escape(spec.file))" tests="\#(spec.cases.count + spec.problems.count)" failures="\#(failures)" time="\#(String(format: "%.6f", time))">"# + "\n"
            for p in spec.problems {
                out += #"    <testcase name="load" classname="\#(escape(spec.file))"><failure message="\#(escape(p))"/></testcase>"# + "\n"
            }
            for c in spec.cases {
                out += #"    <testcase name="\#(escape(c.name))" classname="\#(escape(spec.file))" time="\#(String(format: "%.6f", c.seconds))""#
                if c.passed {
                    out += "/>\n"
                } else {
                    out += #"><failure message="\#(escape(c.outcome))">\#(escape(c.explanation.joined(separator: "\n")))</failure></testcase>"# + "\n"
                }
            }
            out += "  </testsuite>\n"
        }
        return out + "</testsuites>\n"
    }

    /// Expression coverage over every rules file the specs used, in percent (100 when they
    /// hold no expression); nil when no rules file loaded, as there is nothing to cover.
    public static func coveragePercent(_ results: [SpecResult]) -> Double? {
        let loaded = distinctRules(results)
        guard !loaded.isEmpty else { return nil }
        var evaluated = 0
        var total = 0
        for rules in loaded {
            let s = rules.coverage.summary(rules.ruleset)
            evaluated += s.evaluated
            total += s.total
        }
        return total == 0 ? 100 : Double(evaluated) * 100 / Double(total)
    }

    /// Expressions never evaluated, per rules file: what a coverage gate is missing.
    public static func uncovered(_ results: [SpecResult]) -> [String] {
        distinctRules(results).flatMap { rules in rules.coverage.uncovered(rules.ruleset) }
    }

    /// The coverage JSON of each rules file, as the emulator's `:ruleCoverage` gives it.
    public static func coverageJSON(_ results: [SpecResult]) -> String {
        "[" + distinctRules(results).map { $0.coverage.reportJSON($0.ruleset) }.joined(separator: ",") + "]"
    }

    /// The HTML coverage page of each rules file, one after another.
    public static func coverageHTML(_ results: [SpecResult]) -> String {
        distinctRules(results).map { $0.coverage.reportHTML($0.ruleset) }.joined(separator: "\n")
    }

    /// Each rules file once (specs of one file share its coverage).
    private static func distinctRules(_ results: [SpecResult]) -> [RulesRegistry.Loaded] {
        var seen: [ObjectIdentifier] = []
        return results.compactMap(\.rules).filter { loaded in
            let id = ObjectIdentifier(loaded.coverage)
            if seen.contains(id) { return false }
            seen.append(id)
            return true
        }
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "\n", with: "&#10;")
    }
}
