import FlintEngine
import FlintModel
import FlintProto
import FlintQuery
import FlintWire
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import Synchronization

/// One cleartext HTTP/2 connection to an emulator, shared by the instances derived from one
/// `Firestore`; it starts with the first call.
final class RemoteConnection: Sendable {
    typealias Client = Google_Firestore_V1_Firestore.Client<HTTP2ClientTransport.Posix>

    let host: String
    private let state = Mutex<(client: GRPCClient<HTTP2ClientTransport.Posix>, runner: Task<Void, Never>)?>(nil)

    init(host: String) { self.host = host }

    func client() throws -> Client {
        try state.withLock { s in
            if let s { return Client(wrapping: s.client) }
            let target = try HostAndPort(parsing: host)
            let transport = try HTTP2ClientTransport.Posix(target: .dns(host: target.host, port: target.port), transportSecurity: .plaintext)
            let client = GRPCClient(transport: transport)
            let runner = Task { _ = try? await client.runConnections() }
            s = (client, runner)
            return Client(wrapping: client)
        }
    }

    /// Lets calls in flight finish for a moment, then cuts the rest (open listeners would
    /// otherwise keep a graceful shutdown waiting forever), as the SDK's `terminate` does.
    func close() async {
        let current = state.withLock { s in
            defer { s = nil }
            return s
        }
        guard let current else { return }
        current.client.beginGracefulShutdown()
        let cutoff = Task {
            try? await Task.sleep(for: .milliseconds(500))
            current.runner.cancel()
        }
        await current.runner.value
        cutoff.cancel()
    }

    deinit {
        state.withLock { $0?.client.beginGracefulShutdown() }
    }
}

/// Firestore's gRPC API at an emulator (Flint or Google's).
struct RemoteBackend: FirestoreBackend {
    let connection: RemoteConnection
    let database: DatabaseID

    /// Auth as the emulators read it: `Bearer owner`, or an unsigned JWT with the claims.
    func metadata(_ auth: AuthContext) -> Metadata {
        var m = Metadata()
        m.addString(database.name, forKey: "google-cloud-resource-prefix")
        switch auth {
        case .owner: m.addString("Bearer owner", forKey: "authorization")
        case .unauthenticated: break
        case .user(_, let token): m.addString("Bearer " + Self.unsignedToken(token), forKey: "authorization")
        }
        return m
    }

    static func unsignedToken(_ claims: MapValue) -> String {
        func json(_ v: Value) -> Any {
            switch v {
            case .string(let s): return s
            case .boolean(let b): return b
            case .integer(let i): return i
            case .double(let d): return d
            case .map(let m): return Dictionary(uniqueKeysWithValues: m.entries.map { ($0.key, json($0.value)) })
            case .array(let a): return a.map(json)
            default: return NSNull()
            }
        }
        var payload = json(.map(claims)) as? [String: Any] ?? [:]
        let now = Int(Date().timeIntervalSince1970)
        payload["iat"] = now
        payload["exp"] = now + 3600
        payload["aud"] = "flint"
        payload["iss"] = "https://securetoken.google.com/flint"
        let encode = { (object: Any) -> String in
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            return data.base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_")
        }
        return encode(["alg": "none", "typ": "JWT"]) + "." + encode(payload) + "."
    }

    /// Runs a call, turning gRPC failures into Flint errors with the server's message.
    private func call<T>(_ body: (RemoteConnection.Client) async throws -> T) async throws -> T {
        do {
            return try await body(try connection.client())
        } catch let e as RPCError {
            throw FlintError(StatusCode(rawValue: e.code.rawValue) ?? .unknown, e.message)
        } catch let e as RuntimeError {
            throw FlintError(.unavailable, "The emulator at \(connection.host) cannot be reached: \(e.message)")
        }
    }

    func get(_ key: DocumentKey, transaction: TransactionID?, auth: AuthContext) async throws -> Document? {
        var request = Google_Firestore_V1_BatchGetDocumentsRequest()
        request.database = database.name
        request.documents = [Wire.name(key, database)]
        if let transaction { request.transaction = Data(transaction.bytes) }
        let db = database
        return try await call { client in
            try await client.batchGetDocuments(request, metadata: metadata(auth)) { response in
                var found: Document?
                for try await message in response.messages {
                    if case .found(let doc)? = message.result { found = try Wire.document(doc, db) }
                }
                return found
            }
        }
    }

    func runQuery(_ query: FlintQuery.Query, transaction: TransactionID?, auth: AuthContext) async throws -> [Document] {
        let (parent, structured) = Wire.proto(query, database)
        var request = Google_Firestore_V1_RunQueryRequest()
        request.parent = parent
        request.structuredQuery = structured
        if let transaction { request.transaction = Data(transaction.bytes) }
        let db = database
        return try await call { client in
            try await client.runQuery(request, metadata: metadata(auth)) { response in
                var documents: [Document] = []
                for try await message in response.messages where message.hasDocument {
                    documents.append(try Wire.document(message.document, db))
                }
                return documents
            }
        }
    }

    func aggregate(_ query: FlintQuery.Query, _ aggregations: [Aggregation], auth: AuthContext) async throws -> [String: Value] {
        let (parent, structured) = Wire.proto(query, database)
        var request = Google_Firestore_V1_RunAggregationQueryRequest()
        request.parent = parent
        request.structuredAggregationQuery.structuredQuery = structured
        request.structuredAggregationQuery.aggregations = aggregations.map(Wire.proto)
        let db = database
        return try await call { client in
            try await client.runAggregationQuery(request, metadata: metadata(auth)) { response in
                var values: [String: Value] = [:]
                for try await message in response.messages where message.hasResult {
                    for (alias, v) in message.result.aggregateFields { values[alias.string] = try Wire.value(v, db) }
                }
                return values
            }
        }
    }

    func commit(_ writes: [Write], transaction: TransactionID?, auth: AuthContext) async throws -> CommitResult {
        var request = Google_Firestore_V1_CommitRequest()
        request.database = database.name
        request.writes = writes.map { Wire.proto($0, database) }
        if let transaction { request.transaction = Data(transaction.bytes) }
        return try await call { client in
            try Wire.commitResult(try await client.commit(request, metadata: metadata(auth)))
        }
    }

    func beginTransaction(retrying: TransactionID?, auth: AuthContext) async throws -> TransactionID {
        var request = Google_Firestore_V1_BeginTransactionRequest()
        request.database = database.name
        var readWrite = Google_Firestore_V1_TransactionOptions.ReadWrite()
        if let retrying { readWrite.retryTransaction = Data(retrying.bytes) }
        request.options.readWrite = readWrite
        return try await call { client in
            TransactionID(bytes: [UInt8](try await client.beginTransaction(request, metadata: metadata(auth)).transaction))
        }
    }

    func rollback(_ transaction: TransactionID, auth: AuthContext) async throws {
        var request = Google_Firestore_V1_RollbackRequest()
        request.database = database.name
        request.transaction = Data(transaction.bytes)
        _ = try await call { client in try await client.rollback(request, metadata: metadata(auth)) }
    }

    func snapshots(_ scope: WatchScope, order: FlintQuery.Query?, auth: AuthContext) -> AsyncThrowingStream<ViewSnapshot, any Error> {
        var request = Google_Firestore_V1_ListenRequest()
        request.database = database.name
        var target = Google_Firestore_V1_Target()
        target.targetID = 1
        let ordering: NormalizedQuery?
        switch scope {
        case .documents(let keys):
            target.documents.documents = keys.map { Wire.name($0, database) }
            ordering = nil
        case .query(let q):
            let (parent, structured) = Wire.proto(q, database)
            target.query.parent = parent
            target.query.structuredQuery = structured
            ordering = try? NormalizedQuery(order ?? q, database: database)
        }
        request.addTarget = target
        let db = database
        let metadata = metadata(auth)
        let connection = connection
        let addTarget = request
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await connection.client().listen(
                        metadata: metadata,
                        requestProducer: { writer in
                            try await writer.write(addTarget)
                            // The stream stays open until the listener goes away.
                            while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
                        },
                        onResponse: { response in
                            var views = SnapshotAssembler()
                            views.register(1, query: ordering)
                            for try await message in response.messages {
                                guard let event = try ListenConversion.event(message, db) else { continue }
                                let (snapshots, removed) = views.apply([event])
                                for s in snapshots { continuation.yield(s) }
                                if let (_, cause) = removed.first {
                                    throw cause ?? FlintError(.cancelled, "The listener was removed.")
                                }
                            }
                        })
                    continuation.finish()
                } catch let e as RPCError {
                    continuation.finish(throwing: FlintError(StatusCode(rawValue: e.code.rawValue) ?? .unknown, e.message))
                } catch is CancellationError {
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// Listen responses as the watch events `SnapshotAssembler` reads.
enum ListenConversion {
    static func event(_ m: Google_Firestore_V1_ListenResponse, _ db: DatabaseID) throws -> WatchEvent? {
        switch m.responseType {
        case .targetChange(let c)?:
            let kind: TargetChangeKind
            switch c.targetChangeType {
            case .noChange: kind = .noChange
            case .add: kind = .add
            case .remove: kind = .remove
            case .current: kind = .current
            case .reset: kind = .reset
            case .UNRECOGNIZED: return nil
            }
            let cause = c.hasCause ? FlintError(StatusCode(rawValue: Int(c.cause.code)) ?? .unknown, c.cause.message) : nil
            return .target(
                kind, ids: c.targetIds, resumeToken: c.resumeToken.isEmpty ? nil : [UInt8](c.resumeToken),
                readTime: c.hasReadTime ? try Wire.timestamp(c.readTime) : nil, cause: cause)
        case .documentChange(let c)?:
            return .changed(try Wire.document(c.document, db), targetIDs: c.targetIds, removedTargetIDs: c.removedTargetIds)
        case .documentDelete(let d)?:
            return .deleted(
                try Wire.documentKey(d.document, in: db), removedTargetIDs: d.removedTargetIds,
                readTime: d.hasReadTime ? try Wire.timestamp(d.readTime) : FlintModel.Timestamp(microseconds: 0))
        case .documentRemove(let d)?:
            return .deleted(
                try Wire.documentKey(d.document, in: db), removedTargetIDs: d.removedTargetIds,
                readTime: d.hasReadTime ? try Wire.timestamp(d.readTime) : FlintModel.Timestamp(microseconds: 0))
        case .filter?, nil:
            return nil
        }
    }
}
