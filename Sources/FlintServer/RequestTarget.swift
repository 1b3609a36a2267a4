import HummingbirdCore

extension Request {
    /// The request with its target's fragment (`#` and all after it) cut off, as the reference
    /// cuts it. Clients keep fragments to themselves, but one written into a raw request would
    /// otherwise become part of a document id (or hide the query behind it).
    var withoutFragment: Request {
        guard let path = head.path, let hash = path.utf8.firstIndex(of: UInt8(ascii: "#")) else { return self }
        var head = head
        head.path = String(path[..<hash])
        return Request(head: head, body: body)
    }
}
