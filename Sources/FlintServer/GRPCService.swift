import FlintEngine
import FlintModel
import FlintProto
import FlintWire
import Foundation
import GRPCCore
import SwiftProtobuf

/// `google.firestore.v1.Firestore` over gRPC: what the mobile, Admin and server SDKs speak.
/// Every unary and server-streaming method is a `FirestoreCalls` call; the Write stream keeps
/// the mobile SDKs' handshake here.
struct GRPCFirestoreService: Google_Firestore_V1_Firestore.ServiceProtocol {
    let calls: FirestoreCalls
    /// Fired when the server begins to shut down.
    let draining: Latch

    init(engine: Engine, draining: Latch = Latch()) {
        calls = FirestoreCalls(engine: engine)
        self.draining = draining
    }

    /// Reads the caller's `authorization` metadata as REST reads the header, then runs the call
    /// on the caller's behalf.
    private func unary<Request, Response>(
        _ request: ServerRequest<Request>, _ body: (FirestoreCalls) -> (Request) async throws(FlintError) -> Response
    ) async throws -> ServerResponse<Response> {
        do throws(FlintError) {
            let auth = try Self.auth(request.metadata)
            return ServerResponse(message: try await body(calls.acting(as: auth))(request.message))
        } catch {
            throw error.rpcError
        }
    }

    /// Server streaming: the answer is computed at one read time, then streamed.
    private func streaming<Request, Response>(
        _ request: ServerRequest<Request>, _ body: (FirestoreCalls) -> (Request) async throws(FlintError) -> [Response]
    ) async throws -> StreamingServerResponse<Response> {
        do throws(FlintError) {
            let auth = try Self.auth(request.metadata)
            let responses = try await body(calls.acting(as: auth))(request.message)
            return StreamingServerResponse { writer in
                try await writer.write(contentsOf: responses)
                return [:]
            }
        } catch {
            throw error.rpcError
        }
    }

    static func auth(_ metadata: Metadata) throws(FlintError) -> AuthContext {
        var header: String?
        for value in metadata[stringValues: "authorization"] { header = value }
        return try AuthContext(authorization: header)
    }

    func getDocument(request: ServerRequest<Google_Firestore_V1_GetDocumentRequest>, context: ServerContext) async throws
        -> ServerResponse<Google_Firestore_V1_Document>
    { try await unary(request, FirestoreCalls.getDocument) }

    func listDocuments(request: ServerRequest<Google_Firestore_V1_ListDocumentsRequest>, context: ServerContext) async throws
        -> ServerResponse<Google_Firestore_V1_ListDocumentsResponse>
    { try await unary(request, FirestoreCalls.listDocuments) }

    func createDocument(request: ServerRequest<Google_Firestore_V1_CreateDocumentRequest>, context: ServerContext) async throws
        -> ServerResponse<Google_Firestore_V1_Document>
    { try await unary(request, FirestoreCalls.createDocument) }

    func updateDocument(request: ServerRequest<Google_Firestore_V1_UpdateDocumentRequest>, context: ServerContext) async throws
        -> ServerResponse<Google_Firestore_V1_Document>
    { try await unary(request, FirestoreCalls.updateDocument) }

    func deleteDocument(request: ServerRequest<Google_Firestore_V1_DeleteDocumentRequest>, context: ServerContext) async throws
        -> ServerResponse<Google_Protobuf_Empty>
    { try await unary(request, FirestoreCalls.deleteDocument) }

    func batchGetDocuments(request: ServerRequest<Google_Firestore_V1_BatchGetDocumentsRequest>, context: ServerContext)
        async throws -> StreamingServerResponse<Google_Firestore_V1_BatchGetDocumentsResponse>
    { try await streaming(request, FirestoreCalls.batchGetDocuments) }

    func beginTransaction(request: ServerRequest<Google_Firestore_V1_BeginTransactionRequest>, context: ServerContext)
        async throws -> ServerResponse<Google_Firestore_V1_BeginTransactionResponse>
    { try await unary(request, FirestoreCalls.beginTransaction) }

    func commit(request: ServerRequest<Google_Firestore_V1_CommitRequest>, context: ServerContext) async throws
        -> ServerResponse<Google_Firestore_V1_CommitResponse>
    { try await unary(request, FirestoreCalls.commit) }

    func rollback(request: ServerRequest<Google_Firestore_V1_RollbackRequest>, context: ServerContext) async throws
        -> ServerResponse<Google_Protobuf_Empty>
    { try await unary(request, FirestoreCalls.rollback) }

    func runQuery(request: ServerRequest<Google_Firestore_V1_RunQueryRequest>, context: ServerContext) async throws
        -> StreamingServerResponse<Google_Firestore_V1_RunQueryResponse>
    { try await streaming(request, FirestoreCalls.runQuery) }

    func runAggregationQuery(request: ServerRequest<Google_Firestore_V1_RunAggregationQueryRequest>, context: ServerContext)
        async throws -> StreamingServerResponse<Google_Firestore_V1_RunAggregationQueryResponse>
    { try await streaming(request, FirestoreCalls.runAggregationQuery) }

    func partitionQuery(request: ServerRequest<Google_Firestore_V1_PartitionQueryRequest>, context: ServerContext) async throws
        -> ServerResponse<Google_Firestore_V1_PartitionQueryResponse>
    { try await unary(request, FirestoreCalls.partitionQuery) }

    func listCollectionIds(request: ServerRequest<Google_Firestore_V1_ListCollectionIdsRequest>, context: ServerContext)
        async throws -> ServerResponse<Google_Firestore_V1_ListCollectionIdsResponse>
    { try await unary(request, FirestoreCalls.listCollectionIds) }

    func batchWrite(request: ServerRequest<Google_Firestore_V1_BatchWriteRequest>, context: ServerContext) async throws
        -> ServerResponse<Google_Firestore_V1_BatchWriteResponse>
    { try await unary(request, FirestoreCalls.batchWrite) }

    /// The mobile SDKs' write stream: the first request names the database and gets a stream id
    /// and token; every later request carries one batch, committed atomically and answered with
    /// its results, commit time and a fresh token. A request without writes is the last one. A
    /// failed batch ends the stream with its error.
    func write(request: StreamingServerRequest<Google_Firestore_V1_WriteRequest>, context: ServerContext) async throws
        -> StreamingServerResponse<Google_Firestore_V1_WriteResponse>
    {
        let prefix = request.metadata[stringValues: "google-cloud-resource-prefix"].first { _ in true }
        let auth: AuthContext
        do throws(FlintError) {
            auth = try Self.auth(request.metadata)
            if let prefix { _ = try ResourceName.parseDatabase(prefix) }
        } catch {
            throw error.rpcError
        }
        let calls = self.calls.acting(as: auth)
        return StreamingServerResponse { writer in
            var stream = WriteStream()
            for try await message in request.messages {
                let response: Google_Firestore_V1_WriteResponse
                do throws(FlintError) {
                    response = try await stream.handle(message, calls)
                } catch {
                    throw error.rpcError
                }
                try await writer.write(response)
                if stream.finished { break }
            }
            return [:]
        }
    }

    /// Snapshot listeners: targets added and removed at any time, answered by the watch engine.
    func listen(request: StreamingServerRequest<Google_Firestore_V1_ListenRequest>, context: ServerContext) async throws
        -> StreamingServerResponse<Google_Firestore_V1_ListenResponse>
    {
        let prefix = request.metadata[stringValues: "google-cloud-resource-prefix"].first { _ in true }
        let auth: AuthContext
        do throws(FlintError) {
            auth = try Self.auth(request.metadata)
            if let prefix { _ = try ResourceName.parseDatabase(prefix) }
        } catch {
            throw error.rpcError
        }
        let session = ListenSession(engine: calls.engine, defaultDatabase: prefix, auth: { auth })
        let draining = draining
        return StreamingServerResponse { writer in
            // A listener has nothing in flight to lose, so shutting down ends it at once with
            // UNAVAILABLE, which the SDKs retry, instead of a reset stream when the grace
            // period runs out (the Python client reports a reset as an error in its thread).
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        try await session.run(request.messages) { try await writer.write($0) }
                    } catch let error as FlintError {
                        throw error.rpcError
                    }
                }
                group.addTask {
                    await draining.wait()
                    if !Task.isCancelled { throw RPCError(code: .unavailable, message: "Flint is shutting down.") }
                }
                try await group.next()
                group.cancelAll()
            }
            return [:]
        }
    }
}

/// One Write stream's state: its database, id and how many batches it has answered.
struct WriteStream {
    private(set) var database: String?
    private(set) var streamID = ""
    /// Set by the last request, which holds no writes.
    private(set) var finished = false
    private var batches: UInt64 = 0

    /// The token naming the stream's position: the count of answered batches.
    private var token: Data { withUnsafeBytes(of: batches.bigEndian) { Data($0) } }

    mutating func handle(_ r: Google_Firestore_V1_WriteRequest, _ calls: FirestoreCalls) async throws(FlintError)
        -> Google_Firestore_V1_WriteResponse
    {
        var response = Google_Firestore_V1_WriteResponse()
        guard let database else {
            // As on the reference, the handshake names the database itself; the prefix header
            // does not stand in for it.
            let named = r.database
            guard !named.isEmpty else { throw .invalidArgument("'database' must be set on an initial write request.") }
            try Self.refuseStreamID(r)
            // The token of an earlier stream would resume it too; only later requests carry one.
            guard r.streamToken.isEmpty else {
                throw .invalidArgument("Resuming streams is not supported, 'stream_token' must not be set on an initial write request.")
            }
            guard r.writes.isEmpty else { throw .invalidArgument("'writes' must not be set on an initial write request.") }
            _ = try ResourceName.parseDatabase(named)
            self.database = named
            streamID = AutoID.make()
            response.streamID = streamID
            response.streamToken = token
            return response
        }
        try Self.refuseStreamID(r)
        guard r.database.isEmpty || r.database == database else {
            throw .invalidArgument(
                "Request specified a database (\(r.database)) that did not match the expected database (\(database))")
        }
        // The token only acknowledges answers received. The SDKs send several batches before
        // the first answers arrive, each with the last token they hold, so an earlier token is
        // normal; the reference does not check it, and nothing here depends on it.
        guard !r.writes.isEmpty else {
            // Only the last request may hold no writes: it is answered, and the stream ends, as
            // on the reference.
            finished = true
            response.streamToken = token
            return response
        }
        var commit = Google_Firestore_V1_CommitRequest()
        commit.database = database
        commit.writes = r.writes
        let result = try await calls.commit(commit)
        batches += 1
        // The id comes with the first answer only, as the API says and the reference does.
        response.streamToken = token
        response.writeResults = result.writeResults
        response.commitTime = result.commitTime
        return response
    }

    /// Resuming a stream is not offered (the SDKs start a new one after any break), so no
    /// request may name one, the handshake or any after it, as on the reference.
    private static func refuseStreamID(_ r: Google_Firestore_V1_WriteRequest) throws(FlintError) {
        guard r.streamID.isEmpty else { throw .invalidArgument("Resuming streams is not supported, do not set stream ID.") }
    }
}

extension FlintError {
    /// The same code and message the REST side puts in its `google.rpc.Status` body.
    var rpcError: RPCError {
        let code = Status.Code(rawValue: self.code.rawValue).flatMap(RPCError.Code.init) ?? .unknown
        var metadata = Metadata()
        for line in details { metadata.addString(line, forKey: "flint-debug") }
        return RPCError(code: code, message: message, metadata: metadata)
    }
}
