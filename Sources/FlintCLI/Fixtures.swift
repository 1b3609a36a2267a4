import ArgumentParser
import FlintEngine
import FlintFixtures
import FlintModel
import Foundation

extension FlintCommand {
    /// `flint fixtures check FILE...`: loads datasets into an in-memory database and reports.
    struct Fixtures: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Work with fixture datasets (Firestore REST document JSON).",
            subcommands: [Check.self])
    }
}

extension FlintCommand.Fixtures {
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Load each dataset into a fresh in-memory database and print what it holds.")

        @Option(help: "Project id to load into.")
        var project = "demo-flint"

        @Argument(help: "Dataset files.")
        var files: [String]

        func validate() throws { try ServerOptions.checkID(project, of: "--project") }

        func run() async throws {
            var failed = false
            for file in files {
                let engine = Engine()
                let db = engine.database(project: project)
                do throws(FlintError) {
                    let dataset = try Dataset.load(contentsOf: URL(fileURLWithPath: file), database: db.id)
                    let written = try await dataset.write(into: db)
                    let collections = try await db.listCollectionIDs(parent: .root).collectionIDs
                    print("\(file): \(written) documents; top-level collections: \(collections.joined(separator: ", "))")
                } catch {
                    failed = true
                    print("\(file): error: \(error.message)")
                }
            }
            if failed { throw ExitCode(1) }
        }
    }
}
