import FlintEngine
import Foundation
import Logging
import Testing

@testable import FlintCLI

/// `flint start`'s firebase.json reading and its rules watcher.
struct StartOptionsTests {
    @Test func firebaseJSONGivesRulesIndexesHostAndPort() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flint-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try #"{"firestore": {"rules": "firestore.rules", "indexes": "conf/firestore.indexes.json"}, "emulators": {"firestore": {"host": "0.0.0.0", "port": "9099"}}}"#
            .write(toFile: dir + "/firebase.json", atomically: true, encoding: .utf8)
        let config = try ServerOptions.FirebaseConfig(path: dir + "/firebase.json")
        #expect(config.rules == dir + "/firestore.rules")
        #expect(config.indexes == dir + "/conf/firestore.indexes.json")
        #expect(config.host == "0.0.0.0" && config.port == 9099)
        try #"{"firestore": [{"database": "(default)", "rules": "/abs/a.rules"}, {"database": "other", "rules": "b.rules"}]}"#
            .write(toFile: dir + "/multi.json", atomically: true, encoding: .utf8)
        let multi = try ServerOptions.FirebaseConfig(path: dir + "/multi.json")
        #expect(multi.rules == nil)
        #expect(multi.databaseRules.map(\.database) == ["(default)", "other"])
        #expect(multi.databaseRules.map(\.rules) == ["/abs/a.rules", dir + "/b.rules"])
        #expect(throws: (any Error).self) { try ServerOptions.FirebaseConfig(path: dir + "/missing.json") }
    }

    @Test func versionRetentionTakesAUnitAndStaysWithinAWeek() throws {
        #expect(try ServerOptions.parse([]).databaseConfiguration(indexes: nil).versionRetentionMicros == 3_600_000_000)
        let valid: [(String, Int64)] = [("90", 90), ("90s", 90), ("10m", 600), ("2h", 7200), ("7d", 604_800), ("1s", 1), ("604800", 604_800)]
        for (argument, seconds) in valid {
            let options = try ServerOptions.parse(["--version-retention", argument])
            #expect(try options.databaseConfiguration(indexes: nil).versionRetentionMicros == seconds * 1_000_000, "\(argument)")
        }
        for bad in ["0", "0s", "-5m", "8d", "604801", "1w", "", "m", "1.5h", "10 m", "99999999999999999d", "9223372036854775807s"] {
            #expect(throws: (any Error).self, "\(bad)") { try ServerOptions.parse(["--version-retention", bad]) }
        }
    }

    @Test func theRulesFileIsReloadedWhenItChanges() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("flint-watch-\(UUID().uuidString).rules").path
        let first = "service cloud.firestore { match /databases/{d}/documents/a/{b} { allow read: if false; } }"
        try first.write(toFile: path, atomically: true, encoding: .utf8)
        let engine = Engine()
        engine.rules.load(first, project: "w")
        let watcher = ServerOptions.watch(path, project: "w", engine: engine, logger: Logger(label: "test"))
        defer { watcher.cancel() }
        try await Task.sleep(for: .milliseconds(1100))  // file times have a one-second grain on some file systems
        try "service cloud.firestore { broken".write(toFile: path, atomically: true, encoding: .utf8)
        try await Task.sleep(for: .milliseconds(1300))
        #expect(engine.rules.rules(for: "w")?.source == first)  // invalid rules leave the old ones in force
        let second = "service cloud.firestore { match /databases/{d}/documents/a/{b} { allow read: if true; } }"
        try await Task.sleep(for: .milliseconds(1100))
        try second.write(toFile: path, atomically: true, encoding: .utf8)
        let deadline = ContinuousClock.now + .seconds(30)
        while engine.rules.rules(for: "w")?.source != second, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        #expect(engine.rules.rules(for: "w")?.source == second)
        // Removed (as some editors do while saving), the rules stay; back, they are read again.
        try FileManager.default.removeItem(atPath: path)
        try await Task.sleep(for: .milliseconds(1300))
        #expect(engine.rules.rules(for: "w")?.source == second)
        try first.write(toFile: path, atomically: true, encoding: .utf8)
        while engine.rules.rules(for: "w")?.source != first, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        #expect(engine.rules.rules(for: "w")?.source == first)
    }

    /// Rules a firebase.json `firestore` list gives a named database are watched too, and
    /// reloaded for that database alone.
    @Test func aDatabasesRulesFileIsReloadedForThatDatabase() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("flint-watch-\(UUID().uuidString).rules").path
        let shut = "service cloud.firestore { match /databases/{d}/documents/a/{b} { allow read: if false; } }"
        let open = "service cloud.firestore { match /databases/{d}/documents/a/{b} { allow read: if true; } }"
        try shut.write(toFile: path, atomically: true, encoding: .utf8)
        let engine = Engine()
        engine.rules.load(shut, project: "w", database: "other")
        engine.rules.load(shut, project: "w")
        let watcher = ServerOptions.watch(path, project: "w", database: "other", engine: engine, logger: Logger(label: "test"))
        defer { watcher.cancel() }
        try await Task.sleep(for: .milliseconds(1100))  // file times have a one-second grain on some file systems
        try open.write(toFile: path, atomically: true, encoding: .utf8)
        let deadline = ContinuousClock.now + .seconds(30)
        while engine.rules.rules(for: "w", database: "other")?.source != open, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(engine.rules.rules(for: "w", database: "other")?.source == open)
        #expect(engine.rules.rules(for: "w")?.source == shut)
    }

    /// A project's rules and `--rules` are those of `(default)` databases; a named database has
    /// only rules loaded for it, and is open without them, as on the reference.
    @Test func rulesApplyPerDatabase() {
        let engine = Engine()
        let open = "service cloud.firestore { match /databases/{d}/documents/{c}/{id} { allow read; } }"
        let shut = "service cloud.firestore { match /databases/{d}/documents/{c}/{id} { allow read: if false; } }"
        engine.rules.load(open, project: nil)
        engine.rules.load(shut, project: nil, database: "locked")
        engine.rules.load(shut, project: "p")
        engine.rules.load(open, project: "p", database: "free")
        #expect(engine.rules.rules(for: "x")?.source == open)
        #expect(engine.rules.rules(for: "x", database: "locked")?.source == shut)
        #expect(engine.rules.rules(for: "p")?.source == shut)
        #expect(engine.rules.rules(for: "p", database: "free")?.source == open)
        #expect(engine.rules.rules(for: "p", database: "locked")?.source == shut)
        #expect(engine.rules.rules(for: "p", database: "other") == nil)
        #expect(engine.rules.rules(for: "x", database: "other") == nil)
        engine.rules.load(open, project: "p", database: "(default)")  // the same as the project's
        #expect(engine.rules.rules(for: "p")?.source == open)
    }
}
