import FlintModel
import FlintQuery

/// Settings shared by every database of one Flint process.
public struct DatabaseConfiguration: Sendable {
    /// How long old versions stay readable with `read_time` (Firestore: one hour).
    public var versionRetentionMicros: Int64 = 3_600_000_000
    /// How concurrent transactions are kept serializable (Standard edition: pessimistic).
    public var concurrency: ConcurrencyMode = .pessimistic
    /// A transaction expires this long after it began (Firestore: 270 s)...
    public var transactionLifetimeMicros: Int64 = 270_000_000
    /// ...or this long after its last use (Firestore: 60 s).
    public var transactionIdleMicros: Int64 = 60_000_000
    /// Pessimistic mode: how long a transaction's point read waits for an older transaction
    /// holding the document before reading anyway. Waiting lets contended read-modify-write
    /// transactions queue instead of wounding each other; 0 turns it off.
    public var lockWait: Duration = .seconds(1)
    /// Reject queries that production would reject for lack of an index (off by default).
    public var requireIndexes = false
    /// Composite indexes and collection-group field overrides from `firestore.indexes.json`.
    public var declaredIndexes: [IndexSpec] = []
    public var fieldOverrides: [FieldOverride] = []
    /// The collection-scope single-field indexes field overrides leave their fields.
    public var singleFieldSettings: [SingleFieldSetting] = []
    /// Receives each value rules print with `debug()` (the server logs them).
    public var rulesDebugLog: (@Sendable (String) -> Void)?

    public init() {}
}
