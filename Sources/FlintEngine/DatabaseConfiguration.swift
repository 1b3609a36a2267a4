import FlintModel

/// Settings shared by every database of one Flint process.
public struct DatabaseConfiguration: Sendable {
    /// How long old versions stay readable with `read_time` (Firestore: one hour).
    public var versionRetentionMicros: Int64 = 3_600_000_000
    /// Page size for list calls that give none or a larger one.
    public var maxPageSize = 300

    public init() {}
}
