import FlintModel
import FlintQuery
import FlintStore

/// Snapshot listeners. A stream's sender waits on the stream's signal, then takes everything
/// that changed with `takeWatchEvents`; writers only mark targets, so they never wait on a
/// listener, and what a listener is sent always comes from one consistent point.
extension Database {
    /// Opens a listen stream; the signal fires whenever `takeWatchEvents` has something.
    public func openWatch() -> (WatchStreamID, AsyncStream<Void>) {
        let (signal, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = WatchStreamID(raw: watch.nextStream)
        watch.nextStream += 1
        watch.streams[id] = WatchStream(signal: continuation)
        return (id, signal)
    }

    /// Listen streams open now.
    public var watchStreamCount: Int { watch.streams.count }

    public func closeWatch(_ id: WatchStreamID) {
        watch.streams.removeValue(forKey: id)?.signal.finish()
    }

    /// Ends the stream's signal once what is already signalled has been taken: its sender then
    /// stops without losing the events queued so far (its client has stopped sending).
    public func endWatchSignal(_ id: WatchStreamID) {
        watch.streams[id]?.signal.finish()
    }

    /// Adds a target; its initial results follow with the next delivery. An id in use ends the
    /// stream (the error is thrown); an invalid query, or one the rules deny to `auth`, is the
    /// target's failure and is reported on the stream as its removal with the error as cause.
    @discardableResult
    public func addWatchTarget(_ target: WatchTarget, to id: WatchStreamID, auth: AuthContext = .owner) throws(FlintError) -> Int32 {
        guard let stream = watch.streams[id] else { throw FlintError(.cancelled, "The listen stream is closed.") }
        let targetID = try claimTargetID(target.id, in: stream)
        let matcher: WatchedTarget.Matcher
        do throws(FlintError) {
            switch target.scope {
            case .documents(let keys):
                try authorizeReads(keys, auth: auth, at: nil, inTransaction: false)
                matcher = .documents(Set(keys), keys)
            case .query(let query):
                // The reference plans a target's query before it looks at its offset and limit.
                let normalized = try NormalizedQuery.read(query, database: self.id, heldToRules: auth != .owner, checkingBounds: false)
                try authorizeQuery(normalized.query, auth: auth, at: nil)
                try normalized.checkPlan()
                try NormalizedQuery.checkBounds(query)
                try checkIndexes(normalized)
                matcher = .query(normalized)
            }
        } catch {
            rejectWatchTarget(targetID, error, on: stream)
            return targetID
        }
        let resumeFrom = target.resumeToken.flatMap(ResumeToken.decode) ?? target.readTime
        let asked = target.resumeToken != nil || target.readTime != nil
        stream.targets[targetID] = WatchedTarget(
            id: targetID, matcher: matcher, once: target.once, auth: auth, resumeFrom: resumeFrom, resumeAsked: asked)
        stream.signal.yield()
        return targetID
    }

    /// Reports a target that cannot be served (for instance a malformed document name).
    public func rejectWatchTarget(_ targetID: Int32, _ error: FlintError, on id: WatchStreamID) throws(FlintError) {
        guard let stream = watch.streams[id] else { throw FlintError(.cancelled, "The listen stream is closed.") }
        rejectWatchTarget(try claimTargetID(targetID, in: stream), error, on: stream)
    }

    /// Removes a target and confirms it; an unknown id is ignored, as Firestore does.
    public func removeWatchTarget(_ targetID: Int32, from id: WatchStreamID) {
        guard let stream = watch.streams[id], stream.targets.removeValue(forKey: targetID) != nil else { return }
        stream.outbox.append(.target(.remove, [targetID]))
        stream.signal.yield()
    }

    /// Everything the stream's client has not been told, as of now: new targets' results,
    /// changes to the others, and a closing consistent point with its read time.
    public func takeWatchEvents(_ id: WatchStreamID) -> [WatchEvent] {
        guard let stream = watch.streams[id] else { return [] }
        var events = stream.outbox
        stream.outbox = []
        let now = currentReadTime()
        var batch = ChangeBatch()
        var closing: [WatchEvent] = []
        var finished: [Int32] = []
        var started = false
        for targetID in stream.targets.keys.sorted() {
            guard let target = stream.targets[targetID] else { continue }
            if let start = target.pendingStart {
                started = true
                events.append(.target(.add, [targetID]))
                let resumable = start.resumeFrom.map { $0 >= watch.historyFloor && $0 >= horizon(now) && $0 <= now } ?? false
                if resumable, let from = start.resumeFrom {
                    for doc in results(of: target, at: from) { target.sent[doc.key] = doc.updateTime }
                } else if start.resumeAsked {
                    events.append(.target(.reset, [targetID], token: ResumeToken.encode(now), at: now))
                }
                deliverAll(target, into: &batch)
                if resumable {
                    let names = target.sent.keys.map { self.id.documentsRoot + "/" + $0.path.canonical }
                    closing.append(.existenceFilter(targetID: targetID, count: target.sent.count, unchangedNames: BloomFilter(names: names)))
                }
                closing.append(.target(.current, [targetID], token: ResumeToken.encode(now), at: now))
                target.pendingStart = nil
                if target.once { finished.append(targetID) }
            } else if target.rerun || !target.dirty.isEmpty {
                func collect(into changes: inout ChangeBatch) {
                    if target.rerun {
                        deliverAll(target, into: &changes)
                    } else {
                        deliver(target.dirty.sorted { $0.path < $1.path }, of: target, into: &changes)
                    }
                }
                if rulesApply(to: target.auth) {
                    // Changes go out only while the rules still let the listener read: as on the
                    // reference, a target whose reads are now denied (its documents changed, or
                    // a document its rules get()) is removed instead, with the denial as cause.
                    var changes = ChangeBatch()
                    collect(into: &changes)
                    if !changes.isEmpty, let denial = reauthorize(target) {
                        stream.targets[targetID] = nil
                        if case .query = target.matcher { events.append(.target(.reset, [targetID])) }
                        events.append(.target(.remove, ids: [targetID], resumeToken: nil, readTime: nil, cause: denial))
                        continue
                    }
                    batch.merge(changes)
                } else {
                    collect(into: &batch)
                }
            }
            target.dirty = []
            target.rerun = false
        }
        events += batch.events(readTime: now)
        events += closing
        if started || !batch.isEmpty {
            events.append(.target(.noChange, [], token: ResumeToken.encode(now), at: now))
        }
        for targetID in finished {
            stream.targets[targetID] = nil
            events.append(.target(.remove, [targetID]))
        }
        return events
    }

    // MARK: - Internals

    /// The rules' refusal of the target's reads as things stand now; nil when still allowed.
    private func reauthorize(_ target: WatchedTarget) -> FlintError? {
        do throws(FlintError) {
            switch target.matcher {
            case .documents(_, let keys): try authorizeReads(keys, auth: target.auth, at: nil, inTransaction: false)
            case .query(let q): try authorizeQuery(q.query, auth: target.auth, at: nil)
            }
            return nil
        } catch {
            return error
        }
    }

    /// Marks the targets a commit changed and wakes their streams. A target whose result a
    /// write cannot change (the document neither was shown nor now matches) is left asleep,
    /// so a commit wakes only the listeners it concerns.
    func noteWatchedChanges(_ writes: [DocumentWrite]) {
        guard !watch.streams.isEmpty, !writes.isEmpty else { return }
        for stream in watch.streams.values {
            var touched = false
            for target in stream.targets.values where target.pendingStart == nil {
                for w in writes where target.covers(w.key) && target.mayChange(w) {
                    target.markWritten(w.key)
                    touched = true
                }
            }
            if touched { stream.signal.yield() }
        }
    }

    /// After a clear, every target is recomputed and no earlier point can be resumed from.
    func noteWatchedClear() {
        watch.historyFloor = currentReadTime()
        for stream in watch.streams.values {
            for target in stream.targets.values { target.rerun = true }
            stream.signal.yield()
        }
    }

    private func claimTargetID(_ requested: Int32, in stream: WatchStream) throws(FlintError) -> Int32 {
        guard requested != 0 else {
            if stream.highestTargetID < Int32.max {
                stream.highestTargetID += 1
                return stream.highestTargetID
            }
            // Every id up to the top has been seen: take the lowest free one.
            return (1...Int32.max).first { stream.targets[$0] == nil } ?? Int32.max
        }
        guard requested > 0 else { throw .invalidArgument("Target ID must be positive, got \(requested).") }
        guard stream.targets[requested] == nil else {
            throw .invalidArgument("Target ID \(requested) is already in use on this stream.")
        }
        stream.highestTargetID = max(stream.highestTargetID, requested)
        return requested
    }

    private func rejectWatchTarget(_ targetID: Int32, _ error: FlintError, on stream: WatchStream) {
        stream.outbox.append(.target(.add, [targetID]))
        stream.outbox.append(.target(.remove, ids: [targetID], resumeToken: nil, readTime: nil, cause: error))
        stream.signal.yield()
    }

    /// The target's documents at `readTime` (nil: now), in query order.
    private func results(of target: WatchedTarget, at readTime: Timestamp?) -> [Document] {
        switch target.matcher {
        case .documents(_, let keys):
            return keys.compactMap { key in
                store.document(key, at: readTime).map { Document(key: key, fields: $0.fields, createTime: $0.createTime, updateTime: $0.updateTime) }
            }
        case .query(let q):
            return QueryExecutor.run(q, in: store, at: readTime)
        }
    }

    /// Compares the whole current result with what the client holds.
    private func deliverAll(_ target: WatchedTarget, into batch: inout ChangeBatch) {
        let docs = results(of: target, at: nil)
        var present = Set<DocumentKey>(minimumCapacity: docs.count)
        for doc in docs {
            present.insert(doc.key)
            if target.sent[doc.key] != doc.updateTime {
                target.sent[doc.key] = doc.updateTime
                batch.entered(doc, target: target.id)
            }
        }
        let gone = target.sent.keys.filter { !present.contains($0) }.sorted { $0.path < $1.path }
        for key in gone { leave(key, target, &batch) }
    }

    /// Re-evaluates only the written documents (targets whose membership is per document).
    private func deliver(_ keys: [DocumentKey], of target: WatchedTarget, into batch: inout ChangeBatch) {
        for key in keys {
            let state = store.document(key, at: nil)
            var current: Document?
            if let state {
                let matches: Bool
                switch target.matcher {
                case .documents: matches = true
                case .query(let q): matches = q.matches(key, state.fields)
                }
                if matches {
                    current = Document(key: key, fields: state.fields, createTime: state.createTime, updateTime: state.updateTime)
                }
            }
            if let current {
                guard target.sent[key] != current.updateTime else { continue }
                target.sent[key] = current.updateTime
                let projection: [FieldPath]? = if case .query(let q) = target.matcher { q.query.projection } else { nil }
                batch.entered(QueryExecutor.project([current], projection)[0], target: target.id)
            } else if target.sent[key] != nil {
                leave(key, target, &batch)
            }
        }
    }

    /// The document left the target: changed so it no longer matches, or deleted.
    private func leave(_ key: DocumentKey, _ target: WatchedTarget, _ batch: inout ChangeBatch) {
        target.sent[key] = nil
        let now = store.document(key, at: nil).map {
            Document(key: key, fields: $0.fields, createTime: $0.createTime, updateTime: $0.updateTime)
        }
        batch.left(key, now: now, target: target.id)
    }
}
