/// One `order by` term: a field and its direction.
public struct Ordering: Sendable, Hashable {
    public var field: FieldPath
    public var descending: Bool

    public init(_ field: FieldPath, descending: Bool = false) {
        self.field = field
        self.descending = descending
    }

    /// Parses the list syntax of ListDocuments: `"priority desc, __name__"`.
    public static func parseList(_ text: String) throws(FlintError) -> [Ordering] {
        var result: [Ordering] = []
        for clause in text.split(separator: ",") {
            let words = clause.split(whereSeparator: { $0 == " " || $0 == "\t" })
            let invalid = FlintError.invalidArgument("Invalid order by clause \"\(clause.trimmingSpaces)\".")
            guard let first = words.first, words.count <= 2 else { throw invalid }
            var descending = false
            if words.count == 2 {
                switch words[1].lowercased() {
                case "asc": descending = false
                case "desc": descending = true
                default: throw invalid
                }
            }
            result.append(Ordering(try FieldPath(parsing: String(first)), descending: descending))
        }
        return result
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return s
    }
}
