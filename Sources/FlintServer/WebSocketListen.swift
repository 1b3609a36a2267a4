import FlintEngine
import FlintModel
import FlintProto
import FlintQuery
import FlintWire
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import HummingbirdCore
import HummingbirdWebSocket
import NIOWebSocket
import Synchronization

/// Snapshot listeners over a WebSocket on the shared port, for clients without gRPC:
/// `GET /v1/projects/{p}/databases/{d}/documents:listen` upgraded to a WebSocket. Raw mode
/// carries ListenRequest / ListenResponse in Firestore's JSON; `?mode=snapshots` carries
/// subscriptions and whole snapshots (docs/websocket-listen.md describes both).
struct WebSocketListen: Sendable {
    enum Mode: String { case raw, snapshots }

    /// What an upgrade request asked for.
    struct Upgrade: Sendable {
        var database: DatabaseID
        var mode: Mode
        var auth: AuthContext
        /// Seconds between heartbeat messages in snapshot mode; nil: none.
        var heartbeat: Duration?
    }

    /// Closes a socket with a code and a reason.
    struct Close: Error {
        var code: WebSocketErrorCode
        var reason: String

        /// A stream-ending Firestore error: 4000 plus its gRPC code, and its message.
        init(_ error: FlintError) {
            code = .unknown(4000 + UInt16(error.code.rawValue))
            reason = error.message
        }

        init(_ code: WebSocketErrorCode, _ reason: String) {
            self.code = code
            self.reason = reason
        }
    }

    static let maxMessageBytes = Limits.maxRequestBytes

    let engine: Engine
    let logger: Logger
    let metrics: ServerMetrics

    /// Upgrades Firestore's listen path; everything else (bad paths, bad tokens too) stays HTTP,
    /// where the REST side answers with the error. Each session is counted as a request and,
    /// at `info`, logged when it ends, as gRPC streams are.
    func shouldUpgrade(_ head: HTTPRequest) -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard let upgrade = try? Self.parse(head) else { return .dontUpgrade }
        metrics.httpRequests.add(1, ordering: .relaxed)
        let path = head.path ?? ""
        return .upgrade([:]) { inbound, outbound, _ in
            let start = ContinuousClock.now
            // Verdicts are only collected for the log line: they cost string building per check.
            let trace = logger.logLevel <= .info ? RulesTrace() : nil
            var ending = "ended"
            defer {
                if let trace { logger.info("WebSocket \(path) \(ending)\(latencyAndRules(since: start, trace))") }
            }
            do {
                try await RulesTrace.$current.withValue(trace) {
                    switch upgrade.mode {
                    case .raw: try await serveRaw(upgrade, inbound, outbound)
                    case .snapshots: try await serveSnapshots(upgrade, inbound, outbound)
                    }
                }
            } catch let close as Close {
                ending = "closed \(UInt16(webSocketErrorCode: close.code))"
                try await outbound.close(close.code, reason: Self.clip(close.reason))
            } catch let error as FlintError {
                let close = Close(error)
                ending = "closed \(UInt16(webSocketErrorCode: close.code))"
                try await outbound.close(close.code, reason: Self.clip(close.reason))
            }
        }
    }

    static func parse(_ head: HTTPRequest) throws(FlintError) -> Upgrade {
        let uri = URI(head.path ?? "")
        let target = try RESTAPI.parse(uri.path)
        guard target.verb == "listen", target.path.isEmpty else { throw FlintError(.notFound, "not a listen path") }
        let q = uri.queryParameters
        guard let mode = Mode(rawValue: String(q["mode"] ?? "raw")) else { throw .invalidArgument("unknown mode") }
        let auth = try AuthContext(authorization: head.headerFields[.authorization])
        var heartbeat: Duration? = .seconds(30)
        if let text = q["heartbeat"] {
            guard let seconds = Double(text), seconds >= 0 else { throw .invalidArgument("bad heartbeat") }
            heartbeat = seconds == 0 ? nil : .milliseconds(Int64(seconds * 1000))
        }
        return Upgrade(database: target.database, mode: mode, auth: auth, heartbeat: heartbeat)
    }

    /// A close reason fits in 123 bytes.
    static func clip(_ reason: String) -> String {
        var out = ""
        for c in reason {
            if out.utf8.count + String(c).utf8.count > 123 { break }
            out.append(c)
        }
        return out
    }

    /// The text of each message; binary, oversized or malformed frames close the socket.
    private static func texts(_ inbound: WebSocketInboundStream) -> AsyncThrowingMapSequence<WebSocketInboundMessageStream, String> {
        inbound.messages(maxSize: maxMessageBytes).map { message throws -> String in
            guard case .text(let text) = message else { throw Close(.unacceptableData, "Messages are JSON text, not binary.") }
            return text
        }
    }

    /// `{"authorization": "Bearer ..."}`, for clients that cannot set headers on an upgrade.
    private static func authorization(_ text: String) throws -> AuthContext? {
        guard text.contains("\"authorization\""),
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], object.count == 1,
            let header = object["authorization"] as? String
        else { return nil }
        return try AuthContext(authorization: header)
    }

    // MARK: - Raw mode

    private func serveRaw(_ upgrade: Upgrade, _ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter) async throws {
        let auth = AuthBox(upgrade.auth)
        let requests = Self.texts(inbound).compactMap { text throws -> Google_Firestore_V1_ListenRequest? in
            if let given = try Self.authorization(text) {
                auth.current.withLock { $0 = given }
                return nil
            }
            let composed = SurrogateEscapes.composed(text)
            do {
                return try Google_Firestore_V1_ListenRequest(jsonString: composed, options: RESTAPI.decoding)
            } catch {
                let sentence = JSONPayloadError.describe(error, body: Data(composed.utf8), as: Google_Firestore_V1_ListenRequest.self)
                throw Close(.dataInconsistentWithMessage, "Not a ListenRequest in Firestore's JSON. " + sentence)
            }
        }
        let session = ListenSession(engine: engine, defaultDatabase: upgrade.database.name, auth: { auth.current.withLock { $0 } })
        try await session.run(requests) { response in
            try await outbound.writeTextMessage(try response.jsonString(options: RESTAPI.encoding))
        }
    }

    // MARK: - Snapshot mode

    /// A snapshot-mode socket's subscriptions: client ids against watch target ids, and the views.
    /// The socket's caller, replaced by an `authorization` message.
    private final class AuthBox: Sendable {
        let current: Mutex<AuthContext>
        init(_ auth: AuthContext) { current = Mutex(auth) }
    }

    /// Shared by the socket's reader and sender.
    private final class SubscriptionBook: Sendable {
        let state = Mutex(Subscriptions())
    }

    fileprivate struct Subscriptions: ~Copyable {
        var targets: [String: Int32] = [:]
        var names: [Int32: String] = [:]
        var nextTarget: Int32 = 1
        var views = SnapshotAssembler()

        mutating func forget(_ target: Int32) {
            if let name = names.removeValue(forKey: target), targets[name] == target { targets[name] = nil }
            views.unregister(target)
        }
    }

    private func serveSnapshots(_ upgrade: Upgrade, _ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter)
        async throws
    {
        let db = engine.database(upgrade.database)
        let (stream, signal) = await db.openWatch()
        let subscriptions = SubscriptionBook()
        let id = upgrade.database
        var auth = upgrade.auth
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in signal {
                        let events = await db.takeWatchEvents(stream)
                        let (snapshots, removed, names) = subscriptions.state.withLock { s in
                            let (snapshots, removed) = s.views.apply(events)
                            let names = s.names
                            for (target, _) in removed { s.forget(target) }
                            return (snapshots, removed, names)
                        }
                        for snapshot in snapshots {
                            guard let name = names[snapshot.targetID] else { continue }
                            try await outbound.writeTextMessage(Self.snapshotJSON(name, snapshot, id))
                        }
                        // Sent in order with the snapshots: nothing for a subscription follows its end.
                        for (target, error) in removed {
                            let name = names[target] ?? ""
                            try await outbound.writeTextMessage(
                                error.map { Self.errorJSON(name, $0) } ?? #"{"unsubscribed":{"id":"# + JSONString.quoted(name) + "}}")
                        }
                    }
                }
                if let interval = upgrade.heartbeat {
                    group.addTask {
                        while true {
                            try await Task.sleep(for: interval)
                            let now = RFC3339.format(await db.currentReadTime())
                            try await outbound.writeTextMessage(#"{"heartbeat":{"time":"\#(now)"}}"#)
                        }
                    }
                }
                for try await text in Self.texts(inbound) {
                    if let given = try Self.authorization(text) {
                        auth = given
                        continue
                    }
                    let request = try SnapshotRequest.parse(text, id)
                    switch request {
                    case .subscribe(let name, let scope):
                        let outcome: Result<Int32, FlintError> = subscriptions.state.withLock { s in
                            guard s.targets[name] == nil else {
                                return .failure(.invalidArgument("Subscription \"\(name)\" already exists on this socket."))
                            }
                            let target = s.nextTarget
                            s.nextTarget += 1
                            let query: NormalizedQuery?
                            switch scope {
                            case .query(let q):
                                do throws(FlintError) {
                                    query = try NormalizedQuery(q, database: id)
                                } catch {
                                    return .failure(error)
                                }
                            case .documents: query = nil
                            }
                            s.targets[name] = target
                            s.names[target] = name
                            s.views.register(target, query: query)
                            return .success(target)
                        }
                        switch outcome {
                        case .success(let target):
                            try await db.addWatchTarget(WatchTarget(id: target, scope: scope), to: stream, auth: auth)
                        case .failure(let error):
                            try await outbound.writeTextMessage(Self.errorJSON(name, error))
                        }
                    case .unsubscribe(let name):
                        // The id is free at once; the view ends when the engine confirms the removal.
                        let target = subscriptions.state.withLock { s in s.targets.removeValue(forKey: name) }
                        if let target {
                            await db.removeWatchTarget(target, from: stream)
                        } else {
                            let error = FlintError(.notFound, "No subscription \"\(name)\" on this socket.")
                            try await outbound.writeTextMessage(Self.errorJSON(name, error))
                        }
                    case .invalid(let name, let error):
                        try await outbound.writeTextMessage(Self.errorJSON(name, error))
                    }
                }
                group.cancelAll()
            }
        } catch {
            await db.closeWatch(stream)
            throw error
        }
        await db.closeWatch(stream)
    }

    /// One snapshot: every document in order, and the changes since the previous one.
    static func snapshotJSON(_ name: String, _ s: ViewSnapshot, _ db: DatabaseID) throws -> String {
        var out = #"{"snapshot":{"id":"# + JSONString.quoted(name) + #","readTime":""# + RFC3339.format(s.readTime) + #"","documents":["#
        out += try s.documents.map { try Wire.proto($0, db).jsonString(options: RESTAPI.encoding) }.joined(separator: ",")
        out += #"],"changes":["#
        out += s.changes.map { c in
            #"{"type":""# + c.kind.rawValue + #"","document":"# + JSONString.quoted(Wire.name(c.document.key, db))
                + #","oldIndex":\#(c.oldIndex),"newIndex":\#(c.newIndex)}"#
        }.joined(separator: ",")
        return out + "]}}"
    }

    static func errorJSON(_ name: String, _ e: FlintError) -> String {
        #"{"error":{"id":"# + JSONString.quoted(name) + #","code":\#(e.code.rawValue),"status":""# + e.code.name + #"","message":"#
            + JSONString.quoted(e.message) + "}}"
    }
}

/// A snapshot-mode message from the client.
enum SnapshotRequest {
    case subscribe(String, WatchScope)
    case unsubscribe(String)
    /// Well-formed but not servable: answered with an error for that subscription.
    case invalid(String, FlintError)
}

extension SnapshotRequest {
    /// Reads one message: `{"subscribe": {"id", "document" | "query" [, "parent"]}}` or
    /// `{"unsubscribe": {"id"}}`. Paths are relative to the database's documents or full names.
    static func parse(_ text: String, _ db: DatabaseID) throws -> SnapshotRequest {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], object.count == 1 else {
            throw WebSocketListen.Close(
                .dataInconsistentWithMessage, "Expected a JSON object with one key: subscribe, unsubscribe or authorization.")
        }
        if let unsubscribe = object["unsubscribe"] {
            guard let fields = unsubscribe as? [String: Any], fields.count == 1, let name = fields["id"] as? String else {
                throw WebSocketListen.Close(.dataInconsistentWithMessage, "unsubscribe holds an \"id\" string and nothing else.")
            }
            return .unsubscribe(name)
        }
        guard let subscribe = object["subscribe"] as? [String: Any] else {
            throw WebSocketListen.Close(.dataInconsistentWithMessage, "Unknown message; expected subscribe, unsubscribe or authorization.")
        }
        guard let name = subscribe["id"] as? String, !name.isEmpty else {
            throw WebSocketListen.Close(.dataInconsistentWithMessage, "subscribe needs an \"id\" string.")
        }
        do throws(FlintError) {
            // Told rather than skipped: a misspelt "parent" would follow another collection.
            if let stray = subscribe.keys.filter({ !["id", "document", "query", "parent"].contains($0) }).sorted().first {
                throw .invalidArgument("Unknown key \"\(stray)\" in subscribe; it holds id, document, query and parent.")
            }
            if subscribe["parent"] != nil && !(subscribe["parent"] is String) { throw .invalidArgument("parent must be a document path.") }
            if subscribe["document"] != nil {
                guard let document = subscribe["document"] as? String else { throw .invalidArgument("document must be a document path.") }
                guard subscribe["query"] == nil, subscribe["parent"] == nil else {
                    throw .invalidArgument("subscribe takes a \"document\" or a \"query\" (with its \"parent\"), not both.")
                }
                return .subscribe(name, .documents([try key(document, db)]))
            }
            guard let query = subscribe["query"] as? [String: Any] else {
                throw .invalidArgument("subscribe needs a \"document\" path or a \"query\".")
            }
            let structured: Google_Firestore_V1_StructuredQuery
            guard let data = try? JSONSerialization.data(withJSONObject: query) else {
                throw .invalidArgument("The query is not a StructuredQuery in Firestore's JSON.")
            }
            do {
                structured = try Google_Firestore_V1_StructuredQuery(jsonUTF8Data: data, options: RESTAPI.decoding)
            } catch {
                let sentence = JSONPayloadError.describe(error, body: data, as: Google_Firestore_V1_StructuredQuery.self, root: "query")
                throw .invalidArgument("The query is not a StructuredQuery in Firestore's JSON. " + sentence)
            }
            var parent = ResourcePath.root
            if let text = subscribe["parent"] as? String, !text.isEmpty { parent = try key(text, db).path }
            return .subscribe(name, .query(try Wire.query(structured, parent: parent, db)))
        } catch {
            return .invalid(name, error)
        }
    }

    private static func key(_ path: String, _ db: DatabaseID) throws(FlintError) -> DocumentKey {
        path.hasPrefix("projects/") ? try Wire.documentKey(path, in: db) : try DocumentKey(parsing: path)
    }
}
