import CSQLite
import FlintModel
import FlintStore
import Synchronization

/// One SQLite file (WAL) holding the latest state of every document of every database. Each
/// commit is one SQLite transaction, written before the commit is applied or acknowledged.
public final class DurableFile: Sendable {
    /// When SQLite makes a commit durable.
    public enum Sync: Sendable {
        /// WAL with `synchronous=NORMAL`: a commit survives the process being killed; an
        /// operating-system crash or power loss may lose the last commits.
        case processCrashSafe
        /// `synchronous=FULL`: every commit is fsynced; it survives power loss too.
        case everyCommit
    }

    private struct Connection: @unchecked Sendable {
        let db: OpaquePointer
        let upsert: OpaquePointer
        let delete: OpaquePointer
    }

    private let connection: Mutex<Connection>
    public let path: String
    /// Held for as long as the file is open, when it was opened through its data directory.
    private let hold: DataDirectoryLock?

    public convenience init(path: String, sync: Sync = .processCrashSafe) throws(FlintError) {
        try self.init(path: path, sync: sync, hold: nil)
    }

    init(path: String, sync: Sync, hold: DataDirectoryLock?) throws(FlintError) {
        self.path = path
        self.hold = hold
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nil) == SQLITE_OK, let db = handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(handle)
            throw FlintError(.unavailable, "Cannot open the data file \(path): \(message)")
        }
        for statement in [
            "PRAGMA journal_mode=WAL", sync == .everyCommit ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
            """
            CREATE TABLE IF NOT EXISTS documents (project TEXT NOT NULL, database TEXT NOT NULL, path TEXT NOT NULL,
              fields BLOB NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL, PRIMARY KEY (project, database, path)) WITHOUT ROWID
            """,
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            "INSERT OR IGNORE INTO meta VALUES ('format', '1')",
        ] {
            guard sqlite3_exec(db, statement, nil, nil, nil) == SQLITE_OK else {
                let message = String(cString: sqlite3_errmsg(db))
                sqlite3_close(db)
                throw FlintError(.unavailable, "Cannot prepare the data file \(path): \(message)")
            }
        }
        func prepare(_ sql: String) throws(FlintError) -> OpaquePointer {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                throw FlintError(.unavailable, "Cannot prepare the data file \(path): \(String(cString: sqlite3_errmsg(db)))")
            }
            return statement
        }
        let upsert = try prepare(
            "INSERT INTO documents VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (project, database, path) DO UPDATE SET fields = ?4, created = ?5, updated = ?6")
        let delete = try prepare("DELETE FROM documents WHERE project = ?1 AND database = ?2 AND path = ?3")
        connection = Mutex(Connection(db: db, upsert: upsert, delete: delete))
    }

    deinit {
        connection.withLock { c in
            sqlite3_finalize(c.upsert)
            sqlite3_finalize(c.delete)
            sqlite3_close(c.db)
        }
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Writes one commit's final states atomically; nothing is written when it fails.
    func write(_ database: DatabaseID, _ writes: [DocumentWrite], commitTime: Timestamp) throws(FlintError) {
        try write(database, writes.map { ($0, commitTime) })
    }

    /// Stores documents with their own times (an offline import), as one SQLite transaction.
    public func load(_ database: DatabaseID, _ documents: [Document]) throws(FlintError) {
        try write(database, documents.map { doc in
            (DocumentWrite(key: doc.key, state: DocumentState(fields: doc.fields, createTime: doc.createTime, updateTime: doc.updateTime)), doc.updateTime)
        })
    }

    private func write(_ database: DatabaseID, _ rows: [(DocumentWrite, Timestamp)]) throws(FlintError) {
        guard !rows.isEmpty else { return }
        let failure: String? = connection.withLock { c in
            guard sqlite3_exec(c.db, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK else { return String(cString: sqlite3_errmsg(c.db)) }
            for (w, updated) in rows {
                let statement = w.state == nil ? c.delete : c.upsert
                sqlite3_reset(statement)
                sqlite3_bind_text(statement, 1, database.project, -1, Self.transient)
                sqlite3_bind_text(statement, 2, database.database, -1, Self.transient)
                sqlite3_bind_text(statement, 3, w.key.path.canonical, -1, Self.transient)
                if let state = w.state {
                    let blob = ValueCodec.encode(state.fields)
                    _ = blob.withUnsafeBytes { sqlite3_bind_blob(statement, 4, $0.baseAddress, Int32($0.count), Self.transient) }
                    sqlite3_bind_int64(statement, 5, state.createTime.microseconds)
                    sqlite3_bind_int64(statement, 6, updated.microseconds)
                }
                guard sqlite3_step(statement) == SQLITE_DONE else {
                    let message = String(cString: sqlite3_errmsg(c.db))
                    sqlite3_exec(c.db, "ROLLBACK", nil, nil, nil)
                    return message
                }
            }
            guard sqlite3_exec(c.db, "COMMIT", nil, nil, nil) == SQLITE_OK else {
                let message = String(cString: sqlite3_errmsg(c.db))
                sqlite3_exec(c.db, "ROLLBACK", nil, nil, nil)
                return message
            }
            return nil
        }
        if let failure { throw FlintError(.unavailable, "The commit could not be stored: \(failure)") }
    }

    /// Deletes a database's documents at or below `path` (empty: all of them).
    func removeAll(_ database: DatabaseID, under path: ResourcePath) throws(FlintError) {
        let prefix = path.canonical
        let failure: String? = connection.withLock { c in
            var statement: OpaquePointer?
            let sql =
                prefix.isEmpty
                ? "DELETE FROM documents WHERE project = ?1 AND database = ?2"
                : "DELETE FROM documents WHERE project = ?1 AND database = ?2 AND (path = ?3 OR substr(path, 1, length(?3) + 1) = ?3 || '/')"
            guard sqlite3_prepare_v2(c.db, sql, -1, &statement, nil) == SQLITE_OK else { return String(cString: sqlite3_errmsg(c.db)) }
            defer { sqlite3_finalize(statement) }
            sqlite3_bind_text(statement, 1, database.project, -1, Self.transient)
            sqlite3_bind_text(statement, 2, database.database, -1, Self.transient)
            if !prefix.isEmpty { sqlite3_bind_text(statement, 3, prefix, -1, Self.transient) }
            return sqlite3_step(statement) == SQLITE_DONE ? nil : String(cString: sqlite3_errmsg(c.db))
        }
        if let failure { throw FlintError(.unavailable, "The clear could not be stored: \(failure)") }
    }

    /// Every stored document, grouped by database, visited without holding them all at once.
    public func forEachDocument(_ body: (DatabaseID, DocumentKey, DocumentState) -> Void) throws(FlintError) {
        let failure: String? = connection.withLock { c in
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(c.db, "SELECT project, database, path, fields, created, updated FROM documents ORDER BY project, database", -1, &statement, nil) == SQLITE_OK
            else { return String(cString: sqlite3_errmsg(c.db)) }
            defer { sqlite3_finalize(statement) }
            while true {
                let step = sqlite3_step(statement)
                if step == SQLITE_DONE { return nil }
                guard step == SQLITE_ROW else { return String(cString: sqlite3_errmsg(c.db)) }
                let id = DatabaseID(project: String(cString: sqlite3_column_text(statement, 0)), database: String(cString: sqlite3_column_text(statement, 1)))
                let count = Int(sqlite3_column_bytes(statement, 3))
                let bytes = sqlite3_column_blob(statement, 3).map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
                guard let key = try? DocumentKey(parsing: String(cString: sqlite3_column_text(statement, 2))),
                    let fields = try? ValueCodec.decode(bytes, database: id)
                else { return "a stored document could not be read" }
                let state = DocumentState(
                    fields: fields, createTime: Timestamp(microseconds: sqlite3_column_int64(statement, 4)),
                    updateTime: Timestamp(microseconds: sqlite3_column_int64(statement, 5)))
                body(id, key, state)
            }
        }
        if let failure { throw FlintError(.dataLoss, "The data file \(path) could not be read: \(failure)") }
    }
}
