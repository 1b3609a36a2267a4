import FlintModel
import FlintStore
import Synchronization

/// All databases of one Flint process. A database is created on first use and kept apart
/// from every other project and database.
public final class Engine: Sendable {
    public let configuration: DatabaseConfiguration
    private let clock: any Clock
    private let databases = Mutex<[DatabaseID: Database]>([:])
    /// Security rules by project; every database reads them at each request.
    public let rules = RulesRegistry()

    /// Makes each database's store; nil: in memory.
    private let makeStore: (@Sendable (DatabaseID) -> any StoreBackend)?

    public init(
        configuration: DatabaseConfiguration = DatabaseConfiguration(), clock: any Clock = SystemClock(),
        store makeStore: (@Sendable (DatabaseID) -> any StoreBackend)? = nil
    ) {
        self.configuration = configuration
        self.clock = clock
        self.makeStore = makeStore
    }

    /// The database with this id, created empty (or from the store factory) when first asked for.
    public func database(_ id: DatabaseID) -> Database {
        databases.withLock { all in
            if let existing = all[id] { return existing }
            let db = Database(id: id, configuration: configuration, clock: clock, store: makeStore?(id), rules: rules)
            all[id] = db
            return db
        }
    }

    public func database(project: String, database: String = DatabaseID.defaultDatabase) -> Database {
        self.database(DatabaseID(project: project, database: database))
    }

    /// Every database used so far.
    public var databaseIDs: [DatabaseID] {
        databases.withLock { Array($0.keys) }
    }
}
