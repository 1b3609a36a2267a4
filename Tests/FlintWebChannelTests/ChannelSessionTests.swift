import Synchronization
import Testing

@testable import FlintWebChannel

/// Sessions, numbered arrays and back channels, driven as the web SDK's channel drives them.
struct ChannelSessionTests {
    /// What a back channel wrote, chunk by chunk.
    final class Chunks: Sendable {
        private let all = Mutex<[String]>([])
        func add(_ chunk: String) { all.withLock { $0.append(chunk) } }
        var list: [String] { all.withLock { $0 } }

        /// Waits up to two seconds for `count` chunks.
        func waitFor(_ count: Int) async throws -> [String] {
            for _ in 0..<200 where list.count < count { try await Task.sleep(for: .milliseconds(10)) }
            return list
        }
    }

    static func framed(_ text: String) -> String { ChannelSession.framed(text) }

    @Test func chunksAreFramedWithTheirLengthInUTF16Units() {
        // JavaScript measures strings in UTF-16 code units: é is one, 😀 two.
        #expect(ChannelSession.framed(#"["é😀"]"#) == "7\n[\"é😀\"]")
        #expect(ChannelSession.framed("[1,2,3]") == "7\n[1,2,3]")
    }

    @Test func answersAreReadBackIntoTheirChunks() throws {
        let text = ChannelSession.framed(#"[[1,["🔥"]]]"#) + ChannelSession.framed("[2]")
        #expect(try ChannelSession.unframe(text) == [#"[[1,["🔥"]]]"#, "[2]"])
        #expect(try ChannelSession.unframe("") == [])
        #expect(throws: WebChannelError.malformed("A chunk is shorter than its length 9, or splits a character.")) {
            try ChannelSession.unframe("9\n[1,2]")
        }
        #expect(throws: WebChannelError.malformed("A chunk does not start with its length: x\n[]")) { try ChannelSession.unframe("x\n[]") }
    }

    @Test func theQueueFindsArraysAfterAnIdAndLetsTheOldestGo() {
        var queue = ChannelSession.OutgoingQueue()
        #expect(queue.after(0).isEmpty && queue.first == nil)
        for id in 1...3000 { queue.append(.init(id: id, text: "[\(id)]")) }
        #expect(queue.after(0).map(\.id) == Array(1...3000))
        #expect(queue.after(2998).map(\.id) == [2999, 3000])
        #expect(queue.after(3000).isEmpty)
        // Past 1024 let go, the rest moves down once; ids still find their arrays.
        for _ in 0..<2000 { queue.removeFirst() }
        #expect(queue.first?.id == 2001)
        #expect(queue.after(5).map(\.id) == Array(2001...3000))
        #expect(queue.after(2500).first?.text == "[2501]")
        queue.append(.init(id: 3001, text: "[3001]"))
        #expect(queue.after(2999).map(\.id) == [3000, 3001])
    }

    @Test func theHandshakeNamesTheSessionVersionsAndKeepalive() {
        let session = ChannelSession(id: "abc_-1")
        #expect(session.handshakeAnswer(keepalive: .seconds(30)) == #"34\#n[[0,["c","abc_-1","",8,12,30000]]]"#)
        #expect(session.handshakeAnswer(keepalive: .milliseconds(1500)) == #"33\#n[[0,["c","abc_-1","",8,12,1500]]]"#)
    }

    @Test func aRetriedPostIsDeliveredOnce() async throws {
        let session = ChannelSession(id: "s")
        _ = try session.receive(ForwardBatch(firstMapID: 0, messages: ["a", "b"]), acknowledged: nil)
        _ = try session.receive(ForwardBatch(firstMapID: 0, messages: ["a", "b"]), acknowledged: nil)
        _ = try session.receive(ForwardBatch(firstMapID: 1, messages: ["b", "c"]), acknowledged: nil)
        _ = try session.receive(ForwardBatch(), acknowledged: nil)
        session.close()
        var received: [String] = []
        for await message in session.messages { received.append(message) }
        #expect(received == ["a", "b", "c"])
    }

    @Test func aPostIsAnsweredWithTheBackChannelStateLastArrayAndUnacknowledgedBytes() async throws {
        let session = ChannelSession(id: "s")
        #expect(try session.receive(ForwardBatch(), acknowledged: 0) == Self.framed("[0,0,0]"))
        session.send(#"{"x":1}"#)
        session.send(#"{"y":22}"#)
        // `[1,[{"x":1}]]` is 13 characters and `[2,[{"y":22}]]` 14.
        #expect(try session.receive(ForwardBatch(), acknowledged: 0) == Self.framed("[0,2,27]"))
        #expect(try session.receive(ForwardBatch(), acknowledged: 1) == Self.framed("[0,2,14]"))

        let chunks = Chunks()
        let back = Task { try await session.serveBackchannel(acknowledged: 2, longPolling: false, keepalive: .seconds(30)) { chunks.add($0) } }
        _ = try await chunks.waitFor(1)
        // A back channel is open now; its first noop (array 3) is not acknowledged yet.
        #expect(try session.receive(ForwardBatch(), acknowledged: 2) == Self.framed("[1,3,12]"))
        session.close()
        try await back.value
    }

    @Test func aLongPollEndsOnceItHasSentAndAnArrayIsSentAgainUntilAcknowledged() async throws {
        let session = ChannelSession(id: "s")
        session.send(#"{"a":1}"#)
        let chunks = Chunks()
        try await session.serveBackchannel(acknowledged: 0, longPolling: true, keepalive: .seconds(30)) { chunks.add($0) }
        #expect(chunks.list == [Self.framed(#"[[1,[{"a":1}]]]"#)])
        // The client lost that answer: it asks again from array 0 and gets array 1 again.
        try await session.serveBackchannel(acknowledged: 0, longPolling: true, keepalive: .seconds(30)) { chunks.add($0) }
        #expect(chunks.list.count == 2 && chunks.list[1] == chunks.list[0])
        // Acknowledged, nothing is pending: the poll waits for the next message.
        let poll = Task { try await session.serveBackchannel(acknowledged: 1, longPolling: true, keepalive: .seconds(30)) { chunks.add($0) } }
        try await Task.sleep(for: .milliseconds(50))
        #expect(chunks.list.count == 2)
        session.send(#"{"b":2}"#)
        session.send(#"{"c":3}"#)
        try await poll.value
        #expect(chunks.list.count == 3)
        // Both may go in one chunk, or the first alone if the poll woke between them.
        #expect(chunks.list[2].hasSuffix(#"[2,[{"b":2}]]]"#) || chunks.list[2].hasSuffix(#"[2,[{"b":2}]],[3,[{"c":3}]]]"#))
    }

    @Test func anIdleLongPollIsAnsweredWithANoopAtItsTimeout() async throws {
        let session = ChannelSession(id: "s")
        let chunks = Chunks()
        let start = ContinuousClock.now
        try await session.serveBackchannel(acknowledged: 0, longPolling: true, keepalive: .milliseconds(100)) { chunks.add($0) }
        #expect(ContinuousClock.now - start >= .milliseconds(100))
        #expect(chunks.list == [Self.framed(#"[[1,["noop"]]]"#)])
    }

    @Test func aStreamingBackChannelHearsSomethingAtOnceThenEachMessageAndKeepalives() async throws {
        let session = ChannelSession(id: "s")
        let chunks = Chunks()
        let back = Task { try await session.serveBackchannel(acknowledged: 0, longPolling: false, keepalive: .milliseconds(200)) { chunks.add($0) } }
        #expect(try await chunks.waitFor(1) == [Self.framed(#"[[1,["noop"]]]"#)])
        session.send(#"{"a":1}"#)
        #expect(try await chunks.waitFor(2).last == Self.framed(#"[[2,[{"a":1}]]]"#))
        // Idle again: the next keepalive is a noop.
        #expect(try await chunks.waitFor(3).last == Self.framed(#"[[3,["noop"]]]"#))
        session.close()
        try await back.value
    }

    @Test func aNewBackChannelReplacesTheOldOneAndResendsWhatWasNotAcknowledged() async throws {
        let session = ChannelSession(id: "s")
        session.send(#"{"a":1}"#)
        let first = Chunks()
        let old = Task { try await session.serveBackchannel(acknowledged: 0, longPolling: false, keepalive: .seconds(30)) { first.add($0) } }
        #expect(try await first.waitFor(1) == [Self.framed(#"[[1,[{"a":1}]]]"#)])
        let second = Chunks()
        let new = Task { try await session.serveBackchannel(acknowledged: 0, longPolling: false, keepalive: .seconds(30)) { second.add($0) } }
        try await old.value  // ends, replaced
        #expect(try await second.waitFor(1) == [Self.framed(#"[[1,[{"a":1}]]]"#)])
        session.send(#"{"b":2}"#)
        #expect(try await second.waitFor(2).last == Self.framed(#"[[2,[{"b":2}]]]"#))
        #expect(first.list.count == 1)
        session.close()
        try await new.value
    }

    @Test func afterTheStreamsLastMessageOnlyKeepalivesFollow() async throws {
        let session = ChannelSession(id: "s")
        session.end(with: #"{"error":{"message":"NOT_FOUND: x","status":"NOT_FOUND"}}"#)
        session.send(#"{"late":1}"#)
        session.end()
        let chunks = Chunks()
        let back = Task { try await session.serveBackchannel(acknowledged: 0, longPolling: false, keepalive: .milliseconds(100)) { chunks.add($0) } }
        let seen = try await chunks.waitFor(2)
        #expect(seen.first == Self.framed(#"[[1,[{"error":{"message":"NOT_FOUND: x","status":"NOT_FOUND"}}]]]"#))
        #expect(seen.last == Self.framed(#"[[2,["noop"]]]"#))
        session.close()
        try await back.value
    }

    @Test func writtenArraysPastTheRetainedLimitAreLetGoAndAskingForThemEndsTheSession() async throws {
        // Each `[n,[{"k":"xxxxxxxxxx"}]]` is 24 units; the limit keeps three.
        let session = ChannelSession(id: "s", retainedLimit: 80)
        let message = #"{"k":"xxxxxxxxxx"}"#
        for _ in 0..<4 { session.send(message) }
        // Nothing is let go before a back channel has written it.
        #expect(try session.receive(ForwardBatch(), acknowledged: 0) == Self.framed("[0,4,96]"))
        let chunks = Chunks()
        try await session.serveBackchannel(acknowledged: 0, longPolling: true, keepalive: .seconds(30)) { chunks.add($0) }
        #expect(chunks.list.count == 1 && chunks.list[0].hasPrefix("101\n[[1,"))
        session.send(message)
        // Arrays 1 and 2 are let go; 3, 4 and 5 stay.
        #expect(try session.receive(ForwardBatch(), acknowledged: 0) == Self.framed("[0,5,72]"))
        try await session.serveBackchannel(acknowledged: 2, longPolling: true, keepalive: .seconds(30)) { chunks.add($0) }
        #expect(chunks.list.last?.hasPrefix("76\n[[3,") == true)
        // A back channel that lost array 1 cannot be given it: the session ends.
        await #expect(throws: WebChannelError.unknownSession) {
            try await session.serveBackchannel(acknowledged: 0, longPolling: true, keepalive: .seconds(30)) { _ in }
        }
        #expect(session.isClosed)
    }

    @Test func aClosedSessionIsUnknownToEveryRequest() async throws {
        let session = ChannelSession(id: "s")
        let chunks = Chunks()
        let back = Task { try await session.serveBackchannel(acknowledged: 0, longPolling: false, keepalive: .seconds(30)) { chunks.add($0) } }
        _ = try await chunks.waitFor(1)
        session.close()
        try await back.value  // an open back channel ends
        #expect(throws: WebChannelError.unknownSession) { try session.receive(ForwardBatch(), acknowledged: nil) }
        await #expect(throws: WebChannelError.unknownSession) {
            try await session.serveBackchannel(acknowledged: 0, longPolling: true, keepalive: .seconds(1)) { _ in }
        }
        // Its message stream has ended, so the stream reading it ends too.
        var iterator = session.messages.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test func theRegistryHoldsAsManySessionsAsItsCapacity() throws {
        let registry = ChannelRegistry(capacity: 2)
        let first = try registry.open()
        _ = try registry.open()
        #expect(throws: WebChannelError.tooManySessions(2)) { try registry.open() }
        registry.close(first.id)
        #expect(try registry.open().id != first.id)
        #expect(registry.count == 2)
    }

    @Test func theRegistryForgetsSessionsLeftWithoutABackChannel() async throws {
        let registry = ChannelRegistry(expiry: .seconds(60))
        let idle = try registry.open()
        let watched = try registry.open()
        #expect(idle.id != watched.id && idle.id.count == 22)
        let chunks = Chunks()
        let back = Task { try await watched.serveBackchannel(acknowledged: 0, longPolling: false, keepalive: .seconds(30)) { chunks.add($0) } }
        _ = try await chunks.waitFor(1)
        registry.sweep(at: .now + .seconds(30))
        #expect(registry.count == 2)
        registry.sweep(at: .now + .seconds(61))
        #expect(registry.count == 1)
        #expect(throws: WebChannelError.unknownSession) { try registry.session(idle.id) }
        #expect(try registry.session(watched.id) === watched)
        registry.close(watched.id)
        try await back.value
        #expect(registry.count == 0)
        #expect(throws: WebChannelError.unknownSession) { try registry.session(watched.id) }
    }
}
