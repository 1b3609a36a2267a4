import FlintEngine
import FlintFixtures
import FlintModel
import FlintRules
import Foundation

/// The body of `POST /emulator/v1/projects/{p}:evaluateRules`: one request described directly,
/// `{"method", "path", "auth", "data", "database"}`. It is read strictly: a question with a
/// misspelt key, a collection path for `get` or an `auth` without a `uid` would otherwise be
/// answered, wrongly, as a request nobody made, and a rules author would chase a denial that
/// was never the rules' doing.
struct RulesQuestion {
    let method: Method
    let database: DatabaseID
    /// Below the database's `documents`.
    let path: ResourcePath
    let auth: AuthContext
    /// `request.resource.data` for `create` and `update`; for `list`, the fields the query pins.
    let data: MapValue?

    static let shape = #"{"method": "get|list|create|update|delete", "path": "users/alice", "auth": {"uid": "alice", "claims": {…}} | null, "data": {REST fields}, "database": "(default)"}"#
    static let keys: Set = ["method", "path", "auth", "data", "database"]
    static let methods: [Method] = [.get, .list, .create, .update, .delete]

    init(_ body: Data, project: String) throws(FlintError) {
        guard let json = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw .invalidArgument("The body must be a JSON object: \(Self.shape).")
        }
        if let unknown = json.keys.filter({ !Self.keys.contains($0) }).sorted().first {
            throw .invalidArgument("Unknown key \"\(unknown)\"; a question holds \(Self.keys.sorted().joined(separator: ", ")).")
        }
        guard let name = json["method"] as? String, let method = Method(rawValue: name), Self.methods.contains(method) else {
            let given = (json["method"] as? String).map { ", not \"\($0)\"" } ?? ""
            throw .invalidArgument("method must be one of \(Self.methods.map(\.rawValue).joined(separator: ", "))\(given).")
        }
        self.method = method
        guard let text = json["path"] as? String else {
            throw .invalidArgument("path must be a string, such as \"users/alice\".")
        }
        let named = try Self.database(json["database"], project: project)
        let (database, path) = try Self.place(text, project: project, database: named)
        if method == .list, !path.isCollectionPath {
            throw .invalidArgument("list takes a collection path, such as \"users\"; \"\(path.canonical)\" is not one.")
        }
        if method != .list, !path.isDocumentPath {
            throw .invalidArgument("\(name) takes a document path, such as \"users/alice\"; \"\(path.canonical)\" is not one.")
        }
        self.database = database
        self.path = path
        self.auth = try Self.auth(json["auth"])
        switch json["data"] {
        case nil, is NSNull:
            data = nil
        case let fields? where method == .create || method == .update || method == .list:
            data = try DocumentJSON.fields(fields, database: database, at: "data")
        case _?:
            throw .invalidArgument("data is only for create, update and list; \(name) reads the stored document.")
        }
    }

    /// The body's `database`: an id (`(default)`) or a name of this project's.
    private static func database(_ json: Any?, project: String) throws(FlintError) -> DatabaseID? {
        switch json {
        case nil, is NSNull:
            return nil
        case let text as String where text.hasPrefix("projects/"):
            let id = try ResourceName.parseDatabase(text)
            guard id.project == project else {
                throw .invalidArgument("database \"\(text)\" is not in project \"\(project)\".")
            }
            return id
        case let text as String:
            _ = try ResourceName.parseDatabase("projects/\(project)/databases/\(text)")
            return DatabaseID(project: project, database: text)
        default:
            throw .invalidArgument("database must be a string, such as \"(default)\".")
        }
    }

    /// Reads a path in any of the forms a rules author has at hand: `users/alice`,
    /// `/databases/(default)/documents/users/alice` (as rules write it) or the full resource
    /// name. A database the path names must agree with the body's.
    private static func place(_ text: String, project: String, database named: DatabaseID?) throws(FlintError)
        -> (DatabaseID, ResourcePath)
    {
        let trimmed = text.hasPrefix("/") ? String(text.dropFirst()) : text
        let parts = trimmed.split(onASCII: "/")
        var database = named ?? DatabaseID(project: project)
        var segments: [String]
        if parts.count >= 5, parts[0] == "projects", parts[2] == "databases", parts[4] == "documents" {
            let name = try ResourceName.parse(trimmed, kind: "Document")
            guard name.database.project == project else {
                throw .invalidArgument("path \"\(text)\" is not in project \"\(project)\".")
            }
            try agree(named, name.database, text)
            return (name.database, name.path)
        } else if parts.count >= 3, parts[0] == "databases", parts[2] == "documents" {
            let id = try ResourceName.parseDatabase("projects/\(project)/databases/\(parts[1])")
            try agree(named, id, text)
            database = id
            segments = parts.dropFirst(3).map(String.init)
        } else {
            segments = parts.map(String.init)
        }
        if segments.last == "" { segments.removeLast() }
        for (i, segment) in segments.enumerated() {
            do throws(FlintError) {
                try Validation.validateSegment(segment, at: i)
            } catch {
                throw .invalidArgument("path \"\(text)\": \(error.message)")
            }
        }
        return (database, ResourcePath(segments))
    }

    private static func agree(_ named: DatabaseID?, _ found: DatabaseID, _ text: String) throws(FlintError) {
        if let named, named != found {
            throw .invalidArgument("path \"\(text)\" is in \(found.name), not in \(named.name) as database says.")
        }
    }

    /// `null` or absent: signed out. Otherwise `{"uid", "claims"}`, with the claims in
    /// `request.auth.token` beside `sub` and `user_id`, as a token carrying them would put them.
    private static func auth(_ json: Any?) throws(FlintError) -> AuthContext {
        switch json {
        case nil, is NSNull:
            return .unauthenticated
        case let object as [String: Any]:
            if let unknown = object.keys.filter({ $0 != "uid" && $0 != "claims" }).sorted().first {
                throw .invalidArgument("Unknown key \"auth.\(unknown)\"; auth holds uid and claims.")
            }
            guard let uid = object["uid"] as? String, !uid.isEmpty else {
                throw .invalidArgument("auth.uid must be a non-empty string; give \"auth\": null for a signed-out request.")
            }
            var token: MapValue = ["sub": .string(uid), "user_id": .string(uid)]
            switch object["claims"] {
            case nil, is NSNull:
                break
            case let claims as [String: Any]:
                for (k, v) in claims { token[k] = PlainJSON.value(v) }
            default:
                throw .invalidArgument("auth.claims must be an object, such as {\"admin\": true}.")
            }
            return .user(uid: uid, token: token)
        default:
            throw .invalidArgument("auth must be null or an object, such as {\"uid\": \"alice\"}.")
        }
    }
}
