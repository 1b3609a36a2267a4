import FlintModel
import FlintRules
import Synchronization

/// The security rules in force, per database. A project's rules, loaded without naming a
/// database, are those of its `(default)` database, and `--rules` stands in for every project's
/// `(default)` database without rules of its own; other databases have only the rules loaded
/// for them. A database without rules is open, as on the reference emulator.
public final class RulesRegistry: Sendable {
    public struct Loaded: Sendable {
        public let source: String
        public let ruleset: Ruleset
        /// What the rules evaluated to since they were loaded.
        public let coverage = Coverage()
    }

    /// Keys of `scoped`: "project\0database".
    private let state = Mutex<(scoped: [String: Loaded], fallback: Loaded?, byDatabase: [String: Loaded])>(([:], nil, [:]))

    public init() {}

    /// Compiles and installs rules for one database of a project (no database: its `(default)`
    /// one), for a database id in every project (no project), or for every project's `(default)`
    /// database (neither); invalid rules change nothing and come back as diagnostics.
    @discardableResult
    public func load(_ source: String, project: String?, database: String? = nil) -> [Diagnostic] {
        let (ruleset, diagnostics) = Ruleset.compile(source)
        guard let ruleset else { return diagnostics }
        let loaded = Loaded(source: source, ruleset: ruleset)
        state.withLock { s in
            switch (project, database) {
            case (let p?, let d): s.scoped[Self.key(p, d ?? DatabaseID.defaultDatabase)] = loaded
            case (nil, let d?): s.byDatabase[d] = loaded
            case (nil, nil): s.fallback = loaded
            }
        }
        return diagnostics
    }

    /// The rules for a database: its own, else those for its database id in every project, else,
    /// for a `(default)` database, `--rules`; nil means open.
    public func rules(for project: String, database: String = DatabaseID.defaultDatabase) -> Loaded? {
        state.withLock { s in
            s.scoped[Self.key(project, database)] ?? s.byDatabase[database]
                ?? (database == DatabaseID.defaultDatabase ? s.fallback : nil)
        }
    }

    private static func key(_ project: String, _ database: String) -> String { project + "\u{0}" + database }
}
