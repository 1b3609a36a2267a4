/// JSON string literals written straight into bytes, for the places Flint writes JSON itself
/// (export lines, coverage values, WebSocket frames). Foundation's JSONSerialization boxes each
/// value and was most of the time spent in those places.
public enum JSONString {
    /// `s` as a JSON string literal, quotes included.
    public static func quoted(_ s: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.utf8.count + 2)
        append(s, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `s` quoted, with quotes, backslashes and control characters escaped; everything
    /// else, `/` and non-ASCII included, is written as it is.
    public static func append(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), 0x30, 0x30, hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 15)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
