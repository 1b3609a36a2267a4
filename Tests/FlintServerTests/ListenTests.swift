import FlintEngine
import FlintProto
import FlintServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import Testing

/// What a listen call has received so far, collected in the background so a test can wait
/// for a number of messages with a deadline instead of hanging.
private actor Mailbox {
    private var messages: [Google_Firestore_V1_ListenResponse] = []
    private var ended: (any Error)?
    private var finished = false

    func add(_ m: Google_Firestore_V1_ListenResponse) { messages.append(m) }
    func finish(_ error: (any Error)?) {
        ended = error
        finished = true
    }

    /// The next `count` messages, or what arrived before the deadline.
    func take(_ count: Int, within seconds: Double = 30) async -> [Google_Firestore_V1_ListenResponse] {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while messages.count < count, !finished, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        let out = Array(messages.prefix(count))
        messages.removeFirst(out.count)
        return out
    }

    /// How the call ended, waiting for it up to the deadline.
    func end(within seconds: Double = 30) async -> (finished: Bool, error: (any Error)?) {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !finished, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        return (finished, ended)
    }
}

/// A short reading of a listen response, for comparisons: "ADD [1]", "CHANGE c/a [1] -[]",
/// "DELETE c/a -[1]", "CURRENT [1]", "GLOBAL", "FILTER 1 count 2", "REMOVE [1] 3".
private func summary(_ r: Google_Firestore_V1_ListenResponse) -> String {
    let root = GRPCTests.root + "/"
    switch r.responseType {
    case .targetChange(let t)?:
        if t.targetChangeType == .noChange && t.targetIds.isEmpty { return "GLOBAL" }
        let kind = "\(t.targetChangeType)".uppercased()
        return "\(kind == "NOCHANGE" ? "NO_CHANGE" : kind) \(t.targetIds)" + (t.hasCause ? " \(t.cause.code)" : "")
    case .documentChange(let c)?:
        return "CHANGE \(c.document.name.dropFirst(root.count)) \(c.targetIds) -\(c.removedTargetIds)"
    case .documentDelete(let d)?:
        return "DELETE \(d.document.dropFirst(root.count)) -\(d.removedTargetIds)"
    case .documentRemove(let d)?:
        return "REMOVE-DOC \(d.document.dropFirst(root.count))"
    case .filter(let f)?:
        return "FILTER \(f.targetID) count \(f.count)"
    case nil:
        return "EMPTY"
    }
}

struct ListenTests {
    typealias Request = Google_Firestore_V1_ListenRequest

    /// Opens a listen call; `send` feeds it requests and the mailbox collects its answers.
    private static func listen(
        _ firestore: GRPCTests.Client, metadata: Metadata = [:],
        _ body: (_ send: (Request) -> Void, _ mailbox: Mailbox) async throws -> Void
    ) async throws {
        let requests = AsyncStream<Request>.makeStream()
        let mailbox = Mailbox()
        let call = Task {
            do {
                try await firestore.listen(metadata: metadata, requestProducer: { writer in
                    for await r in requests.stream { try await writer.write(r) }
                }) { response in
                    for try await m in response.messages { await mailbox.add(m) }
                }
                await mailbox.finish(nil)
            } catch {
                await mailbox.finish(error)
            }
        }
        try await body({ requests.continuation.yield($0) }, mailbox)
        requests.continuation.finish()
        _ = await call.result
    }

    static func queryTarget(_ id: Int32, _ collection: String, resumeToken: Data? = nil) -> Request {
        var r = Request()
        r.database = GRPCTests.database
        r.addTarget.targetID = id
        r.addTarget.query.parent = GRPCTests.root
        var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
        from.collectionID = collection
        r.addTarget.query.structuredQuery.from = [from]
        if let resumeToken { r.addTarget.resumeToken = resumeToken }
        return r
    }

    static func documentsTarget(_ id: Int32, _ names: [String]) -> Request {
        var r = Request()
        r.database = GRPCTests.database
        r.addTarget.targetID = id
        r.addTarget.documents.documents = names
        return r
    }

    static func commit(_ firestore: GRPCTests.Client, _ writes: [Google_Firestore_V1_Write]) async throws {
        var commit = Google_Firestore_V1_CommitRequest()
        commit.database = GRPCTests.database
        commit.writes = writes
        _ = try await firestore.commit(commit)
    }

    /// What a client's requests produced still reaches it after it half-closes, as on the
    /// reference: here a target refused for its parent.
    @Test func aTargetRefusedJustBeforeAHalfCloseIsStillReported() async throws {
        try await GRPCTests.withFlint { firestore, _ in
            var bad = Self.queryTarget(7, "c")
            bad.addTarget.query.parent = GRPCTests.database + "/documnts"
            let request = bad
            let received = try await firestore.listen(requestProducer: { writer in
                try await writer.write(request)
            }) { response in
                var out: [String] = []
                for try await m in response.messages { out.append(summary(m)) }
                return out
            }
            #expect(received == ["ADD [7]", "REMOVE [7] 3"])
        }
    }

    /// A read time protobuf calls invalid removes the target with the words other reads give it;
    /// one in range but before any history resets the target and sends it whole.
    @Test func aTargetAtAnInvalidReadTimeIsRemovedWithItsCause() async throws {
        try await GRPCTests.withFlint { firestore, _ in
            try await Self.commit(firestore, [GRPCTests.write("c/a", [:])])
            try await Self.listen(firestore) { send, mailbox in
                var invalid = Self.queryTarget(5, "c")
                invalid.addTarget.readTime = .init(seconds: 0, nanos: 1_000_000_000)
                send(invalid)
                let removed = await mailbox.take(2)
                #expect(removed.map(summary) == ["ADD [5]", "REMOVE [5] 3"])
                #expect(removed.last?.targetChange.cause.message.hasPrefix("invalid timestamp, please check") == true)

                var early = Self.queryTarget(6, "c")
                early.addTarget.readTime = .init(seconds: 1, nanos: 1)
                send(early)
                #expect(await mailbox.take(5).map(summary) == ["ADD [6]", "RESET [6]", "CHANGE c/a [6] -[]", "CURRENT [6]", "GLOBAL"])
            }
        }
    }

    @Test func changesArriveAsTheyCommitAndTargetsComeAndGo() async throws {
        try await GRPCTests.withFlint { firestore, _ in
            try await Self.commit(firestore, [GRPCTests.write("c/a", ["n": GRPCTests.int(1)])])
            try await Self.listen(firestore) { send, mailbox in
                send(Self.queryTarget(7, "c"))
                let initial = await mailbox.take(4)
                #expect(initial.map(summary) == ["ADD [7]", "CHANGE c/a [7] -[]", "CURRENT [7]", "GLOBAL"])
                #expect(initial[1].documentChange.document.fields["n"]?.integerValue == 1)
                #expect(!initial[2].targetChange.resumeToken.isEmpty)
                #expect(initial[3].targetChange.readTime.seconds > 0)

                try await Self.commit(firestore, [GRPCTests.write("c/b", ["n": GRPCTests.int(2)]), GRPCTests.write("d/x", [:])])
                let change = await mailbox.take(2)
                #expect(change.map(summary) == ["CHANGE c/b [7] -[]", "GLOBAL"])
                let updated = change[0].documentChange.document.updateTime
                let readTime = change[1].targetChange.readTime
                #expect((updated.seconds, updated.nanos) <= (readTime.seconds, readTime.nanos))

                var remove = Request()
                remove.removeTarget = 7
                send(remove)
                #expect(await mailbox.take(1).map(summary) == ["REMOVE [7]"])
                try await Self.commit(firestore, [GRPCTests.write("c/c", [:])])
                #expect(await mailbox.take(1, within: 0.3).isEmpty)
            }
        }
    }

    @Test func aBadTargetIsRemovedWithItsCauseAndTheStreamGoesOn() async throws {
        try await GRPCTests.withFlint { firestore, _ in
            try await Self.listen(firestore) { send, mailbox in
                send(Self.documentsTarget(3, [GRPCTests.root + "/c"]))
                let rejected = await mailbox.take(2)
                #expect(rejected.map(summary) == ["ADD [3]", "REMOVE [3] 3"])
                #expect(rejected.last?.targetChange.cause.message.isEmpty == false)

                send(Self.documentsTarget(4, [GRPCTests.root + "/c/missing"]))
                #expect(await mailbox.take(3).map(summary) == ["ADD [4]", "CURRENT [4]", "GLOBAL"])
            }
        }
    }

    @Test func protocolErrorsEndTheStreamWithInvalidArgument() async throws {
        try await GRPCTests.withFlint { firestore, _ in
            try await Self.listen(firestore) { send, mailbox in
                send(Self.queryTarget(1, "c"))
                send(Self.queryTarget(1, "c"))
                let end = await mailbox.end()
                #expect(end.finished)
                let error = end.error as? RPCError
                #expect(error?.code == .invalidArgument)
                #expect(error?.message == "Target ID 1 is already in use on this stream.")
            }
            try await Self.listen(firestore) { send, mailbox in
                var empty = Request()
                empty.database = GRPCTests.database
                send(empty)
                let error = await mailbox.end().error as? RPCError
                #expect(error?.code == .invalidArgument)
                #expect(error?.message == "A listen request must add or remove a target.")
            }
            try await Self.listen(firestore) { send, mailbox in
                send(Request())
                let error = await mailbox.end().error as? RPCError
                #expect(error?.code == .invalidArgument)
            }
        }
    }

    @Test func resumingWithATokenSendsOnlyTheChangesAndAnExistenceFilter() async throws {
        try await GRPCTests.withFlint { firestore, _ in
            try await Self.commit(firestore, ["a", "b", "c"].map { GRPCTests.write("r/\($0)", [:]) })
            var token = Data()
            try await Self.listen(firestore) { send, mailbox in
                send(Self.queryTarget(1, "r"))
                token = await mailbox.take(6).last?.targetChange.resumeToken ?? Data()
            }
            #expect(!token.isEmpty)
            var delete = Google_Firestore_V1_Write()
            delete.delete = GRPCTests.root + "/r/b"
            try await Self.commit(firestore, [delete, GRPCTests.write("r/d", ["new": GRPCTests.int(1)])])

            try await Self.listen(firestore) { send, mailbox in
                send(Self.queryTarget(1, "r", resumeToken: token))
                let resumed = await mailbox.take(6)
                #expect(resumed.map(summary) == ["ADD [1]", "CHANGE r/d [1] -[]", "DELETE r/b -[1]", "FILTER 1 count 3", "CURRENT [1]", "GLOBAL"])
                let bloom = resumed[3].filter.unchangedNames
                #expect(bloom.hashCount > 0)
                #expect(!bloom.bits.bitmap.isEmpty)
            }
        }
    }

    /// Server SDKs open a listen call per listener, all on one connection. More of them than
    /// SwiftNIO's default limit of 100 streams are all open at once and all answered (the
    /// limit used to be enforced without being advertised, so the client held the rest back).
    @Test func moreListenCallsThanAHundredAreOpenAtOnceOnOneConnection() async throws {
        try await GRPCTests.withFlint { firestore, _ in
            let count = 150
            let answered = Answered()
            await withTaskGroup(of: Void.self) { group in
                for i in 0..<count {
                    group.addTask {
                        // Each call stays open, reading, until the group is cancelled.
                        try? await firestore.listen(requestProducer: { writer in
                            try await writer.write(Self.documentsTarget(1, [GRPCTests.root + "/many/d\(i)"]))
                            while !Task.isCancelled { try await Task.sleep(for: .milliseconds(20)) }
                        }) { response in
                            for try await _ in response.messages { await answered.add(i) }
                        }
                    }
                }
                #expect(await answered.count(reaching: count, within: 20) == count)
                group.cancelAll()
            }
        }
    }
}

/// Which calls have had an answer.
private actor Answered {
    private var calls: Set<Int> = []

    func add(_ call: Int) { calls.insert(call) }

    /// How many calls have been answered once `count` are, or when the deadline passes.
    func count(reaching count: Int, within seconds: Double) async -> Int {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while calls.count < count, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        return calls.count
    }
}
