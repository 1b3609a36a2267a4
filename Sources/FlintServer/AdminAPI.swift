import FlintEngine
import FlintExport
import FlintFixtures
import FlintRules
import FlintModel
import FlintQuery
import Foundation
import Hummingbird

/// The reference emulator's admin endpoints that test suites call between tests, and Flint's
/// own: metrics, the index-usage report and shutdown.
struct AdminAPI: Sendable {
    let engine: Engine
    let metrics: ServerMetrics
    let shutdown: ShutdownTrigger

    /// `DELETE /emulator/v1/projects/{p}/databases/{d}/documents[/{path}]` empties the database
    /// or the subtree at `path` (its document and everything below it), and answers `{}`. The
    /// root or a document may end in `/` (the reference accepts that too, and then clears
    /// nothing; Flint clears what the path names). Problems are told of a `Document parent
    /// name`, as on the reference; a path of another shape is not found.
    func clear(_ request: Request) async -> Response {
        do throws(FlintError) {
            try Self.checkAuthorization(request)
            let path = request.uri.path.dropFirst("/emulator/v1/".count)
            guard let decoded = String(path).removingPercentEncoding else {
                throw .invalidArgument("The path \"\(request.uri.path)\" has invalid percent-encoding.")
            }
            // Only `projects/*/databases/*/documents…` is a clearing route (ids may be empty, and
            // are then refused by name); anything else is no resource at all, as on the reference.
            guard let segments = Self.documentsSegments(decoded) else {
                throw FlintError(.notFound, "No admin resource at \(request.uri.path).")
            }
            guard let name = try Self.subtreeToClear(decoded, below: segments.count == 6 ? segments[5] : nil) else {
                return RESTAPI.respond(Data("{}".utf8))
            }
            await engine.database(name.database).clear(under: name.path)
            return RESTAPI.respond(Data("{}".utf8))
        } catch {
            return error.restResponse()
        }
    }

    /// The segments of a decoded `projects/{p}/databases/{d}/documents[/{path}]`, the path
    /// whole as a sixth; nil for a path of another shape.
    static func documentsSegments(_ decoded: String) -> [Substring]? {
        let segments = decoded.split(onASCII: "/", maxSplits: 5)
        guard segments.count >= 5, segments[0] == "projects", segments[2] == "databases", segments[4] == "documents" else { return nil }
        return segments
    }

    /// Whether an admin path names something below a database's documents,
    /// `/emulator/v1/projects/{p}/databases/{d}/documents/…`, which only clearing serves.
    static func isBelowDocuments(_ path: String) -> Bool {
        let decoded = path.dropFirst("/emulator/v1/".count).removingPercentEncoding ?? ""
        return documentsSegments(decoded)?.count == 6
    }

    /// What `clear` empties, read as the reference reads it. (Clearing stores nothing, so, as
    /// for a delete, an id of any length names a subtree, an empty one.) A path of odd depth
    /// names a collection: its parent is checked, and told of by its own name, while the
    /// collection id is not, so an id no collection can have (`.`, `__x__`) names nothing to
    /// clear (nil). A trailing `/` after the root or a document names that parent.
    static func subtreeToClear(_ decoded: String, below rest: Substring?) throws(FlintError) -> ResourceName? {
        guard let rest, !rest.split(onASCII: "/").count.isMultiple(of: 2), let (parentName, id) = decoded.splitAtLast(ofASCII: "/") else {
            return try ResourceName.parse(decoded, kind: "Document parent", checkingIDLengths: false)
        }
        let parent = try ResourceName.parse(String(parentName), kind: "Document parent", checkingIDLengths: false)
        if id.isEmpty { return parent }
        return try? ResourceName.parse(decoded, kind: "Document parent", checkingIDLengths: false)
    }

    /// The admin routes that test suites call between tests read the Authorization header as
    /// every other request does, and refuse one that is not a token, as the reference does;
    /// none is needed, and any user may call them.
    static func checkAuthorization(_ request: Request) throws(FlintError) {
        _ = try AuthContext(authorization: request.headers[.authorization])
    }

    /// `GET /emulator/v1/metrics`: requests served per dialect, documents and open listen streams
    /// per database, memory.
    func metricsReport() async -> Response {
        var databases: [[String: Any]] = []
        for id in engine.databaseIDs.sorted(by: { $0.name < $1.name }) {
            let db = engine.database(id)
            databases.append(["name": id.name, "documents": await db.documentCount, "listenStreams": await db.watchStreamCount])
        }
        var report: [String: Any] = [
            "requests": ["http": metrics.httpRequests.load(ordering: .relaxed), "grpc": metrics.grpcCalls.load(ordering: .relaxed)],
            "databases": databases,
        ]
        if let resident = ServerMetrics.residentBytes() { report["memory"] = ["residentBytes": resident] }
        return Self.respond(json: report)
    }

    /// `GET /emulator/v1/projects/{p}/databases/{d}:indexUsage` (Flint's): the composite indexes
    /// and field overrides the queries run so far needed, as a `firestore.indexes.json`.
    /// `GET /emulator/v1/projects/{p}:indexUsage?database=projects/{p}/databases/{d}` (the
    /// reference's): the same indexes with how many queries used each.
    func indexUsage(_ request: Request) async -> Response {
        do throws(FlintError) {
            let target = try Self.rulesTarget(request.uri.path, verb: ":indexUsage")
            guard let named = target.database else {
                // As on the reference, the database is the parameter's, whatever the path's project.
                let name = request.uri.queryParameters["database"].map(String.init) ?? ""
                let database = try ResourceName.parseDatabase(name)
                return Self.respond(json: Self.usageReports(await engine.database(database).indexUseCounts(), in: database))
            }
            let database = try ResourceName.parseDatabase("projects/\(target.project)/databases/\(named)")
            let report = await engine.database(database).indexUsageReport()
            return RESTAPI.respond(Data(report.firestoreIndexesJSON.utf8))
        } catch {
            return error.restResponse()
        }
    }

    /// The reference's `GetIndexUsageResponse` in its JSON: `{"reports": [{"index": {name,
    /// queryScope, fields}, "numQueries"}]}`, or `{}` when no query needed an index. Its indexes
    /// have no ids of their own; each is named `_` in its collection group.
    static func usageReports(_ uses: [(index: IndexSpec, queries: Int)], in database: DatabaseID) -> [String: Any] {
        guard !uses.isEmpty else { return [:] }
        let reports = uses.map { use -> [String: Any] in
            let fields = use.index.fields.map { field, mode -> [String: String] in
                switch mode {
                case .ascending: return ["fieldPath": field.canonical, "order": "ASCENDING"]
                case .descending: return ["fieldPath": field.canonical, "order": "DESCENDING"]
                case .arrayContains: return ["fieldPath": field.canonical, "arrayConfig": "CONTAINS"]
                // Not reached: the reference reports no index for a vector search, nor does Flint.
                case .vector: return ["fieldPath": field.canonical]
                }
            }
            let index: [String: Any] = [
                "name": "\(database.name)/collectionGroups/\(use.index.collectionGroup)/indexes/_",
                "queryScope": use.index.scope.rawValue, "fields": fields,
            ]
            // int64, so a string in proto3 JSON.
            return ["index": index, "numQueries": String(use.queries)]
        }
        return ["reports": reports]
    }

    /// `POST /emulator/v1/projects/{p}[/databases/{d}]:bulkDelete` with `{"database":
    /// "projects/{p}/databases/{d}", "collectionIds": [...], "namespaceIds": [...]}` deletes
    /// the documents of those collection groups (`Database.bulkDelete`) and answers `{}`.
    /// The body names the database, as on the reference; the path only has to be of the right
    /// shape (its ids may even be empty).
    func bulkDelete(_ request: Request) async -> Response {
        do throws(FlintError) {
            try Self.checkAuthorization(request)
            _ = try Self.adminPathIDs(request.uri.path, verb: ":bulkDelete")
            let body = try BulkDelete(Data(buffer: try await RESTAPI.body(request)))
            try await engine.database(body.database).bulkDelete(collectionIDs: body.collectionIDs, namespaceIDs: body.namespaceIDs)
            return RESTAPI.respond(Data("{}".utf8))
        } catch {
            return error.restResponse()
        }
    }

    /// `PUT /emulator/v1/projects/{p}:securityRules` with `{"rules":{"files":[{"content":"…"}]}}`
    /// loads a project's rules (with `"database"`, one database's). Only the first file decides,
    /// as on the reference, but every file must compile (the others' warnings are not reported).
    /// Invalid rules change nothing and answer 400 with every problem, `L<line>:<column>
    /// <message>` per line.
    func putSecurityRules(_ request: Request) async -> Response {
        do throws(FlintError) {
            try Self.checkAuthorization(request)
            let target = try Self.rulesTarget(request)
            let body = Data(buffer: try await RESTAPI.body(request))
            let load = try RulesLoad(body)
            // A body's database beside the path's or the parameter's must be the same one (the
            // reference hangs on two different ones).
            if let named = load.database, let database = target.database, named != DatabaseID(project: target.project, database: database) {
                throw Self.databaseNamedTwice
            }
            let content = load.files[0].content
            let others = load.files.dropFirst().flatMap { file in
                Ruleset.compile(file.content).diagnostics.filter { $0.severity == .error }
            }
            // As on the reference, a refusal lists every problem, warnings too, in source order;
            // problems of the whole ruleset have no place and read `L0:0`.
            func refusal(_ problems: [Diagnostic]) -> FlintError {
                .invalidArgument("Error compiling rules:\n" + problems.map { "L\($0.position.line):\($0.position.column) \($0.message)" }.joined(separator: "\n"))
            }
            // Refused for another file, the reference names errors only.
            guard others.isEmpty else { throw refusal(Ruleset.compile(content).diagnostics.filter { $0.severity == .error } + others) }
            // firebase-tools loads a project's rules, which are its (default) database's; a
            // "database" name (or a path naming one) scopes them to that database, of whichever
            // project the name names, as on the reference.
            let diagnostics = engine.rules.load(
                content, project: load.database?.project ?? target.project, database: load.database?.database ?? target.database)
            guard !diagnostics.contains(where: { $0.severity == .error }) else { throw refusal(diagnostics) }
            // Loaded. Warnings come back as issues, placed as the reference places them; none: `{}`.
            guard !diagnostics.isEmpty else { return RESTAPI.respond(Data("{\n}\n".utf8)) }
            let fileName = load.files[0].name
            let issues: [[String: Any]] = diagnostics.map { d in
                var position: [String: Any] = [:]
                if let fileName { position["fileName"] = fileName }
                if d.isLocated {
                    position["line"] = d.position.line
                    position["column"] = d.position.column
                    position["currentOffset"] = d.position.offset
                    position["endOffset"] = d.endOffset ?? d.position.offset
                }
                return ["sourcePosition": position, "description": d.message, "severity": "WARNING"]
            }
            return Self.respond(json: ["issues": issues])
        } catch {
            return error.restResponse()
        }
    }

    /// `GET /emulator/v1/projects/{p}[/databases/{d}]:securityRules`: the rules in force for the
    /// database (the project's `(default)` one when none is named); for one without rules, the
    /// open rules that stand for "no rules", as the reference shows.
    func getSecurityRules(_ request: Request) async -> Response {
        do throws(FlintError) {
            try Self.checkAuthorization(request)
            let target = try Self.rulesTarget(request)
            guard let source = engine.rules.rules(for: target.project, database: target.database ?? DatabaseID.defaultDatabase)?.source else {
                return Self.openRulesResponse
            }
            return Self.respond(json: ["rules": ["files": [["content": source]]]])
        } catch {
            return error.restResponse()
        }
    }

    /// What the reference reports for a project without rules: everything is allowed, which
    /// Flint does by not checking rules at all.
    static let openRules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /{document=**} {
              allow read, write: if true;
            }
          }
        }
        """

    static let openRuleset = Ruleset.compile(openRules).ruleset

    /// An admin answer built from plain values: keys sorted, and slashes left as they are, as the
    /// reference writes them, so rules and paths read as written.
    static func respond(json object: Any) -> Response {
        RESTAPI.respond((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8))
    }

    static var openRulesResponse: Response {
        let files: [[String: String]] = [["content": openRules, "name": "OPEN_RULES"]]
        return respond(json: ["rules": ["files": files]])
    }

    /// `GET /emulator/v1/projects/{p}[/databases/{d}]:ruleCoverage` (JSON, the reference's
    /// shape) and `…:ruleCoverage.html` (the rules with each expression highlighted by outcome),
    /// for the database's rules (the project's `(default)` one when none is named). Coverage
    /// starts afresh whenever rules are loaded, and on `DELETE …:ruleCoverage`.
    func ruleCoverage(_ request: Request) async -> Response {
        do throws(FlintError) {
            try Self.checkAuthorization(request)
            let html = request.uri.path.hasSuffix(":ruleCoverage.html")
            let target = try Self.rulesTarget(request, verb: html ? ":ruleCoverage.html" : ":ruleCoverage")
            let database = target.database ?? DatabaseID.defaultDatabase
            let loaded = engine.rules.rules(for: target.project, database: database)
            if request.method == .delete {
                guard let loaded else {
                    throw FlintError(.notFound, "No rules are loaded for projects/\(target.project)/databases/\(database).")
                }
                loaded.coverage.reset()
                return RESTAPI.respond(Data("{}".utf8))
            }
            // Without rules the open rules are shown, as on the reference, with nothing counted.
            guard html else { return loaded.map { RESTAPI.respond(Data($0.coverage.reportJSON($0.ruleset).utf8)) } ?? Self.openRulesResponse }
            guard let ruleset = loaded?.ruleset ?? Self.openRuleset else { throw FlintError(.internal, "The open rules do not compile.") }
            var headers = HTTPFields()
            headers[.contentType] = "text/html; charset=utf-8"
            let report = (loaded?.coverage ?? Coverage()).reportHTML(ruleset)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: report)))
        } catch {
            return error.restResponse()
        }
    }

    /// The project and database a rules route names: the path's, or those of its `database`
    /// parameter (`?database=projects/{p}/databases/{d}`, of any project), which the reference
    /// reads too. A path that names a database of its own as well is refused.
    static func rulesTarget(_ request: Request, verb: String = ":securityRules") throws(FlintError) -> (project: String, database: String?) {
        let target = try rulesTarget(request.uri.path, verb: verb)
        guard let parameter = try databaseParameter(request) else { return target }
        guard target.database == nil else { throw Self.databaseNamedTwice }
        return (parameter.project, parameter.database)
    }

    /// The database a request's `database` parameter names; an empty one names none.
    static func databaseParameter(_ request: Request) throws(FlintError) -> DatabaseID? {
        guard let name = request.uri.queryParameters["database"], !name.isEmpty else { return nil }
        return try ResourceName.parseDatabase(String(name))
    }

    static let databaseNamedTwice = FlintError.invalidArgument(
        "The database is named twice, differently or in two places: name it once, in the path, the \"database\" parameter or the body.")

    static func rulesProject(_ path: String, verb: String = ":securityRules") throws(FlintError) -> String {
        let target = try rulesTarget(path, verb: verb)
        guard target.database == nil else { throw .invalidArgument("Invalid project id in \(path).") }
        return target.project
    }

    /// The project and database of `/emulator/v1/projects/{p}[/databases/{d}]{verb}`; a path
    /// without a database names the project's `(default)` one, as on the reference. As there, a
    /// path of another shape is no resource, and an empty id in a database's path is told of by
    /// the database's name.
    static func rulesTarget(_ path: String, verb: String = ":securityRules") throws(FlintError) -> (project: String, database: String?) {
        let parts = try adminPathIDs(path, verb: verb)
        if parts.count == 1 {
            guard !parts[0].isEmpty else { throw .invalidArgument("Invalid project id in \(path).") }
            return (parts[0], nil)
        }
        if parts[0].isEmpty || parts[1].isEmpty {
            _ = try ResourceName.parseDatabase("projects/\(parts[0])/databases/\(parts[1])")
        }
        return (parts[0], parts[1])
    }

    /// The ids, decoded and possibly empty, of `/emulator/v1/projects/{p}[/databases/{d}]{verb}`:
    /// the project's, then the database's when named. A path of another shape is no resource.
    static func adminPathIDs(_ path: String, verb: String) throws(FlintError) -> [String] {
        let rest = path.dropFirst("/emulator/v1/projects/".count)
        let notFound = FlintError(.notFound, "No admin resource at \(path).")
        guard path.hasPrefix("/emulator/v1/projects/"), rest.hasSuffix(verb) else { throw notFound }
        guard let decoded = String(rest.dropLast(verb.count)).removingPercentEncoding else {
            throw .invalidArgument("Invalid project id in \(path).")
        }
        let parts = decoded.split(onASCII: "/").map(String.init)
        if parts.count == 1 { return parts }
        guard parts.count == 3, parts[1] == "databases" else { throw notFound }
        return [parts[0], parts[2]]
    }

    /// `POST /emulator/v1/projects/{p}:export`. With `export_name`, as firebase-tools sends it
    /// (`{"database", "export_directory", "export_name"}`), one database is written in the managed
    /// export format Google's emulator writes, at `DIR/NAME/`; with `{"export_directory": DIR}`
    /// alone, Flint's format holds the project's databases. Flint's `POST /emulator/v1:export`
    /// (`{"directory": DIR}`) exports every database. All answer the counts written.
    func export(_ request: Request) async -> Response {
        await transfer(request, verb: ":export") { body, project in
            guard let project, let name = body.name else {
                return try await FlintExport.export(engine, to: body.directory, project: project)
            }
            let id = try Self.database(body.database, project: project)
            let count = try await ManagedExport.export(engine.database(id), to: body.directory, name: name)
            return FlintExport.Summary(databases: [(id.name, count)])
        }
    }

    /// `POST /emulator/v1/projects/{p}:import` and `POST /emulator/v1:import`: loads an export
    /// from `export_directory` (or `directory`): Flint's, or a managed export (its folder, or its
    /// `.overall_export_metadata` file, as Google's emulator takes it). A managed export's
    /// documents go to the project in the path, and to the body's `database` when given.
    func importExport(_ request: Request) async -> Response {
        await transfer(request, verb: ":import") { body, project in
            let target = try project.flatMap { p in body.database == nil ? nil : try Self.database(body.database, project: p) }
            return try await FlintExport.import(from: body.directory, into: engine, project: project, database: target?.database)
        }
    }

    /// `projects/{p}/databases/{d}` from a request body, which must be in `project`; absent,
    /// the project's (default) database.
    static func database(_ name: Any?, project: String) throws(FlintError) -> DatabaseID {
        guard let name else { return DatabaseID(project: project) }
        let id = try ResourceName.parseDatabase(name as? String ?? "")
        guard id.project == project else { throw .invalidArgument("Database \(id.name) is not in project \(project).") }
        return id
    }

    private func transfer(
        _ request: Request, verb: String, _ body: (TransferRequest, String?) async throws -> FlintExport.Summary
    ) async -> Response {
        do {
            let path = request.uri.path
            let project: String? = path == "/emulator/v1" + verb ? nil : try Self.rulesProject(path, verb: verb)
            let bytes = try await RESTAPI.body(request, upTo: 1 << 20)
            let transfer = try TransferRequest(Data(buffer: bytes), naming: verb == ":export")
            let summary = try await body(transfer, project)
            let report: [String: Any] = [
                "directory": transfer.directory, "documents": summary.documents,
                "databases": summary.databases.map { ["name": $0.name, "documents": $0.documents] },
            ]
            return Self.respond(json: report)
        } catch {
            return FlintError.file(.failedPrecondition, "The transfer failed", error).restResponse()
        }
    }

    /// `POST /emulator/v1/projects/{p}:evaluateRules` (Flint's): decides one request described
    /// directly (`RulesQuestion`) without performing it, and answers the decision with the
    /// lines that decided and their values.
    func evaluateRules(_ request: Request) async -> Response {
        do throws(FlintError) {
            let project = try Self.rulesProject(request.uri.path, verb: ":evaluateRules")
            let bytes = try await RESTAPI.body(request)
            let question = try RulesQuestion(Data(buffer: bytes), project: project)
            guard let explanation = await engine.database(question.database).explainRules(
                method: question.method, path: question.path.segments, auth: question.auth, data: question.data)
            else {
                throw FlintError(.failedPrecondition, "No rules are loaded for \(question.database.name).")
            }
            let report: [String: Any] = [
                "allowed": explanation.allowed, "message": explanation.message, "debug": explanation.debug,
                "lines": explanation.lines.map { l in
                    var line: [String: Any] = [
                        "line": l.line, "text": l.text, "expressions": l.values.map { ["expression": $0.expression, "values": $0.values] },
                    ]
                    if let function = l.function { line["function"] = function }
                    return line
                },
            ]
            return Self.respond(json: report)
        } catch {
            return error.restResponse()
        }
    }

    /// `POST /shutdown`: answers, then stops the server as SIGTERM would.
    func shutdownNow() -> Response {
        // Fired a moment later, so this answer is written before connections start closing.
        let trigger = shutdown
        Task {
            try? await Task.sleep(for: .milliseconds(100))
            trigger.fire()
        }
        return RESTAPI.respond(Data("{}".utf8))
    }
}
