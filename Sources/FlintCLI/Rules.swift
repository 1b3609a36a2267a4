import ArgumentParser
import FlintRules
import FlintRulesTesting
import Foundation

extension FlintCommand {
    /// `flint rules check` and `flint rules test`: rules authoring without a server.
    struct Rules: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check and test Firestore security rules.", subcommands: [Check.self, Test.self])
    }
}

extension FlintCommand.Rules {
    /// Compiles rules files and prints every problem as `file:line:column: severity: message`.
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Parse and check rules files; exit 1 when any has an error.")

        @Argument(help: "firestore.rules files.")
        var files: [String]

        func run() async throws {
            var failed = false
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    print("\(file): error: cannot read the file")
                    failed = true
                    continue
                }
                let diagnostics = Ruleset.compile(String(decoding: data, as: UTF8.self)).diagnostics
                for d in diagnostics { print(d.line(in: file)) }
                if diagnostics.contains(where: { $0.severity == .error }) { failed = true }
            }
            if failed { throw ExitCode(1) }
        }
    }

    /// Runs YAML or JSON rules specs in process (docs/rules-testing.md).
    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run rules test specs; exit 1 when a case fails.")

        @Argument(help: "Spec files (.yaml, .yml or .json), or directories searched for spec files whose names contain \"test\".")
        var specs: [String]

        @Option(help: "Write JUnit XML here.")
        var junit: String?

        @Option(help: "Write the coverage page (HTML) here.")
        var coverage: String?

        @Option(help: "Write coverage JSON, the emulator's shape, here.")
        var coverageJson: String?

        @Option(help: "Fail when expression coverage is below this percentage.")
        var minCoverage: Double?

        @Flag(help: "Print passing cases too.")
        var verbose = false

        @Flag(help: "Run again whenever a spec or rules file changes.")
        var watch = false

        func validate() throws {
            if let minCoverage, !(0...100).contains(minCoverage) { throw ValidationError("--min-coverage is a percentage from 0 to 100.") }
        }

        /// Spec files: the arguments, with directories searched recursively.
        private var files: [String] { found.files }

        /// The spec files, and the directories given that held none: a CI job pointed at the
        /// wrong folder must not pass by running nothing.
        private var found: (files: [String], empty: [String]) {
            var out: [String] = []
            var empty: [String] = []
            for spec in specs {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: spec, isDirectory: &isDirectory), isDirectory.boolValue else {
                    out.append(spec)
                    continue
                }
                let found = (FileManager.default.enumerator(atPath: spec)?.allObjects as? [String] ?? []).filter { name in
                    let last = (name as NSString).lastPathComponent
                    return last.contains("test") && ["json", "yaml", "yml"].contains((last as NSString).pathExtension)
                }
                if found.isEmpty { empty.append(spec) }
                out += found.sorted().map { (spec as NSString).appendingPathComponent($0) }
            }
            return (out, empty)
        }

        func run() async throws {
            var status = try await once()
            guard watch else {
                if status != 0 { throw ExitCode(status) }
                return
            }
            var stamps = modificationDates()
            _ = status
            while true {
                try await Task.sleep(for: .milliseconds(300))
                let now = modificationDates()
                guard now != stamps else { continue }
                stamps = now
                print("\n— change detected, running again —")
                status = try await once()
            }
        }

        /// One run, reports written: 0 when everything passed, 1 when a case failed or coverage
        /// is short, 2 when a spec or rules file could not be loaded.
        private func once() async throws -> Int32 {
            let (files, empty) = found
            let results = await RulesTestRunner.run(files.map { URL(fileURLWithPath: $0) })
            for directory in empty {
                print(#"\#(directory): no spec files (names containing "test", ending in .json, .yaml or .yml)"#)
            }
            print(RulesTestReport.text(results, verbose: verbose), terminator: "")
            if let junit { try RulesTestReport.junit(results).write(toFile: junit, atomically: true, encoding: .utf8) }
            if let coverage { try RulesTestReport.coverageHTML(results).write(toFile: coverage, atomically: true, encoding: .utf8) }
            if let coverageJson { try RulesTestReport.coverageJSON(results).write(toFile: coverageJson, atomically: true, encoding: .utf8) }
            let percent = RulesTestReport.coveragePercent(results)
            print(percent.map { String(format: "expression coverage: %.1f%%", $0) } ?? "expression coverage: none (no rules loaded)")
            var status: Int32 = RulesTestReport.failed(results) ? 1 : 0
            if let minCoverage, let percent, percent < minCoverage {
                print(String(format: "coverage %.1f%% is below the minimum of %.1f%%; never evaluated:", percent, minCoverage))
                for line in RulesTestReport.uncovered(results) { print("    " + line) }
                status = 1
            }
            if results.contains(where: { !$0.problems.isEmpty }) || !empty.isEmpty { status = 2 }
            return status
        }

        /// The specs and the rules files they name, with their modification dates.
        private func modificationDates() -> [String: Date] {
            let specs = self.files
            var files = specs
            for spec in specs {
                let url = URL(fileURLWithPath: spec)
                if let loaded = try? RulesSpec.load(url) { files.append(url.deletingLastPathComponent().appendingPathComponent(loaded.rules).path) }
            }
            var out: [String: Date] = [:]
            for f in files {
                out[f] = (try? FileManager.default.attributesOfItem(atPath: f)[.modificationDate] as? Date) ?? .distantPast
            }
            return out
        }
    }
}

extension Diagnostic {
    /// The problem as compilers write one: `file:line:column: severity: message`.
    func line(in path: String) -> String { "\(path):\(position.line):\(position.column): \(severity.rawValue): \(message)" }
}
