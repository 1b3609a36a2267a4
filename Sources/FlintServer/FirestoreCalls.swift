import FlintEngine
import FlintModel
import FlintProto
import FlintQuery
import FlintWire
import Foundation
import SwiftProtobuf

/// `google.firestore.v1.Firestore`'s methods over Flint's engine, in the API's own request and
/// response messages. gRPC calls these directly and REST after mapping its paths and JSON onto
/// the same messages, so both dialects share one set of semantics, codes and messages.
struct FirestoreCalls: Sendable {
    let engine: Engine
    /// Who is calling; the engine's rules decide with it.
    var auth: AuthContext = .owner

    /// The same calls made on behalf of `auth`.
    func acting(as auth: AuthContext) -> FirestoreCalls {
        var copy = self
        copy.auth = auth
        return copy
    }

    /// Transaction bytes from a request, and whether they parse as a protobuf message, which
    /// is what the reference first asks of an id (see `TransactionID.isWellFormed`).
    static func transactionID(_ data: Data) -> TransactionID {
        TransactionID(bytes: Array(data), isWellFormed: !data.isEmpty && (try? Google_Protobuf_Empty(serializedBytes: data)) != nil)
    }

    // MARK: - Documents

    func getDocument(_ r: Google_Firestore_V1_GetDocumentRequest) async throws(FlintError) -> Google_Firestore_V1_Document {
        let (id, key) = try ResourceName.parseDocument(r.name, checkingIDLengths: false)
        var readTime: Timestamp?
        var transaction: TransactionID?
        switch r.consistencySelector {
        case .transaction(let t)?: transaction = Self.transactionID(t)
        case .readTime(let t)?: readTime = try Wire.versionTime(t)
        case nil: break
        }
        let mask = r.hasMask ? try Wire.mask(r.mask) : nil
        guard let doc = try await engine.database(id).get(key, mask: mask, readTime: readTime, transaction: transaction, auth: auth) else {
            throw FlintError(.notFound, "Document (\(r.name)) not found.")
        }
        return Wire.proto(doc, id)
    }

    func listDocuments(_ r: Google_Firestore_V1_ListDocumentsRequest) async throws(FlintError) -> Google_Firestore_V1_ListDocumentsResponse {
        let (id, parent) = try ResourceName.parseParent(r.parent)
        // Without a collection id, every collection directly below the parent is listed. The
        // id and the read time are checked among the listing's other checks, in the reference's
        // order (`Database.listDocuments`).
        var list = ListDocumentsRequest(parent: parent, collectionID: r.collectionID.isEmpty ? nil : r.collectionID)
        list.auth = auth
        list.pageSize = Int(r.pageSize)
        list.pageToken = r.pageToken.isEmpty ? nil : r.pageToken
        list.orderBy = r.orderBy
        list.mask = r.hasMask ? r.mask.fieldPaths : nil
        list.showMissing = r.showMissing
        switch r.consistencySelector {
        case .transaction(let t)?: list.transaction = Self.transactionID(t)
        case .readTime(let t)?: list.readTime = Result { () throws(FlintError) in try Wire.versionTime(t) }
        case nil: break
        }
        let page = try await engine.database(id).listDocuments(list)
        var response = Google_Firestore_V1_ListDocumentsResponse()
        response.documents = page.documents.map { listed in
            if let doc = listed.document { return Wire.proto(doc, id) }
            var missing = Google_Firestore_V1_Document()
            missing.name = Wire.name(listed.key, id)
            return missing
        }
        if let token = page.nextPageToken { response.nextPageToken = token }
        return response
    }

    func createDocument(_ r: Google_Firestore_V1_CreateDocumentRequest) async throws(FlintError) -> Google_Firestore_V1_Document {
        // Ids too long to store are told with what the write stores, after its fields and the
        // mask of the answer, as on the reference (`WriteApplier.validateStored`).
        // The collection id before the parent, as the reference reads them; an empty one is
        // named last of these.
        if !r.collectionID.isEmpty { try Validation.validateCollectionID(r.collectionID, checkingLength: false) }
        let (id, parent) = try ResourceName.parseParent(r.parent, checkingIDLengths: false)
        let documentID = r.documentID.isEmpty ? AutoID.make() : r.documentID
        try Validation.validateDocumentID(documentID, checkingLength: false)
        // The name comes from the parent and the ids; one in the document would contradict them.
        guard r.document.name.isEmpty else { throw .invalidArgument("document.name must not be set") }
        if r.collectionID.isEmpty { throw .invalidArgument("collectionId is the empty string.") }
        let key = try DocumentKey(parent.appending(r.collectionID).appending(documentID))
        try Validation.validateDocumentName(id, key)
        let fields = try Wire.writtenFields(r.document.fields, id)
        // The mask of the answer is read before anything is written, as the reference reads it:
        // a bad one refuses the request, not just its answer.
        let mask = r.hasMask ? try Wire.mask(r.mask) : nil
        let db = engine.database(id)
        _ = try await db.commit([Write(.update(key, fields), precondition: .exists(false))], auth: auth)
        return try await readBack(db, id, key, mask: mask)
    }

    /// Read in the reference's order: the write as a commit's (name, fields, update mask), the
    /// mask of the answer, then the precondition.
    func updateDocument(_ r: Google_Firestore_V1_UpdateDocumentRequest) async throws(FlintError) -> Google_Firestore_V1_Document {
        let (id, key) = try ResourceName.parseDocument(r.document.name, checkingIDLengths: false)
        var update = Google_Firestore_V1_Write()
        update.update = r.document
        if r.hasUpdateMask { update.updateMask = r.updateMask }
        var write = try Wire.write(update, id)
        let mask = r.hasMask ? try Wire.mask(r.mask) : nil
        write.precondition = try Wire.precondition(r.hasCurrentDocument ? r.currentDocument : nil)
        let db = engine.database(id)
        _ = try await db.commit([write], auth: auth)
        return try await readBack(db, id, key, mask: mask)
    }

    func deleteDocument(_ r: Google_Firestore_V1_DeleteDocumentRequest) async throws(FlintError) -> Google_Protobuf_Empty {
        let (id, key) = try ResourceName.parseDocument(r.name, checkingIDLengths: false)
        let precondition = try Wire.precondition(r.hasCurrentDocument ? r.currentDocument : nil)
        _ = try await engine.database(id).commit([Write(.delete(key), precondition: precondition)], auth: auth)
        return Google_Protobuf_Empty()
    }

    private func readBack(_ db: Database, _ id: DatabaseID, _ key: DocumentKey, mask: [FieldPath]?) async throws(FlintError)
        -> Google_Firestore_V1_Document
    {
        guard let doc = try await db.get(key, mask: mask) else {
            throw FlintError(.internal, "The written document could not be read back.")
        }
        return Wire.proto(doc, id)
    }

    // MARK: - Writes and transactions

    func commit(_ r: Google_Firestore_V1_CommitRequest) async throws(FlintError) -> Google_Firestore_V1_CommitResponse {
        let id = try ResourceName.parseDatabase(r.database)
        let transaction = r.transaction.isEmpty ? nil : Self.transactionID(r.transaction)
        // The transaction is looked up before any write is read, as the reference does.
        if let transaction { try await engine.database(id).checkTransaction(transaction, writing: !r.writes.isEmpty) }
        let read = try Self.readWrites(r.writes, id)
        try read.refuseForeign()
        let writes = read.writes
        let result = try await engine.database(id).commit(writes, transaction: transaction, auth: auth)
        var response = Google_Firestore_V1_CommitResponse()
        response.writeResults = result.writeResults.map(Wire.proto)
        // A commit of nothing answers without a time, as production and the reference do.
        if !writes.isEmpty { response.commitTime = Wire.proto(result.commitTime) }
        return response
    }

    func batchWrite(_ r: Google_Firestore_V1_BatchWriteRequest) async throws(FlintError) -> Google_Firestore_V1_BatchWriteResponse {
        let id = try ResourceName.parseDatabase(r.database)
        // The reference compares the names as sent before reading any write, so a repeated
        // name is what it reports first, even a malformed one. Names are told apart by their
        // bytes: `é` as one scalar and as `e` with a combining accent are two documents.
        var names = Set<UTF8Key>()
        for w in r.writes {
            guard let name = Self.documentName(w) else { continue }
            if !names.insert(UTF8Key(name)).inserted {
                throw .invalidArgument("the same document cannot be written more than once in a single request")
            }
        }
        let read = try Self.readWrites(r.writes, id)
        try read.refuseForeign()
        var response = Google_Firestore_V1_BatchWriteResponse()
        for result in try await engine.database(id).batchWrite(read.writes, auth: auth) {
            switch result {
            case .success(let w):
                response.writeResults.append(Wire.proto(w))
                response.status.append(Google_Rpc_Status())
            case .failure(let e):
                response.writeResults.append(Google_Firestore_V1_WriteResult())
                response.status.append(Wire.status(e))
            }
        }
        return response
    }

    func beginTransaction(_ r: Google_Firestore_V1_BeginTransactionRequest) async throws(FlintError)
        -> Google_Firestore_V1_BeginTransactionResponse
    {
        let id = try ResourceName.parseDatabase(r.database)
        let transaction = try await engine.database(id).beginTransaction(r.hasOptions ? try Self.options(r.options) : .readWrite())
        var response = Google_Firestore_V1_BeginTransactionResponse()
        response.transaction = Data(transaction.bytes)
        return response
    }

    func rollback(_ r: Google_Firestore_V1_RollbackRequest) async throws(FlintError) -> Google_Protobuf_Empty {
        let id = try ResourceName.parseDatabase(r.database)
        try await engine.database(id).rollback(Self.transactionID(r.transaction))
        return Google_Protobuf_Empty()
    }

    // MARK: - Reads

    func batchGetDocuments(_ r: Google_Firestore_V1_BatchGetDocumentsRequest) async throws(FlintError)
        -> [Google_Firestore_V1_BatchGetDocumentsResponse]
    {
        let id = try ResourceName.parseDatabase(r.database)
        var keys: [DocumentKey] = []
        // A name in another database is refused once the reference would read it there: after
        // the mask and the consistency.
        var foreign: String?
        let root = id.documentsRoot
        for name in r.documents {
            let named = Self.database(of: name, id, root: root)
            if named != id, foreign == nil { foreign = name }
            keys.append(try Wire.documentKey(name, in: named, checkingIDLengths: false))
        }
        // The mask before the consistency, which may begin a transaction.
        let mask = r.hasMask ? try Wire.mask(r.mask) : nil
        let db = engine.database(id)
        if let foreign {
            let selector = r.consistencySelector.map(Selector.init)
            try await Self.checkConsistency(selector, db)
            if case .readTime(let t)? = selector { try await db.checkReadTime(try Wire.versionTime(t)) }
            throw Wire.notInDatabase(foreign, id)
        }
        let (readTime, transaction, begun) = try await Self.consistency(r.consistencySelector.map(Selector.init), db)
        let result = try await db.batchGet(keys, mask: mask, readTime: readTime, transaction: transaction, auth: auth)
        var responses = result.documents.map { key, doc in
            var response = Google_Firestore_V1_BatchGetDocumentsResponse()
            if let doc { response.found = Wire.proto(doc, id) } else { response.missing = Wire.name(key, id) }
            response.readTime = Wire.proto(result.readTime)
            return response
        }
        if let begun {
            var first = Google_Firestore_V1_BatchGetDocumentsResponse()
            first.transaction = Data(begun.bytes)
            responses.insert(first, at: 0)
        }
        return responses
    }

    func runQuery(_ r: Google_Firestore_V1_RunQueryRequest) async throws(FlintError) -> [Google_Firestore_V1_RunQueryResponse] {
        let (id, parent) = try ResourceName.parseParent(r.parent)
        let db = engine.database(id)
        guard r.queryType != nil else {
            try await Self.checkNewOrOpenTransaction(r.consistencySelector.map(Selector.init), db)
            throw .invalidArgument("only structured queries are supported")
        }
        // Before the transaction or read time, as the reference tells them (`Wire.query` makes
        // the same walk for its other callers).
        try Wire.checkOperators(r.structuredQuery)
        try await Self.checkConsistency(r.consistencySelector.map(Selector.init), db)
        let query = try Wire.query(r.structuredQuery, parent: parent, id)
        let (readTime, transaction, begun) = try await Self.consistency(r.consistencySelector.map(Selector.init), db)
        let explain = r.hasExplainOptions ? ExplainOptions(analyze: r.explainOptions.analyze) : nil
        let result = try await db.runQuery(query, readTime: readTime, transaction: transaction, explain: explain, auth: auth)
        var responses = result.documents.map { doc in
            var response = Google_Firestore_V1_RunQueryResponse()
            response.document = Wire.proto(doc, id)
            response.readTime = Wire.proto(result.readTime)
            return response
        }
        // An empty result still tells the client its read time.
        if responses.isEmpty {
            var response = Google_Firestore_V1_RunQueryResponse()
            response.readTime = Wire.proto(result.readTime)
            responses.append(response)
        }
        // The first document's answer counts what the offset skipped (all of it, as documents
        // follow), except when it is also the last: the reference leaves the count out there.
        if query.offset > 0, responses.count > 1 { responses[0].skippedResults = Int32(clamping: query.offset) }
        if let metrics = result.explainMetrics { responses[responses.count - 1].explainMetrics = Wire.proto(metrics) }
        // The last answer says the query is complete, as the reference's does.
        responses[responses.count - 1].done = true
        // A transaction begun here comes first, in a response of its own, as the reference sends it.
        if let begun {
            var first = Google_Firestore_V1_RunQueryResponse()
            first.transaction = Data(begun.bytes)
            responses.insert(first, at: 0)
        }
        return responses
    }

    func runAggregationQuery(_ r: Google_Firestore_V1_RunAggregationQueryRequest) async throws(FlintError)
        -> [Google_Firestore_V1_RunAggregationQueryResponse]
    {
        let (id, parent) = try ResourceName.parseParent(r.parent)
        let db = engine.database(id)
        guard r.queryType != nil else {
            try await Self.checkNewOrOpenTransaction(r.consistencySelector.map(Selector.init), db)
            throw .invalidArgument("Only structured aggregation queries are supported.")
        }
        let aggregation = r.structuredAggregationQuery
        // Before the transaction, the read time and the aggregations, as the reference tells them.
        try Wire.checkOperators(aggregation.structuredQuery)
        try await Self.checkConsistency(r.consistencySelector.map(Selector.init), db)
        // The aggregations are read before the query, as the reference reads them.
        let aggregations = try Wire.aggregations(aggregation.aggregations)
        let query = try Wire.query(aggregation.structuredQuery, parent: parent, id)
        let (readTime, transaction, begun) = try await Self.consistency(r.consistencySelector.map(Selector.init), db)
        let explain = r.hasExplainOptions ? ExplainOptions(analyze: r.explainOptions.analyze) : nil
        let result = try await db.runAggregation(
            query, aggregations: aggregations, readTime: readTime, transaction: transaction,
            explain: explain, auth: auth)
        var response = Google_Firestore_V1_RunAggregationQueryResponse()
        // A plan alone (explain without analyze) has no result. The answer with the result is
        // the last, and marked done, as the reference marks it.
        if explain?.analyze != false {
            for (alias, value) in result.values { response.result.aggregateFields[UTF8Key(alias)] = Wire.proto(value) }
            response.done = true
        }
        response.readTime = Wire.proto(result.readTime)
        if let metrics = result.explainMetrics { response.explainMetrics = Wire.proto(metrics) }
        guard let begun else { return [response] }
        var first = Google_Firestore_V1_RunAggregationQueryResponse()
        first.transaction = Data(begun.bytes)
        return [first, response]
    }

    func listCollectionIds(_ r: Google_Firestore_V1_ListCollectionIdsRequest) async throws(FlintError)
        -> Google_Firestore_V1_ListCollectionIdsResponse
    {
        let (id, parent) = try ResourceName.parseParent(r.parent, checkingIDLengths: false)
        var readTime: Timestamp?
        // A read time finer than a microsecond is truncated here and in a listen target, as on
        // the reference; other reads refuse it (Wire.versionTime).
        if case .readTime(let t)? = r.consistencySelector { readTime = try Wire.optionTime(t) }
        let page = try await engine.database(id).listCollectionIDs(
            parent: parent, pageSize: Int(r.pageSize), pageToken: r.pageToken.isEmpty ? nil : r.pageToken, readTime: readTime,
            auth: auth)
        var response = Google_Firestore_V1_ListCollectionIdsResponse()
        response.collectionIds = page.collectionIDs
        if let token = page.nextPageToken { response.nextPageToken = token }
        return response
    }

    func partitionQuery(_ r: Google_Firestore_V1_PartitionQueryRequest) async throws(FlintError)
        -> Google_Firestore_V1_PartitionQueryResponse
    {
        let (id, parent) = try ResourceName.parseParent(r.parent)
        var readTime: Timestamp?
        if case .readTime(let t)? = r.consistencySelector { readTime = try Wire.versionTime(t) }
        let query = try Wire.query(r.structuredQuery, parent: parent, id)
        let page = try await engine.database(id).partitionQuery(
            query, partitionCount: Int(r.partitionCount), pageSize: Int(r.pageSize),
            pageToken: r.pageToken.isEmpty ? nil : r.pageToken, readTime: readTime, auth: auth)
        var response = Google_Firestore_V1_PartitionQueryResponse()
        response.partitions = page.cursors.map { key in
            var cursor = Google_Firestore_V1_Cursor()
            cursor.values = [Wire.proto(.reference(DocumentReference(database: id, key: key)))]
            return cursor
        }
        if let next = page.nextPageToken { response.nextPageToken = next }
        return response
    }

    // MARK: - Helpers

    static func options(_ p: Google_Firestore_V1_TransactionOptions) throws(FlintError) -> TransactionOptions {
        switch p.mode {
        case .readOnly(let ro)?:
            if case .readTime(let t)? = ro.consistencySelector { return .readOnly(readTime: try Wire.versionTime(t)) }
            return .readOnly()
        case .readWrite(let rw)?:
            return .readWrite(retrying: rw.retryTransaction.isEmpty ? nil : Self.transactionID(rw.retryTransaction))
        case nil:
            return .readWrite()
        }
    }

    /// The consistency choice every read request's `consistency_selector` offers.
    enum Selector {
        case transaction(Data)
        case newTransaction(Google_Firestore_V1_TransactionOptions)
        case readTime(Google_Protobuf_Timestamp)
    }

    /// A request's writes, each read in the database its name gives, as the reference reads
    /// them. One naming another database than the request's is refused by `refuseForeign`, once
    /// every check the reference makes before it stores (there) has passed.
    struct ReadWrites {
        let request: DatabaseID
        var writes: [Write] = []
        /// The databases of writes naming another, by position; the first such name.
        var elsewhere: [Int: DatabaseID] = [:]
        var foreignName: String?

        func refuseForeign() throws(FlintError) {
            guard let foreignName else { return }
            try Database.checkRequestSize(writes)
            try Database.validateWrites(writes) { elsewhere[$0] ?? request }
            throw Wire.notInDatabase(foreignName, request)
        }
    }

    /// The document a write names, nil for a write of no kind.
    static func documentName(_ w: Google_Firestore_V1_Write) -> String? {
        switch w.operation {
        case .update(let d)?: d.name
        case .delete(let n)?: n
        case .transform(let t)?: t.document
        case nil: nil
        }
    }

    /// The database a document name gives; the request's own when the name starts with its
    /// root (almost always: no second parse then) or gives none.
    static func database(of name: String, _ id: DatabaseID, root: String) -> DatabaseID {
        name.hasPrefix(root) ? id : Wire.database(ofDocument: name) ?? id
    }

    static func readWrites(_ wire: [Google_Firestore_V1_Write], _ id: DatabaseID) throws(FlintError) -> ReadWrites {
        var read = ReadWrites(request: id)
        read.writes.reserveCapacity(wire.count)
        let root = id.documentsRoot
        for (i, w) in wire.enumerated() {
            let name = Self.documentName(w) ?? ""
            let named = Self.database(of: name, id, root: root)
            if named != id {
                read.elsewhere[i] = named
                if read.foreignName == nil { read.foreignName = name }
            }
            read.writes.append(try Wire.write(w, named))
        }
        return read
    }

    /// What a query request without a query is told before that: the reference looks up its
    /// transaction, or begins its new one, first, and reads its read time after.
    static func checkNewOrOpenTransaction(_ selector: Selector?, _ db: Database) async throws(FlintError) {
        if case .readTime? = selector { return }
        try await checkConsistency(selector, db)
    }

    /// What the reference checks of a query's consistency before it reads the query: a read
    /// time's form, a transaction that is open, a new transaction's options (a snapshot time
    /// it could begin at, a retried transaction's id). Nothing is begun.
    static func checkConsistency(_ selector: Selector?, _ db: Database) async throws(FlintError) {
        switch selector {
        case .transaction(let id)?: try await db.checkTransaction(Self.transactionID(id), writing: false)
        case .newTransaction(let o)?:
            switch try options(o) {
            case .readWrite(let retrying?) where !retrying.isWellFormed: throw .invalidArgument("Invalid transaction.")
            case .readOnly(let readTime?): try await db.checkReadTime(readTime)
            default: break
            }
        case .readTime(let t)?: _ = try Wire.versionTime(t)
        case nil: break
        }
    }

    /// Read time, existing transaction, or a transaction begun for this read (returned to the client).
    static func consistency(_ selector: Selector?, _ db: Database) async throws(FlintError)
        -> (readTime: Timestamp?, transaction: TransactionID?, begun: TransactionID?)
    {
        switch selector {
        case .transaction(let id)?: return (nil, Self.transactionID(id), nil)
        case .newTransaction(let o)?:
            let id = try await db.beginTransaction(try options(o))
            return (nil, id, id)
        case .readTime(let t)?: return (try Wire.versionTime(t), nil, nil)
        case nil: return (nil, nil, nil)
        }
    }
}

/// Firestore-style 20-character random document ids.
enum AutoID {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    static func make() -> String {
        var rng = SystemRandomNumberGenerator()
        return String((0..<20).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] })
    }
}

// Each read request has its own generated oneof with the same three cases.
extension FirestoreCalls.Selector {
    init(_ s: Google_Firestore_V1_BatchGetDocumentsRequest.OneOf_ConsistencySelector) {
        switch s {
        case .transaction(let id): self = .transaction(id)
        case .newTransaction(let o): self = .newTransaction(o)
        case .readTime(let t): self = .readTime(t)
        }
    }

    init(_ s: Google_Firestore_V1_RunQueryRequest.OneOf_ConsistencySelector) {
        switch s {
        case .transaction(let id): self = .transaction(id)
        case .newTransaction(let o): self = .newTransaction(o)
        case .readTime(let t): self = .readTime(t)
        }
    }

    init(_ s: Google_Firestore_V1_RunAggregationQueryRequest.OneOf_ConsistencySelector) {
        switch s {
        case .transaction(let id): self = .transaction(id)
        case .newTransaction(let o): self = .newTransaction(o)
        case .readTime(let t): self = .readTime(t)
        }
    }
}
