import FlintRules
import Synchronization

/// The security rules in force: per project, with a default for projects that have none of
/// their own (what `flint start --rules` loads). No rules at all leaves every project open, as
/// the reference emulator does.
public final class RulesRegistry: Sendable {
    public struct Loaded: Sendable {
        public let source: String
        public let ruleset: Ruleset
        /// What the rules evaluated to since they were loaded.
        public let coverage = Coverage()
    }

    /// Keys: "project" for a project's rules, "project\0database" for one database's.
    private let state = Mutex<(scoped: [String: Loaded], fallback: Loaded?, byDatabase: [String: Loaded])>(([:], nil, [:]))

    public init() {}

    /// Compiles and installs rules for a project (nil: every project without its own), or for
    /// one database of it (or, with no project, that database id in every project); invalid
    /// rules change nothing and come back as diagnostics.
    @discardableResult
    public func load(_ source: String, project: String?, database: String? = nil) -> [Diagnostic] {
        let (ruleset, diagnostics) = Ruleset.compile(source)
        guard let ruleset else { return diagnostics }
        let loaded = Loaded(source: source, ruleset: ruleset)
        state.withLock { s in
            switch (project, database) {
            case (let p?, let d?): s.scoped[p + "\u{0}" + d] = loaded
            case (let p?, nil): s.scoped[p] = loaded
            case (nil, let d?): s.byDatabase[d] = loaded
            case (nil, nil): s.fallback = loaded
            }
        }
        return diagnostics
    }

    public func remove(project: String) {
        state.withLock { _ = $0.scoped.removeValue(forKey: project) }
    }

    /// The rules for a database: its own, else its project's, else those for its database id,
    /// else the default.
    public func rules(for project: String, database: String = "(default)") -> Loaded? {
        state.withLock { s in s.scoped[project + "\u{0}" + database] ?? s.scoped[project] ?? s.byDatabase[database] ?? s.fallback }
    }
}
