import FlintEngine
import FlintModel
import FlintProto
@testable import FlintServer
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import SwiftProtobuf
import Synchronization

/// The bookstore's rules, read from beside this package (libFuzzer takes every argument as an
/// input, so no path can be passed).
let rules: String = {
    let file = URL(fileURLWithPath: #filePath).appending(path: "../../../../rules-samples/seed-000-bookstore/firestore.rules")
    guard let text = try? String(contentsOf: file.standardized, encoding: .utf8) else { fatalError("No rules at \(file.path)") }
    return text
}()

let logger = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })

func auth(_ byte: UInt8) -> AuthContext {
    switch byte % 4 {
    case 0: .owner
    case 1: .unauthenticated
    case 2: .user(uid: "u1", token: ["sub": .string("u1"), "email": .string("a@b.c")])
    default: .user(uid: "admin", token: ["sub": .string("admin"), "admin": .boolean(true)])
    }
}

/// Answers one HTTP request in process, as the port would after parsing it. Left out: exports
/// and imports (which write and read directories; any path with "port"), the WebChannel's
/// streams (which wait for events) and `/shutdown`.
func http(_ router: RouterResponder<BasicRequestContext>, _ body: Data, _ who: UInt8) async {
    // The body's bytes as they are: a compressed one is not text.
    let split = body.firstRange(of: Data("\n\n".utf8))
    let head = String(decoding: split.map { body[..<$0.lowerBound] } ?? body, as: UTF8.self)
    let payload = split.map { body[$0.upperBound...] } ?? Data()
    var lines = head.split(separator: "\n", omittingEmptySubsequences: false)
    guard !lines.isEmpty else { return }
    let start = lines.removeFirst().split(separator: " ", maxSplits: 1)
    guard start.count == 2, let method = HTTPRequest.Method(String(start[0])) else { return }
    let path = String(start[1])
    if path.contains("port") || path.hasPrefix("/google") || path.hasPrefix("/shutdown") { return }
    var fields = HTTPFields()
    for line in lines {
        let parts = line.split(separator: ":", maxSplits: 1)
        if parts.count == 2, let name = HTTPField.Name(String(parts[0])) {
            fields.append(HTTPField(name: name, value: parts[1].trimmingCharacters(in: .whitespaces)))
        }
    }
    if who % 4 == 0, fields[.authorization] == nil { fields[.authorization] = "Bearer owner" }
    let request = Request(
        head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: path, headerFields: fields),
        body: RequestBody(buffer: ByteBuffer(bytes: payload)))
    // Finished afterwards: an open embedded channel and its pipeline hold each other.
    let channel = EmbeddedChannel()
    let context = BasicRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
    _ = try? await router.respond(to: request, context: context)
    _ = try? channel.finish()
}

/// Makes the call and discards the answer. Beyond a crash, a trap or a hang, one thing is a
/// finding: a write refused (a commit's or a document call's) that changed documents anyway.
func call(_ engine: Engine, _ who: UInt8, _ method: UInt8, _ body: Data, json: Bool) async {
    let calls = FirestoreCalls(engine: engine, auth: auth(who))
    let atomic = [0, 9, 10, 11].contains(method)
    let before = atomic ? await contents(engine) : []
    let succeeded: Bool? =
        switch method {
        case 0: await attempt(body, json) { (r: Google_Firestore_V1_CommitRequest) throws(FlintError) in try await calls.commit(r) }
        case 1: await attempt(body, json) { (r: Google_Firestore_V1_RunQueryRequest) throws(FlintError) in try await calls.runQuery(r) }
        case 2:
            await attempt(body, json) { (r: Google_Firestore_V1_RunAggregationQueryRequest) throws(FlintError) in
                try await calls.runAggregationQuery(r)
            }
        case 3:
            await attempt(body, json) { (r: Google_Firestore_V1_BatchGetDocumentsRequest) throws(FlintError) in
                try await calls.batchGetDocuments(r)
            }
        case 4: await attempt(body, json) { (r: Google_Firestore_V1_BatchWriteRequest) throws(FlintError) in try await calls.batchWrite(r) }
        case 5:
            await attempt(body, json) { (r: Google_Firestore_V1_ListCollectionIdsRequest) throws(FlintError) in
                try await calls.listCollectionIds(r)
            }
        case 6:
            await attempt(body, json) { (r: Google_Firestore_V1_PartitionQueryRequest) throws(FlintError) in try await calls.partitionQuery(r) }
        case 7:
            await attempt(body, json) { (r: Google_Firestore_V1_ListDocumentsRequest) throws(FlintError) in try await calls.listDocuments(r) }
        case 8: await attempt(body, json) { (r: Google_Firestore_V1_GetDocumentRequest) throws(FlintError) in try await calls.getDocument(r) }
        case 9:
            await attempt(body, json) { (r: Google_Firestore_V1_CreateDocumentRequest) throws(FlintError) in try await calls.createDocument(r) }
        case 10:
            await attempt(body, json) { (r: Google_Firestore_V1_UpdateDocumentRequest) throws(FlintError) in try await calls.updateDocument(r) }
        case 11:
            await attempt(body, json) { (r: Google_Firestore_V1_DeleteDocumentRequest) throws(FlintError) in try await calls.deleteDocument(r) }
        default:
            await attempt(body, json) { (r: Google_Firestore_V1_BeginTransactionRequest) throws(FlintError) in
                try await calls.beginTransaction(r)
            }
        }
    if atomic, succeeded == false, await contents(engine) != before {
        fatalError("A refused write changed documents")
    }
}

/// Decodes the message and makes the call: nil when the bytes are no such message, else
/// whether the call succeeded.
func attempt<M: SwiftProtobuf.Message, R>(_ body: Data, _ json: Bool, _ call: (M) async throws(FlintError) -> R) async -> Bool? {
    guard let request = json ? try? M(jsonUTF8Data: body) : try? M(serializedBytes: body) else { return nil }
    do throws(FlintError) {
        _ = try await call(request)
        return true
    } catch {
        return false
    }
}

/// Every document of every database, as text, in a stable order.
func contents(_ engine: Engine) async -> [String] {
    var all: [String] = []
    for id in engine.databaseIDs.sorted(by: { $0.documentsRoot < $1.documentsRoot }) {
        let documents = Mutex<[String]>([])
        await engine.database(id).forEachDocument { document in
            documents.withLock { $0.append(id.documentsRoot + " " + String(describing: document)) }
            return true
        }
        all += documents.withLock { $0 }
    }
    return all
}
