import FlintEngine
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import FlintModel
import FlintProto
@testable import FlintServer
import Foundation
import FuzzSupport
import SwiftProtobuf

// Sequences of requests against one fresh engine per input whose project has the bookstore's
// rules. Each request is a chunk: a kind byte, an auth byte (owner, a user, or nobody), a
// two-byte length, then the request. Kinds 0-12 are google.firestore.v1 messages handed to the
// calls gRPC and REST share (the kind's top bit: JSON rather than binary); 13-15 are HTTP
// requests to the router, written as `METHOD PATH`, header lines, an empty line and the body.

if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--write-seeds" {
    try Seeds.write(to: CommandLine.arguments[2])
    exit(0)
}

// The bookstore's rules, found beside this package (libFuzzer takes every argument as an input).
let rules = try String(
    contentsOf: URL(fileURLWithPath: #filePath).appending(path: "../../../../rules-samples/seed-000-bookstore/firestore.rules").standardized,
    encoding: .utf8)

// Before fuzz(), which never returns: main.swift's globals are set in order.
let logger = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })

fuzz { bytes in
    let input = Array(bytes)
    let finished = DispatchSemaphore(value: 0)
    // Detached: main.swift's code is the main actor's, whose thread waits below.
    Task.detached {
        let engine = Engine()
        engine.rules.load(rules, project: "p")
        let router = FlintServer(engine: engine, configuration: ServerConfiguration(), logger: logger).makeRouter().buildResponder()
        var i = 0
        while i + 4 <= input.count {
            let kind = input[i], who = input[i + 1]
            let length = Int(input[i + 2]) << 8 | Int(input[i + 3])
            let body = Data(input[(i + 4)..<min(input.count, i + 4 + length)])
            i += 4 + length
            if kind % 16 >= 13 {
                await http(router, body, who)
            } else {
                await call(FirestoreCalls(engine: engine, auth: auth(who)), kind & 0x7f, body, json: kind & 0x80 != 0)
            }
        }
        finished.signal()
    }
    finished.wait()
}

func auth(_ byte: UInt8) -> AuthContext {
    switch byte % 4 {
    case 0: .owner
    case 1: .unauthenticated
    case 2: .user(uid: "u1", token: ["sub": .string("u1"), "email": .string("a@b.c")])
    default: .user(uid: "admin", token: ["sub": .string("admin"), "admin": .boolean(true)])
    }
}

/// Answers one HTTP request in process, as the port would after parsing it. Exports and imports
/// (which write and read directories) and the WebChannel's streams (which wait for events) are
/// left out.
func http(_ router: RouterResponder<BasicRequestContext>, _ body: Data, _ who: UInt8) async {
    let text = String(decoding: body, as: UTF8.self)
    let (head, payload) = text.firstRange(of: "\n\n").map { (text[..<$0.lowerBound], text[$0.upperBound...]) } ?? (text[...], "")
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
        body: RequestBody(buffer: ByteBuffer(string: String(payload))))
    let context = BasicRequestContext(source: ApplicationRequestContextSource(channel: EmbeddedChannel(), logger: logger))
    _ = try? await router.respond(to: request, context: context)
}

func decode<M: SwiftProtobuf.Message>(_: M.Type, _ body: Data, json: Bool) -> M? {
    json ? try? M(jsonUTF8Data: body) : try? M(serializedBytes: body)
}

/// Makes the call and discards the answer; only a crash, a trap or a hang is a finding.
func call(_ calls: FirestoreCalls, _ kind: UInt8, _ body: Data, json: Bool) async {
    switch kind % 13 {
    case 0: if let r = decode(Google_Firestore_V1_CommitRequest.self, body, json: json) { _ = try? await calls.commit(r) }
    case 1: if let r = decode(Google_Firestore_V1_RunQueryRequest.self, body, json: json) { _ = try? await calls.runQuery(r) }
    case 2:
        if let r = decode(Google_Firestore_V1_RunAggregationQueryRequest.self, body, json: json) {
            _ = try? await calls.runAggregationQuery(r)
        }
    case 3:
        if let r = decode(Google_Firestore_V1_BatchGetDocumentsRequest.self, body, json: json) {
            _ = try? await calls.batchGetDocuments(r)
        }
    case 4: if let r = decode(Google_Firestore_V1_BatchWriteRequest.self, body, json: json) { _ = try? await calls.batchWrite(r) }
    case 5:
        if let r = decode(Google_Firestore_V1_ListCollectionIdsRequest.self, body, json: json) {
            _ = try? await calls.listCollectionIds(r)
        }
    case 6: if let r = decode(Google_Firestore_V1_PartitionQueryRequest.self, body, json: json) { _ = try? await calls.partitionQuery(r) }
    case 7: if let r = decode(Google_Firestore_V1_ListDocumentsRequest.self, body, json: json) { _ = try? await calls.listDocuments(r) }
    case 8: if let r = decode(Google_Firestore_V1_GetDocumentRequest.self, body, json: json) { _ = try? await calls.getDocument(r) }
    case 9:
        if let r = decode(Google_Firestore_V1_CreateDocumentRequest.self, body, json: json) { _ = try? await calls.createDocument(r) }
    case 10:
        if let r = decode(Google_Firestore_V1_UpdateDocumentRequest.self, body, json: json) { _ = try? await calls.updateDocument(r) }
    case 11:
        if let r = decode(Google_Firestore_V1_DeleteDocumentRequest.self, body, json: json) { _ = try? await calls.deleteDocument(r) }
    default:
        if let r = decode(Google_Firestore_V1_BeginTransactionRequest.self, body, json: json) {
            _ = try? await calls.beginTransaction(r)
        }
    }
}
