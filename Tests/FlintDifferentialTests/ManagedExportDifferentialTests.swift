import FlintEngine
import FlintExport
import FlintFixtures
import FlintModel
import Foundation
import Testing

/// Managed exports between Flint and the reference emulator, both ways: what one writes, the
/// other reads back to the same documents.
struct ManagedExportDifferentialTests {
    static let project = "flint-managed"
    static let database = DatabaseID(project: project)

    static var documents: [(String, MapValue)] {
        let ref = Value.reference(DocumentReference(database: database, key: try! DocumentKey(parsing: "c/__id12__")))
        let all: MapValue = [
            "null": .null, "t": true, "min": .integer(.min), "d": -2.25, "nan": .double(.nan), "inf": .double(.infinity),
            "ts": .timestamp(Timestamp(microseconds: 1_715_000_000_123_456)), "s": "héllo, 世界", "bytes": .bytes([0, 1, 0xFF]),
            "geo": .geoPoint(try! GeoPoint(latitude: -33.5, longitude: 151.25)), "ref": ref,
            "array": [1, "two", .null, ["k": [3.5]], ref], "emptyArray": [], "emptyMap": .map(MapValue()),
            "map": ["inner": ["deeper": ["list": [true]]], "vec": .vector([0.5])], "vector": .vector([1, 2, 3]),
        ]
        return [("c/all", all), ("c/__id12__", ["n": 12]), ("c/all/sub/deep", ["long": .string(String(repeating: "x", count: 40_000))])]
    }

    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("flint-managed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func managedExportsPassBothWaysBetweenFlintAndTheReference() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential managed export test skipped")
            return
        }
        defer { reference.stop() }
        let writes: [[String: Any]] = Self.documents.map { path, fields in
            ["update": ["name": Self.database.documentsRoot + "/" + path, "fields": RESTJSON.fields(fields)]]
        }
        let (status, answer) = try await reference.request("POST", "/v1/\(Self.database.documentsRoot):commit", ["writes": writes])
        try #require(status == 200, "\(answer)")

        // The reference's export, read by Flint.
        let fromReference = try Self.temporaryDirectory()
        let (exported, exportAnswer) = try await reference.request(
            "POST", "/emulator/v1/projects/\(Self.project):export",
            ["database": Self.database.name, "export_directory": fromReference, "export_name": "reference"])
        try #require(exported == 200, "\(exportAnswer)")
        let engine = Engine()
        let summary = try await FlintExport.import(from: fromReference, into: engine)
        #expect(summary.databases.map(\.name) == [Self.database.name])
        let flint = engine.database(Self.database)
        for (path, fields) in Self.documents {
            let read = try await flint.get(try DocumentKey(parsing: path))?.fields
            #expect(read == fields, "\(path) as Flint read the reference's export")
        }

        // Flint's export, read by the reference into another project.
        let fromFlint = try Self.temporaryDirectory()
        #expect(try await ManagedExport.export(flint, to: fromFlint, name: "flint") == Self.documents.count)
        let copy = DatabaseID(project: Self.project + "-copy")
        let (imported, importAnswer) = try await reference.request(
            "POST", "/emulator/v1/projects/\(copy.project):import",
            ["database": copy.name, "export_directory": fromFlint + "/flint/flint.overall_export_metadata"])
        try #require(imported == 200, "\(importAnswer)")
        for (path, fields) in Self.documents {
            let (found, json) = try await reference.request("GET", "/v1/\(copy.documentsRoot)/\(path)")
            #expect(found == 200, "\(path): \(json)")
            let read = try DocumentJSON.fields((json as? [String: Any])?["fields"] ?? [String: Any](), database: copy)
            #expect(read == fields, "\(path) as the reference read Flint's export")
        }
    }
}
