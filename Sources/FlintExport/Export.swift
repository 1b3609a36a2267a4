import CompressNIO
import FlintEngine
import FlintFixtures
import FlintModel
import FlintProto
import FlintWire
import Foundation
import NIOCore
import SwiftProtobuf

/// Flint's export format, version 1: a directory holding `flint-export.json` (the format, its
/// version, when, and each database with its file and document count) and, per database, one
/// gzip-compressed JSON-lines file of Firestore REST documents (`{"name", "fields",
/// "createTime", "updateTime"}`), at `<project>/<database>.jsonl.gz`.
public enum FlintExport {
    public static let metadataFile = "flint-export.json"
    public static let format = "flint-export"
    public static let version = 1

    public struct Summary: Sendable {
        public var databases: [(name: String, documents: Int)]
        public var documents: Int { databases.reduce(0) { $0 + $1.documents } }

        public init(databases: [(name: String, documents: Int)]) { self.databases = databases }
    }

    /// Exports every database (or those of `project`) into `directory`. Everything is written
    /// to a temporary directory beside it first and renamed into place at the end, so a failed
    /// export leaves the previous one as it was. Memory stays bounded: documents stream
    /// through the compressor.
    public static func export(
        _ engine: Engine, to directory: String, project: String? = nil, progress: (@Sendable (Int) -> Void)? = nil
    ) async throws -> Summary {
        let target = URL(fileURLWithPath: directory).standardizedFileURL
        // The whole directory is replaced; only an earlier Flint export may be.
        if let problem = unwritable(target.path, managedAllowed: false) { throw FlintError(.failedPrecondition, problem) }
        return try await replacingDirectory(target) { temporary in
            var summary = Summary(databases: [])
            var metadata: [[String: Any]] = []
            var total = 0
            for id in engine.databaseIDs.sorted(by: { $0.name < $1.name }) where project == nil || id.project == project {
                let relative = "\(id.project)/\(id.database).jsonl.gz"
                let file = temporary.appendingPathComponent(relative)
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                let writer = try GzipLineWriter(path: file.path)
                let counter = Counter(start: total, progress: progress)
                await engine.database(id).forEachDocument { doc in
                    writer.write(line: documentLine(doc, id))
                    counter.step()
                    return writer.error == nil
                }
                try writer.finish()
                total = counter.count
                let count = counter.count - (summary.documents)
                summary.databases.append((id.name, count))
                metadata.append(["name": id.name, "file": relative, "documents": count])
            }
            let meta: [String: Any] = [
                "format": format, "version": version, "created": RFC3339.format(Timestamp(microseconds: wallClockMicros())),
                "databases": metadata,
            ]
            try JSONSerialization.data(withJSONObject: meta, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]).write(to: temporary.appendingPathComponent(metadataFile))
            return summary
        }
    }

    /// The two formats Flint writes.
    public enum Format: String, Sendable, CaseIterable {
        /// Flint's own: every database, with documents' times and nanoseconds.
        case flint
        /// Google's managed export format: one database, read by Google's emulator and tools.
        case managed
    }

    /// The format of the export already in `directory`, if it holds one.
    public static func existingFormat(_ directory: String) -> Format? {
        if holdsFlintExport(directory) { return .flint }
        return ManagedExport.overview(at: directory) == nil ? nil : .managed
    }

    static func holdsFlintExport(_ directory: String) -> Bool {
        FileManager.default.fileExists(atPath: URL(fileURLWithPath: directory).appendingPathComponent(metadataFile).path)
    }

    /// Exports into `directory` in the format of the export already there, else in `format`,
    /// so `--import D --export-on-exit D` keeps a firebase-tools export usable by firebase-tools.
    /// Flint's format holds every database. A managed export holds one: `project`'s (with
    /// `database`, default `(default)`); without a project, the one the export there came from,
    /// or the only database Flint holds.
    public static func export(
        _ engine: Engine, to directory: String, format: Format, project: String?, database: String? = nil,
        progress: (@Sendable (Int) -> Void)? = nil
    ) async throws -> Summary {
        guard (existingFormat(directory) ?? format) == .managed else {
            return try await export(engine, to: directory, progress: progress)
        }
        let id = try managedDatabase(in: directory, project: project, database: database, held: engine.databaseIDs)
        let (parent, name) = ManagedExport.destination(for: directory)
        let count = try await ManagedExport.export(engine.database(id), to: parent, name: name)
        return Summary(databases: [(id.name, count)])
    }

    /// The one database a managed export into `directory` holds: `project`'s (with `database`,
    /// default `(default)`); else the one the export there came from; else the only one `held`,
    /// when the databases held are known.
    public static func managedDatabase(
        in directory: String, project: String?, database: String?, held: [DatabaseID]? = nil
    ) throws(FlintError) -> DatabaseID {
        if let project { return DatabaseID(project: project, database: database ?? DatabaseID.defaultDatabase) }
        if let source = ManagedExport.sourceDatabase(at: directory) { return source }
        guard let held, held.count == 1 else {
            let names = held.map { $0.isEmpty ? " (databases held: none)" : " (databases held: \($0.map(\.name).sorted().joined(separator: ", ")))" } ?? ""
            throw .invalidArgument("A managed export holds one database; name its project with --project\(names).")
        }
        return held[0]
    }

    static func documentLine(_ doc: Document, _ id: DatabaseID) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        DocumentLine.encode(doc, id, into: &bytes)
        return bytes
    }

    /// Imports an export into `engine` as the owner, 500 documents per commit; documents are
    /// read as the files decompress, never all at once. A managed export (Google's format) is
    /// recognised too; its documents go to `project` when given (and its `database`, when that
    /// is given too), else to the database they were exported from. Every document is read and
    /// checked (`check`) before any is written, so an export with a bad one is refused whole.
    public static func `import`(
        from directory: String, into engine: Engine, project: String? = nil, database: String? = nil,
        progress: (@Sendable (Int) -> Void)? = nil
    ) async throws -> Summary {
        try await check(directory, project: project, database: database)
        var counts = DatabaseCounts()
        try await forEachBatch(in: directory, project: project, database: database) { id, batch in
            if !batch.isEmpty { _ = try await engine.database(id).commit(batch.map { .set($0.0, $0.1.fields) }) }
            counts.add(batch.count, to: id, progress: progress)
        }
        return counts.summary
    }

    /// Reads every document of an export and checks it as a commit storing it would, writing
    /// nothing. Each import runs this first, so that a bad document refuses the import before
    /// anything is written (a refused import used to leave the batches before it behind).
    public static func check(_ directory: String, project: String? = nil, database: String? = nil) async throws {
        try await forEachBatch(in: directory, project: project, database: database) { id, batch in
            if !batch.isEmpty { try Validation.validateWritable(id) }
            for (key, document) in batch {
                do throws(FlintError) {
                    try Validation.validateDocumentName(id, key)
                    try Validation.validateFields(document.fields)
                    try Validation.validateSize(key, document.fields)
                } catch {
                    throw FlintError(error.code, "\(id.documentsRoot)/\(key.path.canonical): \(error.message)")
                }
            }
        }
    }
}

extension FlintExport {
    /// Reads an export's documents a batch at a time, database by database, without an engine:
    /// for loading straight into a data directory in bounded memory. Each database of a Flint
    /// export is first named with an empty batch, so that one without documents is counted too.
    public static func forEachBatch(
        in directory: String, size: Int = 500, project: String? = nil, database: String? = nil,
        _ body: (DatabaseID, [(DocumentKey, Document)]) async throws -> Void
    ) async throws {
        if let overview = try managedOverview(directory) {
            // A managed export keeps no times; its documents are created as they are loaded.
            let now = Timestamp(microseconds: wallClockMicros())
            var reader = try ManagedExport.Reader(overview: overview)
            while let batch = try reader.next(size) {
                for (id, documents) in grouped(batch, project: project, database: database) {
                    try await body(id, documents.map { ($0.key, Document(key: $0.key, fields: $0.fields, createTime: now, updateTime: now)) })
                }
            }
            return
        }
        let root = URL(fileURLWithPath: directory)
        let metaData = try Data(contentsOf: root.appendingPathComponent(metadataFile))
        guard let meta = try JSONSerialization.jsonObject(with: metaData) as? [String: Any], meta["format"] as? String == format else {
            throw FlintError.invalidArgument("\(directory) is not a Flint export (no \(metadataFile) of format \(format)).")
        }
        guard let v = meta["version"] as? Int, v <= version else {
            throw FlintError.invalidArgument("\(directory) has export format version \(meta["version"] ?? "?"); this Flint reads up to \(version).")
        }
        let now = Timestamp(microseconds: wallClockMicros())
        for entry in meta["databases"] as? [[String: Any]] ?? [] {
            guard let name = entry["name"] as? String, let file = entry["file"] as? String else { continue }
            let id = try ResourceName.parseDatabase(name)
            let reader = try GzipLineReader(path: root.appendingPathComponent(file).path)
            try await body(id, [])
            var number = 0
            while let lines = try reader.next(size) {
                var batch: [(DocumentKey, Document)] = []
                for line in lines {
                    number += 1
                    if line.isEmpty { continue }
                    let document = try documentLine(line, in: id, file: file, number: number, loadedAt: now)
                    batch.append((document.key, document))
                }
                try await body(id, batch)
            }
        }
    }

    /// One line of a Flint export's database file: a document of `id`, its times kept (or the
    /// time of loading, for a line written without them).
    static func documentLine(_ line: [UInt8], in id: DatabaseID, file: String, number: Int, loadedAt now: Timestamp) throws(FlintError) -> Document {
        // Read first as the protobuf mapping reads a document: its maps tell names apart by
        // their bytes, where JSONSerialization's dictionaries hold `é` and `e` with a combining
        // accent as one name and keep one field. What it cannot read (a line written by hand, with
        // a relative reference or a number for an integer, or a faulty one) is read as fixtures
        // are, which also says what is wrong with it.
        if let document = exactDocumentLine(line, in: id, loadedAt: now) { return document }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], let name = object["name"] as? String else {
            throw .invalidArgument("\(file): line \(number) is not a document")
        }
        do throws(FlintError) {
            let (database, key) = try ResourceName.parseDocument(name)
            guard database == id else { throw .invalidArgument("\(name) is not in \(id.name)") }
            let fields = try DocumentJSON.fields(object["fields"] ?? [String: Any](), database: id)
            let created = (object["createTime"] as? String).flatMap(RFC3339.parse) ?? now
            let updated = (object["updateTime"] as? String).flatMap(RFC3339.parse) ?? created
            return Document(key: key, fields: fields, createTime: created, updateTime: updated)
        } catch {
            throw FlintError(error.code, "\(file): line \(number): \(error.message)")
        }
    }

    private static func exactDocumentLine(_ line: [UInt8], in id: DatabaseID, loadedAt now: Timestamp) -> Document? {
        var options = JSONDecodingOptions()
        options.ignoreUnknownFields = true
        guard let read = try? Google_Firestore_V1_Document(jsonUTF8Bytes: line, options: options) else { return nil }
        do throws(FlintError) {
            let (database, key) = try ResourceName.parseDocument(read.name)
            guard database == id else { return nil }
            let created = read.hasCreateTime ? try Wire.timestamp(read.createTime) : now
            let updated = read.hasUpdateTime ? try Wire.timestamp(read.updateTime) : created
            return Document(key: key, fields: try Wire.fields(read.fields, id), createTime: created, updateTime: updated)
        } catch {
            return nil
        }
    }
}

extension FlintExport {
    /// Why an export cannot go to `directory`, or nil when it can. An export replaces the
    /// whole directory, so it must be new (with a place to be created), empty, or hold an
    /// earlier export and nothing else: Flint's, or a managed one when `managedAllowed`. A file
    /// there, or a file beside the export, is the user's and is never replaced.
    public static func unwritable(_ directory: String, managedAllowed: Bool = true) -> String? {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: directory, isDirectory: &isDirectory) else { return uncreatable(directory) }
        guard isDirectory.boolValue else { return "\(directory) is a file; an export is written to a directory." }
        let present = (try? fm.contentsOfDirectory(atPath: directory)) ?? []
        if present.isEmpty { return nil }
        let root = URL(fileURLWithPath: directory)
        let foreign: [String]
        var holder = directory
        if present.contains(metadataFile) {
            // Flint's layout: the metadata, and a folder per project of `.jsonl.gz` files.
            foreign = present.filter { $0 != metadataFile }.flatMap { entry -> [String] in
                let inner = try? fm.contentsOfDirectory(atPath: root.appendingPathComponent(entry).path)
                guard let inner else { return [entry] }
                return inner.filter { !$0.hasSuffix(".jsonl.gz") }.map { entry + "/" + $0 }
            }
        } else if managedAllowed, let overview = ManagedExport.overview(at: directory) {
            // A managed export replaces only the folder of its overview: the directory itself,
            // or the `firestore_export/` of a firebase-tools export beside its other folders.
            holder = overview.deletingLastPathComponent().path
            foreign = ManagedExport.foreignEntries((try? fm.contentsOfDirectory(atPath: holder)) ?? [])
        } else {
            foreign = present
        }
        guard !foreign.isEmpty else { return nil }
        let named = foreign.sorted().prefix(3).joined(separator: ", ") + (foreign.count > 3 ? ", …" : "")
        return "\(holder) holds files that are not an export (\(named)); export to an empty or new directory."
    }

    /// Why `directory`, which does not exist, cannot be created, as far as can be told before
    /// trying: the nearest existing folder above it is a file or is not writable.
    static func uncreatable(_ directory: String) -> String? {
        let ancestor = FileManager.default.nearestExisting(directory)
        if !ancestor.isDirectory { return "\(directory) cannot be created: \(ancestor.path) is a file." }
        if !FileManager.default.isWritableFile(atPath: ancestor.path) {
            return "\(directory) cannot be created: \(ancestor.path) is not writable."
        }
        return nil
    }

    /// The overview of a managed export at `path`, or nil for a Flint export.
    static func managedOverview(_ path: String) throws(FlintError) -> URL? {
        if holdsFlintExport(path) { return nil }
        guard let overview = ManagedExport.overview(at: path) else {
            throw .invalidArgument(
                "\(path) holds no export: neither a Flint export (\(metadataFile)) nor a managed export (*\(ManagedExport.overviewSuffix)).")
        }
        return overview
    }

    /// A batch split by database, in the order the databases first appear; moved to `project`
    /// (and `database`) when given.
    static func grouped(_ batch: [EntityConversion.Loaded], project: String?, database: String? = nil) -> [(DatabaseID, [EntityConversion.Loaded])] {
        var groups: [(DatabaseID, [EntityConversion.Loaded])] = []
        for var document in batch {
            if let project {
                let moved = DatabaseID(project: project, database: database ?? document.database.database)
                if moved != document.database {
                    // References within the exported database move with it, so they still
                    // point at the documents beside them (clients refuse references to
                    // another project).
                    document.fields = relocated(document.fields, from: document.database, to: moved)
                    document.database = moved
                }
            }
            if let i = groups.firstIndex(where: { $0.0 == document.database }) {
                groups[i].1.append(document)
            } else {
                groups.append((document.database, [document]))
            }
        }
        return groups
    }
}

private func relocated(_ map: MapValue, from: DatabaseID, to: DatabaseID) -> MapValue {
    MapValue(map.entries.map { ($0.key, relocated($0.value, from: from, to: to)) })
}

private func relocated(_ value: Value, from: DatabaseID, to: DatabaseID) -> Value {
    switch value {
    case .reference(let r) where r.database == from: .reference(DocumentReference(database: to, key: r.key))
    case .array(let items): .array(items.map { relocated($0, from: from, to: to) })
    case .map(let m): .map(relocated(m, from: from, to: to))
    default: value
    }
}

/// Documents imported per database, in the order the databases were first seen.
private struct DatabaseCounts {
    private var counts: [(DatabaseID, Int)] = []
    private var total = 0

    mutating func add(_ count: Int, to id: DatabaseID, progress: (@Sendable (Int) -> Void)?) {
        if let i = counts.firstIndex(where: { $0.0 == id }) { counts[i].1 += count } else { counts.append((id, count)) }
        if (total + count) / 10_000 != total / 10_000 { progress?(total + count) }
        total += count
    }

    var summary: FlintExport.Summary { FlintExport.Summary(databases: counts.map { ($0.0.name, $0.1) }) }
}

/// Counts exported documents and reports progress every 10,000.
private final class Counter: @unchecked Sendable {
    // Used inside one database's forEachDocument call at a time.
    private(set) var count: Int
    private let progress: (@Sendable (Int) -> Void)?

    init(start: Int, progress: (@Sendable (Int) -> Void)?) {
        count = start
        self.progress = progress
    }

    func step() {
        count += 1
        if count % 10_000 == 0 { progress?(count) }
    }
}

