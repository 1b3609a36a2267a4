import Foundation
import FlintModel
import FlintQuery
import FlintRules
import FlintStore

/// Reads documents for the rules' `get()` and `exists()` from this database's store; the
/// `After` forms see a commit's pending states first.
struct StoreDocumentReader: DocumentReader {
    let store: any StoreBackend
    let database: DatabaseID
    let readTime: Timestamp?
    var pending: [DocumentKey: DocumentState?] = [:]

    var requestDatabase: String? { database.database }

    func document(at path: RulesPath, afterWrites: Bool) -> RulesValue? {
        let s = path.segments
        guard s.count >= 5, s[1] == database.database, let key = try? DocumentKey(ResourcePath(Array(s.dropFirst(3)))) else {
            return nil
        }
        let state: DocumentState?
        if afterWrites, let staged = pending[key] {
            // Deleted by the commit: known to be absent.
            guard let staged else { return .null }
            state = staged
        } else {
            state = store.document(key, at: readTime)
        }
        return state.map { RulesValue.resource(database: database.database, path: key.path.segments, fields: $0.fields) }
    }
}

/// A commit's writes to one document as its rules see them. The reference folds them into one
/// mutation, judged once: from the stored document to the commit's final state, by the method
/// the folded writes make (so a create followed by an update in one batch is a create).
struct FoldedWrites {
    let key: DocumentKey
    /// In commit order; never empty.
    let writes: [Write]
    let before: DocumentState?
    let after: DocumentState?

    /// A last delete makes a delete, whatever came before. Otherwise the first write's
    /// precondition names the method (`exists: false` a create, `exists: true` or an update time
    /// an update, whatever is stored, as on the reference); without one, what is stored does.
    var method: Method {
        if case .delete = writes[writes.count - 1].operation { return .delete }
        switch writes[0].precondition {
        case .exists(false): return .create
        case .exists(true), .updateTime: return .update
        case .none: return before == nil ? .create : .update
        }
    }

    /// A set or update with no precondition, which creates or updates depending on what is stored.
    var createsOrUpdates: Bool { method != .delete && writes[0].precondition == .none }

    /// Whether a set or a delete replaces the document somewhere in the writes: then the folded
    /// mutation is a whole set, with no mask, and does not merge into the stored document.
    private var replaces: Bool {
        writes.contains { w in
            switch w.operation {
            case .delete: true
            case .update: w.updateMask == nil
            case .transform: false
            }
        }
    }

    /// The transforms the folded mutation keeps: every one since the last delete (a set after a
    /// transform does not drop it from the mutation, though it overwrites its value).
    private var foldedTransforms: [FieldTransform] {
        let deleted = writes.lastIndex { if case .delete = $0.operation { true } else { false } }
        return writes[(deleted.map { $0 + 1 } ?? 0)...].flatMap(\.transforms)
    }

    /// Whether `request.resource` is known only once the stored document is read: it is
    /// merged into, or a transform may take the commit time.
    var requestResourceNeedsReading: Bool {
        method != .delete && (!replaces || !foldedTransforms.isEmpty)
    }

    /// `request.writeFields`, as the reference folds it: each kept transform's path, repeats
    /// included, then the masks' paths (of every write, unless a set or delete replaces the
    /// document), each once and none inside another, in the reference's order
    /// (`ReferenceMaskOrder`). Nil (null) for a whole set without transforms. A transform's
    /// path is its segments joined by `.` with nothing escaped (the field `a.b` is `a.b`), a
    /// mask's as `rulesName` writes it, as on the reference.
    var writeFields: [String]? {
        let transformed = foldedTransforms.map(\.field.dotted)
        if replaces { return transformed.isEmpty ? nil : transformed }
        let masked = ReferenceMaskOrder.listed(writes.map { $0.updateMask ?? [] })
        return transformed + masked.map(Self.rulesName)
    }

    /// A path as the reference's rules name it: segments joined by `.`, with `\` and `.`
    /// inside a segment escaped by a backslash (the field `a.b` is `a\.b`).
    static func rulesName(_ path: FieldPath) -> String {
        path.segments.map { $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ".", with: "\\.") }
            .joined(separator: ".")
    }
}

extension Database {
    /// The rules for this request, or nil when they do not apply (owner, or no rules loaded).
    private func ruleset(for auth: AuthContext) -> RulesRegistry.Loaded? {
        guard auth != .owner else { return nil }
        return rules?.rules(for: id.project, database: id.database)
    }

    /// Whether the rules decide `auth`'s requests (not the owner's, nor any without rules).
    func rulesApply(to auth: AuthContext) -> Bool { ruleset(for: auth) != nil }

    static func authValue(_ auth: AuthContext) -> RulesValue {
        switch auth {
        case .owner, .unauthenticated: return .null
        case .user(let uid, let token):
            return .map(["uid": uid.map { .string($0) } ?? .null, "token": .map(RulesValue.fields(token))])
        }
    }

    private func resource(_ key: DocumentKey, _ state: DocumentState?) -> RulesValue {
        state.map { .resource(database: id.database, path: key.path.segments, fields: $0.fields) } ?? .null
    }

    private static func denied(_ decision: RulesDecision) -> FlintError {
        FlintError(.permissionDenied, decision.message, details: decision.debugLog.map { "debug: " + $0 })
    }

    /// Passes what `debug()` printed to the configured log, allowed or not, and the verdict to
    /// the request's trace.
    private func logDebug(_ decision: RulesDecision, _ method: Method, _ path: [String]) {
        if let trace = RulesTrace.current {
            // Each line once: a denial can name one statement more than once.
            var seen = Set<String>()
            let lines = decision.message.matches(of: /@ L\d+/).map { String($0.output) }.filter { seen.insert($0).inserted }
                .joined(separator: ", ")
            trace.record("\(method.rawValue) \(path.joined(separator: "/")) " + (decision.allowed ? "allowed" : "denied" + (lines.isEmpty ? "" : " " + lines)))
        }
        guard !decision.debugLog.isEmpty, let log = configuration.rulesDebugLog else { return }
        let verdict = decision.allowed ? "allowed" : "denied"
        for line in decision.debugLog { log("rules debug() for \(method.rawValue) \(path.joined(separator: "/")) (\(verdict)): \(line)") }
    }

    /// Single-document reads (`get`), each on its stored document.
    func authorizeReads(_ keys: [DocumentKey], auth: AuthContext, at readTime: Timestamp?, inTransaction: Bool) throws(FlintError) {
        guard let ruleset = ruleset(for: auth) else { return }
        let reader = StoreDocumentReader(store: store, database: id, readTime: readTime)
        let now = RulesTimestamp(clock.now())
        let budget = RulesReadBudget(limit: keys.count > 1 ? 20 : 10)
        let requests = keys.map { key in
            RulesRequest(
                method: .get, database: id.database, target: .document(key.path.segments), auth: Self.authValue(auth), time: now,
                resource: resource(key, store.document(key, at: readTime)), inTransaction: inTransaction)
        }
        var decisions: [RulesDecision] = []
        for (key, request) in zip(keys, requests) {
            let decision = ruleset.ruleset.decide(request, reader: reader, budget: budget, coverage: ruleset.coverage)
            logDebug(decision, .get, key.path.segments)
            decisions.append(decision)
            guard decision.allowed else {
                guard keys.count > 1 else { throw Self.denied(decision) }
                throw Self.denied(decision, naming: requests, decisions, ruleset.ruleset, reader, namingAllowed: true)
            }
        }
    }

    /// Every document a commit writes, each once (`FoldedWrites`); `getAfter` sees the whole
    /// commit's final states.
    func authorizeWrites(
        _ documents: [FoldedWrites], final pending: [DocumentKey: DocumentState?], auth: AuthContext, time: Timestamp,
        writeCount: Int, inTransaction: Bool
    ) throws(FlintError) {
        guard let ruleset = ruleset(for: auth) else { return }
        var reader = StoreDocumentReader(store: store, database: id, readTime: nil)
        reader.pending = pending
        let budget = RulesReadBudget(limit: writeCount > 1 ? 20 : 10)
        var requests: [RulesRequest] = []
        var decisions: [RulesDecision] = []
        for document in documents {
            let key = document.key
            let method = document.method
            var request = RulesRequest(
                method: method, database: id.database, target: .document(key.path.segments), auth: Self.authValue(auth),
                time: RulesTimestamp(time), resource: resource(key, document.before),
                requestResource: method == .delete ? .null : resource(key, document.after), inTransaction: inTransaction)
            request.writeFields = method == .delete ? .null : document.writeFields.map { .list($0.map { .string($0) }) } ?? .null
            request.createsOrUpdates = document.createsOrUpdates
            request.requestResourceNeedsReading = document.requestResourceNeedsReading
            let decision = ruleset.ruleset.decide(request, reader: reader, budget: budget, coverage: ruleset.coverage)
            logDebug(decision, method, key.path.segments)
            requests.append(request)
            decisions.append(decision)
        }
        guard let denial = decisions.first(where: { !$0.allowed }) else { return }
        guard documents.count > 1 else { throw Self.denied(denial) }
        throw Self.denied(denial, naming: requests, decisions, ruleset.ruleset, reader, namingAllowed: false)
    }

    /// The reference's denial of a request on several documents. It names each document's
    /// first pass, stopping at one plainly refused there; then the second passes of those the
    /// first pass left open, in order, up to the first denied. Batch reads name the second
    /// passes that allowed on the way; commits do not.
    private static func denied(
        _ denial: RulesDecision, naming requests: [RulesRequest], _ decisions: [RulesDecision], _ ruleset: Ruleset,
        _ reader: StoreDocumentReader, namingAllowed: Bool
    ) -> FlintError {
        var named: [String] = []
        var open: [Int] = []
        var settled = false
        for (i, request) in requests.enumerated() {
            let first = ruleset.firstPass(request, reader: reader)
            named += first.outcomes
            if first.allowed { continue }
            if first.settled {
                settled = true
                break
            }
            open.append(i)
        }
        if !settled {
            for i in open where i < decisions.count {
                let decision = decisions[i]
                if !decision.allowed || namingAllowed { named += ruleset.namedSecondPass(decision, requests[i], reader: reader) }
                if !decision.allowed { break }
            }
        }
        var combined = denial
        combined.message = named.isEmpty ? "No matching allow statements" : "\n" + named.joined(separator: ", ")
        combined.debugLog = decisions.flatMap(\.debugLog)
        return denied(combined)
    }

    /// A query or listing (`list`): every document it could return must be allowed, judged from
    /// its filter, never from the stored data. Each OR branch and each `in` value is one way,
    /// and every way must pass. The filter comes without repeats (`NormalizedQuery`), so a value
    /// listed twice is one way, as on the reference.
    func authorizeQuery(_ query: Query, auth: AuthContext, at readTime: Timestamp?) throws(FlintError) {
        guard let ruleset = ruleset(for: auth) else { return }
        let reader = StoreDocumentReader(store: store, database: id, readTime: readTime)
        let target: RulesRequest.Target
        let logged: [String]
        if let id = query.collectionID {
            target = .collection(query.parent.segments + [id], group: query.allDescendants)
            logged = query.parent.segments + [id]
        } else {
            target = .anyCollection(query.parent.segments, anyDepth: query.allDescendants)
            logged = query.parent.segments + [query.allDescendants ? "**" : "*"]
        }
        // As the emulator gives it: limit null when absent, offset 0, orderBy a map from field
        // path to "ASC" or "DESC".
        var orderBy: [UTF8Key: RulesValue] = [:]
        for o in query.orderBy { orderBy[UTF8Key(o.field.segments.joined(separator: "."))] = .string(o.descending ? "DESC" : "ASC") }
        let queryMap: [UTF8Key: RulesValue] = [
            "limit": query.limit.map { .int(Int64($0)) } ?? .null, "offset": .int(Int64(query.offset)), "orderBy": .map(orderBy),
        ]
        let now = RulesTimestamp(clock.now())
        // A query may read 10 documents however many ways its filter has, as production
        // documents it (the reference allows 20, shared among the ways).
        let budget = RulesReadBudget(limit: 10)
        // A way met again (`a in [1, 2] || a == 1`) is decided once, as on the reference. Its
        // identity holds field names, compared by their bytes.
        var seen = Set<UTF8Key>()
        var requests: [RulesRequest] = []
        for way in Self.ways(query.filter) where seen.insert(UTF8Key(way.identity)).inserted {
            var request = RulesRequest(
                method: .list, database: id.database, target: target,
                auth: Self.authValue(auth), time: now, query: .map(queryMap))
            // A group below a document reads a range of names, so no way of it names one
            // document (as when a way names two).
            if let named = way.name, !query.isGroupBelowDocument {
                // A way that names its document is decided on that document; a missing one
                // cannot be read, as on the reference (`resource == null` does not hold).
                request.target = .document(named.path.segments)
                let stored = store.document(named, at: readTime)
                request.resource = stored == nil ? .error("Variable read error. Variable: [resource].") : resource(named, stored)
            } else {
                request.resource = .map(["data": .map(way.data)])
            }
            requests.append(request)
        }
        // The ways are decided as the documents of a batch get are, and a denial names them so:
        // every way's first pass, then the second passes up to the denied one.
        var decisions: [RulesDecision] = []
        for request in requests {
            let decision = ruleset.ruleset.decide(request, reader: reader, budget: budget, coverage: ruleset.coverage)
            logDebug(decision, .list, logged)
            decisions.append(decision)
            guard decision.allowed else {
                guard requests.count > 1 else { throw Self.denied(decision) }
                throw Self.denied(decision, naming: requests, decisions, ruleset.ruleset, reader, namingAllowed: true)
            }
        }
    }

    /// One conjunction of a query's filter in disjunctive form. A field with one equality is
    /// pinned to its value; a field any other filter touches is a constraint holding every
    /// fact the filters give, equalities included, as the reference models it.
    struct Way {
        var data: [UTF8Key: RulesValue] = [:]
        /// The documents equalities on `__name__` name.
        var names: Set<DocumentKey> = []

        /// The one document the way is decided on: named by every equality on `__name__`, and
        /// no range on it. Two documents, or a range beside one, name no document, so the way
        /// is decided as a listing of the collection, as on the reference.
        var name: DocumentKey? { names.count == 1 && data["__name__"] == nil ? names.first : nil }

        /// A field an equality filter pins. Against null or NaN no value matches, and the
        /// reference records the impossible fact instead (`IS_NULL` and `IS_NAN` do pin).
        mutating func pin(_ path: FieldPath, _ value: RulesValue) {
            if Self.matchesNothing(value) {
                constrain(path, FieldConstraint.impossible)
            } else {
                pinExactly(path, value)
            }
        }

        mutating func pinExactly(_ path: FieldPath, _ value: RulesValue) {
            switch Self.get(data, path.segments[...]) {
            case nil: Self.set(&data, path.segments[...], value)
            // The same value of the same type: 1 and 1.0 are two facts, as on the reference.
            case let pinned? where !pinned.isConstraint && pinned.typeName == value.typeName && pinned.equals(value): break
            case _?: constrain(path, [.init(.equal, value)])
            }
        }

        /// An array field known to hold `element`.
        mutating func holds(_ path: FieldPath, _ element: RulesValue) {
            constrain(path, [.init(.listContains, element)])
        }

        /// A range or `!=` filter. A range against null or NaN matches nothing.
        mutating func bound(_ path: FieldPath, _ op: FieldConstraint.Op, _ value: RulesValue) {
            let impossible = op != .notEqual && Self.matchesNothing(value)
            constrain(path, impossible ? FieldConstraint.impossible : [.init(op, value)])
        }

        private static func matchesNothing(_ value: RulesValue) -> Bool {
            switch value {
            case .null: true
            case .float(let f): f.isNaN
            default: false
            }
        }

        /// Makes the field a constraint (a value pinned before becomes its first fact) and adds
        /// the facts.
        private mutating func constrain(_ path: FieldPath, _ facts: [FieldConstraint.Fact]) {
            var constraint = FieldConstraint()
            switch Self.get(data, path.segments[...]) {
            case .constraint(let existing)?: constraint = existing
            case let pinned?: constraint.facts.append(.init(.equal, pinned))
            case nil: break
            }
            constraint.facts += facts
            Self.set(&data, path.segments[...], .constraint(constraint))
        }

        /// The way as the reference tells repeats apart: the same documents named, and the
        /// same fields with the same values or the same facts in any order.
        var identity: String { names.map(\.path.canonical).sorted().joined(separator: ", ") + Self.identity(.map(data)) }

        private static func identity(_ value: RulesValue) -> String {
            switch value {
            case .map(let fields): "{" + fields.keys.sorted().map { "\($0.string): \(identity(fields[$0]!))" }.joined(separator: ", ") + "}"
            case .constraint(let c): "<" + c.facts.map { "\($0.op.rawValue) \($0.value.reportText)" }.sorted().joined(separator: ", ") + ">"
            default: value.reportText
            }
        }

        /// Adds everything `other` knows of its fields.
        mutating func merge(_ other: Way, under prefix: [String] = []) {
            if prefix.isEmpty { names.formUnion(other.names) }
            for (key, value) in other.data {
                let path = FieldPath(unchecked: prefix + [key.string])
                switch value {
                case .map(let fields): merge(Way(data: fields), under: prefix + [key.string])
                case .constraint(let c): constrain(path, c.facts)
                default: pinExactly(path, value)
                }
            }
        }

        static func get(_ map: [UTF8Key: RulesValue], _ path: ArraySlice<String>) -> RulesValue? {
            guard let first = path.first, let v = map[UTF8Key(first)] else { return nil }
            if path.count == 1 { return v }
            guard case .map(let inner) = v else { return nil }
            return get(inner, path.dropFirst())
        }

        static func set(_ map: inout [UTF8Key: RulesValue], _ path: ArraySlice<String>, _ value: RulesValue) {
            guard let first = path.first.map({ UTF8Key($0) }) else { return }
            if path.count == 1 {
                map[first] = value
                return
            }
            var inner: [UTF8Key: RulesValue] = [:]
            if case .map(let existing)? = map[first] { inner = existing }
            set(&inner, path.dropFirst(), value)
            map[first] = .map(inner)
        }
    }

    /// The filter in disjunctive form, `in` and `array-contains-any` split per value.
    static func ways(_ filter: Filter?) -> [Way] {
        guard let filter else { return [Way()] }
        switch filter {
        case .composite(let c):
            if c.op == .or { return c.filters.flatMap { ways($0) } }
            var out = [Way()]
            for f in c.filters {
                let options = ways(f)
                out = out.flatMap { base in
                    options.map { option in
                        var merged = base
                        merged.merge(option)
                        return merged
                    }
                }
                if out.count > 512 { break }
            }
            return out
        case .unary(let u):
            var w = Way()
            switch u.op {
            // `IS_NULL` (what the SDKs send for `== null`) pins the field to null, as on the
            // reference; only an equality filter with a null value proves nothing (see `pin`).
            case .isNull: w.pinExactly(u.field, .null)
            case .isNaN: w.pinExactly(u.field, .float(.nan))
            case .isNotNull: w.bound(u.field, .notEqual, .null)
            case .isNotNaN: w.bound(u.field, .notEqual, .float(.nan))
            }
            return [w]
        case .field(let f):
            let value = RulesValue(f.value)
            var w = Way()
            switch f.op {
            case .equal:
                if f.field.isDocumentID, case .reference(let r) = f.value {
                    w.names = [r.key]
                } else {
                    w.pin(f.field, value)
                }
            case .in:
                guard case .array(let values) = f.value else { return [w] }
                return values.map { v in
                    var one = Way()
                    if f.field.isDocumentID, case .reference(let r) = v { one.names = [r.key] } else { one.pin(f.field, RulesValue(v)) }
                    return one
                }
            case .arrayContains: w.holds(f.field, value)
            case .arrayContainsAny:
                guard case .array(let values) = f.value else { return [w] }
                return values.map { v in
                    var one = Way()
                    one.holds(f.field, RulesValue(v))
                    return one
                }
            case .lessThan: w.bound(f.field, .lessThan, value)
            case .lessThanOrEqual: w.bound(f.field, .lessThanOrEqual, value)
            case .greaterThan: w.bound(f.field, .greaterThan, value)
            case .greaterThanOrEqual: w.bound(f.field, .greaterThanOrEqual, value)
            case .notEqual: w.bound(f.field, .notEqual, value)
            case .notIn:
                if case .array(let values) = f.value { for v in values { w.bound(f.field, .notEqual, RulesValue(v)) } }
            }
            return [w]
        }
    }
}

/// A rules decision with what led to it, for rules authors.
public struct RulesExplanation: Sendable {
    public var allowed: Bool
    /// The denial message ("" when allowed).
    public var message: String
    public var debug: [String]
    /// Each line the denial names (or, allowed, each condition that held), then the functions
    /// the decision called, with the values their expressions took.
    public var lines: [ExplainedLine]
}

extension Database {
    /// Evaluates the rules in force for one request described directly, without performing it:
    /// `path` names a document (or, for `list`, a collection); `data` is the document after a
    /// write, or for `list` the fields its query pins. Nil when no rules are loaded.
    public func explainRules(method: Method, path: [String], auth: AuthContext, data: MapValue?) -> RulesExplanation? {
        guard let loaded = rules?.rules(for: id.project, database: id.database) else { return nil }
        let coverage = Coverage()
        let reader = StoreDocumentReader(store: store, database: id, readTime: nil)
        var request = RulesRequest(
            method: method, database: id.database, target: method == .list ? .collection(path, group: false) : .document(path),
            auth: Self.authValue(auth), time: RulesTimestamp(clock.now()))
        if method == .list {
            request.resource = .map(["data": .map(RulesValue.fields(data ?? [:]))])
            request.query = .map(["limit": .null, "offset": .int(0), "orderBy": .map([:])])
        } else if let key = try? DocumentKey(ResourcePath(path)) {
            let stored = store.document(key, at: nil)
            request.resource = stored.map { .resource(database: id.database, path: path, fields: $0.fields) } ?? .null
            if method == .create || method == .update {
                request.requestResource = .resource(database: id.database, path: path, fields: data ?? stored?.fields ?? [:])
            }
        }
        let decision = loaded.ruleset.decide(request, reader: reader, coverage: coverage)
        let lines = coverage.explain(decision.message, in: loaded.ruleset)
        return RulesExplanation(allowed: decision.allowed, message: decision.message, debug: decision.debugLog, lines: lines)
    }
}
