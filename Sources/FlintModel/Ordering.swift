/// One `order by` term: a field and its direction.
public struct Ordering: Sendable, Hashable {
    public var field: FieldPath
    public var descending: Bool

    public init(_ field: FieldPath, descending: Bool = false) {
        self.field = field
        self.descending = descending
    }

    /// Parses the list syntax of ListDocuments: `"priority desc, __name__"`. Fields may be
    /// backquoted (spaces and commas inside them are theirs); spaces may follow a term, a
    /// comma or a field, not start the list. Any fault names the whole text, as the reference
    /// emulator does. `checkField` sees each field as it is read, so a fault in an earlier
    /// field is told before a later term's syntax, as on the reference.
    public static func parseList(
        _ text: String, checkField: (FieldPath) throws(FlintError) -> Void = { _ in }
    ) throws(FlintError) -> [Ordering] {
        let invalid = FlintError.invalidArgument("Invalid order by clause \"\(text)\".")
        let bytes = Array(text.utf8)
        var i = 0
        func isSpace(_ b: UInt8) -> Bool { b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") }
        func skipSpaces() { while i < bytes.count && isSpace(bytes[i]) { i += 1 } }
        var result: [Ordering] = []
        while true {
            // The field: up to a space or comma outside backquotes.
            let start = i
            var quoted = false
            while i < bytes.count {
                let b = bytes[i]
                if quoted && b == UInt8(ascii: "\\") {
                    i += 2
                    continue
                }
                if b == UInt8(ascii: "`") { quoted.toggle() } else if !quoted && (isSpace(b) || b == UInt8(ascii: ",")) { break }
                i += 1
            }
            guard i > start, let field = try? FieldPath(parsing: String(decoding: bytes[start..<min(i, bytes.count)], as: UTF8.self)) else {
                throw invalid
            }
            try checkField(field)
            skipSpaces()
            var descending = false
            let word = i
            while i < bytes.count && !isSpace(bytes[i]) && bytes[i] != UInt8(ascii: ",") { i += 1 }
            if i > word {
                switch String(decoding: bytes[word..<i], as: UTF8.self).lowercased() {
                case "asc": descending = false
                case "desc": descending = true
                default: throw invalid
                }
                skipSpaces()
            }
            result.append(Ordering(field, descending: descending))
            if i == bytes.count { return result }
            guard bytes[i] == UInt8(ascii: ",") else { throw invalid }
            i += 1
            skipSpaces()
        }
    }
}
