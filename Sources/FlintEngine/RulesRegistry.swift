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

    private let state = Mutex<(projects: [String: Loaded], fallback: Loaded?)>(([:], nil))

    public init() {}

    /// Compiles and installs rules for a project (nil: every project without its own);
    /// invalid rules change nothing and come back as diagnostics.
    @discardableResult
    public func load(_ source: String, project: String?) -> [Diagnostic] {
        let (ruleset, diagnostics) = Ruleset.compile(source)
        guard let ruleset else { return diagnostics }
        let loaded = Loaded(source: source, ruleset: ruleset)
        state.withLock { s in
            if let project { s.projects[project] = loaded } else { s.fallback = loaded }
        }
        return diagnostics
    }

    public func remove(project: String) {
        state.withLock { _ = $0.projects.removeValue(forKey: project) }
    }

    public func rules(for project: String) -> Loaded? {
        state.withLock { $0.projects[project] ?? $0.fallback }
    }
}
