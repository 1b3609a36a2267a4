import ArgumentParser
import FlintEngine
import FlintServer
import Foundation
import Hummingbird
import Logging

#if canImport(Glibc)
    import Glibc
#endif

extension FlintCommand {
    /// `flint exec -- CMD ARGS...`: runs a command against a fresh Flint on a free port.
    struct Exec: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start Flint on a free port, run a command with FIRESTORE_EMULATOR_HOST set, stop, and exit with its status.")

        @Option(help: "Address to listen on.")
        var host = "127.0.0.1"

        @Argument(parsing: .captureForPassthrough, help: "The command and its arguments, after --.")
        var command: [String]

        func validate() throws {
            if command.first == "--" { return }
            guard !command.isEmpty else { throw ValidationError("Give the command to run after --.") }
        }

        func run() async throws {
            let argv = command.first == "--" ? Array(command.dropFirst()) : command
            guard !argv.isEmpty else { throw ValidationError("Give the command to run after --.") }
            var logger = Logger(label: "flint")
            logger.logLevel = .warning
            let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: host, port: 0), logger: logger)
            let ready = AsyncStream<Int>.makeStream()
            let serving = Task { try await server.run { _, port in ready.continuation.yield(port) } }
            var ports = ready.stream.makeAsyncIterator()
            guard let port = await ports.next() else { throw ExitCode.failure }
            let status = await Self.spawnAndWait(argv, environment: ["FIRESTORE_EMULATOR_HOST": "\(host):\(port)"])
            // Stop the way a user would, so open connections close gracefully.
            kill(getpid(), SIGTERM)
            _ = try? await serving.value
            throw ExitCode(status)
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
