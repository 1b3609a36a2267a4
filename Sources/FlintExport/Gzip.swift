import CompressNIO
import Foundation
import NIOCore

/// Writes lines into a gzip file as they come, through a 64 KiB window.
final class GzipLineWriter: @unchecked Sendable {
    // One export writes through it at a time, inside the database's forEachDocument call.
    private let handle: FileHandle
    private let compressor: any NIOCompressor
    private var pending = ByteBuffer()
    private(set) var error: (any Error)?

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        compressor = CompressionAlgorithm.gzip().compressor
        compressor.window = ByteBufferAllocator().buffer(capacity: 64 * 1024)
        try compressor.startStream()
    }

    func write(line: [UInt8]) {
        pending.writeBytes(line)
        if pending.readableBytes >= 256 * 1024 { drain(.no) }
    }

    private func drain(_ flush: CompressNIOFlush) {
        guard error == nil else { return }
        do {
            try pending.compressStream(with: compressor, flush: flush) { window in
                try handle.write(contentsOf: Data(window.readableBytesView))
            }
            pending.clear()
        } catch {
            self.error = error
        }
    }

    /// Flushes the stream, closes the file, and throws the first error met.
    func finish() throws {
        drain(.finish)
        try? compressor.finishStream()
        try handle.synchronize()
        try handle.close()
        if let error { throw error }
    }
}

/// Reads lines from a gzip file, decompressing 64 KiB at a time.
final class GzipLineReader {
    private let handle: FileHandle
    private let decompressor: any NIODecompressor
    private var text: [UInt8] = []
    private var done = false

    init(path: String) throws {
        handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        decompressor = CompressionAlgorithm.gzip().decompressor
        decompressor.window = ByteBufferAllocator().buffer(capacity: 64 * 1024)
        try decompressor.startStream()
    }

    deinit { try? handle.close() }

    /// Up to `count` more lines, or nil at the end.
    func next(_ count: Int) throws -> [[UInt8]]? {
        var lines: [[UInt8]] = []
        while lines.count < count {
            if let newline = text.firstIndex(of: 0x0A) {
                lines.append(Array(text[..<newline]))
                text.removeSubrange(...newline)
                continue
            }
            guard !done else {
                if !text.isEmpty {
                    lines.append(text)
                    text = []
                }
                break
            }
            let chunk = try handle.read(upToCount: 64 * 1024) ?? Data()
            if chunk.isEmpty {
                done = true
                try? decompressor.finishStream()
                continue
            }
            var buffer = ByteBuffer(bytes: chunk)
            try buffer.decompressStream(with: decompressor) { window in text += window.readableBytesView }
        }
        return lines.isEmpty ? nil : lines
    }
}
