import FlintEngine
import FlintFirestore
import FlintFixtures
import FlintModel
import FlintServer
import Foundation

/// One guide's world: its fixture loaded, its rules enforced, triggers ready, reached through
/// the client embedded or over gRPC to a Flint on a free port.
struct Scenario: Sendable {
    enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
        case embedded, remote
        var description: String { rawValue }

        /// Both, unless `FLINT_SCENARIO_BACKENDS` names one (the timing script runs each alone).
        static var selected: [Backend] {
            let env = ProcessInfo.processInfo.environment["FLINT_SCENARIO_BACKENDS"] ?? ""
            let chosen = env.split(separator: ",").compactMap { Backend(rawValue: String($0)) }
            return chosen.isEmpty ? allCases : chosen
        }
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    let project: String
    /// Rules skipped, as the Admin SDK (and Cloud Functions) are.
    let admin: Firestore
    let triggers: DocumentTriggers
    let fixture: Fixture

    /// The database as a signed-in user sees it.
    func user(_ uid: String, claims: [String: ClaimValue] = [:]) -> Firestore { admin.signedIn(as: uid, claims: claims) }

    static func run(
        fixture name: String, rules: String?, backend: Backend, _ body: @Sendable (Scenario) async throws -> Void
    ) async throws {
        let engine = Engine()
        let project = "scenario-\(UUID().uuidString.prefix(8).lowercased())"
        let id = DatabaseID(project: project)
        let url = root.appendingPathComponent("fixtures/\(name).json")
        let dataset = try Dataset.load(contentsOf: url, database: id)
        _ = try await dataset.write(into: engine.database(id))
        if let rules {
            let source = try String(contentsOf: root.appendingPathComponent("rules-samples/\(rules)"), encoding: .utf8)
            let problems = engine.rules.load(source, project: project).filter { $0.severity == .error }
            precondition(problems.isEmpty, "\(rules): \(problems)")
        }
        let embedded = try Firestore.embedded(project: project, engine: engine, user: .owner)
        let triggers = try await DocumentTriggers(embedded)
        defer { triggers.stop() }
        let fixture = try Fixture(url)
        switch backend {
        case .embedded:
            try await body(Scenario(project: project, admin: embedded, triggers: triggers, fixture: fixture))
        case .remote:
            let server = FlintServer(engine: engine, configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
            let running = try await server.start()
            defer { running.stop() }
            let remote = Firestore.remote(host: running.address, project: project, user: .owner)
            try await body(Scenario(project: project, admin: remote, triggers: triggers, fixture: fixture))
            await remote.terminate()
        }
    }
}

/// The fixture file read on its own with Foundation, so expectations do not come from Flint.
struct Fixture: @unchecked Sendable {
    /// Document path → fields as plain values (strings, Int, Double, Bool, NSNull, Date,
    /// arrays, dictionaries).
    let documents: [(path: String, fields: [String: Any])]

    init(_ url: URL) throws {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        documents = (json["documents"] as! [[String: Any]]).map { doc in
            (doc["name"] as! String, (doc["fields"] as? [String: Any] ?? [:]).mapValues(Self.plain))
        }
    }

    static func plain(_ v: Any) -> Any {
        let typed = v as! [String: Any]
        let (kind, value) = typed.first!
        switch kind {
        case "stringValue": return value as! String
        case "integerValue": return Int(value as! String)!
        case "doubleValue": return value as! Double
        case "booleanValue": return value as! Bool
        case "nullValue": return NSNull()
        case "timestampValue": return ISO8601DateFormatter().date(from: value as! String) ?? Date.distantPast
        case "arrayValue": return ((value as! [String: Any])["values"] as? [Any] ?? []).map(plain)
        case "mapValue": return ((value as! [String: Any])["fields"] as? [String: Any] ?? [:]).mapValues(plain)
        default: return value
        }
    }

    /// The documents directly in `collection` (a collection path), with their ids.
    func collection(_ collection: String) -> [(id: String, fields: [String: Any])] {
        let depth = collection.split(separator: "/").count + 1
        return documents.filter { $0.path.hasPrefix(collection + "/") && $0.path.split(separator: "/").count == depth }
            .map { (String($0.path.split(separator: "/").last!), $0.fields) }
    }

    func document(_ path: String) -> [String: Any]? { documents.first { $0.path == path }?.fields }
}

/// Awaits a listener's callbacks one at a time.
final class Inbox<T: Sendable>: Sendable {
    private let stream: AsyncStream<T>
    private let continuation: AsyncStream<T>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream() }

    func put(_ value: T) { continuation.yield(value) }

    /// The next value for which `accept` holds (earlier ones are skipped), or a timeout.
    func next(within seconds: Double = 30, where accept: @escaping @Sendable (T) -> Bool = { _ in true }) async throws -> T {
        let stream = self.stream
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                for await v in stream where accept(v) { return v }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            guard let first = try await group.next(), let value = first else { throw ScenarioTimeout() }
            group.cancelAll()
            return value
        }
    }
}

struct ScenarioTimeout: Error {}
