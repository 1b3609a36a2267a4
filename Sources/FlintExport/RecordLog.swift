import FlintModel
import Foundation

/// The record log of a managed export's `output-N` files (LevelDB's log format): 32 KiB blocks
/// of records, each with a 7-byte header (masked CRC-32C, little-endian length, type). A record
/// that does not fit in what is left of a block is split into first, middle and last fragments.
enum RecordLog {
    static let blockSize = 32 * 1024
    static let headerSize = 7

    enum Kind: UInt8 {
        case padding = 0, full, first, middle, last
    }
}

/// Reads records one at a time, a block in memory at once, checking every checksum.
struct RecordLogReader {
    private let file: FileHandle
    private let path: String
    private var block: [UInt8] = []
    private var offset = 0
    private var blockStart = 0

    init(path: String) throws(FlintError) {
        guard let file = FileHandle(forReadingAtPath: path) else { throw .invalidArgument("\(path) cannot be read.") }
        self.file = file
        self.path = path
    }

    /// The next whole record, or nil at the end of the file.
    mutating func next() throws(FlintError) -> [UInt8]? {
        var record: [UInt8] = []
        var inFragments = false
        while true {
            if block.count - offset < RecordLog.headerSize {
                // What is left of a block too short for a header is padding.
                blockStart += block.count
                block = readBlock()
                offset = 0
                if block.isEmpty {
                    if inFragments { throw corrupt("the file ends inside a record") }
                    return nil
                }
                continue
            }
            let header = offset
            let length = Int(block[header + 4]) | Int(block[header + 5]) << 8
            guard let kind = RecordLog.Kind(rawValue: block[header + 6]) else { throw corrupt("unknown record type \(block[header + 6])") }
            if kind == .padding {
                offset = block.count
                continue
            }
            let start = header + RecordLog.headerSize
            guard start + length <= block.count else { throw corrupt("a record runs past its block") }
            let stored = UInt32(block[header]) | UInt32(block[header + 1]) << 8 | UInt32(block[header + 2]) << 16 | UInt32(block[header + 3]) << 24
            let crc = CRC32C.checksum(block[start..<start + length], seed: CRC32C.checksum([kind.rawValue]))
            guard CRC32C.masked(crc) == stored else { throw corrupt("a checksum does not match") }
            offset = start + length
            switch (kind, inFragments) {
            case (.full, false): return Array(block[start..<start + length])
            case (.first, false):
                record = Array(block[start..<start + length])
                inFragments = true
            case (.middle, true): record += block[start..<start + length]
            case (.last, true):
                record += block[start..<start + length]
                return record
            default: throw corrupt("record fragments are out of order")
            }
        }
    }

    private func readBlock() -> [UInt8] {
        guard let data = try? file.read(upToCount: RecordLog.blockSize) else { return [] }
        return [UInt8](data)
    }

    private func corrupt(_ what: String) -> FlintError {
        .invalidArgument("\(path) is not a readable export file: \(what) (block at byte \(blockStart)).")
    }
}

/// Appends records to a new file, splitting them across blocks as the format requires.
struct RecordLogWriter {
    private let file: FileHandle
    private var pending: [UInt8] = []
    private var blockOffset = 0
    private(set) var bytesWritten = 0

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path) else {
            throw FlintError.invalidArgument("\(path) cannot be written.")
        }
        self.file = file
    }

    mutating func append(_ record: [UInt8]) throws {
        var rest = record[...]
        var first = true
        repeat {
            let left = RecordLog.blockSize - blockOffset
            if left < RecordLog.headerSize {
                pending += repeatElement(0, count: left)
                blockOffset = 0
            }
            let room = RecordLog.blockSize - blockOffset - RecordLog.headerSize
            let fragment = rest.prefix(room)
            rest = rest.dropFirst(fragment.count)
            let kind: RecordLog.Kind = first ? (rest.isEmpty ? .full : .first) : (rest.isEmpty ? .last : .middle)
            let crc = CRC32C.masked(CRC32C.checksum(fragment, seed: CRC32C.checksum([kind.rawValue])))
            pending += [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)]
            pending += [UInt8(fragment.count & 0xFF), UInt8(fragment.count >> 8), kind.rawValue]
            pending += fragment
            blockOffset += RecordLog.headerSize + fragment.count
            first = false
        } while !rest.isEmpty
        if pending.count >= 1 << 16 { try flush() }
    }

    mutating func close() throws {
        try flush()
        try file.close()
    }

    private mutating func flush() throws {
        try file.write(contentsOf: pending)
        bytesWritten += pending.count
        pending.removeAll(keepingCapacity: true)
    }
}
