import FlintEngine
import FlintFixtures
import FlintHTTPClient
import FlintModel
import FlintQuery
import Foundation

/// The test API against a running Flint (or any Firestore emulator) over REST: rules loaded
/// through the emulator endpoint, each caller's token sent as the SDKs send it.
struct RemoteBackend: Sendable {
    let base: String
    let project: String
    var database: DatabaseID { DatabaseID(project: project) }
    var documents: String { "/v1/projects/\(project)/databases/(default)/documents" }

    func token(_ auth: AuthContext) -> String? {
        switch auth {
        case .owner: return "Bearer owner"
        case .unauthenticated: return nil
        case .user(_, let claims):
            let b64 = { (d: Data) in
                d.base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_")
            }
            let payload = (try? JSONSerialization.data(withJSONObject: Self.plain(.map(claims)))) ?? Data("{}".utf8)
            return "Bearer " + b64(Data(#"{"alg":"none"}"#.utf8)) + "." + b64(payload) + "."
        }
    }

    /// Sends a request; a non-2xx answer becomes the FlintError it describes.
    func send(_ method: String, _ path: String, _ body: Any? = nil, auth: AuthContext = .owner) async throws -> Any? {
        var headers = [("Content-Type", "application/json")]
        if let t = token(auth) { headers.append(("Authorization", t)) }
        let encoded = try body.map { [UInt8](try JSONSerialization.data(withJSONObject: $0)) }
        let uri = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.union(["?", "=", "&"])) ?? path
        let response = try await HTTPClient.send(method, uri, to: base, headers: headers, body: encoded)
        let status = response.status
        let data = Data(response.body)
        let json = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        guard (200..<300).contains(status) else {
            let error = (json as? [String: Any])?["error"] as? [String: Any]
            let name = error?["status"] as? String ?? ""
            let code = StatusCode.allCases.first { $0.name == name } ?? .unknown
            throw FlintError(code, error?["message"] as? String ?? String(decoding: data, as: UTF8.self))
        }
        return json
    }

    func loadRules(_ source: String) async throws {
        _ = try await send("PUT", "/emulator/v1/projects/\(project):securityRules", ["rules": ["files": [["content": source]]]])
    }

    func get(_ key: DocumentKey, _ auth: AuthContext) async throws -> Document? {
        do {
            let json = try await send("GET", documents + "/" + key.path.canonical, auth: auth) as? [String: Any] ?? [:]
            let fields = try DocumentJSON.fields(json["fields"] ?? [String: Any](), database: database)
            let time = { (name: String) in (json[name] as? String).flatMap(RFC3339.parse) ?? Timestamp(microseconds: 0) }
            return Document(key: key, fields: fields, createTime: time("createTime"), updateTime: time("updateTime"))
        } catch let error as FlintError where error.code == .notFound {
            return nil
        }
    }

    func commit(_ writes: [Write], _ auth: AuthContext) async throws {
        _ = try await send("POST", documents + ":commit", ["writes": writes.map(restWrite)], auth: auth)
    }

    func query(_ q: Query, _ auth: AuthContext) async throws -> [Document] {
        var structured: [String: Any] = ["from": [["collectionId": q.collectionID ?? "", "allDescendants": q.allDescendants]]]
        if let filter = q.filter { structured["where"] = restFilter(filter) }
        if !q.orderBy.isEmpty {
            structured["orderBy"] = q.orderBy.map { ["field": ["fieldPath": $0.field.canonical], "direction": $0.descending ? "DESCENDING" : "ASCENDING"] }
        }
        if let limit = q.limit { structured["limit"] = limit }
        let parent = q.parent.isEmpty ? documents : documents + "/" + q.parent.canonical
        let answer = try await send("POST", parent + ":runQuery", ["structuredQuery": structured], auth: auth) as? [[String: Any]] ?? []
        var out: [Document] = []
        for entry in answer {
            guard let doc = entry["document"] as? [String: Any], let name = doc["name"] as? String else { continue }
            let key = try DocumentKey(parsing: String(name.dropFirst("projects/\(project)/databases/(default)/documents/".count)))
            out.append(Document(key: key, fields: try DocumentJSON.fields(doc["fields"] ?? [String: Any](), database: database),
                createTime: Timestamp(microseconds: 0), updateTime: (doc["updateTime"] as? String).flatMap(RFC3339.parse) ?? Timestamp(microseconds: 0)))
        }
        return out
    }

    func clear() async throws {
        _ = try await send("DELETE", "/emulator/v1/projects/\(project)/databases/(default)/documents")
    }

    func coverage() async throws -> String {
        let json = try await send("GET", "/emulator/v1/projects/\(project):ruleCoverage")
        return String(decoding: try JSONSerialization.data(withJSONObject: json ?? [:]), as: UTF8.self)
    }

    // MARK: - Firestore's REST JSON

    func restWrite(_ w: Write) -> [String: Any] {
        var out: [String: Any] = [:]
        switch w.operation {
        case .update(let key, let fields):
            out["update"] = ["name": "projects/\(project)/databases/(default)/documents/" + key.path.canonical, "fields": Self.restFields(fields)]
            if let mask = w.updateMask { out["updateMask"] = ["fieldPaths": mask.map(\.canonical)] }
        case .delete(let key):
            out["delete"] = "projects/\(project)/databases/(default)/documents/" + key.path.canonical
        case .transform:
            break
        }
        let transforms = w.transforms.compactMap { t -> [String: Any]? in
            switch t.kind {
            case .serverTimestamp: return ["fieldPath": t.field.canonical, "setToServerValue": "REQUEST_TIME"]
            case .increment(let v): return ["fieldPath": t.field.canonical, "increment": Self.rest(v)]
            default: return nil
            }
        }
        if case .transform(let key) = w.operation {
            out["transform"] = ["document": "projects/\(project)/databases/(default)/documents/" + key.path.canonical, "fieldTransforms": transforms]
        } else if !transforms.isEmpty {
            out["updateTransforms"] = transforms
        }
        switch w.precondition {
        case .exists(let e): out["currentDocument"] = ["exists": e]
        default: break
        }
        return out
    }

    func restFilter(_ f: Filter) -> [String: Any] {
        switch f {
        case .field(let ff): return ["fieldFilter": ["field": ["fieldPath": ff.field.canonical], "op": ff.op.rawValue, "value": Self.rest(ff.value)]]
        case .unary(let u): return ["unaryFilter": ["field": ["fieldPath": u.field.canonical], "op": u.op.rawValue]]
        case .composite(let c): return ["compositeFilter": ["op": c.op.rawValue, "filters": c.filters.map(restFilter)]]
        }
    }

    static func restFields(_ m: MapValue) -> [String: Any] { DocumentJSON.restFields(m) }

    static func rest(_ v: Value) -> [String: Any] { DocumentJSON.restValue(v) }

    /// A value as plain JSON, for token claims.
    static func plain(_ v: Value) -> Any {
        switch v {
        case .null: NSNull()
        case .boolean(let b): b
        case .integer(let i): i
        case .double(let d): d
        case .string(let s): s
        case .array(let a): a.map(plain)
        case .map(let m): Dictionary(uniqueKeysWithValues: m.entries.map { ($0.key, plain($0.value)) })
        default: String(describing: v)
        }
    }
}
