import FlintEngine
import FlintModel
import FlintStore
import Foundation
import Synchronization

extension Engine {
    /// An engine whose databases live in `directory/flint.sqlite`, every database found there
    /// restored before it returns.
    public static func durable(
        directory: String, configuration: DatabaseConfiguration = DatabaseConfiguration(), sync: DurableFile.Sync = .processCrashSafe
    ) throws -> Engine {
        let file = try DurableFile.open(in: directory, sync: sync)
        // Restored stores wait here until their database is created, which takes them.
        let restored = RestoredStores()
        try file.forEachDocument { id, key, state in restored.store(for: id, file).restore(key, state) }
        let engine = Engine(configuration: configuration, store: { id in restored.take(id) ?? DurableStore(file: file, database: id) })
        for id in restored.ids { _ = engine.database(id) }
        return engine
    }
}

/// Stores filled from the data file before the engine exists; each handed over once.
private final class RestoredStores: Sendable {
    private let stores = Mutex<[DatabaseID: UncheckedStore]>([:])

    private struct UncheckedStore: @unchecked Sendable { let store: DurableStore }

    func store(for id: DatabaseID, _ file: DurableFile) -> DurableStore {
        stores.withLock { all in
            if let s = all[id] { return s.store }
            let s = DurableStore(file: file, database: id)
            all[id] = UncheckedStore(store: s)
            return s
        }
    }

    var ids: [DatabaseID] { stores.withLock { Array($0.keys) } }

    func take(_ id: DatabaseID) -> DurableStore? { stores.withLock { $0.removeValue(forKey: id)?.store } }
}

extension DurableFile {
    /// The data file of a data directory (`flint.sqlite`), the directory created if needed and
    /// held for this process alone until the file is released (`DataDirectoryLock`).
    public static func open(in directory: String, sync: Sync = .processCrashSafe) throws(FlintError) -> DurableFile {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw FlintError.file(.unavailable, "Cannot create the data directory \(directory)", error, path: directory)
        }
        let hold = try DataDirectoryLock(directory)
        return try DurableFile(path: (directory as NSString).appendingPathComponent("flint.sqlite"), sync: sync, hold: hold)
    }
}
