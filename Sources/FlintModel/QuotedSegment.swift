/// The text of one backquoted field path segment, read as the reference reads it: a `\` starts
/// a C-style escape, not only `` \` `` and `\\`. The SDKs escape nothing else, so this matters
/// to paths written by hand in REST, where `` `a\nb` `` names a field with a newline in it.
///
/// Escapes give UTF-16 code units, so `\uD83D\uDE00` is one character, and a surrogate left
/// unpaired becomes `?` (as the reference's Java strings encode it).
struct QuotedSegment {
    /// Bytes taken as they stand since the last escape.
    var raw: [UInt8] = []
    private var units: [UInt16] = []

    /// Reads the escape after a `\`: `\a \b \f \n \r \t \v`, a quote, `\`, `?` or `` ` ``
    /// itself, three octal digits up to `\377`, `\x` or `\X` and two hex digits, `\u` and four,
    /// `\U` and eight up to `\U0010FFFF`. Anything else is no escape: false.
    mutating func readEscape(_ bytes: inout ArraySlice<UInt8>) -> Bool {
        guard let c = bytes.popFirst() else { return false }
        let unit: UInt32
        switch c {
        case UInt8(ascii: "a"): unit = 0x07
        case UInt8(ascii: "b"): unit = 0x08
        case UInt8(ascii: "f"): unit = 0x0C
        case UInt8(ascii: "n"): unit = 0x0A
        case UInt8(ascii: "r"): unit = 0x0D
        case UInt8(ascii: "t"): unit = 0x09
        case UInt8(ascii: "v"): unit = 0x0B
        case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "?"), UInt8(ascii: "`"):
            unit = UInt32(c)
        case UInt8(ascii: "0")...UInt8(ascii: "7"):
            guard let rest = Self.digits(&bytes, count: 2, radix: 8) else { return false }
            let value = UInt32(c - UInt8(ascii: "0")) << 6 | rest
            guard value <= 0xFF else { return false }
            unit = value
        case UInt8(ascii: "x"), UInt8(ascii: "X"):
            guard let v = Self.digits(&bytes, count: 2, radix: 16) else { return false }
            unit = v
        case UInt8(ascii: "u"):
            guard let v = Self.digits(&bytes, count: 4, radix: 16) else { return false }
            unit = v
        case UInt8(ascii: "U"):
            guard let v = Self.digits(&bytes, count: 8, radix: 16), v <= 0x10FFFF else { return false }
            unit = v
        default:
            return false
        }
        flushRaw()
        if unit > 0xFFFF {
            units.append(contentsOf: UTF16.encode(Unicode.Scalar(unit)!)!)
        } else {
            units.append(UInt16(unit))
        }
        return true
    }

    /// Exactly `count` digits of `radix`, or nil.
    private static func digits(_ bytes: inout ArraySlice<UInt8>, count: Int, radix: UInt32) -> UInt32? {
        var value: UInt32 = 0
        for _ in 0..<count {
            guard let b = bytes.popFirst(), let d = Character(Unicode.Scalar(b)).hexDigitValue,
                UInt32(d) < radix
            else { return nil }
            value = value * radix + UInt32(d)
        }
        return value
    }

    private mutating func flushRaw() {
        units.append(contentsOf: String(decoding: raw, as: UTF8.self).utf16)
        raw = []
    }

    /// The segment's text, unpaired surrogates as `?`.
    var text: String {
        // Most quoted segments (a name with a space, a dot, a letter beyond ASCII) hold no
        // escape: their bytes are the text.
        if units.isEmpty { return String(decoding: raw, as: UTF8.self) }
        var copy = self
        copy.flushRaw()
        var scalars = String.UnicodeScalarView()
        var i = 0
        let units = copy.units
        while i < units.count {
            let u = units[i]
            if UTF16.isLeadSurrogate(u), i + 1 < units.count, UTF16.isTrailSurrogate(units[i + 1]) {
                scalars.append(UTF16.decode(UTF16.EncodedScalar([u, units[i + 1]])))
                i += 2
            } else {
                scalars.append(Unicode.Scalar(u) ?? "?")
                i += 1
            }
        }
        return String(scalars)
    }
}
