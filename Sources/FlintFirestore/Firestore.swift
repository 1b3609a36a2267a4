import FlintEngine
import FlintModel
import Foundation
import Synchronization

/// Settings read when the first request is made, as in FirebaseFirestore.
public struct FirestoreSettings: Sendable {
    public static let defaultHost = "firestore.googleapis.com"
    /// `host:port` of an emulator; the default host keeps the client embedded.
    public var host: String = FirestoreSettings.defaultHost
    /// Flint's client only speaks cleartext to emulators; true is accepted and ignored.
    public var isSSLEnabled: Bool = true
    /// No local cache exists here; kept so settings code ports unchanged.
    public var isPersistenceEnabled: Bool = false

    public init() {}
}

/// Who the client is, as rules see it.
public enum FirestoreUser: Sendable, Equatable {
    /// Rules skipped, as an Admin SDK or `Bearer owner`.
    case owner
    /// Nobody signed in: `request.auth == null`.
    case signedOut
    /// A signed-in user; `claims` become `request.auth.token` (custom claims, email, ...).
    case user(uid: String, claims: [String: ClaimValue])
}

/// A token claim value.
public enum ClaimValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral {
    case string(String)
    case bool(Bool)
    case int(Int64)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }

    var value: Value {
        switch self {
        case .string(let s): .string(s)
        case .bool(let b): .boolean(b)
        case .int(let i): .integer(i)
        }
    }
}

/// The entry point, shaped like FirebaseFirestore's `Firestore`: one database, reached in
/// process (`Firestore.embedded`) or at an emulator (`useEmulator(withHost:port:)`,
/// `settings.host`, or `FIRESTORE_EMULATOR_HOST`).
public final class Firestore: Sendable {
    /// The project and database this instance talks to.
    public let databaseID: DatabaseID
    private let state: Mutex<State>
    /// The engine of an embedded instance, shared with the instances derived from it.
    let engine: Engine?
    let pendingWrites = PendingWrites()

    private struct State {
        var settings: FirestoreSettings
        var user: FirestoreUser
        var backend: (any FirestoreBackend)?
        /// Shared by instances derived with `signedIn`, so they use one connection.
        var remote: RemoteConnection?
    }

    init(databaseID: DatabaseID, engine: Engine?, settings: FirestoreSettings, user: FirestoreUser, remote: RemoteConnection? = nil) {
        self.databaseID = databaseID
        self.engine = engine
        state = Mutex(State(settings: settings, user: user, backend: nil, remote: remote))
    }

    /// A database in this process, with a new engine unless one is given (share an engine
    /// with a server or a rules test environment to see the same data). Requests are made as
    /// `user`; load rules into `engine.rules` (or pass `rules`) to have them enforced.
    public static func embedded(
        project: String = Firestore.defaultProject, database: String = DatabaseID.defaultDatabase, engine: Engine = Engine(),
        rules: String? = nil, user: FirestoreUser = .signedOut
    ) throws -> Firestore {
        if let rules {
            let errors = engine.rules.load(rules, project: project, database: database).filter { $0.severity == .error }
            if !errors.isEmpty {
                throw FirestoreErrorCode(.invalidArgument, "The rules do not compile: " + errors.map(\.description).joined(separator: "; "))
            }
        }
        return Firestore(databaseID: DatabaseID(project: project, database: database), engine: engine, settings: FirestoreSettings(), user: user)
    }

    /// A client of the emulator at `host` ("localhost:8080").
    public static func remote(host: String, project: String = Firestore.defaultProject, database: String = DatabaseID.defaultDatabase, user: FirestoreUser = .signedOut) -> Firestore {
        var settings = FirestoreSettings()
        settings.host = host
        settings.isSSLEnabled = false
        return Firestore(databaseID: DatabaseID(project: project, database: database), engine: nil, settings: settings, user: user)
    }

    private static let shared = Mutex<[String: Firestore]>([:])

    /// The process's instance for `database`: at `FIRESTORE_EMULATOR_HOST` when it is set,
    /// otherwise embedded, for the project in `GCLOUD_PROJECT` (or `demo-flint`).
    public static func firestore(database: String = DatabaseID.defaultDatabase) -> Firestore {
        shared.withLock { all in
            if let existing = all[database] { return existing }
            let db: Firestore
            if let host = ProcessInfo.processInfo.environment["FIRESTORE_EMULATOR_HOST"], !host.isEmpty {
                db = remote(host: host, database: database)
            } else {
                db = Firestore(
                    databaseID: DatabaseID(project: defaultProject, database: database), engine: Engine(), settings: FirestoreSettings(),
                    user: .signedOut)
            }
            all[database] = db
            return db
        }
    }

    public static var defaultProject: String {
        let env = ProcessInfo.processInfo.environment
        return env["GCLOUD_PROJECT"] ?? env["GOOGLE_CLOUD_PROJECT"] ?? "demo-flint"
    }

    public var settings: FirestoreSettings {
        get { state.withLock { $0.settings } }
        set {
            state.withLock { s in
                precondition(s.backend == nil, "Firestore settings can only be changed before the instance is used.")
                s.settings = newValue
            }
        }
    }

    /// Points this instance at an emulator, as the SDK's method does; call it before use.
    public func useEmulator(withHost host: String, port: Int) {
        var s = settings
        s.host = "\(host):\(port)"
        s.isSSLEnabled = false
        settings = s
    }

    /// Who requests are made as; set before use, or derive instances with `signedIn(as:)`.
    public var user: FirestoreUser {
        state.withLock { $0.user }
    }

    /// The mock token the emulators read (an unsigned JWT with `sub` = uid and the claims).
    public func useMockUserToken(uid: String, claims: [String: ClaimValue] = [:]) {
        state.withLock { s in
            precondition(s.backend == nil, "The user can only be changed before the instance is used.")
            s.user = .user(uid: uid, claims: claims)
        }
    }

    /// The same database seen by another user, sharing data and connection.
    public func signedIn(as uid: String, claims: [String: ClaimValue] = [:]) -> Firestore { with(.user(uid: uid, claims: claims)) }
    public func signedOut() -> Firestore { with(.signedOut) }
    /// The same database with rules skipped (the owner, as an Admin SDK is).
    public func withSecurityRulesDisabled() -> Firestore { with(.owner) }

    public func with(_ user: FirestoreUser) -> Firestore {
        _ = backend
        return state.withLock { s in
            Firestore(databaseID: databaseID, engine: engine, settings: s.settings, user: user, remote: s.remote)
        }
    }

    /// Another database of the same project and connection.
    func database(_ id: DatabaseID) -> Firestore {
        guard id != databaseID else { return self }
        _ = backend
        return state.withLock { s in Firestore(databaseID: id, engine: engine, settings: s.settings, user: s.user, remote: s.remote) }
    }

    var auth: AuthContext {
        switch user {
        case .owner: .owner
        case .signedOut: .unauthenticated
        case .user(let uid, let claims):
            .user(uid: uid, token: Self.tokenClaims(uid: uid, claims))
        }
    }

    /// The claims rules see, with the ones Firebase Auth always sets.
    static func tokenClaims(uid: String, _ claims: [String: ClaimValue]) -> MapValue {
        var token = MapValue()
        token["sub"] = .string(uid)
        token["user_id"] = .string(uid)
        token["firebase"] = .map(["sign_in_provider": .string("custom"), "identities": .map(MapValue())])
        for (k, v) in claims { token[k] = v.value }
        return token
    }

    /// The backend, made at first use from the settings.
    var backend: any FirestoreBackend {
        state.withLock { s in
            if let backend = s.backend { return backend }
            let made: any FirestoreBackend
            if s.settings.host != FirestoreSettings.defaultHost || engine == nil {
                let connection = s.remote ?? RemoteConnection(host: s.settings.host == FirestoreSettings.defaultHost ? "localhost:8080" : s.settings.host)
                s.remote = connection
                made = RemoteBackend(connection: connection, database: databaseID)
            } else {
                made = EmbeddedBackend(database: engine!.database(databaseID))
            }
            s.backend = made
            return made
        }
    }

    // MARK: - References

    public func collection(_ collectionPath: String) -> CollectionReference {
        CollectionReference(path: collectionPath, self)
    }

    public func document(_ documentPath: String) -> DocumentReference {
        DocumentReference(path: documentPath, self)
    }

    public func collectionGroup(_ collectionID: String) -> Query {
        Query(collectionGroup: collectionID, self)
    }

    public func batch() -> WriteBatch { WriteBatch(self) }

    /// Stops this instance's listeners' connection; the embedded engine is unaffected.
    public func terminate() async {
        let remote = state.withLock { $0.remote }
        await remote?.close()
    }
}
