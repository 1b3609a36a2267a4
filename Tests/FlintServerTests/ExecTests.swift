import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `flint exec` end to end: the built binary starts Flint on a free port, runs the command with
/// FIRESTORE_EMULATOR_HOST set, stops, and exits with the command's status.
struct ExecTests {
    static var flint: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("flint").path
    }

    /// Runs argv with stdout to a file; returns the exit status and what it printed.
    static func run(_ argv: [String]) throws -> (Int32, String) {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("flint-exec-\(UUID().uuidString)").path
        defer { unlink(out) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, argv[0], &actions, nil, cArgs, environ) == 0 else { throw CocoaError(.executableNotLoadable) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return ((status >> 8) & 0xFF, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
    }

    @Test func runsTheCommandAgainstAFreshFlintAndPassesItsStatusOn() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.flint) else {
            Issue.record("flint binary not found next to the tests at \(Self.flint)")
            return
        }
        let script = """
            set -e
            case "$FIRESTORE_EMULATOR_HOST" in 127.0.0.1:[0-9]*) ;; *) exit 90;; esac
            curl -sf --max-time 5 "http://$FIRESTORE_EMULATOR_HOST/"
            curl -sf --max-time 5 -X POST "http://$FIRESTORE_EMULATOR_HOST/v1/projects/p/databases/(default)/documents/c?documentId=x" -d '{"fields":{}}' >/dev/null
            curl -sf --max-time 5 "http://$FIRESTORE_EMULATOR_HOST/v1/projects/p/databases/(default)/documents/c/x" | grep -q '"name"'
            exit 7
            """
        let (status, output) = try Self.run([Self.flint, "exec", "--", "/bin/bash", "-c", script])
        #expect(status == 7)
        #expect(output == "Ok")
        let (missing, _) = try Self.run([Self.flint, "exec", "--", "/no/such/command"])
        #expect(missing == 127)
    }
}
