import FlintEngine
import FlintModel
import FlintProto
import FlintQuery
import FlintWire
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import SwiftProtobuf

/// Firestore's REST v1 on the HTTP side of the port: each request is parsed into Flint's model,
/// run by the database it names, and answered in Firestore's JSON. The API's earlier version,
/// v1beta1, has the same paths and JSON under `/v1beta1/`, less runAggregationQuery.
struct RESTAPI: Sendable {
    let calls: FirestoreCalls

    init(engine: Engine) { calls = FirestoreCalls(engine: engine) }

    /// What a `/v1/...` (or `/v1beta1/...`) path names.
    struct Target {
        var database: DatabaseID
        /// Below `documents`; empty for the root.
        var path: ResourcePath
        /// The `:verb` after the last segment, if one of Firestore's.
        var verb: String?
        /// The full resource name, `projects/{p}/databases/{d}/documents[/{path}]`.
        var documentsName: String
        /// A `GET` of the root or a document with a trailing `/`: ListDocuments without a
        /// collection id, which lists every collection directly below.
        var listsEveryCollection = false
        /// A `POST` to the root or a document with a trailing `/`: a create whose collection
        /// id is empty.
        var createsInUnnamedCollection = false

        init(database: DatabaseID, path: ResourcePath, verb: String?, name: String? = nil) {
            self.database = database
            self.path = path
            self.verb = verb
            documentsName = name ?? (path.isEmpty ? database.documentsRoot : database.documentsRoot + "/" + path.canonical)
        }
    }

    static let verbs: Set<String> = [
        "batchGet", "beginTransaction", "commit", "rollback", "runQuery", "runAggregationQuery", "partitionQuery",
        "listCollectionIds", "batchWrite", "listen",
    ]

    func respond(_ request: Request, context: some RequestContext) async -> Response {
        do throws(FlintError) {
            // Read on every request, as the reference does; the rules decide with it.
            let auth = try AuthContext(authorization: request.headers[.authorization])
            let target: Target
            do throws(FlintError) {
                target = try Self.parse(request.uri.path, method: request.method)
            } catch where error.code == .invalidArgument {
                // The reference reads a body before the name in the path: a bad body is told first.
                try await Self.checkBody(request)
                throw error
            }
            let alt = request.uri.queryParameters["$alt"].map(String.init) ?? ""
            let asInts = alt.split(separator: ";").contains { $0.replacingOccurrences(of: " ", with: "") == "enum-encoding=int" }
            // TaskLocal's withValue rethrows untyped errors; the answer carries its own error.
            let result: Result<Response, FlintError> = await Self.$enumsAsInts.withValue(asInts) {
                do throws(FlintError) {
                    return .success(try await dispatch(request, target, calls.acting(as: auth)))
                } catch {
                    return .failure(error)
                }
            }
            return try result.get()
        } catch {
            return error.restResponse()
        }
    }

    /// The resource a path names. Its problems are told as the reference tells them: a `POST`
    /// names a parent (of the document it creates, or of the query or listing it runs), any
    /// other method a document or collection.
    static func parse(_ rawPath: String, method: HTTPRequest.Method = .get, splittingVerb: Bool = true) throws(FlintError) -> Target {
        if method == .get, let parentPath = droppingTrailingSlash(rawPath), droppingTrailingSlash(parentPath) == nil,
            var parent = try? parse(parentPath), parent.verb == nil, !parent.path.isCollectionPath
        {
            parent.listsEveryCollection = true
            return parent
        }
        // A create's collection id is what follows the last `/`; after a trailing one it is
        // empty, which the create refuses once it has read the parent and the document's id.
        if method == .post, let parentPath = droppingTrailingSlash(rawPath), droppingTrailingSlash(parentPath) == nil {
            var parent = try parse(parentPath, method: .post, splittingVerb: false)
            if parent.path.isCollectionPath { _ = try ResourceName.parseParent(parent.documentsName) }
            parent.createsInUnnamedCollection = true
            return parent
        }
        // Most paths carry no percent-encoding: the name is then the path itself, less `/v1/`
        // (or `/v1beta1/`) and any `:verb`, with no need to split it here and join it again.
        let prefixLength = rawPath.hasPrefix("/v1/projects/") ? 4 : rawPath.hasPrefix("/v1beta1/projects/") ? 9 : 0
        if prefixLength > 0, !rawPath.utf8.contains(UInt8(ascii: "%")) {
            let bytes = rawPath.utf8.dropFirst(prefixLength)
            var name = bytes
            var verb: String?
            let lastID = bytes.lastIndex(of: UInt8(ascii: "/")).map { bytes[bytes.index(after: $0)...] } ?? bytes
            if splittingVerb, let colon = lastID.firstIndex(of: UInt8(ascii: ":")) {
                let word = String(Substring(bytes[bytes.index(after: colon)...]))
                let atRoot = bytes[..<colon].count { $0 == UInt8(ascii: "/") } == 4
                if isVerb(word, atRoot: atRoot, method: method) {
                    verb = word
                    name = bytes[..<colon]
                }
            }
            // Parsing refused empty segments, so the text is already the canonical name.
            let text = String(Substring(name))
            try checkRoutable(text, rawPath)
            let parsed = try parseName(text, method: method, verb: verb, wholeParent: !splittingVerb)
            return Target(database: parsed.database, path: parsed.path, verb: verb, name: text)
        }
        var segments: [String] = []
        for raw in rawPath.split(onASCII: "/").dropFirst(2) {
            guard raw.utf8.contains(UInt8(ascii: "%")) else {
                segments.append(String(raw))
                continue
            }
            guard let decoded = String(raw).removingPercentEncoding else {
                throw .invalidArgument("The path \"\(rawPath)\" has invalid percent-encoding.")
            }
            segments.append(decoded)
        }
        var verb: String?
        if splittingVerb, let last = segments.last, let found = methodAfterColon(in: last, atRoot: segments.count == 5, method: method) {
            verb = found.word
            segments[segments.count - 1] = String(last[..<found.colon])
        }
        let name = segments.joined(separator: "/")
        try checkRoutable(name, rawPath)
        let parsed = try parseName(name, method: method, verb: verb, wholeParent: !splittingVerb)
        return Target(database: parsed.database, path: parsed.path, verb: verb)
    }

    /// Only names under `projects/*/databases/*/documents` reach a method (a `:word` after
    /// `documents` is told of later, with the methods there are); the reference answers any
    /// other path `404`, whatever its method, before it reads the ids.
    private static func checkRoutable(_ name: String, _ rawPath: String) throws(FlintError) {
        let parts = name.split(onASCII: "/", maxSplits: 5)
        guard parts.count >= 5, parts[0] == "projects", parts[2] == "databases",
            parts[4] == "documents" || (parts[4].hasPrefix("documents:") && parts.count == 5)
        else {
            throw FlintError(.notFound, "No Firestore resource at \(rawPath).")
        }
    }

    /// The methods a POST reaches below the root too: a query or listing under a document.
    static let parentVerbs: Set<String> = ["runQuery", "runAggregationQuery", "partitionQuery", "listCollectionIds"]

    /// Whether the `:word` after the first colon of a name's last id is a method, as the
    /// reference routes it: any method on the root (`documents:commit`), where the database's
    /// own methods live; below it only a POST's query and listing methods. Elsewhere the colon
    /// is part of the id, so `PATCH …/c/a:commit` writes document `a:commit`, and
    /// `POST …/c/a/b:commit` and `POST …/c/a/b:x:runQuery` create documents in collections
    /// `b:commit` and `b:x:runQuery`.
    private static func isVerb(_ word: String, atRoot: Bool, method: HTTPRequest.Method) -> Bool {
        verbs.contains(word) && (atRoot || (method == .post && parentVerbs.contains(word)))
    }

    /// The method named after the first colon of a decoded last id, if it is one, and that colon.
    private static func methodAfterColon(in lastID: String, atRoot: Bool, method: HTTPRequest.Method) -> (word: String, colon: String.Index)? {
        // By bytes, as names are read: a colon a combining mark follows is still a colon.
        guard let (id, after) = lastID.splitAtFirst(ofASCII: ":") else { return nil }
        let word = String(after)
        return isVerb(word, atRoot: atRoot, method: method) ? (word, id.endIndex) : nil
    }

    /// The path less its last `/`, written or percent-encoded: the reference decodes a path
    /// before it routes it.
    private static func droppingTrailingSlash(_ path: String) -> String? {
        if path.hasSuffix("/") { return String(path.dropLast()) }
        if path.hasSuffix("%2F") || path.hasSuffix("%2f") { return String(path.dropLast(3)) }
        return nil
    }

    /// A name whose `:word` is none of Firestore's methods is a name with a colon in its last
    /// id, which is fine for a document; when that does not parse but the name before the
    /// colon does, the client asked for a method that does not exist. Id lengths are left to
    /// the call, which knows whether the name is stored or only looked up.
    /// With `wholeParent` the name is a create's whole parent (its path ended in `/`).
    private static func parseName(_ name: String, method: HTTPRequest.Method, verb: String?, wholeParent: Bool) throws(FlintError) -> ResourceName {
        let kind = method == .post ? "Document parent" : "Document"
        do {
            return try ResourceName.parse(name, kind: kind, checkingIDLengths: false)
        } catch {
            if let (id, word) = (name.splitAtLast(ofASCII: "/")?.after ?? name[...]).splitAtFirst(ofASCII: ":"),
                (try? ResourceName.parse(String(name[..<id.endIndex]), checkingIDLengths: false)) != nil
            {
                // A method of Firestore's, but with a `/` after it.
                if verbs.contains(String(word)) { throw FlintError(.notFound, "Nothing may follow :\(word) in a path.") }
                throw FlintError(
                    .notFound, "Firestore has no method \"\(word)\"; the REST methods are \(verbs.subtracting(["listen"]).sorted().joined(separator: ", ")).")
            }
            // A listing's collection id is checked among the listing's own checks (after its
            // page size), as the reference checks it; only its parent is read here.
            if method == .get, verb == nil, let (parent, id) = name.splitAtLast(ofASCII: "/"), !id.isEmpty, id != ".", id != "..",
                let listed = try? ResourceName.parse(String(parent), kind: kind, checkingIDLengths: false), !listed.path.isCollectionPath
            {
                return ResourceName(database: listed.database, path: listed.path.appending(String(id)))
            }
            // A create's collection id is what follows the last `/`, and its parent everything
            // before; the reference reads the collection id first (`.`, `..`, reserved names),
            // then the parent, so a problem in either is told of as itself.
            if method == .post, verb == nil, !wholeParent, let (parent, id) = name.splitAtLast(ofASCII: "/") {
                if !id.isEmpty { try Validation.validateCollectionID(String(id), checkingLength: false) }
                _ = try ResourceName.parse(String(parent), kind: kind, checkingIDLengths: false)
            }
            throw error
        }
    }

    private func dispatch(_ request: Request, _ t: Target, _ calls: FirestoreCalls) async throws(FlintError) -> Response {
        if let query = request.uri.query { try Self.checkEncoding(query) }
        let q = Self.canonicalParameters(request.uri.queryParameters)
        try Self.refuseRepeated(q, method: request.method, verb: t.verb)
        let database = t.database.name
        switch (request.method, t.verb) {
        case (.get, nil) where t.path.isDocumentPath && !t.listsEveryCollection:
            var r = Google_Firestore_V1_GetDocumentRequest()
            r.name = t.documentsName
            if let mask = Self.mask(q, "mask", "mask.fieldPaths") { r.mask = mask }
            if let id = try Self.transaction(q) { r.transaction = id }
            if let time = try Self.readTime(q) { r.readTime = time }
            return try Self.json(try await calls.getDocument(r))
        case (.get, nil):
            var r = Google_Firestore_V1_ListDocumentsRequest()
            if t.listsEveryCollection {
                r.parent = t.documentsName
            } else {
                guard let collectionID = t.path.last else {
                    throw FlintError(.notFound, "List a collection: GET .../documents/{collection}, or every collection below: GET .../documents/.")
                }
                r.parent = ResourceName(database: t.database, path: t.path.dropLast).text
                r.collectionID = collectionID
            }
            if let size = q["pageSize"] {
                guard let n = Int32(size) else { throw .invalidArgument("pageSize must be an integer, not \"\(size)\".") }
                r.pageSize = n
            }
            r.pageToken = q["pageToken"].map(String.init) ?? ""
            r.orderBy = q["orderBy"].map(String.init) ?? ""
            if let mask = Self.mask(q, "mask", "mask.fieldPaths") { r.mask = mask }
            r.showMissing = q["showMissing"].flatMap(Self.flag) ?? false
            if let id = try Self.transaction(q) { r.transaction = id }
            if let time = try Self.readTime(q) { r.readTime = time }
            return try Self.json(try await calls.listDocuments(r))
        case (.post, nil):
            var r = Google_Firestore_V1_CreateDocumentRequest()
            if t.createsInUnnamedCollection {
                r.parent = t.documentsName
            } else {
                guard t.path.isCollectionPath, let collectionID = t.path.last else {
                    // A document path's parent is a collection, which is refused as a parent,
                    // after the body, as the reference reads the body first.
                    if t.path.isDocumentPath {
                        do throws(FlintError) {
                            _ = try ResourceName.parseParent(ResourceName(database: t.database, path: t.path.dropLast).text)
                        } catch {
                            try await Self.checkBody(request)
                            throw error
                        }
                    }
                    throw FlintError(.notFound, "Documents are created in a collection: POST to .../documents/{collection}.")
                }
                r.parent = ResourceName(database: t.database, path: t.path.dropLast).text
                r.collectionID = collectionID
            }
            r.documentID = q["documentId"].map(String.init) ?? ""
            r.document = try await Self.decode(request, root: "document")
            if let mask = Self.mask(q, "mask", "mask.fieldPaths") { r.mask = mask }
            return try Self.json(try await calls.createDocument(r))
        // The root is no document: a write or delete there has no route, as on the reference.
        case (.patch, nil) where !t.path.isEmpty:
            var r = Google_Firestore_V1_UpdateDocumentRequest()
            r.document = try await Self.decode(request, root: "document")
            r.document.name = t.documentsName
            if let mask = Self.mask(q, "updateMask", "updateMask.fieldPaths") { r.updateMask = mask }
            if let mask = Self.mask(q, "mask", "mask.fieldPaths") { r.mask = mask }
            if let precondition = try Self.precondition(q) { r.currentDocument = precondition }
            return try Self.json(try await calls.updateDocument(r))
        case (.delete, nil) where !t.path.isEmpty:
            var r = Google_Firestore_V1_DeleteDocumentRequest()
            r.name = t.documentsName
            if let precondition = try Self.precondition(q) { r.currentDocument = precondition }
            return try Self.json(try await calls.deleteDocument(r))
        case (.post, "commit"?):
            var r: Google_Firestore_V1_CommitRequest = try await Self.decode(request)
            r.database = database
            return try Self.json(try await calls.commit(r))
        case (.post, "batchWrite"?):
            var r: Google_Firestore_V1_BatchWriteRequest = try await Self.decode(request)
            r.database = database
            return try Self.json(try await calls.batchWrite(r))
        case (.post, "beginTransaction"?):
            var r: Google_Firestore_V1_BeginTransactionRequest = try await Self.decode(request)
            r.database = database
            return try Self.json(try await calls.beginTransaction(r))
        case (.post, "rollback"?):
            var r: Google_Firestore_V1_RollbackRequest = try await Self.decode(request)
            r.database = database
            return try Self.json(try await calls.rollback(r))
        case (.post, "batchGet"?):
            var r: Google_Firestore_V1_BatchGetDocumentsRequest = try await Self.decode(request)
            r.database = database
            return try Self.jsonArray(try await calls.batchGetDocuments(r))
        case (.post, "runQuery"?):
            var r: Google_Firestore_V1_RunQueryRequest = try await Self.decode(request)
            r.parent = t.documentsName
            return try Self.jsonArray(try await calls.runQuery(r))
        case (.post, "runAggregationQuery"?) where request.uri.path.hasPrefix("/v1beta1/"):
            throw FlintError(.unimplemented, FirestoreV1Beta1.lackingMessage)
        case (.post, "runAggregationQuery"?):
            var r: Google_Firestore_V1_RunAggregationQueryRequest = try await Self.decode(request)
            r.parent = t.documentsName
            return try Self.jsonArray(try await calls.runAggregationQuery(r))
        case (.post, "listCollectionIds"?):
            var r: Google_Firestore_V1_ListCollectionIdsRequest = try await Self.decode(request)
            r.parent = t.documentsName
            return try Self.json(try await calls.listCollectionIds(r))
        case (.post, "partitionQuery"?):
            var r: Google_Firestore_V1_PartitionQueryRequest = try await Self.decode(request)
            r.parent = t.documentsName
            return try Self.json(try await calls.partitionQuery(r))
        case (.get, "listen"?):
            throw .invalidArgument(
                "documents:listen is a WebSocket endpoint: open it with a WebSocket handshake (\"Upgrade: websocket\", a \"Sec-WebSocket-Key\" and \"Sec-WebSocket-Version: 13\"; docs/websocket-listen.md), or use gRPC Listen.")
        case (.post, let verb?):
            throw FlintError(.unimplemented, "\(verb) is not served over REST; it is a streaming gRPC method.")
        case (.put, nil):
            throw FlintError(.notFound, "No route for PUT \(request.uri.path): documents are written with PATCH (or created with POST to their collection).")
        default:
            throw FlintError(.notFound, "No route for \(request.method) \(request.uri.path).")
        }
    }

    // MARK: - Helpers

    /// A transaction id from a query parameter (base64, standard or URL-safe).
    static func transaction(_ q: FlatDictionary<Substring, Substring>) throws(FlintError) -> Data? {
        guard let text = q["transaction"] else { return nil }
        var s = String(text).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.utf8.count % 4 != 0 { s += "=" }
        guard let data = Data(base64Encoded: s) else { throw .invalidArgument("Invalid transaction.") }
        return data
    }

    /// A `DocumentMask` parameter, repeated: `mask.fieldPaths=a`, or, since the message has
    /// that one field, `mask=a`, which the reference reads the same way; both may be given.
    /// Any other parameter below the mask (`mask.fieldPath=a`, `mask.fieldPaths[]=a`) makes it
    /// present but empty, as on the reference. Nil when absent; the paths are parsed by the
    /// call that uses them. Both spellings come as literals, so a request without a mask (the
    /// usual write) builds no string.
    static func mask(_ q: FlatDictionary<Substring, Substring>, _ short: Substring, _ long: Substring) -> Google_Firestore_V1_DocumentMask? {
        guard q.has(long) || q.has(short) || q.contains(where: { $0.key.starts(with: short) && $0.key.dropFirst(short.count).first == "." })
        else { return nil }
        var mask = Google_Firestore_V1_DocumentMask()
        mask.fieldPaths = (q[values: short] + q[values: long]).map(String.init)
        return mask
    }

    /// The fields the document routes read from the query string, by their proto names.
    static let parameterFields: [Substring: Substring] = [
        "page_size": "pageSize", "page_token": "pageToken", "order_by": "orderBy", "show_missing": "showMissing",
        "document_id": "documentId", "read_time": "readTime", "mask": "mask", "update_mask": "updateMask",
        "field_paths": "fieldPaths", "current_document": "currentDocument", "update_time": "updateTime",
        "transaction": "transaction", "exists": "exists",
    ]

    /// The query string with each parameter named as Flint reads it. The reference matches a
    /// name's dot-separated parts to the request's fields through their proto names, writing a
    /// capital letter as `_` and its lower case, so `update_mask.field_paths`, `updateMask.field_paths`
    /// and `PageSize` name what `updateMask.fieldPaths` and `pageSize` name, and `pagesize` nothing.
    static func canonicalParameters(_ q: FlatDictionary<Substring, Substring>) -> FlatDictionary<Substring, Substring> {
        guard q.contains(where: { needsCanonicalName($0.key) }) else { return q }
        return FlatDictionary(q.map { (canonicalName($0.key), $0.value) })
    }

    /// Whether a name has a part written other than in lowerCamelCase.
    private static func needsCanonicalName(_ name: Substring) -> Bool {
        var startsPart = true
        for byte in name.utf8 {
            if byte == UInt8(ascii: "_") || (startsPart && (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)) { return true }
            startsPart = byte == UInt8(ascii: ".")
        }
        return false
    }

    private static func canonicalName(_ name: Substring) -> Substring {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map { part -> Substring in
            var proto = ""
            for (i, c) in part.enumerated() {
                if c.isASCII, c.isUppercase {
                    if i > 0 { proto.append("_") }
                    proto.append(c.lowercased())
                } else {
                    proto.append(c)
                }
            }
            return parameterFields[Substring(proto)] ?? part
        }
        return Substring(parts.joined(separator: "."))
    }

    static func readTime(_ q: FlatDictionary<Substring, Substring>) throws(FlintError) -> Google_Protobuf_Timestamp? {
        try timeParameter(q, "readTime", "readTime.seconds", "readTime.nanos")
    }

    /// A time parameter: RFC 3339 text (`readTime=…`) or, as the reference also reads it, the
    /// message's own fields (`readTime.seconds=…`, `readTime.nanos=…`), which win over the text.
    /// The names come as literals, so the usual request builds no string.
    static func timeParameter(_ q: FlatDictionary<Substring, Substring>, _ name: Substring, _ secondsName: Substring, _ nanosName: Substring)
        throws(FlintError) -> Google_Protobuf_Timestamp?
    {
        let seconds = q[secondsName], nanos = q[nanosName]
        var time: Google_Protobuf_Timestamp?
        if let text = q[name] { time = try timestamp(text, named: String(name)) }
        guard seconds != nil || nanos != nil else { return time }
        var parts = time ?? Google_Protobuf_Timestamp()
        if let seconds {
            guard let n = Int64(seconds) else { throw .invalidArgument("\(secondsName) must be an integer, not \"\(seconds)\".") }
            parts.seconds = n
        }
        if let nanos {
            guard let n = Int32(nanos) else { throw .invalidArgument("\(nanosName) must be an integer, not \"\(nanos)\".") }
            parts.nanos = n
        }
        return parts
    }

    /// A time given as a query parameter, read as the same time in a body is read (to the
    /// nanosecond as written), so that both are checked alike.
    static func timestamp(_ text: Substring, named name: String) throws(FlintError) -> Google_Protobuf_Timestamp {
        guard let t = try? Google_Protobuf_Timestamp(jsonString: JSONString.quoted(String(text))) else {
            throw .invalidArgument("\(name) \"\(text)\" is not an RFC 3339 timestamp.")
        }
        return t
    }

    /// A boolean query parameter: `true` or `false` in any case, as the reference reads them.
    static func flag(_ text: Substring) -> Bool? {
        switch text.lowercased() {
        case "true": true
        case "false": false
        default: nil
        }
    }

    /// A query string whose `%` escapes do not decode would otherwise be read with the escape
    /// as typed (the reference drops the connection instead).
    static func checkEncoding(_ query: String) throws(FlintError) {
        guard query.utf8.contains(UInt8(ascii: "%")) else { return }
        for part in query.split(separator: "&") where part.removingPercentEncoding == nil {
            throw .invalidArgument("The query string \"\(query)\" has invalid percent-encoding.")
        }
    }

    /// The parameters a document route reads once, by method. A GET on a document path also
    /// counts a listing's, as the reference's does: the two routes share that path pattern.
    static let singleValued: [HTTPRequest.Method: [Substring]] = [
        .get: ["readTime", "readTime.seconds", "readTime.nanos", "transaction", "pageSize", "pageToken", "orderBy", "showMissing"],
        .post: ["documentId"],
        .patch: ["currentDocument.exists", "currentDocument.updateTime", "currentDocument.updateTime.seconds", "currentDocument.updateTime.nanos"],
        .delete: ["currentDocument.exists", "currentDocument.updateTime", "currentDocument.updateTime.seconds", "currentDocument.updateTime.nanos"],
    ]

    /// A parameter given twice is ambiguous; the reference refuses the request before reading
    /// anything else, in these words, and so does Flint, rather than pick one.
    static func refuseRepeated(_ q: FlatDictionary<Substring, Substring>, method: HTTPRequest.Method, verb: String?) throws(FlintError) {
        guard verb == nil, let names = singleValued[method] else { return }
        for name in names where q[values: name].count > 1 { throw .invalidArgument("Payload isn't valid for request.") }
    }

    static func precondition(_ q: FlatDictionary<Substring, Substring>) throws(FlintError) -> Google_Firestore_V1_Precondition? {
        var p = Google_Firestore_V1_Precondition()
        if let exists = q["currentDocument.exists"] {
            guard let flag = flag(exists) else {
                throw .invalidArgument("currentDocument.exists must be true or false, not \"\(exists)\".")
            }
            p.exists = flag
            return p
        }
        if let time = try timeParameter(q, "currentDocument.updateTime", "currentDocument.updateTime.seconds", "currentDocument.updateTime.nanos") {
            p.updateTime = time
            return p
        }
        return nil
    }

    /// Reads a JSON body (application/json or text/plain) into a message, refusing more than 10 MiB.
    static func decode<M: SwiftProtobuf.Message>(_ request: Request, root: String? = nil) async throws(FlintError) -> M {
        var data = Data(buffer: try await body(request))
        // A byte order mark, which Windows tools write before UTF-8, is read past, as the
        // reference and JSON's RFC allow.
        if data.starts(with: [0xEF, 0xBB, 0xBF]) { data.removeFirst(3) }
        if data.isEmpty { return M() }
        // Every request is an object; the library's own word for another value is misleading.
        if let first = data.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }), first != UInt8(ascii: "{") {
            throw .invalidArgument("Invalid JSON payload received. The body must be a JSON object, such as {}.")
        }
        let composed = SurrogateEscapes.composed(data)
        do { return try M(jsonUTF8Data: composed, options: decoding) } catch {
            throw JSONPayloadError.refusal(error, body: composed, as: M.self, root: root)
        }
    }

    /// Reads the body of a request whose path names nothing valid as the message its route
    /// would read, for the body's faults alone.
    private static func checkBody(_ request: Request) async throws(FlintError) {
        guard request.method == .post || request.method == .patch else { return }
        let segments = request.uri.path.split(onASCII: "/").dropFirst(2)
        var verb: String?
        if request.method == .post, let raw = segments.last, let last = String(raw).removingPercentEncoding {
            verb = methodAfterColon(in: last, atRoot: segments.count == 5, method: .post)?.word
        }
        switch verb {
        case nil: let _: Google_Firestore_V1_Document = try await decode(request, root: "document")
        case "commit": let _: Google_Firestore_V1_CommitRequest = try await decode(request)
        case "batchWrite": let _: Google_Firestore_V1_BatchWriteRequest = try await decode(request)
        case "beginTransaction": let _: Google_Firestore_V1_BeginTransactionRequest = try await decode(request)
        case "rollback": let _: Google_Firestore_V1_RollbackRequest = try await decode(request)
        case "batchGet": let _: Google_Firestore_V1_BatchGetDocumentsRequest = try await decode(request)
        case "runQuery": let _: Google_Firestore_V1_RunQueryRequest = try await decode(request)
        case "runAggregationQuery": let _: Google_Firestore_V1_RunAggregationQueryRequest = try await decode(request)
        case "listCollectionIds": let _: Google_Firestore_V1_ListCollectionIdsRequest = try await decode(request)
        case "partitionQuery": let _: Google_Firestore_V1_PartitionQueryRequest = try await decode(request)
        default: return
        }
    }

    /// A request's whole body (inflated, when it came compressed), refusing more than `limit`
    /// bytes (10 MiB unless said) without reading it all.
    static func body(_ request: Request, upTo limit: Int = Limits.maxRequestBytes) async throws(FlintError) -> ByteBuffer {
        do { return try await request.body.collect(upTo: limit) } catch is NIOTooManyBytesError {
            throw .invalidArgument("Request payload size exceeds the limit: \(limit) bytes.")
        } catch {
            // Broken chunked framing, or a connection that ended mid-body.
            throw .invalidArgument("The request body could not be read (\(error)).")
        }
    }

    /// Set for a request asking `$alt=json;enum-encoding=int`: enums as numbers, not names.
    @TaskLocal static var enumsAsInts = false

    /// Map fields are written in key order, so one document reads the same in every answer and
    /// every run (Swift dictionaries would otherwise give each process its own order).
    static var encoding: JSONEncodingOptions {
        var options = JSONEncodingOptions()
        options.alwaysPrintEnumsAsInts = enumsAsInts
        options.useDeterministicOrdering = true
        return options
    }

    /// How deep a JSON body's messages may nest. The library counts a map's entry as a message,
    /// so a value map takes three levels where the reference's parser counts two: its limit of
    /// 100 lets a query operand or a document field hold maps 48 deep. This limit lets the same
    /// depths through (measured against the reference on queries and commits).
    static let decoding: JSONDecodingOptions = {
        var options = JSONDecodingOptions()
        options.messageDepthLimit = 151
        return options
    }()

    static func json(_ message: some SwiftProtobuf.Message) throws(FlintError) -> Response {
        do { return respond(try message.jsonUTF8Data(options: encoding)) } catch {
            throw FlintError(.internal, "The answer could not be encoded: \(error)")
        }
    }

    /// Streaming methods answer one JSON array with nothing after the closing bracket.
    static func jsonArray(_ messages: [some SwiftProtobuf.Message]) throws(FlintError) -> Response {
        var data = Data("[".utf8)
        do {
            for (i, m) in messages.enumerated() {
                if i > 0 { data.append(contentsOf: ",".utf8) }
                data.append(try m.jsonUTF8Data(options: encoding))
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
}
