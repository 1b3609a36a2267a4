import FlintModel
import Synchronization

/// The patterns `matches()`, `replace()` and `split()` have compiled, so a rule evaluated at
/// every request compiles its pattern once. Failures are kept too, with their message.
///
/// It is bounded by size, not by count: one pattern may compile to millions of instructions
/// (`(a{1000}){1000}`), so a pattern costing more than an eighth of the budget is compiled at
/// each use and never kept, and the cache starts over when full. Patterns built from the request
/// (`request.auth.uid + '__.*'`) make one entry per caller; starting over keeps them bounded.
final class RegexCache: Sendable {
    typealias Compiled = Result<RE2, RE2.SyntaxError>

    /// The one the rules' string methods use: 250,000 instructions and pattern bytes, a few MiB
    /// when full (an instruction takes 24 bytes).
    static let shared = RegexCache(budget: 250_000)

    private struct Entries {
        /// By the pattern's bytes: Swift's `==` holds canonically equivalent strings equal, and
        /// `ι` (U+1FBE) is not the pattern `ι` (U+03B9).
        var compiled: [UTF8Key: Compiled] = [:]
        var cost = 0
    }

    let budget: Int
    private let entries = Mutex(Entries())

    init(budget: Int) {
        self.budget = budget
    }

    func regex(_ pattern: String) -> Compiled {
        let key = UTF8Key(pattern)
        if let kept = entries.withLock({ $0.compiled[key] }) { return kept }
        let compiled: Compiled
        do throws(RE2.SyntaxError) {
            compiled = .success(try RE2(pattern))
        } catch {
            compiled = .failure(error)
        }
        let cost = Self.cost(of: pattern, compiled)
        guard cost <= budget / 8 else { return compiled }
        entries.withLock { entries in
            if entries.cost + cost > budget { entries = Entries() }
            if entries.compiled.updateValue(compiled, forKey: key) == nil { entries.cost += cost }
        }
        return compiled
    }

    /// The patterns kept now and what they cost together.
    var occupancy: (patterns: Set<String>, cost: Int) {
        entries.withLock { (Set($0.compiled.keys.map(\.string)), $0.cost) }
    }

    static func cost(of pattern: String, _ compiled: Compiled) -> Int {
        pattern.utf8.count + ((try? compiled.get())?.instructionCount ?? 0)
    }
}
