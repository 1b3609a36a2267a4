import ArgumentParser
import Foundation
import Synchronization

extension FlintCommand {
    /// `flint exec [options] -- CMD ARGS...`: runs a command against a fresh Flint on a free port.
    struct Exec: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start Flint on a free port, run a command with FIRESTORE_EMULATOR_HOST set, stop, and exit with its status.",
            usage: "flint exec [<options>] -- <command> [<arguments> ...]")

        @OptionGroup var options: ServerOptions

        @Argument(parsing: .postTerminator, help: "The command and its arguments, after --.")
        var command: [String] = []

        func validate() throws {
            guard !command.isEmpty else { throw ValidationError("Give the command to run after --.") }
        }

        func run() async throws {
            let options = self.options.resolvingProjectAlias()
            let child = ChildCommand(command)
            let running = Mutex<Task<Void, Never>?>(nil)
            // --port is honoured when given; firebase.json's port is not, so suites run side by side.
            try await options.serve(
                port: options.port ?? 0,
                // A signal is the command's to act on: Flint keeps serving until the command ends,
                // so a suite that cleans up on SIGTERM can still reach it.
                onSignal: { signal, stop in
                    if !child.forward(signal) { stop() }
                },
                // A command that stopped Flint itself (POST /shutdown) is still waited for: its
                // status is the one to exit with.
                afterStop: { await running.withLock { $0 }?.value }
            ) { bound, stop in
                // The address under both names firebase-tools' emulators:exec gives it (older
                // @firebase/testing suites read the second), and the project as it passes it:
                // the Admin SDKs and @firebase/rules-unit-testing read it when a test names none.
                // Without --project, a value the caller set stays; else .firebaserc's default.
                let address = bound.connectable.description
                var environment = ["FIRESTORE_EMULATOR_HOST": address, "FIREBASE_FIRESTORE_EMULATOR_ADDRESS": address]
                if let project = options.project {
                    environment["GCLOUD_PROJECT"] = project
                } else if ProcessInfo.processInfo.environment["GCLOUD_PROJECT"] == nil,
                    let project = FirebaseRC.defaultProject(in: options.projectDirectory)
                {
                    environment["GCLOUD_PROJECT"] = project
                }
                running.withLock { running in
                    running = Task { [environment] in
                        await child.run(adding: environment)
                        // Stopped as SIGTERM stops `flint start` (open connections close,
                        // --export-on-exit runs), without sending a signal to this process.
                        stop()
                    }
                }
            }
            throw ExitCode(child.status)
        }
    }
}
