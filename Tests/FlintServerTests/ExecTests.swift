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

    /// Runs argv with stdout to a file and returns the exit status and what it printed. It waits
    /// on a thread of its own: waitpid would otherwise hold one of the concurrency pool's two
    /// threads, stalling the tests running beside it.
    /// Runs `argv` to its end: its status and what it printed (with `errors`, what it printed
    /// to standard error too).
    static func run(_ argv: [String], errors: Bool = false) async throws -> (Int32, String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try runBlocking(argv, errors: errors) }) }
        }
    }

    private static func runBlocking(_ argv: [String], errors: Bool) throws -> (Int32, String) {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("flint-exec-\(UUID().uuidString)").path
        defer { unlink(out) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if errors {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, argv[0], &actions, nil, cArgs, environ) == 0 else { throw CocoaError(.executableNotLoadable) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return ((status >> 8) & 0xFF, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
    }

    @Test func runsTheCommandAgainstAFreshFlintAndPassesItsStatusOn() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.flint) else {
            Issue.record("flint binary not found next to the tests at \(Self.flint)")
            return
        }
        let script = """
            set -e
            case "$FIRESTORE_EMULATOR_HOST" in 127.0.0.1:[0-9]*) ;; *) exit 90;; esac
            [ "$FIREBASE_FIRESTORE_EMULATOR_ADDRESS" = "$FIRESTORE_EMULATOR_HOST" ] || exit 91
            curl -sf --max-time 5 "http://$FIRESTORE_EMULATOR_HOST/"
            curl -sf --max-time 5 -X POST "http://$FIRESTORE_EMULATOR_HOST/v1/projects/p/databases/(default)/documents/c?documentId=x" -d '{"fields":{}}' >/dev/null
            curl -sf --max-time 5 "http://$FIRESTORE_EMULATOR_HOST/v1/projects/p/databases/(default)/documents/c/x" | grep -q '"name"'
            exit 7
            """
        let (status, output) = try await Self.run([Self.flint, "exec", "--", "/bin/bash", "-c", script])
        #expect(status == 7)
        #expect(output == "Ok\n")
        let (missing, _) = try await Self.run([Self.flint, "exec", "--", "/no/such/command"])
        #expect(missing == 127)
        // Found but not runnable (a directory), as a shell says it.
        let (unrunnable, why) = try await Self.run([Self.flint, "exec", "--", "/tmp"], errors: true)
        #expect(unrunnable == 126)
        #expect(why == "flint exec: cannot run /tmp: Permission denied\n")
        // Listening on every interface, Flint is dialled on loopback, as firebase-tools hands it out.
        let wildcard = #"case "$FIRESTORE_EMULATOR_HOST" in 127.0.0.1:[0-9]*) curl -sf --max-time 5 "http://$FIRESTORE_EMULATOR_HOST/";; *) exit 90;; esac"#
        let (everywhere, answered) = try await Self.run([Self.flint, "exec", "--host", "0.0.0.0", "--", "/bin/bash", "-c", wildcard])
        #expect(everywhere == 0)
        #expect(answered == "Ok\n")
    }

    @Test func startOptionsApplyToTheServerItRuns() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.flint) else {
            Issue.record("flint binary not found next to the tests at \(Self.flint)")
            return
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flint-exec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let rules = dir.appendingPathComponent("firestore.rules").path
        try "rules_version = '2';\nservice cloud.firestore { match /databases/{db}/documents { match /open/{id} { allow read, write: if true; } } }\n"
            .write(toFile: rules, atomically: true, encoding: .utf8)
        let export = dir.appendingPathComponent("export").path
        // Without a token the rules decide: /open is writable, /closed is not; the owner bypasses them.
        let script = """
            base="http://$FIRESTORE_EMULATOR_HOST/v1/projects/p/databases/(default)/documents"
            printf '%s ' "$(curl -s -o /dev/null -w '%{http_code}' -X PATCH "$base/open/a" -d '{"fields":{"n":{"integerValue":"1"}}}')"
            printf '%s ' "$(curl -s -o /dev/null -w '%{http_code}' -X PATCH "$base/closed/a" -d '{"fields":{}}')"
            printf '%s' "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer owner' -X PATCH "$base/closed/b" -d '{"fields":{}}')"
            """
        let (status, output) = try await Self.run([Self.flint, "exec", "--rules", rules, "--export-on-exit", export, "--", "/bin/bash", "-c", script])
        #expect(status == 0)
        #expect(output == "200 403 200")
        // The export ran after the command, with the two documents written.
        let manifest = try #require(FileManager.default.contents(atPath: export + "/flint-export.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: manifest) as? [String: Any])
        let databases = try #require(json["databases"] as? [[String: Any]])
        #expect(databases.count == 1)
        #expect(databases.first?["name"] as? String == "projects/p/databases/(default)")
        #expect(databases.first?["documents"] as? Int == 2)
    }

    @Test func exportAsksTheRunningEmulatorAndSaysWhenNoneAnswers() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.flint) else {
            Issue.record("flint binary not found next to the tests at \(Self.flint)")
            return
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flint-export-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        // `flint export` inside exec finds the emulator through FIRESTORE_EMULATOR_HOST.
        let script = """
            base="http://$FIRESTORE_EMULATOR_HOST/v1/projects/p/databases/(default)/documents"
            curl -sf -o /dev/null -X PATCH "$base/c/a" -d '{"fields":{}}'
            curl -sf -o /dev/null -X PATCH "$base/c/b/d/e" -d '{"fields":{}}'
            "$0" export "$1"
            """
        let (status, output) = try await Self.run([Self.flint, "exec", "--", "/bin/bash", "-c", script, Self.flint, dir.path])
        #expect(status == 0)
        #expect(output == "Exported 2 documents to \(dir.path)\n")
        #expect(FileManager.default.fileExists(atPath: dir.path + "/flint-export.json"))

        let (refused, printed) = try await Self.run([Self.flint, "export", dir.path + "-never", "--host", "127.0.0.1:1"])
        #expect(refused == 1)
        #expect(printed.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "-never"))
    }

    @Test func helpUsageAndStartFailuresHaveTheirOwnStatuses() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.flint) else {
            Issue.record("flint binary not found next to the tests at \(Self.flint)")
            return
        }
        let (help, usage) = try await Self.run([Self.flint, "exec", "--help"])
        #expect(help == 0)
        #expect(usage.contains("flint exec [<options>] -- <command>"))
        #expect(usage.contains("--rules"))
        let (missing, _) = try await Self.run([Self.flint, "exec"])
        #expect(missing == 64)
        let (unreadable, printed) = try await Self.run([Self.flint, "exec", "--rules", "/no/such.rules", "--", "/bin/true"])
        #expect(unreadable == 1)
        #expect(printed.isEmpty)
        // A port already taken (here, by the Flint `exec` started) is said in a sentence.
        let taken = #"timeout 10 \#(Self.flint) start --port "${FIRESTORE_EMULATOR_HOST##*:}" 2>&1; echo "status $?""#
        let (_, said) = try await Self.run([Self.flint, "exec", "--", "/bin/bash", "-c", taken])
        #expect(said.hasPrefix("Error: Cannot listen on 127.0.0.1:"), "\(said)")
        #expect(said.hasSuffix(": the port is in use (is another emulator running there?).\nstatus 1\n"), "\(said)")
        // Flint's own errors are printed by their message, without their gRPC code.
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("flint-import-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let (unloadable, why) = try await Self.run([Self.flint, "import", "/no/export", "--data-dir", data], errors: true)
        #expect(unloadable == 1)
        #expect(why.hasPrefix("Error: /no/export holds no export: "), "\(why)")
        // firebase.json's host and port are used or refused, never passed over.
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("flint-config-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: config) }
        for (firestore, problem) in [
            (#"{"port": 99999}"#, "emulators.firestore.port must be a port from 0 to 65535, not 99999."),
            (#"{"port": "abc"}"#, #"emulators.firestore.port must be a port from 0 to 65535, not "abc"."#),
            (#"{"host": ""}"#, #"emulators.firestore.host must be a host name or address, not ""."#),
        ] {
            try #"{"emulators": {"firestore": \#(firestore)}}"#.write(toFile: config, atomically: true, encoding: .utf8)
            // `exec`, so that a config wrongly taken ends at once instead of serving.
            let (status, said) = try await Self.run([Self.flint, "exec", "--config", config, "--", "/bin/true"], errors: true)
            #expect(status == 1, "\(firestore)")
            #expect(said == "Error: \(config): \(problem)\n", "\(firestore)")
        }
        try #"{"emulators": {,}}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let (unparsed, parseError) = try await Self.run([Self.flint, "exec", "--config", config, "--", "/bin/true"], errors: true)
        #expect(unparsed == 1)
        #expect(parseError == "Error: \(config) is not valid JSON: Invalid value around character 15.\n")
        // An id no resource name could hold is a usage error, before anything starts.
        for argv in [
            ["exec", "--project", "a/b", "--", "/bin/true"], ["start", "--project", ""], ["import", "/no/export", "--data-dir", "/no/dir", "--project", "a/b"],
            ["export", "/no/export", "--project", "p", "--database", ""],
        ] {
            let (status, said) = try await Self.run([Self.flint] + argv, errors: true)
            #expect(status == 64, "\(argv)")
            #expect(said.contains("must be an id: not empty, and without \"/\"."), "\(argv): \(said)")
        }
    }

    /// Rules that load with warnings start Flint, and the warnings are printed: here the one
    /// that says why every request is denied (a misspelt service loads, as on the reference).
    @Test func rulesWarningsArePrintedAndTheRulesLoad() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.flint) else {
            Issue.record("flint binary not found next to the tests at \(Self.flint)")
            return
        }
        let rules = FileManager.default.temporaryDirectory.appendingPathComponent("flint-misspelt-\(UUID().uuidString).rules").path
        defer { unlink(rules) }
        try "rules_version = '2';\nservice cloud.firestor {\n  match /databases/{db}/documents { match /{d=**} { allow read: if true; } }\n}\n"
            .write(toFile: rules, atomically: true, encoding: .utf8)
        let script = #"curl -s -o /dev/null -w '%{http_code}' "http://$FIRESTORE_EMULATOR_HOST/v1/projects/p/databases/(default)/documents/c/d""#
        let (status, output) = try await Self.run([Self.flint, "exec", "--rules", rules, "--", "/bin/sh", "-c", script], errors: true)
        #expect(status == 0)
        #expect(output.hasPrefix("\(rules):2:9: warning: Invalid service name: cloud.firestor.\n\(rules):3:59: warning: Invalid method name: read.\n"), "\(output)")
        #expect(output.hasSuffix("403"), "\(output)")
    }
}
