import FlintEngine
import FlintModel
import FlintQuery
import Foundation

/// A document's location; reads, writes and listens to it.
public final class DocumentReference: Sendable, Hashable, CustomStringConvertible {
    public let firestore: Firestore
    let pathValue: ResourcePath
    /// A bad path is reported by the first operation, not by a crash as the SDK does.
    let problem: FirestoreErrorCode?

    init(path: String, _ firestore: Firestore) {
        self.firestore = firestore
        let segments = path.split(onASCII: "/", omittingEmptySubsequences: true).map(String.init)
        pathValue = ResourcePath(segments)
        if path.isEmpty || segments.isEmpty {
            problem = invalidArgument("Document path cannot be empty.")
        } else if segments.count % 2 != 0 {
            problem = invalidArgument(
                "Invalid document reference. Document references must have an even number of segments, but \(path) has \(segments.count)")
        } else {
            problem = Self.checkSegments(segments)
        }
    }

    init(_ key: DocumentKey, _ firestore: Firestore) {
        self.firestore = firestore
        pathValue = key.path
        problem = nil
    }

    static func checkSegments(_ segments: [String]) -> FirestoreErrorCode? {
        for s in segments where s == "." || s == ".." || (s.hasPrefix("__") && s.hasSuffix("__")) {
            return invalidArgument("Invalid path segment \"\(s)\".")
        }
        return nil
    }

    var key: DocumentKey {
        get throws(FirestoreErrorCode) {
            if let problem { throw problem }
            do { return try DocumentKey(pathValue) } catch { throw FirestoreErrorCode(flint: error) }
        }
    }

    public var documentID: String { pathValue.last ?? "" }
    public var path: String { pathValue.canonical }
    public var parent: CollectionReference { CollectionReference(resourcePath: pathValue.dropLast, firestore) }

    public func collection(_ collectionPath: String) -> CollectionReference {
        CollectionReference(path: path + "/" + collectionPath, firestore)
    }

    public var description: String { "DocumentReference(\(path))" }

    public static func == (a: DocumentReference, b: DocumentReference) -> Bool {
        a.pathValue == b.pathValue && a.firestore.databaseID == b.firestore.databaseID
    }

    public func hash(into h: inout Hasher) { h.combine(pathValue) }

    // MARK: - Reads

    public func getDocument(source: FirestoreSource = .default) async throws -> DocumentSnapshot {
        let key = try key
        let db = firestore
        let document = try await firestoreCall { try await db.backend.get(key, transaction: nil, auth: db.auth) }
        return DocumentSnapshot(self, document)
    }

    public func getDocument(source: FirestoreSource = .default, completion: @escaping @Sendable (DocumentSnapshot?, (any Error)?) -> Void) {
        Task {
            do { completion(try await getDocument(source: source), nil) } catch { completion(nil, error) }
        }
    }

    /// Decodes the document (nil when it does not exist).
    public func getDocument<T: Decodable>(as type: T.Type, source: FirestoreSource = .default) async throws -> T {
        try await getDocument(source: source).data(as: type)
    }

    // MARK: - Writes

    public func setData(_ documentData: [String: Any]) async throws {
        try await firestore.commit([try WriteBuilder.set(self, documentData, merge: .none)])
    }

    public func setData(_ documentData: [String: Any], merge: Bool) async throws {
        try await firestore.commit([try WriteBuilder.set(self, documentData, merge: merge ? .all : .none)])
    }

    public func setData(_ documentData: [String: Any], mergeFields: [Any]) async throws {
        try await firestore.commit([try WriteBuilder.set(self, documentData, merge: .fields(mergeFields))])
    }

    public func setData(_ documentData: [String: Any], merge: Bool = false, completion: (@Sendable ((any Error)?) -> Void)?) {
        firestore.background(completion, WriteBuilder.attempt { [try WriteBuilder.set(self, documentData, merge: merge ? .all : .none)] })
    }

    public func setData<T: Encodable>(from value: T, merge: Bool = false) async throws {
        try await setData(try Firestore.Encoder().encode(value), merge: merge)
    }

    public func setData<T: Encodable>(from value: T, merge: Bool = false, completion: (@Sendable ((any Error)?) -> Void)?) throws {
        let data = try Firestore.Encoder().encode(value)
        setData(data, merge: merge, completion: completion)
    }

    /// Updates fields named by dotted strings or `FieldPath`s; the document must exist.
    public func updateData(_ fields: [AnyHashable: Any]) async throws {
        try await firestore.commit([try WriteBuilder.update(self, fields)])
    }

    public func updateData(_ fields: [AnyHashable: Any], completion: (@Sendable ((any Error)?) -> Void)?) {
        firestore.background(completion, WriteBuilder.attempt { [try WriteBuilder.update(self, fields)] })
    }

    public func delete() async throws {
        try await firestore.commit([Write.delete(try key)])
    }

    public func delete(completion: (@Sendable ((any Error)?) -> Void)?) {
        firestore.background(completion, WriteBuilder.attempt { [Write.delete(try self.key)] })
    }

    // MARK: - Listening

    /// Calls `listener` with the document now and after every change, until removed.
    public func addSnapshotListener(_ listener: @escaping @Sendable (DocumentSnapshot?, (any Error)?) -> Void) -> any ListenerRegistration {
        addSnapshotListener(includeMetadataChanges: false, listener: listener)
    }

    public func addSnapshotListener(
        includeMetadataChanges: Bool, listener: @escaping @Sendable (DocumentSnapshot?, (any Error)?) -> Void
    ) -> any ListenerRegistration {
        Listener.start(snapshots(includeMetadataChanges: includeMetadataChanges), listener)
    }

    /// The document now and after every change, as an async sequence.
    public func snapshots(includeMetadataChanges: Bool = false) -> AsyncThrowingStream<DocumentSnapshot, any Error> {
        let reference = self
        let key: DocumentKey
        do { key = try self.key } catch { return AsyncThrowingStream { $0.finish(throwing: error) } }
        let stream = firestore.backend.snapshots(.documents([key]), order: nil, auth: firestore.auth)
        return Listener.map(stream) { view in DocumentSnapshot(reference, view.documents.first) }
    }
}

/// Where reads come from; Flint has no cache, so every source reads the server.
public enum FirestoreSource: Sendable {
    case `default`, server, cache
}

/// A collection: a query over its documents, and where new documents go.
public final class CollectionReference: Query, @unchecked Sendable {
    init(path: String, _ firestore: Firestore) {
        let segments = path.split(onASCII: "/", omittingEmptySubsequences: true).map(String.init)
        var problem: FirestoreErrorCode?
        if segments.isEmpty {
            problem = invalidArgument("Collection path cannot be empty.")
        } else if segments.count % 2 == 0 {
            problem = invalidArgument(
                "Invalid collection reference. Collection references must have an odd number of segments, but \(path) has \(segments.count)")
        } else {
            problem = DocumentReference.checkSegments(segments)
        }
        super.init(collection: ResourcePath(segments), firestore, problem: problem)
    }

    init(resourcePath: ResourcePath, _ firestore: Firestore) {
        super.init(collection: resourcePath, firestore, problem: nil)
    }

    public var collectionID: String { state.collectionID }
    public var path: String { state.parent.appending(state.collectionID).canonical }

    /// The document holding this collection; nil for a root collection.
    public var parent: DocumentReference? {
        state.parent.isEmpty ? nil : DocumentReference(path: state.parent.canonical, firestore)
    }

    public func document() -> DocumentReference { document(AutoID.make()) }

    public func document(_ documentPath: String) -> DocumentReference {
        DocumentReference(path: path + "/" + documentPath, firestore)
    }

    @discardableResult
    public func addDocument(data: [String: Any]) async throws -> DocumentReference {
        let ref = document()
        try await ref.setData(data)
        return ref
    }

    @discardableResult
    public func addDocument(data: [String: Any], completion: (@Sendable ((any Error)?) -> Void)?) -> DocumentReference {
        let ref = document()
        ref.setData(data, completion: completion)
        return ref
    }

    @discardableResult
    public func addDocument<T: Encodable>(from value: T) async throws -> DocumentReference {
        try await addDocument(data: try Firestore.Encoder().encode(value))
    }

    @discardableResult
    public func addDocument<T: Encodable>(from value: T, completion: (@Sendable ((any Error)?) -> Void)? = nil) throws -> DocumentReference {
        addDocument(data: try Firestore.Encoder().encode(value), completion: completion)
    }
}

/// Document ids as the SDKs make them: 20 characters from [A-Za-z0-9].
enum AutoID {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    static func make() -> String {
        var rng = SystemRandomNumberGenerator()
        return String((0..<20).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] })
    }
}
