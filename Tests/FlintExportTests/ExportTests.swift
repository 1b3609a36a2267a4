import FlintDurable
import FlintEngine
@testable import FlintExport
import FlintModel
import FlintQuery
import Foundation
import Testing

struct ExportTests {
    static func directory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("flint-export-\(UUID().uuidString)").path
    }

    @Test func anExportImportsBackIntoAFreshEngine() async throws {
        let source = Engine()
        let a = source.database(project: "one")
        let fields: MapValue = [
            "null": .null, "b": true, "i": .integer(Int64.min), "d": .double(.infinity), "t": .timestamp(Timestamp(microseconds: 1_600_000_000_000_001)),
            "s": "ünïcode/and \"quotes\"", "bytes": .bytes([1, 2, 255]), "geo": .geoPoint(try GeoPoint(latitude: -33.9, longitude: 151.2)),
            "ref": .reference(DocumentReference(database: a.id, key: try DocumentKey(parsing: "c/x"))), "list": [1, ["nested": [2.5]]],
            "vector": .vector([1, 2]),
            // Doubles that need all 17 digits, which Foundation's JSON parser on Linux rounds.
            "long": 0.30000000000000004, "longs": [0.7999999999999999, 123_456_789.123_456_79, .double(.leastNonzeroMagnitude)],
            "where": .geoPoint(try GeoPoint(latitude: 37.77492950000001, longitude: -122.41941550000001)),
            "vectorLong": .vector([0.30000000000000004, -0.1]),
        ]
        _ = try await a.commit([.set(try DocumentKey(parsing: "c/x"), fields), .set(try DocumentKey(parsing: "c/x/sub/y"), ["n": 1])])
        _ = try await a.commit((0..<1200).map { .set(try! DocumentKey(parsing: "many/d\($0)"), ["i": .integer(Int64($0))]) })
        _ = try await source.database(project: "two", database: "other").commit([.set(try DocumentKey(parsing: "u/v"), ["w": 1])])
        let dir = Self.directory()
        let written = try await FlintExport.export(source, to: dir)
        #expect(written.documents == 1203)
        #expect(written.databases.map(\.name) == ["projects/one/databases/(default)", "projects/two/databases/other"])

        let target = Engine()
        let read = try await FlintExport.import(from: dir, into: target)
        #expect(read.documents == 1203)
        let x = try await target.database(project: "one").get(try DocumentKey(parsing: "c/x"))
        #expect(x?.fields.entries.count == fields.entries.count)
        for e in fields.entries { #expect(x?.fields[e.key]?.isIdentical(to: e.value) == true, "\(e.key): \(String(describing: x?.fields[e.key]))") }
        #expect(try await target.database(project: "one").runQuery(Query(collectionID: "many")).documents.count == 1200)
        #expect(try await target.database(project: "two", database: "other").get(try DocumentKey(parsing: "u/v"))?.fields == ["w": 1])

        // Exporting one project only, over the earlier export: replaced whole, nothing left over.
        let onlyTwo = try await FlintExport.export(source, to: dir, project: "two")
        #expect(onlyTwo.documents == 1)
        let parent = URL(fileURLWithPath: dir).deletingLastPathComponent().path
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: parent).filter { $0.contains(URL(fileURLWithPath: dir).lastPathComponent + ".") }
        #expect(leftovers.isEmpty)
        let meta = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/flint-export.json"))) as? [String: Any]
        #expect(meta?["version"] as? Int == 1)
        #expect((meta?["databases"] as? [[String: Any]])?.count == 1)
    }

    @Test func whatIsNotAnExportIsRefused() async throws {
        let dir = Self.directory()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        await #expect(throws: (any Error).self) { _ = try await FlintExport.import(from: dir, into: Engine()) }
        try #"{"format": "flint-export", "version": 99, "databases": []}"#.write(toFile: dir + "/flint-export.json", atomically: true, encoding: .utf8)
        let future = await #expect(throws: FlintError.self) { _ = try await FlintExport.import(from: dir, into: Engine()) }
        #expect(future?.message.contains("version 99") == true)
        try #"{"format": "flint-export", "version": 1, "databases": [{"name": "projects/p/databases/(default)", "file": "missing.jsonl.gz"}]}"#
            .write(toFile: dir + "/flint-export.json", atomically: true, encoding: .utf8)
        await #expect(throws: (any Error).self) { _ = try await FlintExport.import(from: dir, into: Engine()) }
    }
}

extension ExportTests {
    /// Names that differ only in Unicode normalization (`é` as one scalar, or as `e` and a
    /// combining accent) are two fields in both formats: Flint's lines were read by a parser whose
    /// dictionaries keep one of them, and a managed export's arrays were gathered by name.
    @Test func namesThatDifferOnlyInNormalizationSurviveBothFormats() async throws {
        let fields: MapValue = [
            "\u{E9}": 1, "e\u{301}": 2, "m": .map(["\u{212B}": 3, "\u{C5}": 4]),
            "\u{212B}list": [1, 2], "\u{C5}list": [3],
        ]
        #expect(fields.count == 5)
        let source = Engine()
        let key = try DocumentKey(parsing: "c/x")
        _ = try await source.database(project: "names").commit([.set(key, fields)])
        let flint = Self.directory(), managed = Self.directory()
        _ = try await FlintExport.export(source, to: flint)
        _ = try await ManagedExport.export(source.database(project: "names"), to: managed, name: "snap")
        for dir in [flint, managed] {
            let target = Engine()
            _ = try await FlintExport.import(from: dir, into: target)
            let read = try await target.database(project: "names").get(key)
            #expect(read?.fields == fields, "\(dir): \(String(describing: read?.fields))")
        }
    }

    /// Every document is read and checked before any is written: an export with a bad one is
    /// refused whole, naming the line or the document.
    @Test func anExportWithABadDocumentIsRefusedWhole() async throws {
        let name = "projects/bad/databases/(default)/documents/c/"
        let cases = [
            (#"{"name":"\#(name)z","fields":{"n":{"integerValue":"x"}}}"#,
             "bad/(default).jsonl.gz: line 601: fields.n.integerValue must be a 64-bit integer (as a string)."),
            (#"{"name":"\#(name)z","fields":{"__x__":{"integerValue":"1"}}}"#, "\(name)z: field name __x__ is reserved"),
            (#"{"name":"projects/elsewhere/databases/(default)/documents/c/z"}"#,
             "bad/(default).jsonl.gz: line 601: projects/elsewhere/databases/(default)/documents/c/z is not in projects/bad/databases/(default)"),
            ("[]", "bad/(default).jsonl.gz: line 601 is not a document"),
        ]
        for (bad, message) in cases {
            let dir = Self.directory()
            try FileManager.default.createDirectory(atPath: dir + "/bad", withIntermediateDirectories: true)
            let meta = #"{"format":"flint-export","version":1,"databases":[{"name":"projects/bad/databases/(default)","file":"bad/(default).jsonl.gz"}]}"#
            try Data(meta.utf8).write(to: URL(fileURLWithPath: dir + "/" + FlintExport.metadataFile))
            let writer = try GzipLineWriter(path: dir + "/bad/(default).jsonl.gz")
            let good = (0..<610).map { #"{"name":"\#(name)d\#($0)","fields":{"n":{"integerValue":"\#($0)"}}}"# }
            for line in good[..<600] + [bad] + good[600...] { writer.write(line: Array((line + "\n").utf8)) }
            try writer.finish()

            let engine = Engine()
            await #expect(throws: FlintError.invalidArgument(message)) { _ = try await FlintExport.import(from: dir, into: engine) }
            // The first batches, which were good, were not written either.
            #expect(try await engine.database(project: "bad").get(try DocumentKey(parsing: "c/d0")) == nil)
            await #expect(throws: FlintError.invalidArgument(message)) { try await FlintExport.check(dir) }
        }
    }

    @Test func anExportLoadsOfflineIntoADataDirectoryKeepingItsTimes() async throws {
        let source = Engine()
        let written = try await source.database(project: "off").commit([.set(try DocumentKey(parsing: "c/a"), ["n": 1]), .set(try DocumentKey(parsing: "c/b"), ["n": 2])])
        let dir = Self.directory()
        _ = try await FlintExport.export(source, to: dir)
        let dataDir = Self.directory()
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        let file = try DurableFile(path: dataDir + "/flint.sqlite")
        var batches: [Int] = []
        try await FlintExport.forEachBatch(in: dir, size: 1) { id, batch in
            #expect(id == DatabaseID(project: "off"))
            try file.load(id, batch.map(\.1))
            batches.append(batch.count)
        }
        // The database is named first, with no documents, so an empty one is counted too.
        #expect(batches == [0, 1, 1])
        let restored = try Engine.durable(directory: dataDir)
        let a = try await restored.database(project: "off").get(try DocumentKey(parsing: "c/a"))
        #expect(a?.fields == ["n": 1])
        #expect(a?.updateTime == written.commitTime)
    }
}
