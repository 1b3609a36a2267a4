import FlintEngine
import FlintModel
import Foundation

/// Flint has no local cache and no latency compensation: every snapshot is from the server
/// and has no pending writes.
public struct SnapshotMetadata: Sendable, Equatable {
    public let hasPendingWrites: Bool
    public let isFromCache: Bool
}

/// A document read at one time; `exists` is false when there was none.
public class DocumentSnapshot: @unchecked Sendable {
    public let reference: DocumentReference
    let document: Document?

    init(_ reference: DocumentReference, _ document: Document?) {
        self.reference = reference
        self.document = document
    }

    public var exists: Bool { document != nil }
    public var documentID: String { reference.documentID }
    public var metadata: SnapshotMetadata { SnapshotMetadata(hasPendingWrites: false, isFromCache: false) }
    var fields: MapValue? { document?.fields }

    /// The fields, or nil when the document does not exist.
    public func data() -> [String: Any]? {
        document.map { ValueBridge.dictionary($0.fields, reference.firestore) }
    }

    /// Server timestamps are never pending here, so every behaviour gives the stored value.
    public func data(with serverTimestampBehavior: ServerTimestampBehavior) -> [String: Any]? { data() }

    /// One field by dotted name or `FieldPath`; nil when absent.
    public func get(_ field: Any) -> Any? {
        guard let fields = document?.fields, let path = try? WriteBuilder.fieldPath(field), let v = fields.value(at: path) else { return nil }
        return ValueBridge.any(v, reference.firestore)
    }

    public subscript(key: Any) -> Any? { self.get(key) }

    /// Decodes the document; `@DocumentID` properties get its reference or id. Throws
    /// `DecodingError.valueNotFound` when the document does not exist, as the SDK does.
    public func data<T: Decodable>(as type: T.Type, with serverTimestampBehavior: ServerTimestampBehavior = .none) throws -> T {
        guard let fields = document?.fields else {
            throw DecodingError.valueNotFound(
                T.self, DecodingError.Context(codingPath: [], debugDescription: "Document '\(reference.path)' does not exist."))
        }
        return try Firestore.Decoder().decode(type, from: fields, in: reference)
    }

    /// When the document was created and last changed.
    public var createTime: Timestamp? { document.map { Timestamp(model: $0.createTime) } }
    public var updateTime: Timestamp? { document.map { Timestamp(model: $0.updateTime) } }
}

public enum ServerTimestampBehavior: Sendable { case none, estimate, previous }

/// A document of a query's results; it always exists.
public final class QueryDocumentSnapshot: DocumentSnapshot, @unchecked Sendable {
    init(_ reference: DocumentReference, _ document: Document) {
        super.init(reference, document)
    }

    public override func data() -> [String: Any] {
        ValueBridge.dictionary(document!.fields, reference.firestore)
    }
}

public enum DocumentChangeType: Sendable {
    case added, modified, removed
}

/// One document's change between two snapshots of a query; indexes as the SDK gives them
/// (`NSNotFound` when there is no old or new position).
public struct DocumentChange: @unchecked Sendable {
    public let type: DocumentChangeType
    public let document: QueryDocumentSnapshot
    public let oldIndex: UInt
    public let newIndex: UInt
}

/// A query's results at one time, with what changed since the previous snapshot.
public final class QuerySnapshot: @unchecked Sendable {
    public let query: Query
    public let documents: [QueryDocumentSnapshot]
    public let documentChanges: [DocumentChange]
    public var metadata: SnapshotMetadata { SnapshotMetadata(hasPendingWrites: false, isFromCache: false) }
    public var count: Int { documents.count }
    public var isEmpty: Bool { documents.isEmpty }

    init(query: Query, documents: [QueryDocumentSnapshot], changes: [DocumentChange]) {
        self.query = query
        self.documents = documents
        documentChanges = changes
    }

    /// A listener's snapshot.
    convenience init(_ query: Query, _ view: ViewSnapshot) {
        let db = query.firestore
        let docs = view.documents.map { QueryDocumentSnapshot(DocumentReference($0.key, db), $0) }
        let changes = view.changes.map { c -> DocumentChange in
            let type: DocumentChangeType = c.kind == .added ? .added : c.kind == .modified ? .modified : .removed
            return DocumentChange(
                type: type, document: QueryDocumentSnapshot(DocumentReference(c.document.key, db), c.document),
                oldIndex: c.oldIndex < 0 ? UInt(NSNotFound) : UInt(c.oldIndex), newIndex: c.newIndex < 0 ? UInt(NSNotFound) : UInt(c.newIndex))
        }
        self.init(query: query, documents: docs, changes: changes)
    }

    public func documentChanges(includeMetadataChanges: Bool) -> [DocumentChange] { documentChanges }
}

/// Stops a listener.
public protocol ListenerRegistration: Sendable {
    func remove()
}

/// Runs listeners: a task per listener calling back with each snapshot in order.
enum Listener {
    final class Registration: ListenerRegistration {
        let task: Task<Void, Never>
        init(_ task: Task<Void, Never>) { self.task = task }
        func remove() { task.cancel() }
    }

    static func start<S: Sendable>(
        _ stream: AsyncThrowingStream<S, any Error>, _ listener: @escaping @Sendable (S?, (any Error)?) -> Void
    ) -> any ListenerRegistration {
        Registration(
            Task {
                do {
                    for try await snapshot in stream {
                        if Task.isCancelled { return }
                        listener(snapshot, nil)
                    }
                } catch {
                    if !Task.isCancelled { listener(nil, FirestoreErrorCode.from(error) ?? error) }
                }
            })
    }

    static func map<T: Sendable>(
        _ stream: AsyncThrowingStream<ViewSnapshot, any Error>, _ transform: @escaping @Sendable (ViewSnapshot) -> T
    ) -> AsyncThrowingStream<T, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await view in stream { continuation.yield(transform(view)) }
                    continuation.finish()
                } catch let e as FlintError {
                    continuation.finish(throwing: FirestoreErrorCode(flint: e))
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
