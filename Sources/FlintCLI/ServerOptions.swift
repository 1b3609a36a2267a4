import ArgumentParser
import FlintDurable
import FlintEngine
import FlintExport
import FlintFixtures
import FlintModel
import FlintRules
import FlintServer
import Foundation
import Logging
import UnixSignals

/// The options that describe a Flint server, shared by `flint start` and `flint exec`.
struct ServerOptions: ParsableArguments {
    @Option(help: "Address to listen on (default 127.0.0.1, or emulators.firestore.host of firebase.json).")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one (default 8080, or emulators.firestore.port).")
    var port: Int?

    @Option(help: "A firebase.json to read firestore.rules, firestore.indexes and emulators.firestore host/port from (default: ./firebase.json when present).")
    var config: String?

    @Option(help: "The project the rules apply to, or its alias in .firebaserc (default: every project that has not loaded its own).")
    var project: String?

    @Option(help: "A firestore.indexes.json whose composite indexes and field overrides are declared.")
    var indexes: String?

    @Flag(help: "Refuse queries that production would refuse for lack of a declared index.")
    var requireIndexes = false

    @Option(help: "A firestore.rules file, reloaded whenever it changes; applied to --project, else to every project without rules of its own.")
    var rules: String?

    @Option(help: "Keep every database in DIR/flint.sqlite and restore them at start (default: memory only).")
    var dataDir: String?

    @Flag(help: "With --data-dir: fsync every commit, so commits survive power loss too (slower).")
    var syncEveryCommit = false

    @Option(help: "Load an export before serving: Flint's (flint export, --export-on-exit), or a managed export (firebase emulators:export, gcloud firestore export), whose documents go to --project when given.")
    var `import`: String?

    @Option(help: "On SIGINT, SIGTERM or SIGHUP, export here before exiting, in the format of the export already there, else --export-format.")
    var exportOnExit: String?

    @Option(help: "The format of --export-on-exit: flint (every database) or managed (--project's database, readable by Google's emulator).")
    var exportFormat: FlintExport.Format = .flint

    @Option(help: "Log level: trace, debug, info (one line per request), notice, warning, error, critical.")
    var logLevel = "notice"

    @Option(
        help: ArgumentHelp(
            "How long earlier versions stay readable with read_time, as 90s, 10m, 1h or 7d (default 1h, production's window); a shorter one bounds what a long run of overwrites holds in memory.",
            valueName: "duration"),
        transform: { try RetentionWindow(parsing: $0) })
    var versionRetention: RetentionWindow = .init(seconds: 3600)

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be between 0 and 65535.") }
        try Self.checkID(project, of: "--project")
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("Unknown --log-level \(logLevel).") }
    }

    /// A project or database id given on the command line is one segment of a resource name:
    /// an empty one, or one holding `/`, would name data no request could reach.
    static func checkID(_ id: String?, of option: String) throws {
        guard let id else { return }
        guard !id.isEmpty, !id.contains("/") else { throw ValidationError("\(option) must be an id: not empty, and without \"/\".") }
    }

    /// The engine's settings these options give, with the indexes file (from the command line or
    /// firebase.json) read.
    func databaseConfiguration(indexes: String?) throws -> DatabaseConfiguration {
        var configuration = DatabaseConfiguration()
        configuration.requireIndexes = requireIndexes
        configuration.versionRetentionMicros = versionRetention.seconds * 1_000_000
        if let indexes {
            guard let data = FileManager.default.contents(atPath: indexes) else {
                throw CLIFailure("Cannot read \(indexes).")
            }
            do throws(FlintError) {
                let parsed = try IndexFile.parse(data)
                configuration.declaredIndexes = parsed.indexes
                configuration.fieldOverrides = parsed.overrides
                configuration.singleFieldSettings = parsed.settings
            } catch {
                throw CLIFailure("\(indexes): \(error.message)")
            }
        }
        return configuration
    }

    /// The directory of the firebase.json in use (--config's, else the working directory),
    /// where firebase-tools keeps `.firebaserc` too.
    var projectDirectory: String {
        let directory = config.map { ($0 as NSString).deletingLastPathComponent } ?? ""
        return directory.isEmpty ? "." : directory
    }

    /// These options with `--project` as firebase-tools takes it: an alias of the `.firebaserc`
    /// beside firebase.json stands for its project.
    func resolvingProjectAlias() -> ServerOptions {
        var resolved = self
        resolved.project = project.map { FirebaseRC.project(named: $0, in: projectDirectory) }
        return resolved
    }

    /// What firebase.json says, paths made relative to it.
    struct FirebaseConfig {
        var rules: String?
        var indexes: String?
        var host: String?
        var port: Int?
        /// Per-database rules, from a `firestore` list naming databases.
        var databaseRules: [(database: String, rules: String)] = []

        init(path: String) throws {
            guard let data = FileManager.default.contents(atPath: path) else { throw CLIFailure("Cannot read \(path).") }
            let json: Any
            do { json = try JSONSerialization.jsonObject(with: data) } catch {
                throw CLIFailure("\(path) is not valid JSON: \(jsonProblem(error))")
            }
            guard let root = json as? [String: Any] else { throw CLIFailure("\(path) must hold a JSON object.") }
            let base = (path as NSString).deletingLastPathComponent
            func relative(_ p: String?) -> String? { p.map { $0.hasPrefix("/") ? $0 : (base as NSString).appendingPathComponent($0) } }
            // `firestore` is an object, or a list of per-database objects (the first is used).
            let firestore = (root["firestore"] as? [String: Any]) ?? (root["firestore"] as? [[String: Any]])?.first
            rules = relative(firestore?["rules"] as? String)
            for entry in (root["firestore"] as? [[String: Any]]) ?? [] {
                if let database = entry["database"] as? String, let path = relative(entry["rules"] as? String) {
                    databaseRules.append((database, path))
                }
            }
            if !databaseRules.isEmpty { rules = nil }
            indexes = relative(firestore?["indexes"] as? String)
            let emulator = (root["emulators"] as? [String: Any])?["firestore"] as? [String: Any]
            // A host or port that cannot be used is said, rather than passed over for the default.
            func shown(_ value: Any) -> String { (value as? String).map { "\"\($0)\"" } ?? "\(value)" }
            if let value = emulator?["host"] {
                guard let text = value as? String, !text.isEmpty else {
                    throw CLIFailure("\(path): emulators.firestore.host must be a host name or address, not \(shown(value)).")
                }
                host = text
            }
            if let value = emulator?["port"] {
                guard let number = (value as? Int) ?? (value as? String).flatMap({ Int($0) }), (0...65535).contains(number) else {
                    throw CLIFailure("\(path): emulators.firestore.port must be a port from 0 to 65535, not \(shown(value)).")
                }
                port = number
            }
        }
    }

    /// Builds the engine these options describe and serves it until `POST /shutdown` or the
    /// stop `onReady` is given, exporting at exit when asked, then returns once `afterStop` has.
    /// SIGINT, SIGTERM and SIGHUP go to `onSignal` until then; by default they stop. `port`
    /// overrides --port and firebase.json.
    func serve(
        port portOverride: Int? = nil,
        onSignal: @escaping @Sendable (_ signal: Int32, _ stop: @escaping @Sendable () -> Void) -> Void = { _, stop in stop() },
        afterStop: @Sendable () async -> Void = {},
        onReady: @escaping @Sendable (HostAndPort, _ stop: @escaping @Sendable () -> Void) async -> Void
    ) async throws {
        let configPath = config ?? (FileManager.default.fileExists(atPath: "firebase.json") ? "firebase.json" : nil)
        let file = try configPath.map { try FirebaseConfig(path: $0) }
        var host = self.host ?? file?.host ?? "127.0.0.1"
        // An IPv6 host may come bracketed, as in a URL; sockets take it bare.
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = portOverride ?? self.port ?? file?.port ?? 8080
        let rules = self.rules ?? file?.rules
        let indexes = self.indexes ?? file?.indexes
        var configuration = try databaseConfiguration(indexes: indexes)
        var logger = Logger(label: "flint")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .notice
        let rulesLogger = logger
        configuration.rulesDebugLog = { line in rulesLogger.notice("\(line)") }
        let engine: Engine
        if let dataDir {
            do {
                engine = try Engine.durable(directory: dataDir, configuration: configuration, sync: syncEveryCommit ? .everyCommit : .processCrashSafe)
            } catch let error as FlintError {
                throw CLIFailure("--data-dir: \(error.message)")
            }
        } else {
            engine = Engine(configuration: configuration)
        }
        var watchers: [Task<Void, Never>] = []
        defer { for watcher in watchers { watcher.cancel() } }
        for (database, path) in file?.databaseRules ?? [] where self.rules == nil {
            try loadRules(path, into: engine, database: database)
            watchers.append(Self.watch(path, project: project, database: database, engine: engine, logger: logger))
        }
        if let rules {
            try loadRules(rules, into: engine)
            watchers.append(Self.watch(rules, project: project, engine: engine, logger: logger))
        }
        if let exportOnExit, let problem = FlintExport.unwritable(exportOnExit) {
            // Found now rather than when the data is about to be exported.
            throw ValidationError("--export-on-exit: \(problem)")
        }
        if let source = self.import {
            let summary = try await FlintExport.import(from: source, into: engine, project: project, progress: Self.progress("imported"))
            Console.error("Imported \(summary.documents) documents from \(source)\n")
        }
        let server = FlintServer(
            engine: engine, configuration: ServerConfiguration(host: host, port: port), logger: logger)
        // Trapped before the server starts, so no signal in between takes the default action.
        // A hangup (the terminal closed) stops Flint as the others do, exporting first, unless
        // Flint was started to ignore it (nohup).
        let hangup: [UnixSignal] = InheritedSignalAction(of: SIGHUP) == .ignored ? [] : [.sighup]
        let signals = await UnixSignalsSequence(trapping: [.sigterm, .sigint] + hangup)
        let trapping = Task {
            for await signal in signals { onSignal(signal.rawValue, { server.stop() }) }
        }
        defer { trapping.cancel() }
        try await server.run { host, port in await onReady(HostAndPort(host: host, port: port), { server.stop() }) }
        if let exportOnExit {
            let summary = try await FlintExport.export(
                engine, to: exportOnExit, format: exportFormat, project: project, progress: Self.progress("exported"))
            Console.error("Exported \(summary.documents) documents to \(exportOnExit)\n")
        }
        await afterStop()
    }

    /// Loads a rules file for `--project` (or every project), refusing to start on any error.
    /// Warnings are printed and the rules load, as firebase-tools prints the reference's: one
    /// may be all that says why every request is denied (`Invalid service name: …`).
    private func loadRules(_ path: String, into engine: Engine, database: String? = nil) throws {
        guard let data = FileManager.default.contents(atPath: path) else { throw CLIFailure("Cannot read \(path).") }
        let problems = engine.rules.load(String(decoding: data, as: UTF8.self), project: project, database: database)
        let errors = problems.filter { $0.severity == .error }
        guard errors.isEmpty else { throw CLIFailure(errors.map { $0.line(in: path) }.joined(separator: "\n")) }
        for warning in problems { Console.error(warning.line(in: path) + "\n") }
    }

    /// Reloads the rules file whenever it changes; rules that do not compile are reported
    /// and the previous ones stay in force.
    static func watch(_ path: String, project: String?, database: String? = nil, engine: Engine, logger: Logger) -> Task<Void, Never> {
        Task {
            func stamp() -> Date? { (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date }
            var last = stamp()
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(500))
                let now = stamp()
                guard now != last else { continue }
                last = now
                guard let data = FileManager.default.contents(atPath: path) else {
                    // Gone or unreadable (an editor's save may remove it for a moment): said once.
                    logger.warning("Cannot read \(path) (the previous rules stay in force until it is back).")
                    continue
                }
                let problems = engine.rules.load(String(decoding: data, as: UTF8.self), project: project, database: database)
                let errors = problems.filter { $0.severity == .error }
                if errors.isEmpty {
                    logger.notice("Reloaded the rules from \(path).")
                    for p in problems { logger.warning("\(p.line(in: path))") }
                } else {
                    for p in errors { logger.error("\(p.line(in: path)) (the previous rules stay in force)") }
                }
            }
        }
    }

    /// Progress lines on a terminal only, so logs and pipes stay clean.
    static func progress(_ verb: String) -> (@Sendable (Int) -> Void)? {
        guard isatty(2) != 0 else { return nil }
        return { n in Console.error("\r\(verb) \(n) documents…") }
    }
}

/// A problem found while running a command (a file that cannot be read, rules that do not
/// compile): printed as `Error: …` and exit status 1, without the usage text that belongs to
/// mistakes in the arguments themselves.
struct CLIFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

extension FlintExport.Format: ExpressibleByArgument {}

/// `--version-retention`: a whole number of seconds, minutes, hours or days, from a second to the
/// seven days production keeps with point-in-time recovery.
struct RetentionWindow {
    static let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
    static let range: ClosedRange<Int64> = 1...(7 * 86400)

    let seconds: Int64

    init(seconds: Int64) {
        self.seconds = seconds
    }

    init(parsing argument: String) throws(ValidationError) {
        let unit = argument.last.flatMap { Self.units[$0] }
        guard let count = Int64(unit == nil ? argument : String(argument.dropLast())), count > 0,
              case let (seconds, overflow) = count.multipliedReportingOverflow(by: unit ?? 1), !overflow,
              Self.range.contains(seconds)
        else {
            throw ValidationError("expected a whole number of seconds (s), minutes (m), hours (h) or days (d), from 1s to 7d, such as 10m")
        }
        self.seconds = seconds
    }
}
