@testable import FlintDurable
import FlintEngine
import FlintModel
import FlintQuery
import Foundation
import Testing

struct DurableTests {
    static func directory() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flint-durable-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func everyKindOfValueSurvivesTheCodec() throws {
        let db = DatabaseID(project: "p")
        let fields: MapValue = [
            "null": .null, "t": true, "f": false, "int": .integer(-42), "big": .integer(Int64.max), "double": .double(-0.5),
            "nan": .double(.nan), "time": .timestamp(Timestamp(microseconds: 1_700_000_000_123_456)), "string": "héllo",
            "bytes": .bytes([0, 255, 7]), "ref": .reference(DocumentReference(database: db, key: try DocumentKey(parsing: "a/b/c/d"))),
            "geo": .geoPoint(try GeoPoint(latitude: 48.8, longitude: 2.3)), "array": [1, "two", [3.0], ["k": .null]],
            "map": ["nested": ["deep": 1]], "vector": .vector([0.1, 0.2]), "": "empty key",
            // Names that differ only in normalization, and a reference to ids that begin with a combining mark.
            "\u{E9}": 1, "e\u{301}": 2, "marked": .reference(DocumentReference(database: db, key: try DocumentKey(parsing: "\u{301}a/\u{301}b"))),
        ]
        let decoded = try ValueCodec.decode(ValueCodec.encode(fields), database: db)
        #expect(decoded.entries.count == fields.entries.count)
        for e in fields.entries where e.key != "nan" { #expect(decoded[e.key] == e.value, "\(e.key)") }
        if case .double(let d)? = decoded["nan"] { #expect(d.isNaN) } else { Issue.record("NaN lost") }
        #expect(throws: FlintError.self) { try ValueCodec.decode([10, 1, 0], database: db) }
        #expect(throws: FlintError.self) { try ValueCodec.decode([], database: db) }
    }

    @Test func commitsAndClearsSurviveARestart() async throws {
        let dir = Self.directory()
        do {
            let engine = try Engine.durable(directory: dir)
            let a = engine.database(project: "one")
            let b = engine.database(project: "two", database: "other")
            _ = try await a.commit([.set(try DocumentKey(parsing: "c/x"), ["n": 1]), .set(try DocumentKey(parsing: "c/y"), ["n": 2])])
            _ = try await a.commit([.set(try DocumentKey(parsing: "c/x"), ["n": 10]), .delete(try DocumentKey(parsing: "c/y"))])
            _ = try await a.commit([.set(try DocumentKey(parsing: "keep/k/sub/s"), [:]), .set(try DocumentKey(parsing: "gone/g"), [:])])
            _ = try await b.commit([.set(try DocumentKey(parsing: "users/u"), ["name": "U"])])
            await a.clear(under: ResourcePath(["gone"]))
            let results = try await b.batchWrite([.set(try DocumentKey(parsing: "users/v"), ["name": "V"])])
            #expect(results.count == 1)
        }
        let engine = try Engine.durable(directory: dir)
        #expect(Set(engine.databaseIDs.map(\.name)) == ["projects/one/databases/(default)", "projects/two/databases/other"])
        let a = engine.database(project: "one")
        let x = try await a.get(try DocumentKey(parsing: "c/x"))
        #expect(x?.fields == ["n": 10])
        #expect(x.map { $0.createTime < $0.updateTime } == true)
        #expect(try await a.get(try DocumentKey(parsing: "c/y")) == nil)
        #expect(try await a.get(try DocumentKey(parsing: "keep/k/sub/s")) != nil)
        #expect(try await a.get(try DocumentKey(parsing: "gone/g")) == nil)
        let b = engine.database(project: "two", database: "other")
        #expect(try await b.runQuery(Query(collectionID: "users")).documents.map(\.key.documentID) == ["u", "v"])
        // New commits after the restart come later than everything restored.
        let later = try await a.commit([.set(try DocumentKey(parsing: "c/z"), [:])])
        #expect(later.commitTime > (x?.updateTime ?? later.commitTime))
    }

    /// Two Flints on one data file would overwrite each other's documents there, each serving
    /// only its own; the second is refused while the first holds the directory.
    @Test func aDataDirectoryServesOneFlintAtATime() async throws {
        let dir = Self.directory()
        do {
            let first = try Engine.durable(directory: dir)
            _ = try await first.database(project: "p").commit([.set(try DocumentKey(parsing: "c/a"), ["n": 1])])
            let refused = #expect(throws: FlintError.self) { _ = try Engine.durable(directory: dir) }
            #expect(refused?.code == .failedPrecondition)
            #expect(refused?.message == "The data directory \(dir) is in use by another Flint (process \(getpid())); stop it, or reach its data through it.")
            #expect(throws: FlintError.self) { _ = try DurableFile.open(in: dir) }
            // Still serving, with its document written once.
            #expect(try await first.database(project: "p").get(try DocumentKey(parsing: "c/a"))?.fields == ["n": 1])
        }
        // Released with the engine: the next one opens and finds the document. The engine goes
        // when the last task holding it ends, which a loaded machine can put off for a while.
        var next: Engine?
        for _ in 0..<300 where next == nil {
            next = try? Engine.durable(directory: dir)
            if next == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let opened = try #require(next, "the data directory was never released")
        #expect(try await opened.database(project: "p").get(try DocumentKey(parsing: "c/a"))?.fields == ["n": 1])
    }

    @Test func anUnwritableDataFileIsAClearError() throws {
        var refused = #expect(throws: FlintError.self) { _ = try Engine.durable(directory: "/proc/flint-cannot-write-here") }
        #expect(refused?.message == "Cannot create the data directory /proc/flint-cannot-write-here: No such file or directory.")
        let file = Self.directory() + ".txt"
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        refused = #expect(throws: FlintError.self) { _ = try Engine.durable(directory: file + "/data") }
        #expect(refused?.message == "Cannot create the data directory \(file)/data: \(file) is a file.")
    }
}
