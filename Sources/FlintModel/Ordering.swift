/// One `order by` term: a field and its direction.
public struct Ordering: Sendable, Hashable {
    public var field: FieldPath
    public var descending: Bool

    public init(_ field: FieldPath, descending: Bool = false) {
        self.field = field
        self.descending = descending
    }

    /// Parses the list syntax of ListDocuments: `"priority desc, __name__"`. As on the reference,
    /// each term's field is the longest run of path segments (plain, or backquoted with any
    /// `\` escape) at its start; that field is read as a path and `checkField` sees it before the
    /// rest of the term is looked at. So `__x__.` is told its reserved name, and
    /// `` a.`\q` `` its escape, while a fault in the term's syntax names the whole text, as the
    /// reference does. Spaces may follow a term, a comma or a field, not start the list.
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
            let start = i
            guard let end = fieldEnd(bytes, from: i) else { throw invalid }
            i = end
            let field = try FieldPath(parsing: String(decoding: bytes[start..<end], as: UTF8.self))
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

    /// Where the run of path segments starting at `start` ends, or nil when none starts there.
    /// A dot not followed by a segment is left to the rest of the term.
    static func fieldEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        func segmentEnd(_ i: Int) -> Int? {
            guard i < bytes.count else { return nil }
            if bytes[i] == UInt8(ascii: "`") {
                var j = i + 1
                while j < bytes.count {
                    switch bytes[j] {
                    case UInt8(ascii: "`"): return j > i + 1 ? j + 1 : nil
                    case UInt8(ascii: "\\"): j += 2
                    default: j += 1
                    }
                }
                return nil
            }
            guard FieldPath.isIdentifierByte(bytes[i], first: true) else { return nil }
            var j = i + 1
            while j < bytes.count && FieldPath.isIdentifierByte(bytes[j], first: false) { j += 1 }
            return j
        }
        guard var end = segmentEnd(start) else { return nil }
        while end < bytes.count, bytes[end] == UInt8(ascii: "."), let next = segmentEnd(end + 1) { end = next }
        return end
    }
}
