import FlintModel
import Synchronization

/// All databases of one Flint process. A database is created on first use and kept apart
/// from every other project and database.
public final class Engine: Sendable {
    public let configuration: DatabaseConfiguration
    private let clock: any Clock
    private let databases = Mutex<[DatabaseID: Database]>([:])
    /// Security rules by project; every database reads them at each request.
    public let rules = RulesRegistry()

    public init(configuration: DatabaseConfiguration = DatabaseConfiguration(), clock: any Clock = SystemClock()) {
        self.configuration = configuration
        self.clock = clock
    }

    /// The database with this id, created empty when first asked for.
    public func database(_ id: DatabaseID) -> Database {
        databases.withLock { all in
            if let existing = all[id] { return existing }
            let db = Database(id: id, configuration: configuration, clock: clock, rules: rules)
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
