import ArgumentParser
import FlintDurable
import FlintEngine
import FlintExport
import FlintHTTPClient
import FlintModel
import Foundation

extension FlintCommand {
    /// `flint start`: serves Flint until interrupted.
    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start the emulator.")

        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await options.resolvingProjectAlias().serve { address, _ in
                // Written unbuffered: scripts wait for this line to know Flint is up.
                let line = "Flint listening on \(address) (export FIRESTORE_EMULATOR_HOST=\(address.connectable))\n"
                Console.output(line)
            }
        }
    }
}

extension FlintCommand {
    /// `flint import DIR --data-dir D`: loads an export into a data directory offline, a batch
    /// at a time, without holding the export or the data in memory.
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Load an export into a --data-dir without starting Flint.")

        @Argument(help: "The export to load.")
        var directory: String

        @Option(help: "The data directory to load it into (created if needed).")
        var dataDir: String

        @Option(help: "For a managed export (firebase emulators:export, gcloud firestore export): the project to load it into, or its alias in ./.firebaserc (default: the one it came from).")
        var project: String?

        func validate() throws { try ServerOptions.checkID(project, of: "--project") }

        func run() async throws {
            let project = project.map { FirebaseRC.project(named: $0, in: ".") }
            let file = try DurableFile.open(in: dataDir)
            let progress = ServerOptions.progress("imported")
            var total = 0
            // Every document is checked before any is loaded: a bad one refuses the whole export.
            try await FlintExport.check(directory, project: project)
            try await FlintExport.forEachBatch(in: directory, project: project) { id, batch in
                try file.load(id, batch.map(\.1))
                total += batch.count
                if total % 10_000 < batch.count { progress?(total) }
            }
            print("Imported \(total) documents into \(dataDir)")
        }
    }

    /// `flint export DIR`: asks a running Flint to export every database into DIR, or exports a
    /// `--data-dir` directly when no Flint is running on it.
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Export every database to a directory (docs/storage.md).")

        @Argument(help: "Where to write the export; an earlier export there is replaced only once the new one is complete.")
        var directory: String

        @Option(help: "The running emulator (default: FIRESTORE_EMULATOR_HOST, else 127.0.0.1:8080).")
        var host: String?

        @Option(help: "Export a --data-dir offline instead of asking a running emulator.")
        var dataDir: String?

        @Option(help: "flint (every database) or managed (one database, as Google's emulator and gcloud write it). An export already in DIR keeps its format.")
        var format: FlintExport.Format = .flint

        @Option(help: "For a managed export: the project whose database to export, or its alias in ./.firebaserc (default: the one the export in DIR came from).")
        var project: String?

        @Option(help: "For a managed export: the database id (default: (default)).")
        var database: String?

        func validate() throws {
            try ServerOptions.checkID(project, of: "--project")
            try ServerOptions.checkID(database, of: "--database")
        }

        func run() async throws {
            let project = project.map { FirebaseRC.project(named: $0, in: ".") }
            let target = URL(fileURLWithPath: directory).standardizedFileURL.path
            if let dataDir {
                let engine = try Engine.durable(directory: dataDir)
                let summary = try await FlintExport.export(
                    engine, to: target, format: format, project: project, database: database, progress: ServerOptions.progress("exported"))
                print("Exported \(summary.documents) documents to \(target)")
                return
            }
            if let problem = FlintExport.unwritable(target) { throw CLIFailure(problem) }
            let address = host ?? ProcessInfo.processInfo.environment["FIRESTORE_EMULATOR_HOST"] ?? "127.0.0.1:8080"
            let path: String
            let request: [String: String]
            if (FlintExport.existingFormat(target) ?? format) == .managed {
                // The call firebase-tools makes, answered in the format it expects.
                let id = try FlintExport.managedDatabase(in: target, project: project, database: database)
                let (parent, name) = ManagedExport.destination(for: target)
                path = "/emulator/v1/projects/\(id.project):export"
                request = ["database": id.name, "export_directory": parent, "export_name": name]
            } else {
                path = "/emulator/v1:export"
                request = ["directory": target]
            }
            let body = try JSONSerialization.data(withJSONObject: request)
            let response: HTTPClient.Response
            do {
                response = try await HTTPClient.send(
                    "POST", path, to: address, headers: [("Content-Type", "application/json")], body: [UInt8](body))
            } catch {
                throw CLIFailure("No emulator answered at \(address): \(error)")
            }
            let data = Data(response.body)
            guard response.status == 200 else {
                throw CLIFailure("The export failed: \(String(decoding: data, as: UTF8.self))")
            }
            let documents = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["documents"] ?? "?"
            print("Exported \(documents) documents to \(target)")
        }
    }
}
