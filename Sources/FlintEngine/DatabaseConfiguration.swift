import FlintModel
import FlintQuery

/// Settings shared by every database of one Flint process.
public struct DatabaseConfiguration: Sendable {
    /// How long old versions stay readable with `read_time` (Firestore: one hour).
    public var versionRetentionMicros: Int64 = 3_600_000_000
    /// Reject queries that production would reject for lack of an index (off by default).
    public var requireIndexes = false
    /// Composite indexes and collection-group field overrides from `firestore.indexes.json`.
    public var declaredIndexes: [IndexSpec] = []
    public var fieldOverrides: [FieldOverride] = []

    public init() {}
}
