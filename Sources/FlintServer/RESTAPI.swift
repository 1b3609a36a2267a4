import FlintEngine
import FlintModel
import FlintProto
import FlintQuery
import FlintWire
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import SwiftProtobuf

/// Firestore's REST v1 on the HTTP side of the port: each request is parsed into Flint's model,
/// run by the database it names, and answered in Firestore's JSON.
struct RESTAPI: Sendable {
    let engine: Engine

    /// What a `/v1/...` path names.
    struct Target {
        var database: DatabaseID
        /// Below `documents`; empty for the root.
        var path: ResourcePath
        /// The `:verb` after the last segment, if one of Firestore's.
        var verb: String?
        var documentsName: String { path.isEmpty ? database.documentsRoot : database.documentsRoot + "/" + path.canonical }
    }

    static let verbs: Set<String> = [
        "batchGet", "beginTransaction", "commit", "rollback", "runQuery", "runAggregationQuery", "partitionQuery",
        "listCollectionIds", "batchWrite", "listen",
    ]

    func respond(_ request: Request, context: some RequestContext) async -> Response {
        do throws(FlintError) {
            // Checked on every request, as the reference does; rules will decide with it.
            _ = try AuthContext(authorization: request.headers[.authorization])
            let target = try Self.parse(request.uri.path)
            return try await dispatch(request, target)
        } catch {
            return error.restResponse()
        }
    }

    static func parse(_ rawPath: String) throws(FlintError) -> Target {
        var segments: [String] = []
        for raw in rawPath.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2) {
            guard let decoded = String(raw).removingPercentEncoding else {
                throw .invalidArgument("The path \"\(rawPath)\" has invalid percent-encoding.")
            }
            segments.append(decoded)
        }
        var verb: String?
        if let last = segments.last, let colon = last.lastIndex(of: ":"), verbs.contains(String(last[last.index(after: colon)...])) {
            verb = String(last[last.index(after: colon)...])
            segments[segments.count - 1] = String(last[..<colon])
        }
        let name = "projects/" + segments.dropFirst().joined(separator: "/")
        guard segments.first == "projects" else { throw FlintError(.notFound, "No Firestore resource at \(rawPath).") }
        let parsed = try ResourceName.parse(name)
        return Target(database: parsed.database, path: parsed.path, verb: verb)
    }

    private func dispatch(_ request: Request, _ t: Target) async throws(FlintError) -> Response {
        let db = engine.database(t.database)
        switch (request.method, t.verb) {
        case (.get, nil):
            return t.path.isDocumentPath ? try await getDocument(request, db, t) : try await listDocuments(request, db, t)
        case (.post, nil):
            guard t.path.isCollectionPath else { throw FlintError(.notFound, "Documents are created in a collection: POST to .../documents/{collection}.") }
            return try await createDocument(request, db, t)
        case (.patch, nil):
            return try await updateDocument(request, db, t)
        case (.delete, nil):
            return try await deleteDocument(request, db, t)
        case (.post, "commit"?):
            return try await commit(request, db, t)
        case (.post, "batchWrite"?):
            return try await batchWrite(request, db, t)
        case (.post, "batchGet"?):
            return try await batchGet(request, db, t)
        case (.post, "runQuery"?):
            return try await runQuery(request, db, t)
        case (.post, "runAggregationQuery"?):
            return try await runAggregationQuery(request, db, t)
        case (.post, "listCollectionIds"?):
            return try await listCollectionIDs(request, db, t)
        case (.post, "partitionQuery"?):
            return try await partitionQuery(request, db, t)
        case (.post, "beginTransaction"?):
            return try await beginTransaction(request, db, t)
        case (.post, "rollback"?):
            let body: Google_Firestore_V1_RollbackRequest = try await Self.decode(request)
            try await db.rollback(TransactionID(bytes: Array(body.transaction)))
            return try Self.json(Google_Protobuf_Empty())
        case (.post, let verb?):
            throw FlintError(.unimplemented, "\(verb) is not served yet.")
        default:
            throw FlintError(.notFound, "No route for \(request.method) \(request.uri.path).")
        }
    }

    // MARK: - Documents

    private func getDocument(_ request: Request, _ db: Database, _ t: Target) async throws(FlintError) -> Response {
        let q = request.uri.queryParameters
        let key = try documentKey(t)
        guard let doc = try await db.get(key, mask: try Self.mask(q, "mask.fieldPaths"), readTime: try Self.readTime(q), transaction: try Self.transaction(q))
        else {
            throw FlintError(.notFound, "Document (\(t.documentsName)) not found.")
        }
        return try Self.json(Wire.proto(doc, t.database))
    }

    private func listDocuments(_ request: Request, _ db: Database, _ t: Target) async throws(FlintError) -> Response {
        let q = request.uri.queryParameters
        if q.has("transaction") { throw FlintError(.unimplemented, "Listing documents inside a transaction is not served yet.") }
        guard let collectionID = t.path.last else { throw FlintError(.notFound, "List a collection: GET .../documents/{collection}.") }
        var list = ListDocumentsRequest(parent: t.path.dropLast, collectionID: collectionID)
        if let size = q["pageSize"] {
            guard let n = Int(size) else { throw .invalidArgument("pageSize must be an integer, not \"\(size)\".") }
            list.pageSize = n
        }
        list.pageToken = q["pageToken"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        if let order = q["orderBy"] { list.orderBy = try Ordering.parseList(String(order)) }
        list.mask = try Self.mask(q, "mask.fieldPaths")
        list.showMissing = q["showMissing"] == "true"
        list.readTime = try Self.readTime(q)
        let page = try await db.listDocuments(list)
        var response = Google_Firestore_V1_ListDocumentsResponse()
        response.documents = page.documents.map { listed in
            if let doc = listed.document { return Wire.proto(doc, t.database) }
            var missing = Google_Firestore_V1_Document()
            missing.name = Wire.name(listed.key, t.database)
            return missing
        }
        if let token = page.nextPageToken { response.nextPageToken = token }
        return try Self.json(response)
    }

    private func createDocument(_ request: Request, _ db: Database, _ t: Target) async throws(FlintError) -> Response {
        let q = request.uri.queryParameters
        let body: Google_Firestore_V1_Document = try await Self.decode(request)
        let id = q["documentId"].map(String.init).flatMap { $0.isEmpty ? nil : $0 } ?? AutoID.make()
        try Validation.validateID(id)
        let key = try DocumentKey(t.path.appending(id))
        let fields = try Wire.fields(body.fields, t.database)
        _ = try await db.commit([Write(.update(key, fields), precondition: .exists(false))])
        guard let doc = try await db.get(key, mask: try Self.mask(q, "mask.fieldPaths")) else {
            throw FlintError(.internal, "The created document could not be read back.")
        }
        return try Self.json(Wire.proto(doc, t.database))
    }

    private func updateDocument(_ request: Request, _ db: Database, _ t: Target) async throws(FlintError) -> Response {
        let q = request.uri.queryParameters
        let key = try documentKey(t)
        let body: Google_Firestore_V1_Document = try await Self.decode(request)
        var write = Write(.update(key, try Wire.fields(body.fields, t.database)), precondition: try Self.precondition(q))
        if q.has("updateMask.fieldPaths") { write.updateMask = try Self.mask(q, "updateMask.fieldPaths") }
        _ = try await db.commit([write])
        guard let doc = try await db.get(key, mask: try Self.mask(q, "mask.fieldPaths")) else {
            throw FlintError(.internal, "The updated document could not be read back.")
        }
        return try Self.json(Wire.proto(doc, t.database))
    }

    private func deleteDocument(_ request: Request, _ db: Database, _ t: Target) async throws(FlintError) -> Response {
        let key = try documentKey(t)
        _ = try await db.commit([Write(.delete(key), precondition: try Self.precondition(request.uri.queryParameters))])
        return try Self.json(Google_Protobuf_Empty())
    }

    // MARK: - Verbs

    private func commit(_ request: Request, _ db: Database, _ t: Target) async throws(FlintError) -> Response {
        let body: Google_Firestore_V1_CommitRequest = try await Self.decode(request)
        var writes: [Write] = []
        for w in body.writes { writes.append(try Wire.write(w, t.database)) }
        let transaction = body.transaction.isEmpty ? nil : TransactionID(bytes: Array(body.transaction))
        let result = try await db.commit(writes, transaction: transaction)
        var response = Google_Firestore_V1_CommitResponse()
        response.writeResults = result.writeResults.map(Wire.proto)
        response.commitTime = Wire.proto(result.commitTime)
        return try Self.json(response)
    }

    private func batchWrite(_ request: Request, _ db: Database, _ t: Target) async throws(FlintError) -> Response {
        let body: Google_Firestore_V1_BatchWriteRequest = try await Self.decode(request)
        var writes: [Write] = []
        for w in body.writes { writes.append(try Wire.write(w, t.database)) }
        let results = try await db.batchWrite(writes)
        var response = Google_Firestore_V1_BatchWriteResponse()
        for r in results {
            switch r {
            case .success(let w):
                response.writeResults.append(Wire.proto(w))
                response.status.append(Google_Rpc_Status())
            case .failure(let e):
                response.writeResults.append(Google_Firestore_V1_WriteResult())
                response.status.append(Wire.status(e))
            }
        }
        return try Self.json(response)
    }

    private func batchGet(_ request: Request, _ db: Database, _ t: Target) async throws(FlintError) -> Response {
        let body: Google_Firestore_V1_BatchGetDocumentsRequest = try await Self.decode(request)
        var keys: [DocumentKey] = []
        for name in body.documents { keys.append(try Wire.documentKey(name, in: t.database)) }
        let (readTime, transaction, begun) = try await Self.consistency(body.consistencySelector.map(Selector.init), db)
        let result = try await db.batchGet(keys, mask: body.hasMask ? try Wire.mask(body.mask) : nil, readTime: readTime, transaction: transaction)
        var responses = result.documents.map { key, doc in
            var r = Google_Firestore_V1_BatchGetDocumentsResponse()
            if let doc { r.found = Wire.proto(doc, t.database) } else { r.missing = Wire.name(key, t.database) }
            r.readTime = Wire.proto(result.readTime)
            return r
        }
        if let begun {
            var first = Google_Firestore_V1_BatchGetDocumentsResponse()
            first.transaction = Data(begun.bytes)
            responses.insert(first, at: 0)
        }
        return try Self.jsonArray(responses)
    }

    private func runQuery(_ request: Request, _ db: Database, _ t: Target) async throws(FlintError) -> Response {
        let body: Google_Firestore_V1_RunQueryRequest = try await Self.decode(request)
        guard t.path.isEmpty || t.path.isDocumentPath else { throw .invalidArgument("A query's parent must be the documents root or a document.") }
        let query = try Wire.query(body.structuredQuery, parent: t.path, t.database)
        let (readTime, transaction, begun) = try await Self.consistency(body.consistencySelector.map(Selector.init), db)
        let explain = body.hasExplainOptions ? ExplainOptions(analyze: body.explainOptions.analyze) : nil
        let result = try await db.runQuery(query, readTime: readTime, transaction: transaction, explain: explain)
        var responses = result.documents.map { doc in
            var r = Google_Firestore_V1_RunQueryResponse()
            r.document = Wire.proto(doc, t.database)
            r.readTime = Wire.proto(result.readTime)
            return r
        }
        if responses.isEmpty {
            var r = Google_Firestore_V1_RunQueryResponse()
            r.readTime = Wire.proto(result.readTime)
            responses.append(r)
        }
        if let metrics = result.explainMetrics { responses[responses.count - 1].explainMetrics = Self.proto(metrics) }
        if let begun { responses[0].transaction = Data(begun.bytes) }
        return try Self.jsonArray(responses)
    }

    private func runAggregationQuery(_ request: Request, _ db: Database, _ t: Target) async throws(FlintError) -> Response {
        let body: Google_Firestore_V1_RunAggregationQueryRequest = try await Self.decode(request)
        let aggregation = body.structuredAggregationQuery
        let query = try Wire.query(aggregation.structuredQuery, parent: t.path, t.database)
        let (readTime, transaction, begun) = try await Self.consistency(body.consistencySelector.map(Selector.init), db)
        let result = try await db.runAggregation(
            query, aggregations: try Wire.aggregations(aggregation.aggregations), readTime: readTime, transaction: transaction)
        var response = Google_Firestore_V1_RunAggregationQueryResponse()
        if let begun { response.transaction = Data(begun.bytes) }
        var fields: [String: Google_Firestore_V1_Value] = [:]
        for (alias, value) in result.values { fields[alias] = Wire.proto(value) }
        response.result.aggregateFields = fields
        response.readTime = Wire.proto(result.readTime)
        return try Self.jsonArray([response])
    }

    private func listCollectionIDs(_ request: Request, _ db: Database, _ t: Target) async throws(FlintError) -> Response {
        let body: Google_Firestore_V1_ListCollectionIdsRequest = try await Self.decode(request)
        guard t.path.isEmpty || t.path.isDocumentPath else { throw .invalidArgument("Collection ids are listed under the root or a document.") }
        var readTime: Timestamp?
        if case .readTime(let rt)? = body.consistencySelector { readTime = try Wire.timestamp(rt) }
        let page = try await db.listCollectionIDs(
            parent: t.path, pageSize: Int(body.pageSize), pageToken: body.pageToken.isEmpty ? nil : body.pageToken, readTime: readTime)
        var response = Google_Firestore_V1_ListCollectionIdsResponse()
        response.collectionIds = page.collectionIDs
        if let token = page.nextPageToken { response.nextPageToken = token }
        return try Self.json(response)
    }

    private func partitionQuery(_ request: Request, _ db: Database, _ t: Target) async throws(FlintError) -> Response {
        let body: Google_Firestore_V1_PartitionQueryRequest = try await Self.decode(request)
        var readTime: Timestamp?
        if case .readTime(let rt)? = body.consistencySelector { readTime = try Wire.timestamp(rt) }
        let query = try Wire.query(body.structuredQuery, parent: t.path, t.database)
        let page = try await db.partitionQuery(
            query, partitionCount: Int(body.partitionCount), pageSize: Int(body.pageSize),
            pageToken: body.pageToken.isEmpty ? nil : body.pageToken, readTime: readTime)
        var response = Google_Firestore_V1_PartitionQueryResponse()
        response.partitions = page.cursors.map { key in
            var cursor = Google_Firestore_V1_Cursor()
            cursor.values = [Wire.proto(.reference(DocumentReference(database: t.database, key: key)))]
            return cursor
        }
        if let next = page.nextPageToken { response.nextPageToken = next }
        return try Self.json(response)
    }

    private func beginTransaction(_ request: Request, _ db: Database, _ t: Target) async throws(FlintError) -> Response {
        let body: Google_Firestore_V1_BeginTransactionRequest = try await Self.decode(request)
        let id = try await db.beginTransaction(body.hasOptions ? try Self.options(body.options) : .readWrite())
        var response = Google_Firestore_V1_BeginTransactionResponse()
        response.transaction = Data(id.bytes)
        return try Self.json(response)
    }

    // MARK: - Helpers

    private func documentKey(_ t: Target) throws(FlintError) -> DocumentKey {
        guard let key = t.path.documentKey else {
            throw .invalidArgument("Document name \"\(t.documentsName)\" lacks \"/\" at index \(t.documentsName.utf8.count).")
        }
        try Validation.validateDocumentName(t.database, key)
        return key
    }

    /// A transaction id from a query parameter (base64, standard or URL-safe).
    static func transaction(_ q: FlatDictionary<Substring, Substring>) throws(FlintError) -> TransactionID? {
        guard let text = q["transaction"] else { return nil }
        var s = String(text).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.utf8.count % 4 != 0 { s += "=" }
        guard let data = Data(base64Encoded: s) else { throw .invalidArgument("Invalid transaction.") }
        return TransactionID(bytes: Array(data))
    }

    static func options(_ p: Google_Firestore_V1_TransactionOptions) throws(FlintError) -> TransactionOptions {
        switch p.mode {
        case .readOnly(let ro)?:
            if case .readTime(let rt)? = ro.consistencySelector { return .readOnly(readTime: try Wire.timestamp(rt)) }
            return .readOnly()
        case .readWrite(let rw)?:
            return .readWrite(retrying: rw.retryTransaction.isEmpty ? nil : TransactionID(bytes: Array(rw.retryTransaction)))
        case nil:
            return .readWrite()
        }
    }

    typealias Consistency = (readTime: Timestamp?, transaction: TransactionID?, begun: TransactionID?)

    /// The consistency choice every read request's `consistency_selector` offers.
    enum Selector {
        case transaction(Data)
        case newTransaction(Google_Firestore_V1_TransactionOptions)
        case readTime(Google_Protobuf_Timestamp)
    }

    /// Read time, existing transaction, or a transaction begun for this read (returned to the client).
    static func consistency(_ selector: Selector?, _ db: Database) async throws(FlintError) -> Consistency {
        switch selector {
        case .transaction(let id)?: return (nil, TransactionID(bytes: Array(id)), nil)
        case .newTransaction(let o)?:
            let id = try await db.beginTransaction(try options(o))
            return (nil, id, id)
        case .readTime(let t)?: return (try Wire.timestamp(t), nil, nil)
        case nil: return (nil, nil, nil)
        }
    }

    static func mask(_ q: FlatDictionary<Substring, Substring>, _ name: Substring) throws(FlintError) -> [FieldPath]? {
        guard q.has(name) else { return nil }
        var out: [FieldPath] = []
        for p in q[values: name] { out.append(try FieldPath(parsing: String(p))) }
        return out
    }

    static func readTime(_ q: FlatDictionary<Substring, Substring>) throws(FlintError) -> Timestamp? {
        guard let text = q["readTime"] else { return nil }
        guard let t = RFC3339.parse(String(text)) else { throw .invalidArgument("readTime \"\(text)\" is not an RFC 3339 timestamp.") }
        return t
    }

    static func precondition(_ q: FlatDictionary<Substring, Substring>) throws(FlintError) -> Precondition {
        if let exists = q["currentDocument.exists"] {
            switch exists {
            case "true": return .exists(true)
            case "false": return .exists(false)
            default: throw .invalidArgument("currentDocument.exists must be true or false, not \"\(exists)\".")
            }
        }
        if let time = q["currentDocument.updateTime"] {
            guard let t = RFC3339.parse(String(time)) else { throw .invalidArgument("currentDocument.updateTime \"\(time)\" is not an RFC 3339 timestamp.") }
            return .updateTime(t)
        }
        return .none
    }

    /// Reads a JSON body (application/json or text/plain) into a message, refusing more than 10 MiB.
    static func decode<M: SwiftProtobuf.Message>(_ request: Request) async throws(FlintError) -> M {
        let body = request.body
        let buffer: ByteBuffer
        do { buffer = try await body.collect(upTo: Limits.maxRequestBytes) } catch {
            throw .invalidArgument("Request payload size exceeds the limit: \(Limits.maxRequestBytes) bytes.")
        }
        let data = Data(buffer: buffer)
        if data.isEmpty { return M() }
        do { return try M(jsonUTF8Data: data) } catch {
            throw .invalidArgument("Invalid JSON payload received. \(error)")
        }
    }

    static func json(_ message: some SwiftProtobuf.Message) throws(FlintError) -> Response {
        do { return respond(try message.jsonUTF8Data()) } catch {
            throw FlintError(.internal, "The answer could not be encoded: \(error)")
        }
    }

    /// Streaming methods answer one JSON array with nothing after the closing bracket.
    static func jsonArray(_ messages: [some SwiftProtobuf.Message]) throws(FlintError) -> Response {
        var data = Data("[".utf8)
        do {
            for (i, m) in messages.enumerated() {
                if i > 0 { data.append(contentsOf: ",".utf8) }
                data.append(try m.jsonUTF8Data())
            }
        } catch {
            throw FlintError(.internal, "The answer could not be encoded: \(error)")
        }
        data.append(contentsOf: "]".utf8)
        return respond(data)
    }

    static func respond(_ data: Data) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=UTF-8"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func proto(_ m: ExplainMetrics) -> Google_Firestore_V1_ExplainMetrics {
        var p = Google_Firestore_V1_ExplainMetrics()
        p.planSummary.indexesUsed = m.indexesUsed.map(structValue)
        if let e = m.executionStats {
            p.executionStats.resultsReturned = Int64(e.resultsReturned)
            p.executionStats.readOperations = Int64(e.readOperations)
            p.executionStats.executionDuration = Google_Protobuf_Duration(seconds: e.executionDurationMicros / 1_000_000, nanos: Int32(e.executionDurationMicros % 1_000_000) * 1000)
            p.executionStats.debugStats = structValue(e.debugStats)
        }
        return p
    }

    static func structValue(_ m: MapValue) -> Google_Protobuf_Struct {
        var s = Google_Protobuf_Struct()
        for e in m.entries {
            switch e.value {
            case .string(let v): s.fields[e.key] = Google_Protobuf_Value(stringValue: v)
            case .integer(let i): s.fields[e.key] = Google_Protobuf_Value(numberValue: Double(i))
            case .map(let inner): s.fields[e.key] = Google_Protobuf_Value(structValue: structValue(inner))
            default: s.fields[e.key] = Google_Protobuf_Value(stringValue: "\(e.value)")
            }
        }
        return s
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
extension RESTAPI.Selector {
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
