import FlintEngine
import FlintModel
import FlintProto
import Foundation
import SwiftProtobuf

/// The export format of Cloud Firestore's managed exports (`gcloud firestore export`), which
/// Google's emulator also writes (`firebase emulators:export`) and seeds from: an
/// `<name>.overall_export_metadata` file naming one or more parts, each a directory with an
/// `.export_metadata` file listing its `output-N` record logs of entities.
public enum ManagedExport {
    static let overviewSuffix = ".overall_export_metadata"
    /// The one-byte first record of every overview file.
    static let overviewMarker: [UInt8] = [0x33]

    /// The overview file of the managed export at `path`: the file itself; the one a
    /// firebase-tools `firebase-export-metadata.json` names; the only one in the directory; or
    /// the only one in a folder directly below it (`firestore_export/`). Nil when there is none,
    /// or more than one to choose from.
    public static func overview(at path: String) -> URL? {
        let fm = FileManager.default
        let url = URL(fileURLWithPath: path).standardizedFileURL
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return nil }
        guard isDirectory.boolValue else { return url.path.hasSuffix(overviewSuffix) ? url : nil }
        let firebase = url.appendingPathComponent("firebase-export-metadata.json")
        if let data = fm.contents(atPath: firebase.path),
            let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let firestore = json["firestore"] as? [String: Any], let file = firestore["metadata_file"] as? String
        {
            let named = url.appendingPathComponent(file)
            if fm.fileExists(atPath: named.path) { return named }
        }
        func overviews(in directory: URL) -> [URL] {
            ((try? fm.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(overviewSuffix) }
                .map { directory.appendingPathComponent($0) }
        }
        let here = overviews(in: url)
        if here.count == 1 { return here[0] }
        // The directory an export was asked into holds it in a folder of its name.
        let below = ((try? fm.contentsOfDirectory(atPath: url.path)) ?? []).flatMap { overviews(in: url.appendingPathComponent($0)) }
        return here.isEmpty && below.count == 1 ? below[0] : nil
    }

    /// The entries of an export folder that are not the managed layout (overview files and
    /// `all_namespaces/`), which an export over it would otherwise delete.
    static func foreignEntries(_ entries: [String]) -> [String] {
        entries.filter { !$0.hasSuffix(overviewSuffix) && $0 != "all_namespaces" }
    }

    /// Where a managed export into `directory` is written: over the managed export already
    /// there, if any (so a firebase-tools export keeps its other folders), else into
    /// `directory/firestore_export/`, as firebase-tools lays it out.
    public static func destination(for directory: String) -> (directory: String, name: String) {
        guard let overview = overview(at: directory) else { return (directory, "firestore_export") }
        let folder = overview.deletingLastPathComponent()
        return (folder.deletingLastPathComponent().path, folder.lastPathComponent)
    }

    /// The database the managed export at `path` was taken from: its first document's.
    public static func sourceDatabase(at path: String) -> DatabaseID? {
        guard let overview = overview(at: path), var reader = try? Reader(overview: overview) else { return nil }
        return (try? reader.next(1))??.first?.database
    }

    /// The record logs of the export whose overview is `overview`, in order.
    static func outputFiles(_ overview: URL) throws(FlintError) -> [URL] {
        let root = overview.deletingLastPathComponent()
        var log = try RecordLogReader(path: overview.path)
        var partFiles: [URL] = []
        while let record = try log.next() {
            guard record != overviewMarker, let summary = try? Flint_Export_ExportOverview(serializedBytes: record) else { continue }
            partFiles += summary.part.filter(\.hasMetadataPath).map { root.appendingPathComponent($0.metadataPath) }
        }
        var outputs: [URL] = []
        if partFiles.isEmpty {
            // An overview Flint cannot read: take every part directory as it is laid out.
            let parts = root.appendingPathComponent("all_namespaces")
            for directory in ((try? FileManager.default.contentsOfDirectory(atPath: parts.path)) ?? []).sorted() {
                outputs += listedOrPresent(parts.appendingPathComponent(directory), listed: [])
            }
        }
        for file in partFiles {
            let listed = (try? Flint_Export_ExportPartFiles(serializedBytes: Data(contentsOf: file)))?.files.output ?? []
            outputs += listedOrPresent(file.deletingLastPathComponent(), listed: listed)
        }
        if outputs.isEmpty { throw .invalidArgument("\(overview.path) names no output files.") }
        return outputs
    }

    /// The files a part lists, or else its `output-N` files by number.
    private static func listedOrPresent(_ directory: URL, listed: [String]) -> [URL] {
        let names = listed.isEmpty
            ? ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasPrefix("output-") }
                .sorted { (Int($0.dropFirst(7)) ?? .max) < (Int($1.dropFirst(7)) ?? .max) }
            : listed
        return names.map { directory.appendingPathComponent($0) }
    }

    /// Reads a managed export's documents a batch at a time.
    struct Reader {
        private var files: [URL]
        private var current: RecordLogReader?

        init(overview: URL) throws(FlintError) {
            files = try ManagedExport.outputFiles(overview)
        }

        mutating func next(_ count: Int) throws(FlintError) -> [EntityConversion.Loaded]? {
            var batch: [EntityConversion.Loaded] = []
            while batch.count < count {
                if current == nil {
                    guard !files.isEmpty else { break }
                    current = try RecordLogReader(path: files.removeFirst().path)
                }
                guard let record = try current?.next() else {
                    current = nil
                    continue
                }
                batch.append(try EntityConversion.document(record))
            }
            return batch.isEmpty ? nil : batch
        }
    }

    /// Writes one database as a managed export at `<directory>/<name>/`, laid out as Google's
    /// emulator lays it out, so that it (or firebase-tools) can seed from it. Written beside the
    /// target first and moved into place at the end, like Flint's own exports.
    public static func export(_ database: Database, to directory: String, name: String = "firestore_export") async throws -> Int {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw FlintError.invalidArgument("Export name \"\(name)\" is not a file name.")
        }
        let parent = URL(fileURLWithPath: directory).standardizedFileURL
        let target = parent.appendingPathComponent(name)
        if let problem = FlintExport.unwritable(target.path) { throw FlintError(.failedPrecondition, problem) }
        return try await replacingDirectory(target) { folder in
            let started = wallClockMicros()
            let part = folder.appendingPathComponent("all_namespaces/all_kinds")
            try FileManager.default.createDirectory(at: part, withIntermediateDirectories: true)
            let output = try SharedRecordLogWriter(path: part.appendingPathComponent("output-0").path)
            let id = database.id
            await database.forEachDocument { document in
                output.append(EntityConversion.entity(document.fields, key: document.key, database: id))
            }
            let (count, bytes) = try output.close()

            var files = Flint_Export_ExportPartFiles()
            files.run.name = name
            files.run.startMicros = started
            files.run.endMicros = wallClockMicros()
            files.files.nameSpace = ""
            files.files.output = ["output-0"]
            try (files.serializedBytes() as Data).write(to: part.appendingPathComponent("all_namespaces_all_kinds.export_metadata"))

            var summary = Flint_Export_ExportPart()
            summary.scope.kinds = 2
            summary.scope.namespaces = 3
            summary.metadataPath = "all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata"
            summary.entityCount = Int64(count)
            summary.byteCount = Int64(bytes)
            var overview = Flint_Export_ExportOverview()
            overview.part = [summary]
            var log = try RecordLogWriter(path: folder.appendingPathComponent(name + overviewSuffix).path)
            try log.append(overviewMarker)
            try log.append(try overview.serializedBytes() as [UInt8])
            try log.close()
            return count
        }
    }
}

/// Now, for the times exports record.
func wallClockMicros() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }

/// A record log written from inside `forEachDocument`, which wants a sendable body.
private final class SharedRecordLogWriter: @unchecked Sendable {
    // Written by one forEachDocument call, then closed once it has returned.
    private var writer: RecordLogWriter
    private var count = 0
    private var failure: (any Error)?

    init(path: String) throws { writer = try RecordLogWriter(path: path) }

    /// False once a write has failed, which ends the walk.
    func append(_ entity: Flint_Export_ExportedEntity) -> Bool {
        guard failure == nil else { return false }
        do {
            try writer.append(try entity.serializedBytes())
            count += 1
        } catch { failure = error }
        return failure == nil
    }

    func close() throws -> (count: Int, bytes: Int) {
        if let failure { throw failure }
        try writer.close()
        return (count, writer.bytesWritten)
    }
}
