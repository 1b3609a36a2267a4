import FlintEngine
import FlintModel
import FlintQuery

/// What the client needs from a Firestore, in Flint's model: the engine in process, or an
/// emulator over gRPC. Errors are `FlintError`s; the API turns them into `FirestoreErrorCode`.
protocol FirestoreBackend: Sendable {
    func get(_ key: DocumentKey, transaction: TransactionID?, auth: AuthContext) async throws -> Document?
    func runQuery(_ query: FlintQuery.Query, transaction: TransactionID?, auth: AuthContext) async throws -> [Document]
    func aggregate(_ query: FlintQuery.Query, _ aggregations: [Aggregation], auth: AuthContext) async throws -> [String: Value]
    func commit(_ writes: [Write], transaction: TransactionID?, auth: AuthContext) async throws -> CommitResult
    func beginTransaction(retrying: TransactionID?, auth: AuthContext) async throws -> TransactionID
    func rollback(_ transaction: TransactionID, auth: AuthContext) async throws
    /// Snapshots of a target as they change; the first one holds the current state. Ends
    /// with the error that removed the target (rules, an invalid query). `order`, when given,
    /// orders the documents instead of the target's query.
    func snapshots(_ scope: WatchScope, order: FlintQuery.Query?, auth: AuthContext) -> AsyncThrowingStream<ViewSnapshot, any Error>
}

/// The engine in this process: no network, rules applied for the caller's auth.
struct EmbeddedBackend: FirestoreBackend {
    let database: Database

    func get(_ key: DocumentKey, transaction: TransactionID?, auth: AuthContext) async throws -> Document? {
        try await database.get(key, transaction: transaction, auth: auth)
    }

    func runQuery(_ query: FlintQuery.Query, transaction: TransactionID?, auth: AuthContext) async throws -> [Document] {
        try await database.runQuery(query, transaction: transaction, auth: auth).documents
    }

    func aggregate(_ query: FlintQuery.Query, _ aggregations: [Aggregation], auth: AuthContext) async throws -> [String: Value] {
        let result = try await database.runAggregation(query, aggregations: aggregations, auth: auth)
        return Dictionary(result.values, uniquingKeysWith: { a, _ in a })
    }

    func commit(_ writes: [Write], transaction: TransactionID?, auth: AuthContext) async throws -> CommitResult {
        try await database.commit(writes, transaction: transaction, auth: auth)
    }

    func beginTransaction(retrying: TransactionID?, auth: AuthContext) async throws -> TransactionID {
        try await database.beginTransaction(.readWrite(retrying: retrying))
    }

    func rollback(_ transaction: TransactionID, auth: AuthContext) async throws {
        try await database.rollback(transaction)
    }

    func snapshots(_ scope: WatchScope, order: FlintQuery.Query?, auth: AuthContext) -> AsyncThrowingStream<ViewSnapshot, any Error> {
        let sequence = database.snapshots(of: scope, auth: auth, presentedIn: order)
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await snapshot in sequence { continuation.yield(snapshot) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
