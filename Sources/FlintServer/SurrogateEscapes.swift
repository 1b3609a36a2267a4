import Foundation

/// swift-protobuf 1.39 joins a JSON surrogate-pair escape (`\ud840\udc00`) with `|` where `+` is
/// meant, so a character of an even plane from plane 2 on (U+20000 to U+2FFFF, the CJK
/// extensions B to F among them, U+E0000 to U+EFFFF and U+100000 to U+10FFFF) decodes as the
/// one 0x10000 below it, and is stored so. Python's `json` writes such characters that way by
/// default. Before the library reads a request, each pair is written as the UTF-8 it stands
/// for, which is the same JSON. Lone or malformed escapes are left for the library to refuse.
enum SurrogateEscapes {
    static func composed(_ data: Data) -> Data {
        data.withUnsafeBytes { raw in composed(raw.bindMemory(to: UInt8.self)).map { Data($0) } } ?? data
    }

    static func composed(_ text: String) -> String {
        var text = text
        let rewritten = text.withUTF8 { composed($0) }
        return rewritten.map { String(decoding: $0, as: UTF8.self) } ?? text
    }

    /// The bytes with every surrogate-pair escape composed, or nil when there is none.
    static func composed(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        var copied = 0
        var i = 0
        while i + 1 < bytes.count {
            guard bytes[i] == UInt8(ascii: "\\") else {
                i += 1
                continue
            }
            guard let high = escapedUnit(bytes, at: i), (0xD800..<0xDC00).contains(high),
                let low = escapedUnit(bytes, at: i + 6), (0xDC00..<0xE000).contains(low)
            else {
                // Any other escape is two characters, the second never the start of another.
                i += 2
                continue
            }
            if out.isEmpty { out.reserveCapacity(bytes.count) }
            out.append(contentsOf: bytes[copied..<i])
            let scalar = 0x10000 + (high - 0xD800) << 10 + (low - 0xDC00)
            out.append(UInt8(0xF0 | scalar >> 18))
            out.append(UInt8(0x80 | (scalar >> 12) & 0x3F))
            out.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
            i += 12
            copied = i
        }
        guard copied > 0 else { return nil }
        out.append(contentsOf: bytes[copied...])
        return out
    }

    /// The UTF-16 unit of a `\uXXXX` escape starting at `i`, if there is one.
    private static func escapedUnit(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Int? {
        guard i + 6 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else { return nil }
        var unit = 0
        for b in bytes[(i + 2)..<(i + 6)] {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): unit = unit << 4 | Int(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): unit = unit << 4 | Int(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): unit = unit << 4 | Int(b - UInt8(ascii: "A") + 10)
            default: return nil
            }
        }
        return unit
    }
}
