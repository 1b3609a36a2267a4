import FlintModel

/// A document's key as the reference emulator prints it in a few of its messages: the protobuf
/// text of its internal entity key, the project as `dev~<project>`, one element per collection
/// and document, the database only when it is not `(default)`.
enum EntityKeyText {
    static func of(_ key: DocumentKey, in database: DatabaseID) -> String {
        var text = "app: \"" + escaped("dev~" + database.project) + "\"\npath <\n"
        let segments = key.path.segments
        for i in stride(from: 0, to: segments.count - 1, by: 2) {
            text += "  Element {\n    type: \"" + escaped(segments[i]) + "\"\n"
            if let id = numericID(segments[i + 1]) {
                text += "    id: " + integerText(id) + "\n"
            } else {
                text += "    name: \"" + escaped(segments[i + 1]) + "\"\n"
            }
            text += "  }\n"
        }
        text += ">\n"
        if database.database != DatabaseID.defaultDatabase {
            text += "database_id: \"" + escaped(database.database) + "\"\n"
        }
        return text
    }

    /// `__id<n>__` names a numeric id; writes have already refused the malformed ones.
    static func numericID(_ id: String) -> Int64? {
        guard id.hasPrefix("__id"), id.hasSuffix("__"), id.utf8.count > 6 else { return nil }
        return Int64(id.dropFirst(4).dropLast(2))
    }

    /// Decimal below two thousand million in magnitude, two's-complement hexadecimal from there,
    /// as the reference's printer writes an int64.
    static func integerText(_ n: Int64) -> String {
        n.magnitude < 2_000_000_000 ? String(n) : "0x" + String(UInt64(bitPattern: n), radix: 16)
    }

    /// Escapes each UTF-16 unit as the reference does: C escapes for a few controls, three
    /// octal digits for other controls and for U+007F to U+00FF, `\u` and four hex digits above.
    static func escaped(_ s: String) -> String {
        var out = ""
        for unit in s.utf16 {
            switch unit {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            case 0..<0x100:
                let octal = String(unit, radix: 8)
                out += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            default:
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out
    }
}
