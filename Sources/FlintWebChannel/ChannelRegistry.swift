import Foundation
import Synchronization

/// The open WebChannel sessions by id. A session ends when its client terminates it, or when it
/// has been without a back channel for `expiry` (a browser tab closed without saying so).
public final class ChannelRegistry: Sendable {
    public let expiry: Duration
    /// How many sessions may be open at once. Each holds a stream, so a page that opens them in
    /// a loop would otherwise hold ever more until they expire.
    public let capacity: Int
    private let sessions = Mutex<[String: ChannelSession]>([:])

    public init(expiry: Duration = .seconds(60), capacity: Int = 10_000) {
        self.expiry = expiry
        self.capacity = capacity
    }

    /// A new session with an id no other has.
    public func open() throws(WebChannelError) -> ChannelSession {
        let session = ChannelSession(id: Self.newID())
        try sessions.withLock { all throws(WebChannelError) in
            guard all.count < capacity else { throw .tooManySessions(capacity) }
            all[session.id] = session
        }
        return session
    }

    public func session(_ id: String) throws(WebChannelError) -> ChannelSession {
        guard let session = sessions.withLock({ $0[id] }) else { throw .unknownSession }
        return session
    }

    /// Ends a session for good; nothing if it is already gone.
    public func close(_ id: String) {
        sessions.withLock { $0.removeValue(forKey: id) }?.close()
    }

    public var count: Int { sessions.withLock { $0.count } }

    /// Closes the sessions that are over; run every few seconds.
    public func sweep(at now: ContinuousClock.Instant = .now) {
        let over = sessions.withLock { all in
            let ids = all.filter { _, s in s.isClosed || (s.idle(at: now).map { $0 >= expiry } ?? false) }.map(\.key)
            return ids.compactMap { all.removeValue(forKey: $0) }
        }
        for session in over { session.close() }
    }

    /// Closes every session (the server is stopping).
    public func closeAll() {
        let all = sessions.withLock { all in
            defer { all.removeAll() }
            return Array(all.values)
        }
        for session in all { session.close() }
    }

    /// 16 random bytes in URL-safe base64: unguessable, so one page cannot read another's stream.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
