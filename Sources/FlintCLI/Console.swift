import Foundation

/// Lines for whoever runs Flint, written best-effort. Once the terminal has closed (EIO) or the
/// reader of a pipe has gone (EPIPE) there is nobody to tell, and Foundation's plain
/// `FileHandle.write(_:)` would stop the process on the failed write, in the middle of an
/// export-on-exit or a stop.
enum Console {
    static func output(_ text: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
    }

    static func error(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
    }
}
