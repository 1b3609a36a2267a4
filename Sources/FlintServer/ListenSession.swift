import FlintEngine
import FlintModel
import FlintProto
import FlintWire
import Foundation

/// One listen stream in Firestore's messages, whatever carries them (gRPC, or a WebSocket in
/// raw mode): the first request binds the database, each request adds or removes a target,
/// and a sender delivers what the watch engine has whenever it signals.
struct ListenSession: Sendable {
    let engine: Engine
    /// The database named by `google-cloud-resource-prefix`, used when a request names none.
    let defaultDatabase: String?
    /// Who listens, as of each new target; targets the rules deny are removed with PERMISSION_DENIED.
    var auth: @Sendable () -> AuthContext = { .owner }

    /// Serves the stream until the client stops sending; throws the error that ends it.
    func run<Requests: AsyncSequence>(
        _ requests: Requests, send: @escaping @Sendable (Google_Firestore_V1_ListenResponse) async throws -> Void
    ) async throws where Requests.Element == Google_Firestore_V1_ListenRequest {
        var iterator = requests.makeAsyncIterator()
        guard let first = try await iterator.next() else { return }
        let name = first.database.isEmpty ? (defaultDatabase ?? "") : first.database
        guard !name.isEmpty else { throw FlintError.invalidArgument("The first request on a listen stream must name the database.") }
        let id = try ResourceName.parseDatabase(name)
        let db = engine.database(id)
        let (stream, signal) = await db.openWatch()
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in signal {
                        for event in await db.takeWatchEvents(stream) { try await send(Self.response(event, id)) }
                    }
                }
                try await Self.apply(first, name, db, stream, auth())
                while let next = try await iterator.next() { try await Self.apply(next, name, db, stream, auth()) }
                // The client has stopped sending. What its requests produced still goes out,
                // as on the reference (a target refused just before a half-close is reported):
                // the sender stops once it has sent what is queued. A client that has gone
                // cannot take it, which is no error.
                await db.endWatchSignal(stream)
                while (try? await group.next()) != nil {}
            }
        } catch {
            await db.closeWatch(stream)
            throw error
        }
        await db.closeWatch(stream)
    }

    private static func apply(
        _ r: Google_Firestore_V1_ListenRequest, _ database: String, _ db: Database, _ stream: WatchStreamID, _ auth: AuthContext
    ) async throws(FlintError) {
        guard r.database.isEmpty || r.database == database else {
            throw .invalidArgument("A listen stream serves one database, \(database).")
        }
        switch r.targetChange {
        case .addTarget(let target)?:
            let parsed: WatchTarget
            do throws(FlintError) {
                parsed = try watchTarget(target, db.id)
            } catch {
                try await db.rejectWatchTarget(target.targetID, error, on: stream)
                return
            }
            try await db.addWatchTarget(parsed, to: stream, auth: auth)
        case .removeTarget(let targetID)?:
            await db.removeWatchTarget(targetID, from: stream)
        case nil:
            throw .invalidArgument("A listen request must add or remove a target.")
        }
    }

    static func watchTarget(_ p: Google_Firestore_V1_Target, _ db: DatabaseID) throws(FlintError) -> WatchTarget {
        let scope: WatchScope
        switch p.targetType {
        case .query(let q)?:
            // The reference leaves id lengths unchecked in listen targets, queries included.
            let (parentDB, parent) = try ResourceName.parseParent(q.parent, checkingIDLengths: false)
            guard parentDB == db else {
                throw .invalidArgument("Parent \"\(q.parent)\" is not in the database of the stream, \(db.name).")
            }
            guard case .structuredQuery(let structured)? = q.queryType else {
                throw .invalidArgument("A query target needs a structured query.")
            }
            scope = .query(try Wire.query(structured, parent: parent, db))
        case .documents(let d)?:
            var keys: [DocumentKey] = []
            for name in d.documents { keys.append(try Wire.documentKey(name, in: db, checkingIDLengths: false)) }
            scope = .documents(keys)
        case nil:
            throw .invalidArgument("A target must name a query or documents.")
        }
        var target = WatchTarget(id: p.targetID, scope: scope, once: p.once)
        switch p.resumeType {
        case .resumeToken(let token)?: target.resumeToken = [UInt8](token)
        case .readTime(let t)?: target.readTime = try Wire.optionTime(t)
        case nil: break
        }
        return target
    }

    static func response(_ event: WatchEvent, _ db: DatabaseID) -> Google_Firestore_V1_ListenResponse {
        var response = Google_Firestore_V1_ListenResponse()
        switch event {
        case .target(let kind, let ids, let token, let readTime, let cause):
            var change = Google_Firestore_V1_TargetChange()
            change.targetChangeType =
                switch kind {
                case .noChange: .noChange
                case .add: .add
                case .remove: .remove
                case .current: .current
                case .reset: .reset
                }
            change.targetIds = ids
            if let token { change.resumeToken = Data(token) }
            if let readTime { change.readTime = Wire.proto(readTime) }
            if let cause { change.cause = Wire.status(cause) }
            response.targetChange = change
        case .changed(let doc, let targets, let removed):
            var change = Google_Firestore_V1_DocumentChange()
            change.document = Wire.proto(doc, db)
            change.targetIds = targets
            change.removedTargetIds = removed
            response.documentChange = change
        case .deleted(let key, let removed, let readTime):
            var delete = Google_Firestore_V1_DocumentDelete()
            delete.document = Wire.name(key, db)
            delete.removedTargetIds = removed
            delete.readTime = Wire.proto(readTime)
            response.documentDelete = delete
        case .existenceFilter(let targetID, let count, let bloom):
            var filter = Google_Firestore_V1_ExistenceFilter()
            filter.targetID = targetID
            filter.count = Int32(clamping: count)
            if let bloom {
                var bits = Google_Firestore_V1_BitSequence()
                bits.bitmap = Data(bloom.bitmap)
                bits.padding = Int32(bloom.padding)
                filter.unchangedNames.bits = bits
                filter.unchangedNames.hashCount = Int32(bloom.hashCount)
            }
            response.filter = filter
        }
        return response
    }
}
