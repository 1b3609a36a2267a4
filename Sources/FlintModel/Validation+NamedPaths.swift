extension Validation {
    /// A field path a request names (a mask, a transform, a query's fields) may not hold a
    /// reserved segment, nor `__key__`, the reference's word for a document's name. The
    /// reference names the path from the reserved segment on, spelling `__name__` its own way.
    public static func checkNamedPath(_ path: FieldPath) throws(FlintError) {
        if path.segments.contains("__key__") {
            throw FieldPath.keyName
        }
        guard let first = path.segments.firstIndex(where: { isReserved($0) && $0 != "__name__" }) else { return }
        let named = path.segments[first...].map { $0 == "__name__" ? "__key__" : $0 }
        throw .invalidArgument("Invalid reserved name in field path \(named.joined(separator: "."))")
    }

    /// `__name__` is a whole path or nothing: refused inside a longer one.
    public static func checkNameAlone(_ path: FieldPath) throws(FlintError) {
        if path.segments.count > 1 && path.segments.contains("__name__") {
            throw .invalidArgument("the name __key__ is reserved")
        }
    }

    /// The fields a read asks for: `__name__` alone may be among them. Every path's reserved
    /// names are told before any path's `__name__` inside a longer one, as the reference reads
    /// a mask (`readMask`).
    public static func validateReadMask(_ mask: [FieldPath]?) throws(FlintError) {
        guard let mask else { return }
        for path in mask { try checkNamedPath(path) }
        try checkMaskNames(mask)
    }

    /// A mask's paths as a request writes them, read as the reference reads them: each parsed
    /// and its reserved names checked before the next is read, so `["__x__", "/"]` is told
    /// its reserved name; then `__name__` inside a longer path.
    public static func readMask(_ texts: [String]) throws(FlintError) -> [FieldPath] {
        var out: [FieldPath] = []
        out.reserveCapacity(texts.count)
        for text in texts {
            let path = try FieldPath(parsing: text)
            try checkNamedPath(path)
            out.append(path)
        }
        try checkMaskNames(out)
        return out
    }
}
