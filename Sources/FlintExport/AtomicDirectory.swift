import FlintModel
import Foundation

/// Writes a directory in full beside `target`, then swaps it into place: an earlier directory
/// there is removed only once the new one is in place, and a failure leaves it as it was.
/// Callers check first that what is there may go (`FlintExport.unwritable`); a file is never
/// replaced whatever they checked. A file system error is told as the path and its reason.
func replacingDirectory<T>(_ target: URL, _ fill: (URL) async throws -> T) async throws -> T {
    let fm = FileManager.default
    var isDirectory: ObjCBool = false
    let exists = fm.fileExists(atPath: target.path, isDirectory: &isDirectory)
    if exists && !isDirectory.boolValue {
        throw FlintError(.failedPrecondition, "\(target.path) is a file; an export is written to a directory.")
    }
    let parent = target.deletingLastPathComponent()
    let temporary = parent.appendingPathComponent(".\(target.lastPathComponent).tmp-\(UUID().uuidString)")
    do {
        try fm.createDirectory(at: temporary, withIntermediateDirectories: true)
    } catch {
        throw FlintError.file(.failedPrecondition, "Cannot write an export beside \(target.path)", error, path: temporary.path)
    }
    do {
        let result = try await fill(temporary)
        if exists {
            let old = parent.appendingPathComponent(".\(target.lastPathComponent).old-\(UUID().uuidString)")
            try fm.moveItem(at: target, to: old)
            try fm.moveItem(at: temporary, to: target)
            try? fm.removeItem(at: old)
        } else {
            try fm.moveItem(at: temporary, to: target)
        }
        return result
    } catch {
        try? fm.removeItem(at: temporary)
        throw FlintError.file(.failedPrecondition, "Cannot write the export at \(target.path)", error, path: target.path)
    }
}
