import Foundation

/// Writes a directory in full beside `target`, then swaps it into place: an earlier directory
/// there is removed only once the new one is in place, and a failure leaves it as it was.
func replacingDirectory<T>(_ target: URL, _ fill: (URL) async throws -> T) async throws -> T {
    let fm = FileManager.default
    let parent = target.deletingLastPathComponent()
    let temporary = parent.appendingPathComponent(".\(target.lastPathComponent).tmp-\(UUID().uuidString)")
    try fm.createDirectory(at: temporary, withIntermediateDirectories: true)
    do {
        let result = try await fill(temporary)
        if fm.fileExists(atPath: target.path) {
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
        throw error
    }
}
