import ArgumentParser

/// `flint`: the Firestore-compatible emulator's command line.
public struct FlintCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "flint",
        abstract: "A Firestore-compatible local emulator.",
        version: "0.1.0",
        subcommands: [Start.self, Exec.self, Fixtures.self, Rules.self, Export.self, Import.self])

    public init() {}
}
