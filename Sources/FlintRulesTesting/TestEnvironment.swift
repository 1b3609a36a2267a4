import FlintEngine
import FlintModel
import FlintQuery
import FlintRules
import Foundation

/// A rules test environment for Swift Testing and XCTest, shaped like
/// `@firebase/rules-unit-testing`: rules from a file or a string, contexts for signed-in and
/// signed-out callers, a way around the rules for seeding, and coverage. Embedded (the engine
/// in process, no server) or against a running emulator.
///
/// ```swift
/// let env = try RulesTestEnvironment(rulesFile: "firestore.rules")
/// try await env.withSecurityRulesDisabled { try await $0.set("users/alice", ["name": "Alice"]) }
/// let alice = env.authenticatedContext("alice")
/// try await assertSucceeds { try await alice.get("users/alice") }
/// try await assertFails { try await env.unauthenticatedContext().get("users/alice") }
/// ```
public final class RulesTestEnvironment: Sendable {
    public let project: String
    private let engine: Engine
    private let remote: RemoteBackend?

    /// The problems of rules that do not compile.
    public struct InvalidRules: Error, CustomStringConvertible {
        public var diagnostics: [Diagnostic]
        public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
    }

    public init(rules: String, project: String = "demo-rules-test") throws {
        self.project = project
        engine = Engine()
        remote = nil
        let problems = engine.rules.load(rules, project: project).filter { $0.severity == .error }
        guard problems.isEmpty else { throw InvalidRules(diagnostics: problems) }
    }

    public convenience init(rulesFile path: String, project: String = "demo-rules-test") throws {
        try self.init(rules: String(contentsOfFile: path, encoding: .utf8), project: project)
    }

    /// The same API against a running emulator (`host` like `127.0.0.1:8080`, or nil for
    /// `FIRESTORE_EMULATOR_HOST`): the rules are loaded through its admin endpoint.
    public init(rules: String, emulatorHost host: String?, project: String = "demo-rules-test") async throws {
        guard let host = host ?? ProcessInfo.processInfo.environment["FIRESTORE_EMULATOR_HOST"] else {
            throw FlintError.invalidArgument("No emulator host given and FIRESTORE_EMULATOR_HOST is not set.")
        }
        self.project = project
        engine = Engine()
        let backend = RemoteBackend(base: "http://" + host, project: project)
        remote = backend
        try await backend.loadRules(rules)
    }

    private var database: Database { engine.database(project: project) }

    private func context(_ auth: AuthContext) -> RulesTestContext {
        RulesTestContext(backend: remote.map { .remote($0) } ?? .embedded(database), auth: auth)
    }

    /// A caller signed in as `uid`; `claims` become `request.auth.token` (custom claims,
    /// `email_verified`, `firebase`…), beside `sub` and `user_id`.
    public func authenticatedContext(_ uid: String, claims: MapValue = [:]) -> RulesTestContext {
        var token = claims
        token["sub"] = .string(uid)
        token["user_id"] = .string(uid)
        return context(.user(uid: uid, token: token))
    }

    public func unauthenticatedContext() -> RulesTestContext { context(.unauthenticated) }

    /// Runs `body` as the owner, whom rules never check: for seeding data.
    public func withSecurityRulesDisabled<T>(_ body: (RulesTestContext) async throws -> T) async rethrows -> T {
        try await body(context(.owner))
    }

    /// Deletes every document.
    public func clearFirestore() async throws {
        if let remote { try await remote.clear() } else { await database.clear() }
    }

    /// The coverage JSON, embedded or from the emulator's `:ruleCoverage`.
    public func coverageReport() async throws -> String {
        if let remote { return try await remote.coverage() }
        return coverageJSON
    }

    /// What the rules evaluated to so far, as the emulator's coverage JSON and HTML.
    public var coverageJSON: String {
        guard let loaded = engine.rules.rules(for: project) else { return "{}" }
        return loaded.coverage.reportJSON(loaded.ruleset)
    }

    public var coverageHTML: String {
        guard let loaded = engine.rules.rules(for: project) else { return "" }
        return loaded.coverage.reportHTML(loaded.ruleset)
    }

    /// Evaluated expressions of all, for a coverage gate.
    public var coverageSummary: (evaluated: Int, total: Int) {
        guard let loaded = engine.rules.rules(for: project) else { return (0, 0) }
        return loaded.coverage.summary(loaded.ruleset)
    }

    public func resetCoverage() { engine.rules.rules(for: project)?.coverage.reset() }
}

/// Requests made as one caller; paths are below the database's documents (`users/alice`).
public struct RulesTestContext: Sendable {
    enum Backend: Sendable {
        case embedded(Database)
        case remote(RemoteBackend)
    }

    let backend: Backend
    let auth: AuthContext

    @discardableResult
    public func get(_ path: String) async throws -> Document? {
        let key = try DocumentKey(parsing: path)
        switch backend {
        case .embedded(let db): return try await db.get(key, auth: auth)
        case .remote(let r): return try await r.get(key, auth)
        }
    }

    private func commit(_ writes: [Write]) async throws {
        switch backend {
        case .embedded(let db): _ = try await db.commit(writes, auth: auth)
        case .remote(let r): try await r.commit(writes, auth)
        }
    }

    /// Writes the document whole, or merges the given fields when `merge` is set.
    public func set(_ path: String, _ data: MapValue, merge: Bool = false, serverTimestamps: [String] = []) async throws {
        var write = Write(.update(try DocumentKey(parsing: path), data), transforms: try Self.timestamps(serverTimestamps))
        if merge { write.updateMask = try data.entries.map { e throws(FlintError) in try FieldPath([e.key]) } }
        try await commit([write])
    }

    /// Creates the document; fails if it exists.
    public func create(_ path: String, _ data: MapValue, serverTimestamps: [String] = []) async throws {
        let write = Write(.update(try DocumentKey(parsing: path), data), transforms: try Self.timestamps(serverTimestamps), precondition: .exists(false))
        try await commit([write])
    }

    /// Updates fields (dotted paths name nested fields) of an existing document.
    public func update(_ path: String, _ fields: [String: Value]) async throws {
        var data = MapValue()
        var mask: [FieldPath] = []
        for (name, value) in fields {
            let field = try FieldPath(parsing: name)
            data.setValue(value, at: field)
            mask.append(field)
        }
        try await commit([Write(.update(try DocumentKey(parsing: path), data), updateMask: mask, precondition: .exists(true))])
    }

    public func delete(_ path: String) async throws {
        try await commit([.delete(try DocumentKey(parsing: path))])
    }

    /// A query on a collection (or a collection group); clauses as `(field, "==", value)`.
    public func query(
        _ collectionPath: String, where clauses: [(String, String, Value)] = [], orderBy: [(String, descending: Bool)] = [],
        limit: Int? = nil, group: Bool = false
    ) async throws -> [Document] {
        let segments = collectionPath.split(onASCII: "/", omittingEmptySubsequences: true).map(String.init)
        var filters: [Filter] = []
        for (field, op, value) in clauses {
            guard let o = RulesTestRunner.operators[op] else { throw FlintError.invalidArgument("Unknown operator \(op).") }
            filters.append(.field(FieldFilter(try FieldPath(parsing: field), o, value)))
        }
        let filter: Filter? = filters.isEmpty ? nil : filters.count == 1 ? filters[0] : .composite(CompositeFilter(.and, filters))
        let query = Query(
            parent: ResourcePath(Array(segments.dropLast())), collectionID: segments.last ?? "", allDescendants: group, filter: filter,
            orderBy: try orderBy.map { o throws(FlintError) in Ordering(try FieldPath(parsing: o.0), descending: o.descending) }, limit: limit)
        switch backend {
        case .embedded(let db): return try await db.runQuery(query, auth: auth).documents
        case .remote(let r): return try await r.query(query, auth)
        }
    }

    /// Several writes as one commit: allowed only if every write is.
    public func batch(_ writes: [Write]) async throws {
        try await commit(writes)
    }

    private static func timestamps(_ fields: [String]) throws -> [FieldTransform] {
        try fields.map { f throws(FlintError) in FieldTransform(try FieldPath(parsing: f), .serverTimestamp) }
    }
}

/// Why an assertion about rules failed.
public struct RulesAssertionFailure: Error, CustomStringConvertible {
    public var description: String
}

/// Passes when `body` succeeds, as `assertSucceeds` does; otherwise throws what it threw.
@discardableResult
public func assertSucceeds<T>(_ body: () async throws -> T) async throws -> T {
    try await body()
}

/// Passes when `body` is refused by the rules (PERMISSION_DENIED), as `assertFails` does, and
/// returns the denial; throws when it succeeded or failed for another reason.
@discardableResult
public func assertFails(_ body: () async throws -> Void) async throws -> FlintError {
    do {
        try await body()
    } catch let error as FlintError where error.code == .permissionDenied {
        return error
    } catch {
        throw RulesAssertionFailure(description: "Expected PERMISSION_DENIED, got \(error)")
    }
    throw RulesAssertionFailure(description: "Expected PERMISSION_DENIED, but the request was allowed")
}
