import ArgumentParser
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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
            let status = CommandStatus()
            let command = self.command
            // --port is honoured when given; firebase.json's port is not, so suites run side by side.
            try await options.serve(port: options.port ?? 0) { host, port, stop in
                Task {
                    let exit = await Self.spawnAndWait(command, environment: ["FIRESTORE_EMULATOR_HOST": "\(host):\(port)"])
                    status.value.store(exit, ordering: .relaxed)
                    // Stopped as SIGTERM would stop it (open connections close, --export-on-exit
                    // runs), but not by sending one: a command that ends at once could signal
                    // before the server's signal handling is in place, and the default action
                    // would kill Flint with the command's status lost.
                    stop()
                }
            }
            throw ExitCode(status.value.load(ordering: .relaxed))
        }

        /// Runs the command with this process's stdio and environment plus `environment`, and
        /// waits for it on a thread of its own (waitpid blocks).
        static func spawnAndWait(_ argv: [String], environment: [String: String]) async -> Int32 {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    var env = ProcessInfo.processInfo.environment
                    for (k, v) in environment { env[k] = v }
                    let cArgs = argv.map { strdup($0) } + [nil]
                    let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
                    defer {
                        for p in cArgs { free(p) }
                        for p in cEnv { free(p) }
                    }
                    var pid: pid_t = 0
                    guard posix_spawnp(&pid, argv[0], nil, nil, cArgs, cEnv) == 0 else {
                        FileHandle.standardError.write(Data("flint exec: cannot run \(argv[0])\n".utf8))
                        continuation.resume(returning: 127)
                        return
                    }
                    var status: Int32 = 0
                    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                    let signaled = status & 0x7F
                    continuation.resume(returning: signaled == 0 ? (status >> 8) & 0xFF : 128 + signaled)
                }
            }
        }
    }
}

/// The command's exit status, set once it ends and read after Flint has stopped.
private final class CommandStatus: Sendable {
    let value = Atomic<Int32>(0)
}
