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
                for d in diagnostics { print("\(file):\(d.position.line):\(d.position.column): \(d.severity.rawValue): \(d.message)") }
                if diagnostics.contains(where: { $0.severity == .error }) { failed = true }
            }
            if failed { throw ExitCode(1) }
        }
    }

    /// Runs YAML or JSON rules specs in process (docs/rules-testing.md).
    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run rules test specs; exit 1 when a case fails.")

        @Argument(help: "Spec files (.yaml, .yml or .json).")
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

        func run() async throws {
            var failed = try await once()
            guard watch else {
                if failed { throw ExitCode(1) }
                return
            }
            var stamps = modificationDates()
            while true {
                try await Task.sleep(for: .milliseconds(300))
                let now = modificationDates()
                guard now != stamps else { continue }
                stamps = now
                print("\n— change detected, running again —")
                failed = try await once()
            }
        }

        /// One run: reports written, true when anything failed.
        private func once() async throws -> Bool {
            let results = await RulesTestRunner.run(specs.map { URL(fileURLWithPath: $0) })
            print(RulesTestReport.text(results, verbose: verbose), terminator: "")
            if let junit { try RulesTestReport.junit(results).write(toFile: junit, atomically: true, encoding: .utf8) }
            if let coverage { try RulesTestReport.coverageHTML(results).write(toFile: coverage, atomically: true, encoding: .utf8) }
            if let coverageJson { try RulesTestReport.coverageJSON(results).write(toFile: coverageJson, atomically: true, encoding: .utf8) }
            let percent = RulesTestReport.coveragePercent(results)
            print(String(format: "expression coverage: %.1f%%", percent))
            var failed = RulesTestReport.failed(results)
            if let minCoverage, percent < minCoverage {
                print(String(format: "coverage %.1f%% is below the minimum of %.1f%%", percent, minCoverage))
                failed = true
            }
            return failed
        }

        /// The specs and the rules files they name, with their modification dates.
        private func modificationDates() -> [String: Date] {
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
