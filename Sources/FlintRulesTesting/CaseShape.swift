import FlintModel

extension RulesTestRunner {
    static let testOps = ["get", "list", "create", "set", "update", "delete", "batch", "transaction"]
    static let writeOps = ["create", "set", "update", "delete"]

    /// Why a case cannot be run as written, or nil. A malformed case fails as such, before
    /// anything runs: run anyway, a misspelt op or a collection path for `get` would be refused
    /// by Flint, and a refusal that is not the rules' counts as allowed, so the case could pass.
    static func malformation(_ test: RulesCase) -> String? {
        if !test.strayKeys.isEmpty {
            return "unknown field " + test.strayKeys.map { "\"\($0)\"" }.joined(separator: ", ")
        }
        guard test.name != nil else { return "a test needs a name" }
        guard test.expect == "allow" || test.expect == "deny" else {
            return "expect must be allow or deny, not \(test.expect.map { "\"\($0)\"" } ?? "missing")"
        }
        return shapeProblem(test, ops: testOps)
    }

    /// Checks that `op` is one of `ops` and that the case holds what its op uses and nothing
    /// else, building its request as `perform` will.
    private static func shapeProblem(_ test: RulesCase, ops: [String], at place: String = "") -> String? {
        guard ops.contains(test.op) else {
            return "\(place)op must be one of \(ops.joined(separator: ", ")), not \"\(test.op)\""
        }
        let isWrite = writeOps.contains(test.op)
        let isGroup = test.op == "batch" || test.op == "transaction"
        let misplaced: [(String, Bool, Bool)] = [
            ("data", test.data != nil, isWrite && test.op != "delete"),
            ("serverTimestamps", test.serverTimestamps != nil, isWrite && test.op != "delete"),
            ("increments", test.increments != nil, isWrite && test.op != "delete"),
            ("arrayUnion", test.arrayUnion != nil, isWrite && test.op != "delete"),
            ("arrayRemove", test.arrayRemove != nil, isWrite && test.op != "delete"),
            ("where", test.where != nil, test.op == "list"),
            ("orderBy", test.orderBy != nil, test.op == "list"),
            ("limit", test.limit != nil, test.op == "list"),
            ("group", test.group != nil, test.op == "list"),
            ("writes", test.writes != nil, isGroup),
            ("path", test.path != nil, !isGroup),
        ]
        if let (field, _, _) = misplaced.first(where: { $0.1 && !$0.2 }) {
            return "\(place)\(test.op) takes no \(field)"
        }
        if !place.isEmpty, let field = [("auth", test.auth != nil), ("expect", test.expect != nil), ("denial", test.denial != nil),
            ("line", test.line != nil), ("debug", test.debug != nil)].first(where: \.1)?.0
        {
            return "\(place)a write of a batch or transaction takes no \(field); the test's applies"
        }
        if !isGroup && test.path == nil { return "\(place)\(test.op) needs a path" }
        if let path = test.path {
            if path.hasPrefix("/") {
                return "\(place)path \"\(path)\" starts with \"/\"; a path starts at its collection, such as \"users/alice\""
            }
            let segments = path.split(onASCII: "/").map(String.init)
            do throws(FlintError) {
                for (i, segment) in segments.enumerated() { try Validation.validateSegment(segment, at: i) }
            } catch {
                return "\(place)path \"\(path)\": \(error.message)"
            }
            let wantsDocument = test.op != "list"
            if wantsDocument != (segments.count % 2 == 0) {
                let kind = wantsDocument ? "document path, such as \"users/alice\"" : "collection path, such as \"users\""
                return "\(place)\(test.op) takes a \(kind); \"\(path)\" is not one"
            }
        }
        do throws(FlintError) {
            switch test.op {
            case "get": break
            case "list": _ = try query(test)
            case "batch", "transaction":
                guard let writes = test.writes, !writes.isEmpty else { return "\(test.op) needs writes" }
                let ops = test.op == "transaction" ? ["get"] + writeOps : writeOps
                for (i, write) in writes.enumerated() {
                    if let problem = shapeProblem(write, ops: ops, at: "writes[\(i)]: ") { return problem }
                }
            default: _ = try write(test)
            }
        } catch {
            return "\(place)\(error.message)"
        }
        return nil
    }
}
