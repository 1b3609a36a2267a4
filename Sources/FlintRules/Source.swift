/// A position in a rules source: 1-based line and column, 0-based offset in code points.
public struct SourcePosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var offset: Int

    public init(line: Int, column: Int, offset: Int) {
        self.line = line
        self.column = column
        self.offset = offset
    }

    public static func < (a: SourcePosition, b: SourcePosition) -> Bool { a.offset < b.offset }
    /// For problems of the whole ruleset, which the reference reports without a place (`L0:0`).
    public static let nowhere = SourcePosition(line: 0, column: 0, offset: -1)
    public var description: String { "\(line):\(column)" }
}

/// Where a node of the ruleset sits: from its first code point to its last, inclusive.
public struct SourceRange: Sendable, Hashable {
    public var start: SourcePosition
    public var end: SourcePosition

    public init(_ start: SourcePosition, _ end: SourcePosition) {
        self.start = start
        self.end = end
    }
}

/// A problem found while compiling a ruleset.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable { case error, warning }

    public var severity: Severity
    public var position: SourcePosition
    public var message: String
    /// The offset of the last code point the problem covers, when it covers more than a point.
    public var endOffset: Int?

    public var isLocated: Bool { position.line > 0 }

    public var description: String { "\(position.line):\(position.column): \(severity.rawValue): \(message)" }
}

/// Every problem of one compilation, kept in source order; compiling never stops at the first.
public struct Diagnostics: Sendable {
    public private(set) var all: [Diagnostic] = []

    public init() {}

    public var hasErrors: Bool { all.contains { $0.severity == .error } }

    mutating func error(_ message: String, at position: SourcePosition, through end: Int? = nil) {
        all.append(Diagnostic(severity: .error, position: position, message: message, endOffset: end))
    }

    mutating func warning(_ message: String, at position: SourcePosition, through end: Int? = nil) {
        all.append(Diagnostic(severity: .warning, position: position, message: message, endOffset: end))
    }

    /// Sorted by position, without repeats.
    public var sorted: [Diagnostic] {
        var seen = Set<Diagnostic>()
        return all.sorted { ($0.position.offset, $0.message) < ($1.position.offset, $1.message) }.filter { seen.insert($0).inserted }
    }
}
