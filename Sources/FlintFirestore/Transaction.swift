import FlintEngine
import FlintModel
import Foundation
import Synchronization

/// A transaction's reads and buffered writes. Reads come first; writes are sent together
/// when the update block returns.
public final class Transaction: @unchecked Sendable {
    let firestore: Firestore
    let id: TransactionID
    private let gathered = GatheredWrites()

    init(_ firestore: Firestore, _ id: TransactionID) {
        self.firestore = firestore
        self.id = id
    }

    /// Reads a document inside the transaction. Blocks its thread, as the SDK's does: the
    /// synchronous update block runs on a thread of its own.
    public func getDocument(_ document: DocumentReference) throws -> DocumentSnapshot {
        try Blocking.wait { try await self.getDocument(document) }
    }

    /// Reads a document inside the transaction (for async update blocks).
    public func getDocument(_ document: DocumentReference) async throws -> DocumentSnapshot {
        if gathered.hasWrites {
            throw invalidArgument("Firestore transactions require all reads to be executed before all writes.")
        }
        let key = try document.key
        let db = firestore
        let id = self.id
        let found = try await firestoreCall { try await db.backend.get(key, transaction: id, auth: db.auth) }
        return DocumentSnapshot(document, found)
    }

    private func add(_ build: () throws -> Write) -> Transaction {
        gathered.add(build)
        return self
    }

    @discardableResult
    public func setData(_ data: [String: Any], forDocument document: DocumentReference) -> Transaction {
        add { try WriteBuilder.set(document, data, merge: .none) }
    }

    @discardableResult
    public func setData(_ data: [String: Any], forDocument document: DocumentReference, merge: Bool) -> Transaction {
        add { try WriteBuilder.set(document, data, merge: merge ? .all : .none) }
    }

    @discardableResult
    public func setData<T: Encodable>(from value: T, forDocument document: DocumentReference, merge: Bool = false) throws -> Transaction {
        setData(try Firestore.Encoder().encode(value), forDocument: document, merge: merge)
    }

    @discardableResult
    public func updateData(_ fields: [AnyHashable: Any], forDocument document: DocumentReference) -> Transaction {
        add { try WriteBuilder.update(document, fields) }
    }

    @discardableResult
    public func deleteDocument(_ document: DocumentReference) -> Transaction {
        add { Write.delete(try document.key) }
    }

    func commit() async throws {
        let all = try gathered.all()
        let db = firestore
        let id = self.id
        db.pendingWrites.begin()
        defer { db.pendingWrites.end() }
        _ = try await firestoreCall { try await db.backend.commit(all, transaction: id, auth: db.auth) }
    }
}

extension Firestore {
    /// How many times an update block runs before contention is reported, as the SDKs.
    public static let maxTransactionAttempts = 5

    /// Runs `updateBlock` in a transaction and commits its writes; on contention (ABORTED)
    /// the block runs again, up to five times. An error set through `errorPointer` (or thrown)
    /// rolls back and is thrown from here. The block runs on a thread of its own, so its
    /// synchronous `getDocument` calls may block, as on Apple platforms.
    @discardableResult
    public func runTransaction(_ updateBlock: @escaping @Sendable (Transaction, NSErrorPointer) throws -> Any?) async throws -> Any? {
        let boxed = try await runTransaction(async: { transaction in
            let result = try await Blocking.onThread {
                var error: NSError?
                let value = try updateBlock(transaction, &error)
                if let error { throw error }
                return UncheckedBox(value)
            }
            return result
        })
        return boxed.value
    }

    /// The completion form.
    public func runTransaction(
        _ updateBlock: @escaping @Sendable (Transaction, NSErrorPointer) throws -> Any?,
        completion: @escaping @Sendable (Any?, (any Error)?) -> Void
    ) {
        Task {
            do {
                let value = try await runTransaction(updateBlock)
                completion(value, nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// Runs an async update block in a transaction, retried on contention.
    public func runTransaction<T: Sendable>(async updateBlock: @escaping @Sendable (Transaction) async throws -> T) async throws -> T {
        let backend = self.backend
        let auth = self.auth
        var previous: TransactionID?
        var attempt = 0
        while true {
            attempt += 1
            let id = try await firestoreCall { try await backend.beginTransaction(retrying: previous, auth: auth) }
            previous = id
            let transaction = Transaction(self, id)
            let value: T
            do {
                value = try await updateBlock(transaction)
            } catch {
                try? await backend.rollback(id, auth: auth)
                if let e = FirestoreErrorCode.from(error), e.code == .aborted, attempt < Self.maxTransactionAttempts { continue }
                throw error
            }
            do {
                try await transaction.commit()
                return value
            } catch let e as FirestoreErrorCode where e.code == .aborted && attempt < Self.maxTransactionAttempts {
                continue
            }
        }
    }
}

/// A non-Sendable value carried across a thread hop whose two ends never use it at once.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// Bridges between the SDK's blocking transaction API and Swift concurrency.
enum Blocking {
    /// Runs `body` on a new thread (never on the cooperative pool, which it may block).
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try body() })
            }
            thread.start()
        }
    }

    /// Waits on this (non-pool) thread for async work.
    static func wait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, any Error>?>(nil)
        Task {
            let r: Result<T, any Error>
            do { r = .success(try await work()) } catch { r = .failure(error) }
            result.withLock { $0 = r }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }
}
