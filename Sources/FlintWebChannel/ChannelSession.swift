import Foundation
import Synchronization

/// One WebChannel session: a bidirectional stream carried by plain HTTP requests. The client's
/// messages come in forward-channel POSTs, numbered so that a retried POST is delivered once;
/// the server's messages are numbered arrays, kept until the client acknowledges them (its
/// `AID`) and sent down whichever back channel (a long-lived GET) is open, so a back channel
/// that breaks loses nothing.
public final class ChannelSession: Sendable {
    public let id: String
    /// The client's messages, in order and each once.
    public let messages: AsyncStream<String>
    private let inbox: AsyncStream<String>.Continuation
    private let state: Mutex<State>

    /// A server message waiting for acknowledgement: its array id and its text on the wire.
    struct Outgoing {
        let id: Int
        let text: String
    }

    /// The arrays waiting for acknowledgement, in id order with no gaps, so that those after an
    /// id are found by arithmetic and the oldest are let go without moving the rest each time
    /// (a listener can leave tens of thousands waiting).
    struct OutgoingQueue {
        private var items: [Outgoing] = []
        private var head = 0

        var first: Outgoing? { head < items.count ? items[head] : nil }

        mutating func append(_ outgoing: Outgoing) { items.append(outgoing) }

        mutating func removeFirst() {
            head += 1
            if head >= 1024 && head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
        }

        /// The arrays with ids above `id`.
        func after(_ id: Int) -> ArraySlice<Outgoing> {
            guard let first else { return [] }
            let start = head + max(0, id + 1 - first.id)
            return start < items.count ? items[start...] : []
        }
    }

    private struct State {
        var nextMapID = 0
        /// Array 0 is the handshake's answer.
        var nextArrayID = 1
        var unacknowledged = OutgoingQueue()
        var backchannel: (generation: Int, wake: AsyncStream<Wake>.Continuation)?
        var generations = 0
        /// Set when the server has queued the stream's last message.
        var ended = false
        /// Set when the session is over for the client too: no more requests are served.
        var closed = false
        /// When the last back channel ended; nil while one is open.
        var idleSince: ContinuousClock.Instant? = .now
        /// The last array id written to a back channel.
        var sentThrough = 0
        /// The size of the unacknowledged arrays, in UTF-16 units.
        var retained = 0
        /// Arrays through this id were let go unacknowledged (see `retainedLimit`).
        var forgottenThrough: Int?
    }

    enum Wake { case changed, keepalive }

    /// How much the session keeps for the client to acknowledge. A client that only listens
    /// sends nothing after its handshake, and so acknowledges nothing while its back channel
    /// lives; past this, arrays already written are let go, oldest first. A back channel that
    /// then asks for one of them cannot be served, and the session ends instead of skipping
    /// it: the client starts a new stream and resumes from its resume tokens.
    let retainedLimit: Int

    public init(id: String, retainedLimit: Int = 16 << 20) {
        self.id = id
        self.retainedLimit = retainedLimit
        (messages, inbox) = AsyncStream.makeStream(of: String.self)
        state = Mutex(State())
    }

    /// The handshake's answer: array 0, naming the session, the protocol version (8), the
    /// server's version, and how often the back channel hears from the server when idle.
    public func handshakeAnswer(keepalive: Duration) -> String {
        let milliseconds = keepalive.components.seconds * 1000 + keepalive.components.attoseconds / 1_000_000_000_000_000
        return Self.framed("[[0,[\"c\",\(Self.quoted(id)),\"\",8,12,\(milliseconds)]]]")
    }

    // MARK: - Forward channel

    /// Delivers the messages of a forward POST that were not delivered before, acknowledging
    /// the arrays through `acknowledged`, and answers as the protocol asks: whether a back
    /// channel is open, the last array id queued, and how many bytes the client has yet to
    /// acknowledge.
    public func receive(_ batch: ForwardBatch, acknowledged: Int?) throws(WebChannelError) -> String {
        let answer = try state.withLock { s throws(WebChannelError) -> String in
            guard !s.closed else { throw .unknownSession }
            if let acknowledged { Self.drop(through: acknowledged, &s) }
            // A retried POST repeats messages already delivered; once the server has ended the
            // stream, nothing reads them. Delivered under the lock, so that POSTs racing each
            // other cannot reorder them.
            let skip = max(0, s.nextMapID - batch.firstMapID)
            if skip < batch.messages.count && !s.ended {
                for message in batch.messages[skip...] { inbox.yield(message) }
            }
            s.nextMapID = max(s.nextMapID, batch.firstMapID + batch.messages.count)
            return "[\(s.backchannel == nil ? 0 : 1),\(s.nextArrayID - 1),\(s.retained)]"
        }
        return Self.framed(answer)
    }

    // MARK: - Server messages

    /// Queues one message (a JSON value) for the client, as its own array.
    public func send(_ json: String) { enqueue(json) }

    /// Queues the stream's last message: an error, or the `close` control after which the
    /// client disconnects. Only keepalives follow it.
    public func end(with finalJSON: String = "\"close\"") { enqueue(finalJSON, last: true) }

    private func enqueue(_ json: String, last: Bool = false, keepalive: Bool = false) {
        state.withLock { s in
            guard !s.ended || keepalive else { return }
            let id = s.nextArrayID
            s.nextArrayID += 1
            let outgoing = Outgoing(id: id, text: "[\(id),[\(json)]]")
            s.unacknowledged.append(outgoing)
            s.retained += outgoing.text.utf16.count
            while s.retained > retainedLimit, let oldest = s.unacknowledged.first, oldest.id <= s.sentThrough {
                s.unacknowledged.removeFirst()
                s.retained -= oldest.text.utf16.count
                s.forgottenThrough = oldest.id
            }
            if last { s.ended = true }
            s.backchannel?.wake.yield(.changed)
        }
    }

    // MARK: - Back channel

    /// Serves one back channel: first every array the client has not acknowledged (it may have
    /// lost them with an earlier back channel), then each new one as it is queued. A streaming
    /// back channel stays open, hearing a `noop` at each keepalive when idle; a long-polling
    /// one (`CI=1`) ends once it has sent something. Either ends when a newer back channel
    /// replaces it or the session closes.
    public func serveBackchannel(
        acknowledged: Int, longPolling: Bool, keepalive: Duration, write: (String) async throws -> Void
    ) async throws {
        let (wakes, wake) = AsyncStream.makeStream(of: Wake.self, bufferingPolicy: .bufferingNewest(1))
        let generation = try state.withLock { s throws(WebChannelError) -> Int in
            guard !s.closed else { throw .unknownSession }
            if let forgotten = s.forgottenThrough, acknowledged < forgotten {
                s.closed = true
                inbox.finish()
                throw .unknownSession
            }
            Self.drop(through: acknowledged, &s)
            s.generations += 1
            s.backchannel?.wake.finish()
            s.backchannel = (s.generations, wake)
            s.idleSince = nil
            return s.generations
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: keepalive)
                wake.yield(.keepalive)
            }
        }
        defer {
            ticker.cancel()
            state.withLock { s in
                if s.backchannel?.generation == generation {
                    s.backchannel = nil
                    s.idleSince = .now
                }
            }
        }
        // The first bytes go out at once: a client that hears nothing within two round trips
        // takes the connection for a buffering proxy and falls back to long polling.
        var written = acknowledged
        wake.yield(longPolling ? .changed : .keepalive)
        for await reason in wakes {
            let pending = state.withLock { s in Array(s.unacknowledged.after(written)) }
            if let last = pending.last {
                try await write(Self.framed("[" + pending.map(\.text).joined(separator: ",") + "]"))
                written = last.id
                state.withLock { s in s.sentThrough = max(s.sentThrough, written) }
                if longPolling { return }
            } else if reason == .keepalive {
                enqueue("\"noop\"", keepalive: true)
            }
        }
    }

    // MARK: - Ending

    /// Ends the session for good: the client's message stream finishes, an open back channel
    /// ends, and later requests naming it are refused.
    public func close() {
        state.withLock { s in
            s.closed = true
            s.ended = true
            s.backchannel?.wake.finish()
        }
        inbox.finish()
    }

    public var isClosed: Bool { state.withLock { $0.closed } }

    /// How long the session has been without a back channel; nil while one is open.
    public func idle(at now: ContinuousClock.Instant = .now) -> Duration? {
        state.withLock { s in s.idleSince.map { now - $0 } }
    }

    // MARK: - Wire helpers

    private static func drop(through acknowledged: Int, _ s: inout State) {
        while let oldest = s.unacknowledged.first, oldest.id <= acknowledged {
            s.unacknowledged.removeFirst()
            s.retained -= oldest.text.utf16.count
        }
    }

    /// A chunk as the client reads it: the text's length in UTF-16 code units (JavaScript's
    /// string length), a newline, then the text.
    public static func framed(_ text: String) -> String { "\(text.utf16.count)\n\(text)" }

    /// The chunks of a whole answer, as the client reads them (for tests and tools).
    public static func unframe(_ text: String) throws(WebChannelError) -> [String] {
        var chunks: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            guard let newline = rest.firstIndex(of: "\n"), let length = Int(rest[..<newline]), length >= 0 else {
                throw .malformed("A chunk does not start with its length: \(rest.prefix(20))")
            }
            let body = rest[rest.index(after: newline)...]
            guard length <= body.utf16.count, let end = String.Index(body.utf16.index(body.startIndex, offsetBy: length), within: body) else {
                throw .malformed("A chunk is shorter than its length \(length), or splits a character.")
            }
            chunks.append(String(body[..<end]))
            rest = body[end...]
        }
        return chunks
    }

    static func quoted(_ text: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
        return data.map { String(decoding: $0.dropFirst().dropLast(), as: UTF8.self) } ?? "\"\""
    }
}
