import FlintModel

extension Ruleset {
    /// Parses and checks a ruleset: the ruleset when it is valid, and every problem found.
    public static func compile(_ source: String) -> (ruleset: Ruleset?, diagnostics: [Diagnostic]) {
        if source.isEmpty {
            var empty = Diagnostics()
            empty.error("Rules content empty. Compilation aborted.", at: .nowhere)
            return (nil, empty.sorted)
        }
        var parser = Parser(source)
        let ruleset = parser.parseRuleset(source: source)
        var diagnostics = parser.diagnostics
        // The checker also runs on what parsed, so one pass reports every error; its warnings
        // (unused and unknown names, types) wait for a ruleset that parses, as the reference's do.
        var checker = Checker(ruleset)
        checker.check(ruleset)
        for d in checker.syntax.all { diagnostics.error(d.message, at: d.position, through: d.endOffset) }
        let parsed = !diagnostics.hasErrors
        for d in parser.declarations.all + checker.diagnostics.all where parsed || d.severity == .error {
            if d.severity == .error {
                diagnostics.error(d.message, at: d.position, through: d.endOffset)
            } else {
                diagnostics.warning(d.message, at: d.position, through: d.endOffset)
            }
        }
        return (diagnostics.hasErrors ? nil : ruleset, diagnostics.sorted)
    }
}

/// One request as the rules see it.
public struct RulesRequest: Sendable {
    public enum Target: Sendable {
        /// A single document, by its path below the database's documents.
        case document([String])
        /// The documents a query could return: a collection (or, for collection groups, any
        /// collection with this id below the parent) and an unknown document id.
        case collection([String], group: Bool)
        /// The documents a query without a collection id could return: those of every
        /// collection directly below the parent, or with `anyDepth` at every depth below it.
        /// Only a recursive wildcard matches the unknown rest of such a path.
        case anyCollection([String], anyDepth: Bool)
    }

    public var method: Method
    public var database: String
    public var target: Target
    /// `request.auth`: null, or a map with `uid` and `token`.
    public var auth: RulesValue
    public var time: RulesTimestamp
    /// `resource`: the stored document (map with data, id, __name__) or null; for lists, the
    /// pseudo-document of the query's constraints.
    public var resource: RulesValue
    /// `request.resource` on writes: the document as it would be after the write.
    public var requestResource: RulesValue?
    /// A set or update with no precondition, which creates or updates depending on what is
    /// stored: the reference's first pass, made before reading, weighs it as either.
    public var createsOrUpdates = false
    /// A write whose `request.resource` is only known once the stored document is read: it
    /// has an update mask, or transforms (which apply to the stored values, or take the commit
    /// time). The reference's first pass does not know it.
    public var requestResourceNeedsReading = false
    /// `request.query` on lists.
    public var query: RulesValue?
    /// `request.writeFields` on writes: the paths a write names (its mask and transforms), or
    /// null on a delete. Deprecated in the docs, still given by the reference.
    public var writeFields: RulesValue?
    public var inTransaction: Bool

    public init(
        method: Method, database: String, target: Target, auth: RulesValue, time: RulesTimestamp,
        resource: RulesValue = .null, requestResource: RulesValue? = nil, query: RulesValue? = nil, inTransaction: Bool = false
    ) {
        self.method = method
        self.database = database
        self.target = target
        self.auth = auth
        self.time = time
        self.resource = resource
        self.requestResource = requestResource
        self.query = query
        self.inTransaction = inTransaction
    }

    /// The full path, `/databases/{db}/documents/...`.
    var fullPath: RulesPath {
        switch target {
        case .document(let p), .collection(let p, _), .anyCollection(let p, _): RulesPath(["databases", database, "documents"] + p)
        }
    }

    var requestMap: RulesValue {
        var m: [UTF8Key: RulesValue] = [
            "auth": auth, "method": .string(method.rawValue), "path": .path(fullPath), "time": .timestamp(time),
            "headers": .map([:]), "inTransaction": .bool(inTransaction), "fields": .null,
        ]
        if let requestResource { m["resource"] = requestResource }
        if let query { m["query"] = query }
        if let writeFields { m["writeFields"] = writeFields }
        return .map(m)
    }
}

/// The outcome of a request against a ruleset.
public struct RulesDecision: Sendable {
    public var allowed: Bool
    /// The emulator's denial text: `\nfalse for 'get' @ L5, Null value error. for 'get' @ L9`, or
    /// `No matching allow statements`.
    public var message: String
    public var debugLog: [String]
    /// The outcome of each statement evaluated with the documents (the reference's second
    /// pass) that did not allow.
    public var secondPass: [String] = []
    /// The statement that allowed, if one did, and where it stands among the path's
    /// statements. Its outcome, and those of the path's other matches after it, are written
    /// only when a request on several documents is denied and names them
    /// (`Ruleset.namedSecondPass`), so an allowed request formats and weighs nothing more.
    var allowedAt: (method: Method, line: Int, index: Int, block: Int)?
}

/// The reference's first pass over a request, made before any document is read.
public struct RulesFirstPass: Sendable {
    /// Each statement's outcome, as the reference's message names it, up to one that allowed.
    public var outcomes: [String]
    /// Plain `false`s only: the reference denies without a second pass.
    public var settled: Bool
    /// A statement allowed the request without any read (named `false` among the outcomes,
    /// which only a request on several documents shows).
    public var allowed: Bool
}

/// A segment of the path being matched: a name, the unknown id of a listed document or of the
/// collection of a query without one, or an unknown run of segments (in front of a collection
/// group, or below the parent of a query without a collection id).
enum MatchSegment: Equatable {
    case name(String)
    case unknownID
    case unknownCollectionID
    case anyPrefix
}

extension Ruleset {
    /// Distinct documents one decision's rules may read.
    static let maxReads = 10

    /// Decides a request: allowed when any allow statement of a complete match for its method
    /// evaluates to true. It may read 10 distinct documents through get/exists and their After
    /// forms; `budget` is the request's bound, shared among the decisions of one request (20
    /// for batch gets, commits and transactions; 10 when none is given).
    public func decide(_ request: RulesRequest, reader: any DocumentReader, budget: RulesReadBudget? = nil, coverage: Coverage? = nil) -> RulesDecision {
        let segments = Self.segments(request)
        let evaluator = Evaluator(
            ruleset: self, reader: reader, maxReads: Self.maxReads, budget: budget ?? RulesReadBudget(limit: Self.maxReads),
            target: Self.target(request))
        if coverage != nil { evaluator.observed = [:] }
        defer { if let coverage, let observed = evaluator.observed { coverage.record(observed, skipped: evaluator.skipped) } }
        var outcomes: [String] = []
        let candidates = statements(request, segments)
        for (index, (allow, scope, block)) in candidates.enumerated() {
            let value = allow.condition.map { evaluator.evaluate($0, scope) } ?? .bool(true)
            let at = allow.condition.map { ranges[$0.id].start } ?? allow.position
            if case .bool(true) = value {
                return RulesDecision(
                    allowed: true, message: "", debugLog: evaluator.debugLog, secondPass: outcomes,
                    allowedAt: (request.method, at.line, index, block))
            }
            outcomes.append(Self.outcome(value, request.method, line: at.line, column: at.column))
        }
        // The reference's message starts with its first pass, and holds the second (this one)
        // only when the first did not settle the request.
        let first = firstPass(request, reader: reader)
        let named = first.allowed ? outcomes : first.outcomes + (first.settled ? [] : outcomes)
        let message = named.isEmpty ? "No matching allow statements" : "\n" + named.joined(separator: ", ")
        return RulesDecision(allowed: false, message: message, debugLog: evaluator.debugLog, secondPass: outcomes)
    }

    /// A decision's second pass as a denial of several documents names it: the statement that
    /// allowed is named `false` like the rest, and the reference goes on to the path's other
    /// matches (not the rest of the allowing one), whose statements are weighed here, for their
    /// names alone.
    public func namedSecondPass(_ decision: RulesDecision, _ request: RulesRequest, reader: any DocumentReader) -> [String] {
        guard let allowed = decision.allowedAt else { return decision.secondPass }
        var names = decision.secondPass + [Self.outcome(.bool(true), allowed.method, line: allowed.line)]
        let evaluator = Evaluator(ruleset: self, reader: reader, maxReads: Self.maxReads, target: Self.target(request))
        var allowedIn = allowed.block
        for (allow, scope, block) in statements(request, Self.segments(request)).dropFirst(allowed.index + 1) where block != allowedIn {
            let value = allow.condition.map { evaluator.evaluate($0, scope) } ?? .bool(true)
            let at = allow.condition.map { ranges[$0.id].start } ?? allow.position
            names.append(Self.outcome(value, request.method, line: at.line, column: at.column))
            if case .bool(true) = value { allowedIn = block }
        }
        return names
    }

    /// One statement's outcome as the reference's denial names it. An allowing outcome is named
    /// only in a first pass that cannot use it, as `false`; an unread document, or a comparison a
    /// query's filter does not decide, as an evaluation error at the condition's `column`.
    fileprivate static func outcome(_ value: RulesValue, _ method: Method, line: Int, column: Int = 0) -> String {
        let text: String
        switch value {
        case .bool: text = "false"
        case .error(Evaluator.unreadText), .error(Operators.notImplied): text = "evaluation error at L\(line):\(column)"
        case .error(let message): text = message
        default: text = "Type error. Received: [\(value.typeName)] Expected: [bool]."
        }
        return "\(text) for '\(method.rawValue)' @ L\(line)"
    }

    /// The document a request is about, which reads as null rather than failing when missing.
    private static func target(_ request: RulesRequest) -> RulesPath? {
        if case .document = request.target { request.fullPath } else { nil }
    }

    /// The path a request is matched against, below the service.
    private static func segments(_ request: RulesRequest) -> [MatchSegment] {
        var segments: [MatchSegment] = ["databases", request.database, "documents"].map { .name($0) }
        switch request.target {
        case .document(let p): segments += p.map { .name($0) }
        case .collection(let p, let group):
            if group {
                segments += p.map { .name($0) }.dropLast()
                segments.append(.anyPrefix)
                segments.append(.name(p.last ?? ""))
            } else {
                segments += p.map { .name($0) }
            }
            segments.append(.unknownID)
        case .anyCollection(let p, let anyDepth):
            segments += p.map { .name($0) }
            segments += anyDepth ? [.anyPrefix] : [.unknownCollectionID, .unknownID]
        }
        return segments
    }

    /// The reference decides a request in two passes and names both in its denials. The first
    /// is made before any document is read: every get and exists, and for a document request
    /// `resource` too, are unknown (and `request.resource` of a write that merges into the
    /// stored document or transforms fields), and an evaluation that needs them is
    /// `evaluation error at` the condition; a set or update without a precondition is weighed
    /// as a create and as an update, and nothing it allows counts, as the method is not known
    /// yet. For a document request only a pass of plain `false`s settles it; a query, whose
    /// `resource` is known (but for a way naming its document), is settled by its first pass
    /// unless that pass needed a read (and then named only once).
    public func firstPass(_ request: RulesRequest, reader: any DocumentReader) -> RulesFirstPass {
        let segments = Self.segments(request)
        let methods: [Method] = request.createsOrUpdates ? [.create, .update] : [request.method]
        let isQuery = request.method == .list
        let evaluator = Evaluator(ruleset: self, reader: reader, maxReads: Self.maxReads, target: Self.target(request))
        evaluator.withoutReads = true
        var outcomes: [String] = []
        var settled = true
        var neededReads = false
        var allowed = false
        for method in methods {
            var guessed = request
            guessed.method = method
            // A query way that names its document reads it as a document request does.
            if !isQuery || Self.target(request) != nil { guessed.resource = Evaluator.unread }
            if request.requestResourceNeedsReading { guessed.requestResource = Evaluator.unread }
            // Once a statement allows, the rest of its match are not weighed, but other matches
            // of the path are, and named.
            var allowedIn: Int?
            for (allow, scope, block) in statements(guessed, segments) where block != allowedIn {
                let at = allow.condition.map { ranges[$0.id].start } ?? allow.position
                let value = allow.condition.map { evaluator.evaluate($0, scope) } ?? .bool(true)
                let named = Self.outcome(value, method, line: at.line, column: at.column)
                switch value {
                case .bool(true) where methods.count == 1:
                    allowed = true
                    allowedIn = block
                case .bool(true):
                    // This method is allowed, which counts for nothing yet.
                    settled = false
                    allowedIn = block
                case .bool(false): break
                case .error(Evaluator.unreadText):
                    neededReads = true
                    settled = false
                default: settled = false
                }
                outcomes.append(named)
            }
        }
        if allowed { return RulesFirstPass(outcomes: outcomes, settled: false, allowed: true) }
        if isQuery {
            // A query way's first pass, unless it could not do without reading, is all there is
            // to weigh: it settles the way, and is named once.
            return RulesFirstPass(outcomes: outcomes, settled: !neededReads, allowed: false)
        }
        return RulesFirstPass(outcomes: outcomes, settled: settled, allowed: false)
    }

    /// The allow statements for the request's method on its path, each with the scope its
    /// condition sees (`request`, `resource`, functions and the wildcards bound on the way).
    /// Each is numbered by the match it stands in (each way a match meets the path counting
    /// as one).
    private func statements(_ request: RulesRequest, _ segments: [MatchSegment]) -> [(Allow, Scope, block: Int)] {
        let root = Scope(parent: nil, variables: [("request", request.requestMap), ("resource", request.resource)], functions: functions)
        let serviceFunctions = service?.functions ?? []
        let serviceScope = serviceFunctions.isEmpty ? root : Scope(parent: root, functions: serviceFunctions)
        var candidates: [(Allow, Scope, block: Int)] = []
        for m in service?.matches ?? [] { collect(m, segments, 0, serviceScope, request.method, &candidates) }
        return candidates
    }

    private func collect(
        _ m: Match, _ path: [MatchSegment], _ from: Int, _ outer: Scope, _ method: Method, _ out: inout [(Allow, Scope, block: Int)]
    ) {
        for (bindings, consumed) in Self.match(m.pattern[...], path, from, version: version) {
            // A level that binds nothing and declares nothing shares its parent's scope.
            let scope = bindings.isEmpty && m.functions.isEmpty ? outer : Scope(parent: outer, variables: bindings, functions: m.functions)
            if consumed == path.count {
                let block = (out.last?.block ?? 0) + 1
                for allow in m.allows where allow.methods.contains(where: { $0.covers(method) }) { out.append((allow, scope, block)) }
            }
            for child in m.matches { collect(child, path, consumed, scope, method, &out) }
        }
    }

    /// Every way `pattern` can match the path from `at`: the bindings and where it stops.
    static func match(_ pattern: ArraySlice<PatternSegment>, _ path: [MatchSegment], _ at: Int, version: Int)
        -> [([(name: String, value: RulesValue)], Int)]
    {
        guard let first = pattern.first else { return [([], at)] }
        let rest = pattern.dropFirst()
        var out: [([(name: String, value: RulesValue)], Int)] = []
        switch first {
        case .literal(let word):
            guard at < path.count, case .name(let segment) = path[at], equalUTF8(segment, word) else { return [] }
            return match(rest, path, at + 1, version: version)
        case .variable(let name):
            guard at < path.count else { return [] }
            let bound: RulesValue
            switch path[at] {
            case .name(let s): bound = .string(s)
            // A query names no document id (nor, without a collection id, the collection): the
            // reference reads such a wildcard as a null that fails wherever it is used.
            case .unknownID, .unknownCollectionID: bound = .error("Null value error.")
            case .anyPrefix: return []
            }
            for (b, end) in match(rest, path, at + 1, version: version) { out.append(([(name, bound)] + b, end)) }
        case .recursive(let name):
            // v1: one or more segments to the end; v2: zero or more, anywhere.
            let minimum = version >= 2 ? 0 : 1
            guard at + minimum <= path.count else { return [] }
            for length in minimum...(path.count - at) {
                if version < 2, at + length != path.count { continue }
                // What the query leaves open (its document id, a group's parents) stays an unnamed
                // capture, as on the reference: written empty, and equal to nothing.
                var bound = RulesPath([])
                for s in path[at..<(at + length)] {
                    if case .name(let n) = s {
                        bound.segments.append(n)
                    } else {
                        bound.captures[bound.segments.count] = ""
                        bound.segments.append("")
                    }
                }
                for (b, end) in match(rest, path, at + length, version: version) { out.append(([(name, .path(bound))] + b, end)) }
            }
        }
        return out
    }
}

// MARK: - Firestore values

extension RulesValue {
    /// A stored value as the rules see it; references become full paths.
    public init(_ v: Value) {
        switch v {
        case .null: self = .null
        case .boolean(let b): self = .bool(b)
        case .integer(let i): self = .int(i)
        case .double(let d): self = .float(d)
        case .timestamp(let t): self = .timestamp(RulesTimestamp(t))
        case .string(let s): self = .string(s)
        case .bytes(let b): self = .bytes(b)
        case .reference(let r): self = .path(RulesPath(["databases", r.database.database, "documents"] + r.key.path.segments))
        case .geoPoint(let g): self = .latlng(g.latitude, g.longitude)
        case .array(let items): self = .list(items.map(RulesValue.init))
        case .map(let m): self = .map(RulesValue.fields(m))
        case .vector(let values): self = .vector(values)
        }
    }

    public static func fields(_ m: MapValue) -> [UTF8Key: RulesValue] {
        var out: [UTF8Key: RulesValue] = [:]
        out.reserveCapacity(m.count)
        for e in m.entries { out[UTF8Key(e.key)] = RulesValue(e.value) }
        return out
    }

    /// A document as `resource`: its data, id and full name.
    public static func resource(database: String, path: [String], fields data: MapValue) -> RulesValue {
        .map([
            "data": .map(fields(data)), "id": .string(path.last ?? ""),
            "__name__": .path(RulesPath(["databases", database, "documents"] + path)),
        ])
    }
}
