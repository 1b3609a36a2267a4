import FlintModel
import Foundation

/// An exclusive hold on a data directory, through `flock` on its `flint.lock`, for as long as
/// the process keeps it. Two Flints on one data file would each serve its own memory and
/// overwrite the other's documents in the file, so a second one is refused instead. The
/// system drops the lock when the process ends, however it ends (a `kill -9` included).
final class DataDirectoryLock: Sendable {
    private let descriptor: Int32

    init(_ directory: String) throws(FlintError) {
        let path = (directory as NSString).appendingPathComponent("flint.lock")
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw FlintError(.unavailable, "Cannot open \(path): \(String(cString: strerror(errno))).")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            // The holder wrote its process id there when it took the lock.
            var bytes = [UInt8](repeating: 0, count: 32)
            let count = pread(fd, &bytes, bytes.count, 0)
            close(fd)
            let holder = count > 0 ? Int(String(decoding: bytes.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) : nil
            throw FlintError(
                .failedPrecondition,
                "The data directory \(directory) is in use by another Flint\(holder.map { " (process \($0))" } ?? ""); stop it, or reach its data through it.")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pwrite(fd, pid, pid.count, 0)
        descriptor = fd
    }

    deinit { close(descriptor) }
}
