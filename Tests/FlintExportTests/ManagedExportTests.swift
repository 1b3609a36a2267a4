import FlintEngine
@testable import FlintExport
import FlintModel
import FlintQuery
import Foundation
import Testing

/// The managed export format: record logs, entities, and whole exports both ways.
struct ManagedExportTests {
    static func directory() -> String { ExportTests.directory() }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test func crc32cMatchesItsCheckValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum(Array("56789".utf8), seed: CRC32C.checksum(Array("1234".utf8))) == 0xE306_9283)
    }

    @Test func recordsOfEverySizeComeBackWholeAcrossBlocks() throws {
        let path = Self.directory() + ".log"
        // Empty, tiny, one that leaves fewer than 7 bytes in its block (padding follows), one
        // spanning three blocks, and small ones after it.
        let sizes = [0, 1, RecordLog.blockSize - 2 * RecordLog.headerSize - 1 - 3, 70_000, 5, 32_761, 3]
        let records = sizes.enumerated().map { i, n in (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) } }
        var writer = try RecordLogWriter(path: path)
        for r in records { try writer.append(r) }
        try writer.close()
        var reader = try RecordLogReader(path: path)
        var read: [[UInt8]] = []
        while let r = try reader.next() { read.append(r) }
        #expect(read == records)
    }

    @Test func aDamagedOrCutRecordLogIsRefusedWithItsPath() throws {
        let path = Self.directory() + ".log"
        var writer = try RecordLogWriter(path: path)
        try writer.append([UInt8](repeating: 7, count: 40_000))
        try writer.close()
        var bytes = try Self.bytes(path)
        bytes[100] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var damaged = try RecordLogReader(path: path)
        let checksum = #expect(throws: FlintError.self) { _ = try damaged.next() }
        #expect(checksum?.message.contains("checksum") == true)
        #expect(checksum?.message.contains(path) == true)

        bytes[100] ^= 0xFF
        try Data(bytes.prefix(RecordLog.blockSize + 10)).write(to: URL(fileURLWithPath: path))
        var cut = try RecordLogReader(path: path)
        #expect(throws: FlintError.self) { _ = try cut.next() }
    }

    /// The bytes Google's emulator writes for `{x: 1}` at `c/plain` of project exp1: one
    /// record, header and entity.
    static let referenceRecord: [UInt8] =
        [0x4F, 0x3F, 0x10, 0xD3, 0x34, 0x00, 0x01, 0x6A, 0x18, 0x6A, 0x08] + Array("dev~exp1".utf8)
        + [0x72, 0x0C, 0x0B, 0x12, 0x01, 0x63, 0x22, 0x05] + Array("plain".utf8) + [0x0C]
        + [0x7A, 0x09, 0x1A, 0x01, 0x78, 0x20, 0x00, 0x2A, 0x02, 0x08, 0x01]
        + [0x82, 0x01, 0x0C, 0x0B, 0x12, 0x01, 0x63, 0x22, 0x05] + Array("plain".utf8) + [0x0C]

    @Test func aDocumentIsWrittenByteForByteAsGooglesEmulatorWritesIt() throws {
        let path = Self.directory() + ".log"
        var writer = try RecordLogWriter(path: path)
        let entity = EntityConversion.entity(["x": 1], key: try DocumentKey(parsing: "c/plain"), database: DatabaseID(project: "exp1"))
        try writer.append(try entity.serializedBytes())
        try writer.close()
        #expect(try Self.bytes(path) == Self.referenceRecord)

        var reader = try RecordLogReader(path: path)
        let loaded = try EntityConversion.document(try #require(try reader.next()))
        #expect(loaded.database == DatabaseID(project: "exp1"))
        #expect(loaded.key == (try DocumentKey(parsing: "c/plain")))
        #expect(loaded.fields == ["x": 1])
    }

    static let everyType: MapValue = [
        "null": .null, "t": true, "f": false, "min": .integer(.min), "max": .integer(.max), "d": 1.5, "nan": .double(.nan),
        "inf": .double(-.infinity), "ts": .timestamp(Timestamp(microseconds: 1_715_000_000_123_456)), "s": "héllo, 世界",
        "empty": "", "bytes": .bytes([0, 1, 0xFF]), "geo": .geoPoint(try! GeoPoint(latitude: 12.5, longitude: -7.25)),
        "ref": .reference(DocumentReference(database: DatabaseID(project: "elsewhere"), key: try! DocumentKey(parsing: "a/__id5__/b/c"))),
        "namedRef": .reference(DocumentReference(database: DatabaseID(project: "p", database: "other"), key: try! DocumentKey(parsing: "k/v"))),
        "array": [1, "two", .null, ["k": [3.5]], ["v": .vector([1, 2])]], "emptyArray": [], "emptyMap": .map(MapValue()),
        "map": ["inner": ["deeper": ["list": [true]]], "vec": .vector([0.5])], "vector": .vector([1, 2, 3]),
    ]

    @Test func everyValueTypeSurvivesAnExportAndImport() async throws {
        let source = Engine()
        let db = source.database(project: "types", database: "named")
        let keys = ["c/all", "c/__id12__", "c/__id-7__/sub/deep", "c/with space and ü"]
        _ = try await db.commit(try keys.map { .set(try DocumentKey(parsing: $0), Self.everyType) })
        let dir = Self.directory()
        #expect(try await ManagedExport.export(db, to: dir, name: "snap") == 4)
        for file in ["snap/snap.overall_export_metadata", "snap/all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata",
            "snap/all_namespaces/all_kinds/output-0"]
        {
            #expect(FileManager.default.fileExists(atPath: dir + "/" + file), "\(file)")
        }

        let target = Engine()
        let summary = try await FlintExport.import(from: dir, into: target)
        #expect(summary.databases.map(\.name) == ["projects/types/databases/named"])
        #expect(summary.documents == 4)
        let copy = target.database(project: "types", database: "named")
        for key in keys {
            let fields = try #require(try await copy.get(try DocumentKey(parsing: key))?.fields, "\(key)")
            #expect(fields.keys == Self.everyType.keys, "\(key)")
            for entry in Self.everyType.entries { #expect(fields[entry.key] == entry.value, "\(key) \(entry.key)") }
        }
        // The numeric ids came back numeric: they sort first.
        _ = try await copy.commit([.set(try DocumentKey(parsing: "c/__id-7__"), [:])])
        let ids = try await copy.runQuery(Query(collectionID: "c")).documents.map(\.key.documentID)
        #expect(ids == ["__id-7__", "__id12__", "all", "with space and ü"])
    }

    @Test func aManagedExportIsFoundWhereverGooglesToolsPutIt() async throws {
        let source = Engine()
        let d = try DocumentKey(parsing: "c/d")
        let elsewhere = Value.reference(DocumentReference(database: DatabaseID(project: "third"), key: d))
        let here: Value = .reference(DocumentReference(database: DatabaseID(project: "found"), key: d))
        _ = try await source.database(project: "found").commit([.set(d, ["n": 1, "here": ["list": [here]], "elsewhere": elsewhere])])
        let dir = Self.directory()
        _ = try await ManagedExport.export(source.database(project: "found"), to: dir + "/firestore_export-parent", name: "firestore_export")
        let folder = dir + "/firestore_export-parent/firestore_export"
        let overview = folder + "/firestore_export.overall_export_metadata"
        // The overview file itself, its folder, and the folder above it.
        for path in [overview, folder, dir + "/firestore_export-parent"] {
            #expect(ManagedExport.overview(at: path)?.path == overview, "\(path)")
        }
        // firebase-tools' metadata file names it, wherever it is.
        let tools = Self.directory()
        try FileManager.default.createDirectory(atPath: tools + "/auth_export", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: folder, toPath: tools + "/custom")
        try #"{"version": "13.0.0", "firestore": {"version": "1.19.0", "path": "custom", "metadata_file": "custom/firestore_export.overall_export_metadata"}}"#
            .write(toFile: tools + "/firebase-export-metadata.json", atomically: true, encoding: .utf8)
        #expect(ManagedExport.overview(at: tools)?.lastPathComponent == "firestore_export.overall_export_metadata")

        // Imported into another project, as `--project` asks; offline too, with the load time.
        let target = Engine()
        _ = try await FlintExport.import(from: tools, into: target, project: "mine")
        // References into the exported database move with it; others stay as they were.
        let moved = Value.reference(DocumentReference(database: DatabaseID(project: "mine"), key: d))
        #expect(try await target.database(project: "mine").get(d)?.fields == ["n": 1, "here": ["list": [moved]], "elsewhere": elsewhere])
        #expect(try await target.database(project: "found").get(try DocumentKey(parsing: "c/d")) == nil)
        var loaded: [(DatabaseID, String)] = []
        try await FlintExport.forEachBatch(in: tools, project: "offline") { id, batch in loaded += batch.map { (id, $0.0.path.canonical) } }
        #expect(loaded.map(\.0) == [DatabaseID(project: "offline")])
        #expect(loaded.map(\.1) == ["c/d"])

        // Two exports side by side are ambiguous: nothing is guessed.
        let two = Self.directory()
        _ = try await ManagedExport.export(source.database(project: "found"), to: two, name: "a")
        _ = try await ManagedExport.export(source.database(project: "found"), to: two, name: "b")
        #expect(ManagedExport.overview(at: two) == nil)
        let refused = await #expect(throws: FlintError.self) { _ = try await FlintExport.import(from: two, into: Engine()) }
        #expect(refused?.message.contains("holds no export") == true)
    }

    /// An export replaces its whole directory, so it must never land on a user's file or on a
    /// folder that holds more than an export: each of these was once deleted by an export.
    @Test func noExportReplacesAFileOrAFolderOfOtherFiles() async throws {
        let engine = Engine()
        let db = engine.database(project: "safe")
        _ = try await db.commit([.set(try DocumentKey(parsing: "c/a"), ["v": 1])])
        let root = Self.directory()
        try FileManager.default.createDirectory(atPath: root + "/mixed", withIntermediateDirectories: true)
        let precious = [root + "/notes.txt", root + "/mixed/keep.txt"]
        for file in precious { try "precious".write(toFile: file, atomically: true, encoding: .utf8) }

        // A file named as the export, in either format.
        var refused = await #expect(throws: FlintError.self) { _ = try await FlintExport.export(engine, to: root + "/notes.txt") }
        #expect(refused?.message == "\(root)/notes.txt is a file; an export is written to a directory.")
        #expect(refused?.code == .failedPrecondition)
        refused = await #expect(throws: FlintError.self) { _ = try await ManagedExport.export(db, to: root, name: "notes.txt") }
        #expect(refused?.message == "\(root)/notes.txt is a file; an export is written to a directory.")
        // A managed export's folder holding something else.
        _ = try await ManagedExport.export(db, to: root, name: "again")
        _ = try await ManagedExport.export(db, to: root, name: "again")  // a folder holding only an export is replaced
        refused = await #expect(throws: FlintError.self) { _ = try await ManagedExport.export(db, to: root, name: "mixed") }
        #expect(refused?.message == "\(root)/mixed holds files that are not an export (keep.txt); export to an empty or new directory.")
        // Flint's layout with a stranger in a project folder.
        let flint = root + "/flint"
        _ = try await FlintExport.export(engine, to: flint)
        try "precious".write(toFile: flint + "/safe/readme.md", atomically: true, encoding: .utf8)
        refused = await #expect(throws: FlintError.self) { _ = try await FlintExport.export(engine, to: flint) }
        #expect(refused?.message == "\(flint) holds files that are not an export (safe/readme.md); export to an empty or new directory.")
        // A folder that cannot be made, told before anything is written.
        #expect(FlintExport.unwritable(root + "/notes.txt/inside") == "\(root)/notes.txt/inside cannot be created: \(root)/notes.txt is a file.")
        refused = await #expect(throws: FlintError.self) { _ = try await FlintExport.export(engine, to: root + "/notes.txt/a/b") }
        #expect(refused?.message == "\(root)/notes.txt/a/b cannot be created: \(root)/notes.txt is a file.")

        // A firebase-tools export directory: only its firestore_export/ is replaced, so its
        // other folders are no strangers; a stranger inside firestore_export/ is.
        let tools = root + "/tools"
        _ = try await ManagedExport.export(db, to: tools, name: "firestore_export")
        try FileManager.default.createDirectory(atPath: tools + "/auth_export", withIntermediateDirectories: true)
        try "{}".write(toFile: tools + "/firebase-export-metadata.json", atomically: true, encoding: .utf8)
        #expect(FlintExport.unwritable(tools) == nil)
        try "precious".write(toFile: tools + "/firestore_export/notes.txt", atomically: true, encoding: .utf8)
        #expect(FlintExport.unwritable(tools) == "\(tools)/firestore_export holds files that are not an export (notes.txt); export to an empty or new directory.")

        for file in precious + [flint + "/safe/readme.md", tools + "/firestore_export/notes.txt"] {
            #expect(try String(contentsOfFile: file, encoding: .utf8) == "precious")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: root).sorted()
        #expect(left == ["again", "flint", "mixed", "notes.txt", "tools"])
    }

    @Test func exportingOverAManagedExportKeepsItsFormatAndItsNeighbours() async throws {
        let engine = Engine()
        let db = engine.database(project: "keep")
        _ = try await db.commit([.set(try DocumentKey(parsing: "c/a"), ["v": 1])])
        let tools = Self.directory()
        _ = try await ManagedExport.export(db, to: tools, name: "firestore_export")
        try FileManager.default.createDirectory(atPath: tools + "/auth_export", withIntermediateDirectories: true)
        try "{}".write(toFile: tools + "/firebase-export-metadata.json", atomically: true, encoding: .utf8)

        _ = try await db.commit([.set(try DocumentKey(parsing: "c/b"), ["v": 2])])
        // Asked for Flint's format with no project: the managed export there, and its
        // database, win.
        let written = try await FlintExport.export(engine, to: tools, format: .flint, project: nil)
        #expect(written.databases.map(\.name) == ["projects/keep/databases/(default)"])
        #expect(written.documents == 2)
        let present = Set(try FileManager.default.contentsOfDirectory(atPath: tools))
        #expect(present == ["auth_export", "firebase-export-metadata.json", "firestore_export"])
        let back = Engine()
        _ = try await FlintExport.import(from: tools, into: back)
        #expect(try await back.database(project: "keep").runQuery(Query(collectionID: "c")).documents.count == 2)

        // Flint's format never replaces a directory of other files.
        let foreign = Self.directory()
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
        try "precious".write(toFile: foreign + "/notes.txt", atomically: true, encoding: .utf8)
        let refused = await #expect(throws: FlintError.self) { _ = try await FlintExport.export(engine, to: foreign) }
        #expect(refused?.message.contains("not an export") == true)
        #expect(FlintExport.unwritable(foreign) != nil)
        #expect(try String(contentsOfFile: foreign + "/notes.txt", encoding: .utf8) == "precious")

        // A managed export of a Flint holding several databases needs to be told which.
        _ = try await engine.database(project: "second").commit([.set(try DocumentKey(parsing: "x/y"), ["z": 1])])
        let ambiguous = await #expect(throws: FlintError.self) {
            _ = try await FlintExport.export(engine, to: Self.directory(), format: .managed, project: nil)
        }
        #expect(ambiguous?.message.contains("projects/second/databases/(default)") == true)
    }
}
