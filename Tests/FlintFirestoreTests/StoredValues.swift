import FlintEngine
import FlintFirestore
import FlintModel

/// Whether the engine behind `db` stores `field` of the document at `path` as a vector of
/// `components`: what a write put there, before the client reads it back. (FlintModel's names
/// clash with the client's, so the tests that use the client reach it through here.)
func engineStoresVector(_ engine: Engine, _ db: Firestore, _ path: String, _ field: String, _ components: [Double]) async throws -> Bool {
    let stored = try await engine.database(db.databaseID).get(try DocumentKey(parsing: path))
    return stored?.fields[field] == .vector(components)
}
