import FlintModel
import FlintQuery

/// An opaque transaction id as clients hold it.
public struct TransactionID: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]
    /// Whether a server could have handed this id out. The reference's ids are protobuf
    /// messages: bytes that do not parse as one are "Invalid transaction.", others that name no
    /// open transaction are "invalid or closed". Flint's ids have that shape too, and the edge,
    /// which reads protobuf, says whether given bytes do.
    public let isWellFormed: Bool

    public init(bytes: [UInt8], isWellFormed: Bool = true) {
        self.bytes = bytes
        self.isWellFormed = isWellFormed
    }

    /// A protobuf message of one 14-byte field (tag 0x0A, length 14) of random bytes.
    static func random() -> TransactionID {
        var rng = SystemRandomNumberGenerator()
        return TransactionID(bytes: [0x0A, 14] + (0..<14).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    public var description: String { bytes.map { String($0, radix: 16) }.joined() }

    public static func == (a: TransactionID, b: TransactionID) -> Bool { a.bytes == b.bytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
}

/// How a transaction is begun.
public enum TransactionOptions: Sendable {
    /// Reads the latest data and may write. A retry keeps the age of the transaction it replaces,
    /// so under contention it eventually outranks every other and wins.
    case readWrite(retrying: TransactionID? = nil)
    /// Reads one consistent snapshot (now, or `readTime`) and never blocks writers.
    case readOnly(readTime: Timestamp? = nil)
}

/// How concurrent transactions are kept serializable.
public enum ConcurrencyMode: String, Sendable {
    /// Transactional reads take shared locks; a commit that conflicts uses wound-wait: an older
    /// transaction aborts younger lock holders, a younger one aborts itself. Nothing waits.
    case pessimistic
    /// No locks; a commit fails when any document it read has changed since.
    case optimistic
}

/// One open transaction.
struct TransactionState {
    let id: TransactionID
    let readOnly: Bool
    /// Priority under wound-wait: the begin time of the first attempt.
    let age: Timestamp
    let began: Timestamp
    var lastUsed: Timestamp
    /// The snapshot of a read-only transaction.
    let snapshot: Timestamp?
    /// Documents read and the update time each had (nil: missing), for locks and validation.
    var reads: [DocumentKey: Timestamp?] = [:]
    /// Queries run, with the documents each returned: a document that comes to match one would
    /// change its answer, which no document lock guards against.
    var queries: [QueryRead] = []
    /// Set when another commit wounded this transaction; its next call fails with this.
    var abortedBy: FlintError?
}

extension FlintError {
    static let invalidTransaction = FlintError.invalidArgument("Invalid transaction.")
    /// An id of Flint's shape that this database does not hold (ended, or another database's).
    static let closedTransaction = FlintError.invalidArgument("Transaction is invalid or closed.")
    /// The same, when rolling back.
    static let unknownRollback = FlintError.invalidArgument("Transaction is invalid or expired.")
    static let readOnlyRetry = FlintError.invalidArgument("Cannot retry a read-only transaction.")
    static let expiredTransaction = FlintError.invalidArgument("The referenced transaction has expired or is no longer valid.")
    static let contention = FlintError(.aborted, "Too much contention on these documents. Please try again.")
    static let readOnlyWrites = FlintError.invalidArgument("Cannot modify entities in a read-only transaction.")
}

/// A query a read-write transaction ran, and what it returned.
struct QueryRead {
    let query: NormalizedQuery
    let returned: [DocumentKey]
    /// The last document returned, with all its fields, when the limit cut the answer there: a
    /// document that comes after it in the query's order is beyond the limit, so changes nothing.
    let limitBoundary: (key: DocumentKey, fields: MapValue)?

    /// Whether a document, as just written, would change what the query returned.
    func isChanged(by key: DocumentKey, _ fields: MapValue) -> Bool {
        guard query.matches(key, fields) else { return false }
        guard let limitBoundary else { return true }
        return query.compare((key, fields), (limitBoundary.key, limitBoundary.fields)) < 0
    }
}
