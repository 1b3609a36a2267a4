import FlintModel
import Foundation

/// The opaque continuation of a listing: the snapshot it reads and where the last page ended.
///
/// Later pages read at the first page's snapshot, so paging never skips or repeats a document
/// that changed in between (while the snapshot is within the retention window).
struct PageToken: Equatable {
    var readTime: Timestamp
    var after: String

    private static let tag = "f1"

    func encoded() -> String {
        Base64URL.encode(Array("\(Self.tag)|\(readTime.microseconds)|\(after)".utf8))
    }

    init(readTime: Timestamp, after: String) {
        self.readTime = readTime
        self.after = after
    }

    init(decoding text: String) throws(FlintError) {
        let invalid = FlintError.invalidArgument("invalid page token")
        guard let bytes = Base64URL.decode(text) else { throw invalid }
        let parts = String(decoding: bytes, as: UTF8.self)
            .split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Self.tag, let micros = Int64(parts[1]) else { throw invalid }
        readTime = Timestamp(microseconds: micros)
        after = String(parts[2])
    }
}

/// URL-safe base64 without padding, so tokens travel in query strings untouched.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String) -> [UInt8]? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.utf8.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s).map { Array($0) }
    }
}
