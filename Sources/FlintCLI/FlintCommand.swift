import ArgumentParser
import FlintModel

/// `flint`: the Firestore-compatible emulator's command line.
public struct FlintCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "flint",
        abstract: "A Firestore-compatible local emulator.",
        version: "0.1.0",
        subcommands: [Start.self, Exec.self, Fixtures.self, Rules.self, Export.self, Import.self])

    public init() {}

    /// Parses and runs a command as ArgumentParser's own `main` does, but prints Flint's errors
    /// by their message alone: their gRPC code means nothing on a command line.
    public static func main(_ arguments: [String]?) async {
        do {
            var command = try parseAsRoot(arguments)
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as FlintError {
            exit(withError: CLIFailure(error.message))
        } catch {
            exit(withError: error)
        }
    }
}
