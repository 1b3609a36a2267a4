import FlintEngine
import FlintModel
import FlintProto
import FlintWebChannel
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import SwiftProtobuf

/// Firestore's Listen and Write streams over WebChannel, the protocol the web SDK uses in
/// browsers and React Native, at `/google.firestore.v1.Firestore/{Listen,Write}/channel` on the
/// shared port, as the reference serves them. Each session runs one stream: the client's
/// messages are requests in Firestore's JSON, and each response, or the error that ends the
/// stream, goes back as one array.
struct WebChannelStreams: Sendable {
    let engine: Engine
    let registry: ChannelRegistry
    let logger: Logger
    /// How often an idle back channel hears a `noop`; told to the client in the handshake.
    var keepalive: Duration = .seconds(30)

    enum Stream: String { case listen = "Listen", write = "Write" }

    /// The handshake (no `SID`), later messages, and `TYPE=terminate`.
    func post(_ request: Request, stream name: String) async -> Response {
        let q = request.uri.queryParameters
        if q["TYPE"] == "terminate" { return terminate(q["SID"]) }
        guard let stream = Stream(rawValue: name) else { return .notFound }
        let batch: ForwardBatch
        do throws(FlintError) {
            let body = String(buffer: try await RESTAPI.body(request))
            do { batch = try ForwardBatch.parse(body) } catch { throw error.flintError }
        } catch {
            return error.restResponse()
        }
        if let sid = q["SID"] {
            do {
                let answer = try registry.session(String(sid)).receive(batch, acknowledged: q["AID"].flatMap { Int($0) })
                return Self.text(answer, headers: Self.forwardHeaders)
            } catch {
                return Self.unknownSession
            }
        }
        // What the handshake got wrong (its token, its database) ends the stream with the error,
        // as on gRPC, so the SDK reacts to the code (refreshing a token, say) instead of retrying
        // a transport failure.
        let caller = Result { () throws(FlintError) -> (AuthContext, String?) in
            var headers = batch.headers
            // Clients encode the parameter's name too (`%24httpHeaders`).
            if let overwrite = q["$httpHeaders"] ?? q["%24httpHeaders"] {
                do throws(WebChannelError) {
                    headers.merge(try ForwardBatch.headerBlock(String(overwrite))) { _, new in new }
                } catch { throw error.flintError }
            }
            let auth = try AuthContext(authorization: headers["authorization"])
            let database = q["database"].map(String.init)
            if let database { _ = try ResourceName.parseDatabase(database) }
            return (auth, database)
        }
        let session: ChannelSession
        do { session = try registry.open() } catch { return error.flintError.restResponse() }
        run(stream, session, caller)
        _ = try? session.receive(batch, acknowledged: nil)
        return Self.text(session.handshakeAnswer(keepalive: keepalive), headers: Self.forwardHeaders)
    }

    /// The back channel (`RID=rpc`), or `TYPE=terminate` sent as an image request.
    func get(_ request: Request, stream name: String) async -> Response {
        let q = request.uri.queryParameters
        if q["TYPE"] == "terminate" { return terminate(q["SID"]) }
        guard Stream(rawValue: name) != nil else { return .notFound }
        guard let session = try? registry.session(String(q["SID"] ?? "")) else { return Self.unknownSession }
        let acknowledged = q["AID"].flatMap { Int($0) } ?? -1
        let longPolling = q["CI"] == "1"
        // A long poll is answered within the client's own timeout (`TO`, in milliseconds).
        var timeout = keepalive
        if longPolling, let ms = q["TO"].flatMap({ Int($0) }), ms > 0 { timeout = min(timeout, .milliseconds(ms)) }
        let wait = timeout
        return Response(
            status: .ok, headers: Self.backchannelHeaders,
            body: ResponseBody { writer in
                // Ends without an error when the session closes or the client goes away. A back
                // channel never finishes by itself, so stopping (SIGTERM, SIGINT) closes its
                // session; otherwise the server would wait for it.
                await withGracefulShutdownHandler {
                    try? await session.serveBackchannel(acknowledged: acknowledged, longPolling: longPolling, keepalive: wait) { chunk in
                        try await writer.write(ByteBuffer(string: chunk))
                    }
                } onGracefulShutdown: {
                    session.close()
                }
                try await writer.finish(nil)
            })
    }

    private func terminate(_ sid: Substring?) -> Response {
        if let sid { registry.close(String(sid)) }
        return Response(status: .ok, headers: Self.forwardHeaders)
    }

    // MARK: - The streams

    /// Runs the session's stream in the background; at `info`, one line when it ends, with the
    /// rules' verdicts of its whole life, as for gRPC streams and WebSocket sessions.
    private func run(_ stream: Stream, _ session: ChannelSession, _ caller: Result<(AuthContext, String?), FlintError>) {
        let logger = self.logger
        Task {
            let start = ContinuousClock.now
            let trace = logger.logLevel <= .info ? RulesTrace() : nil
            var ending = "ended"
            do {
                let (auth, database) = try caller.get()
                try await RulesTrace.$current.withValue(trace) {
                    switch stream {
                    case .listen: try await listen(session, database: database, auth: auth)
                    case .write: try await write(session, auth: auth)
                    }
                }
                session.end()
            } catch {
                let failure = error as? FlintError ?? FlintError(.internal, "\(error)")
                ending = failure.code.name
                session.end(with: Self.errorMessage(failure))
            }
            if let trace { logger.info("WebChannel \(stream.rawValue) \(ending)\(latencyAndRules(since: start, trace))") }
        }
    }

    private func listen(_ session: ChannelSession, database: String?, auth: AuthContext) async throws {
        let requests = session.messages.map { text throws -> Google_Firestore_V1_ListenRequest in try Self.decode(text) }
        try await ListenSession(engine: engine, defaultDatabase: database, auth: { auth }).run(requests) { response in
            session.send(try response.jsonString(options: RESTAPI.encoding))
        }
    }

    private func write(_ session: ChannelSession, auth: AuthContext) async throws {
        let calls = FirestoreCalls(engine: engine).acting(as: auth)
        var stream = WriteStream()
        for await text in session.messages {
            let request: Google_Firestore_V1_WriteRequest = try Self.decode(text)
            let response = try await stream.handle(request, calls)
            session.send(try response.jsonString(options: RESTAPI.encoding))
            if stream.finished { return }
        }
    }

    // MARK: - Wire

    /// An error as the stream's last message, in the reference's form: `{"error": {"message":
    /// "PERMISSION_DENIED: …", "status": "PERMISSION_DENIED"}}`. The SDK reads the status.
    static func errorMessage(_ error: FlintError) -> String {
        let body = ["error": ["message": "\(error.code.name): \(error.message)", "status": error.code.name]]
        let data = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    private static func decode<M: SwiftProtobuf.Message>(_ text: String) throws(FlintError) -> M {
        let composed = SurrogateEscapes.composed(text)
        do { return try M(jsonString: composed, options: RESTAPI.decoding) } catch { throw JSONPayloadError.refusal(error, body: Data(composed.utf8), as: M.self) }
    }

    private static let forwardHeaders: HTTPFields = [.contentType: "text/plain; charset=utf-8"]
    /// `no-transform` keeps the back channel from being gathered up and compressed.
    private static let backchannelHeaders: HTTPFields = [
        .contentType: "text/plain; charset=utf-8", .cacheControl: "private, max-age=0, no-transform", .xContentTypeOptions: "nosniff",
    ]

    private static func text(_ body: String, headers: HTTPFields) -> Response {
        Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    /// The session ended or never existed; the client reopens its stream.
    private static var unknownSession: Response {
        Response(status: .badRequest, headers: forwardHeaders, body: ResponseBody(byteBuffer: ByteBuffer(string: "Unknown SID")))
    }
}

extension WebChannelError {
    /// The status each refusal is answered with, in REST's error body.
    var flintError: FlintError {
        switch self {
        case .malformed, .unknownSession: .invalidArgument(message)
        case .tooManySessions: FlintError(.resourceExhausted, message)
        }
    }
}

extension HTTPField.Name {
    fileprivate static let xContentTypeOptions = Self("X-Content-Type-Options")!
}
