import FlintEngine
import FlintModel
import FlintQuery
import FlintRules
import Foundation
import Synchronization
import Yams

/// The outcome of one case.
public struct CaseResult: Sendable {
    public var file: String
    public var name: String
    public var passed: Bool
    /// What happened, in a line: `allowed` or `denied: <message>`, or the error.
    public var outcome: String
    /// Why it failed: the rule lines that decided and the values that mattered.
    public var explanation: [String]
    public var seconds: Double
}

/// The outcome of one spec file.
public struct SpecResult: Sendable {
    public var file: String
    /// Problems loading the spec or compiling its rules; when any, no case ran.
    public var problems: [String]
    public var cases: [CaseResult]
    /// The rules and what they evaluated to, for coverage.
    public var rules: RulesRegistry.Loaded?
}

/// Runs rules specs in process: a fresh database per case (or per file), seeded as the owner,
/// every request checked by the rules exactly as the server checks it.
public enum RulesTestRunner {
    /// Runs every spec; specs naming the same rules file share one coverage.
    public static func run(_ urls: [URL]) async -> [SpecResult] {
        var registries: [String: RulesRegistry] = [:]
        var out: [SpecResult] = []
        for url in urls { out.append(await run(url, registries: &registries)) }
        return out
    }

    public static func run(_ url: URL) async -> SpecResult {
        var registries: [String: RulesRegistry] = [:]
        return await run(url, registries: &registries)
    }

    static func run(_ url: URL, registries: inout [String: RulesRegistry]) async -> SpecResult {
        let file = url.path
        var spec: RulesSpec
        do {
            spec = try RulesSpec.load(url)
        } catch {
            return SpecResult(file: file, problems: ["\(file): cannot read the spec: \(describe(error))"], cases: [], rules: nil)
        }
        let rulesURL = url.deletingLastPathComponent().appendingPathComponent(spec.rules)
        guard let source = try? String(contentsOf: rulesURL, encoding: .utf8) else {
            return SpecResult(file: file, problems: ["\(file): cannot read the rules file \(rulesURL.path)"], cases: [], rules: nil)
        }
        if let dataFile = spec.dataFile {
            let dataURL = url.deletingLastPathComponent().appendingPathComponent(dataFile)
            do {
                let bytes = try Data(contentsOf: dataURL)
                let extra: [String: SpecValue] =
                    ["yaml", "yml"].contains(dataURL.pathExtension.lowercased())
                    ? try YAMLDecoder().decode([String: SpecValue].self, from: bytes) : try RulesSpec.decodeJSON([String: SpecValue].self, from: bytes)
                spec.data = (spec.data ?? [:]).merging(extra) { inline, _ in inline }
            } catch {
                return SpecResult(file: file, problems: ["\(file): cannot read the data file \(dataURL.path): \(describe(error))"], cases: [], rules: nil)
            }
        }
        let project = spec.project ?? "rules-test"
        let key = rulesURL.standardizedFileURL.path + "\u{0}" + project
        let registry: RulesRegistry
        var problems: [Diagnostic] = []
        if let existing = registries[key] {
            registry = existing
        } else {
            registry = RulesRegistry()
            problems = registry.load(source, project: project).filter { $0.severity == .error }
            if problems.isEmpty { registries[key] = registry }
        }
        guard problems.isEmpty, let loaded = registry.rules(for: project) else {
            return SpecResult(file: file, problems: problems.map { "\(rulesURL.path):\($0.position.line):\($0.position.column): error: \($0.message)" }, cases: [], rules: nil)
        }
        var results: [CaseResult] = []
        let shared = spec.seed == .once ? try? await seeded(spec, registry, project, log: nil) : nil
        for test in spec.tests {
            if let problem = malformation(test) {
                results.append(CaseResult(file: file, name: test.name ?? "(unnamed)", passed: false, outcome: "malformed: \(problem)", explanation: [], seconds: 0))
                continue
            }
            let started = ContinuousClock.now
            let log = DebugLines()
            let db: Database
            if let shared {
                db = shared
            } else {
                do { db = try await seeded(spec, registry, project, log: log) } catch {
                    results.append(CaseResult(file: file, name: test.name ?? "(unnamed)", passed: false, outcome: "the seed data was refused: \(error)", explanation: [], seconds: 0))
                    continue
                }
            }
            let error = await perform(test, on: db)
            let elapsed = ContinuousClock.now - started
            let (passed, outcome) = verdict(test, error, log.all)
            let explanation = passed ? [] : await explain(test, spec, source, project, error)
            results.append(CaseResult(
                file: file, name: test.name ?? "(unnamed)", passed: passed, outcome: outcome, explanation: explanation,
                seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
        }
        return SpecResult(file: file, problems: [], cases: results, rules: loaded)
    }

    /// A loading error with where it happened: the YAML position, or the path to the field.
    static func describe(_ error: any Error) -> String {
        if let yaml = error as? YamlError { return "\(yaml)".replacingOccurrences(of: "\n", with: " ") }
        guard let decoding = error as? DecodingError else { return FlintError.fileReason(error) }
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(in: CharacterSet(charactersIn: "."))
        }
        switch decoding {
        case .keyNotFound(let key, let c): return "at \(path(c.codingPath + [key])): required field missing"
        case .typeMismatch(_, let c), .valueNotFound(_, let c): return "at \(path(c.codingPath)): \(c.debugDescription)"
        case .dataCorrupted(let c):
            let underlying = (c.underlyingError.map { "\($0)" } ?? "").replacingOccurrences(of: "\n", with: " ")
            return (c.codingPath.isEmpty ? "" : "at \(path(c.codingPath)): ") + c.debugDescription + (underlying.isEmpty ? "" : " (\(underlying))")
        @unknown default: return "\(error)"
        }
    }

    /// A database with the spec's seed written as the owner.
    static func seeded(_ spec: RulesSpec, _ registry: RulesRegistry, _ project: String, log: DebugLines?) async throws -> Database {
        var config = DatabaseConfiguration()
        if let log { config.rulesDebugLog = { log.append($0) } }
        let db = Database(id: DatabaseID(project: project), configuration: config, rules: registry)
        var writes: [Write] = []
        for (path, doc) in spec.data ?? [:] { writes.append(.set(try DocumentKey(parsing: path), doc.fields)) }
        if !writes.isEmpty { _ = try await db.commit(writes) }
        return db
    }

    static func verdict(_ test: RulesCase, _ error: FlintError?, _ debugLines: [String]) -> (Bool, String) {
        let denied = error?.code == .permissionDenied
        let outcome: String
        if let error {
            // The reference's denial starts with a line break when it has no summary: on one
            // line, that would read as noise.
            let message = error.message.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "\n", with: "\\n")
            outcome = denied ? "denied: " + message : "allowed by the rules, then refused: \(error.code.name): \(error.message)"
        } else {
            outcome = "allowed"
        }
        var passed = test.expect == "deny" ? denied : !denied
        if let denial = test.denial, error?.message != denial { passed = false }
        if let line = test.line, !(error?.message.contains("@ L\(line)") ?? false) { passed = false }
        if let debug = test.debug, !debugLines.contains(where: { $0.hasSuffix(": " + debug) }) { passed = false }
        return (passed, outcome)
    }

    static func auth(_ a: SpecAuth?) -> AuthContext {
        switch a {
        case nil: return .unauthenticated
        case .owner?: return .owner
        case .user(let uid, let claims)?:
            var token: MapValue = ["sub": .string(uid), "user_id": .string(uid)]
            for (k, v) in claims { token[k] = v.value }
            return .user(uid: uid, token: token)
        }
    }

    static func write(_ w: RulesCase) throws(FlintError) -> Write {
        guard let path = w.path else { throw .invalidArgument("a write needs a path") }
        let key = try DocumentKey(parsing: path)
        var fields = w.data?.fields ?? [:]
        var transforms: [FieldTransform] = []
        for f in w.serverTimestamps ?? [] { transforms.append(FieldTransform(try FieldPath(parsing: f), .serverTimestamp)) }
        for (f, by) in w.increments ?? [:] { transforms.append(FieldTransform(try FieldPath(parsing: f), .increment(by.value))) }
        for (f, items) in w.arrayUnion ?? [:] { transforms.append(FieldTransform(try FieldPath(parsing: f), .appendMissingElements(items.map(\.value)))) }
        for (f, items) in w.arrayRemove ?? [:] { transforms.append(FieldTransform(try FieldPath(parsing: f), .removeAllFromArray(items.map(\.value)))) }
        switch w.op {
        case "delete": return Write(.delete(key))
        case "create": return Write(.update(key, fields), transforms: transforms, precondition: .exists(false))
        case "set": return Write(.update(key, fields), transforms: transforms)
        case "update":
            var mask: [FieldPath] = []
            for e in fields.entries { mask.append(try FieldPath([e.key])) }
            // Dotted keys in an update name nested fields, as the SDKs' updateData does.
            var nested = MapValue()
            for e in fields.entries where e.key.contains(".") {
                nested.setValue(e.value, at: try FieldPath(parsing: e.key))
            }
            if !nested.entries.isEmpty {
                mask = try fields.entries.map { e throws(FlintError) in try FieldPath(parsing: e.key) }
                var merged = MapValue()
                for e in fields.entries { merged.setValue(e.value, at: try FieldPath(parsing: e.key)) }
                fields = merged
            }
            return Write(.update(key, fields), updateMask: mask, transforms: transforms, precondition: .exists(true))
        default: throw .invalidArgument("unknown write op \(w.op)")
        }
    }

    /// Runs one case; nil when it succeeded.
    static func perform(_ test: RulesCase, on db: Database) async -> FlintError? {
        let who = auth(test.auth)
        do throws(FlintError) {
            switch test.op {
            case "get":
                _ = try await db.get(try DocumentKey(parsing: test.path ?? ""), auth: who)
            case "list":
                _ = try await db.runQuery(try query(test), auth: who)
            case "create", "set", "update", "delete":
                _ = try await db.commit([try write(test)], auth: who)
            case "batch":
                var writes: [Write] = []
                for w in test.writes ?? [] { writes.append(try write(w)) }
                _ = try await db.commit(writes, auth: who)
            case "transaction":
                let tx = try await db.beginTransaction()
                var writes: [Write] = []
                for w in test.writes ?? [] {
                    if w.op == "get" {
                        _ = try await db.get(try DocumentKey(parsing: w.path ?? ""), transaction: tx, auth: who)
                    } else {
                        writes.append(try write(w))
                    }
                }
                _ = try await db.commit(writes, transaction: tx, auth: who)
            default:
                return .invalidArgument("unknown op \(test.op); expected get, list, create, set, update, delete, batch or transaction")
            }
            return nil
        } catch {
            return error
        }
    }

    static let operators: [String: FieldFilter.Operator] = [
        "==": .equal, "!=": .notEqual, "<": .lessThan, "<=": .lessThanOrEqual, ">": .greaterThan, ">=": .greaterThanOrEqual,
        "in": .in, "not-in": .notIn, "array-contains": .arrayContains, "array-contains-any": .arrayContainsAny,
    ]

    static func query(_ test: RulesCase) throws(FlintError) -> Query {
        let segments = (test.path ?? "").split(onASCII: "/", omittingEmptySubsequences: true).map(String.init)
        guard let collection = segments.last else { throw .invalidArgument("a list needs the collection's path") }
        var filters: [Filter] = []
        for clause in test.where ?? [] {
            guard clause.count == 3, case .string(let field) = clause[0], case .string(let op) = clause[1], let o = operators[op] else {
                throw .invalidArgument("a where clause is [field, operator, value] with an operator among \(operators.keys.sorted())")
            }
            filters.append(.field(FieldFilter(try FieldPath(parsing: field), o, clause[2].value)))
        }
        var orderBy: [Ordering] = []
        for o in test.orderBy ?? [] {
            guard let field = o.first else { continue }
            orderBy.append(Ordering(try FieldPath(parsing: field), descending: o.count > 1 && o[1].lowercased().hasPrefix("desc")))
        }
        let filter: Filter? = filters.isEmpty ? nil : filters.count == 1 ? filters[0] : .composite(CompositeFilter(.and, filters))
        return Query(
            parent: ResourcePath(Array(segments.dropLast())), collectionID: collection, allDescendants: test.group ?? false, filter: filter,
            orderBy: orderBy, limit: test.limit)
    }

    /// Runs a failed case again with coverage of its own, and shows each rule line its denial
    /// names with the values its expressions took.
    static func explain(_ test: RulesCase, _ spec: RulesSpec, _ source: String, _ project: String, _ error: FlintError?) async -> [String] {
        var lines: [String] = []
        if let error, !error.details.isEmpty { lines += error.details }
        let registry = RulesRegistry()
        registry.load(source, project: project)
        guard let loaded = registry.rules(for: project), let db = try? await seeded(spec, registry, project, log: nil) else { return lines }
        _ = await perform(test, on: db)
        for explained in loaded.coverage.explain(error?.message ?? "", in: loaded.ruleset) {
            lines.append("L\(explained.line)\(explained.function.map { " (in \($0))" } ?? ""): \(explained.text)")
            for (text, value) in explained.values { lines.append("    \(text) = \(value)") }
        }
        return lines
    }
}

/// What `debug()` printed during one case.
final class DebugLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
