import Foundation

/// What one forward-channel POST carries, decoded from its form body
/// (`count=2&ofs=5&req0___data__=…&req1___data__=…`): the client's messages, numbered from
/// `firstMapID`, and the headers a browser client puts in the body (`headers=…`) so that the
/// request needs no CORS preflight.
public struct ForwardBatch: Sendable, Equatable {
    /// The map id of the first message; each next one is one more.
    public var firstMapID: Int
    /// Each message's JSON text, in order.
    public var messages: [String]
    /// Header names in lower case.
    public var headers: [String: String]

    public init(firstMapID: Int = 0, messages: [String] = [], headers: [String: String] = [:]) {
        self.firstMapID = firstMapID
        self.messages = messages
        self.headers = headers
    }

    /// Decodes a form body. Messages must be raw JSON (`reqN___data__`), which is what clients
    /// that set `sendRawJson` send; the older per-field maps are refused by name.
    public static func parse(_ body: String) throws(WebChannelError) -> ForwardBatch {
        let fields = try FormFields(body)
        var batch = ForwardBatch()
        if let headers = fields["headers"] { batch.headers = try Self.headerBlock(headers) }
        guard let countText = fields["count"] else {
            guard fields.isEmpty || (fields.count == 1 && fields["headers"] != nil) else {
                throw .malformed("A forward-channel request names its message count (count=N).")
            }
            return batch
        }
        guard let count = Int(countText), (0...WebChannelLimits.messagesPerRequest).contains(count) else {
            throw .malformed("count=\(countText) is not a message count from 0 to \(WebChannelLimits.messagesPerRequest).")
        }
        if count == 0 { return batch }
        guard let offsetText = fields["ofs"], let offset = Int(offsetText), offset >= 0 else {
            throw .malformed("A forward-channel request with messages names the first one's id (ofs=N).")
        }
        batch.firstMapID = offset
        for k in 0..<count {
            guard let message = fields["req\(k)___data__"] else {
                if fields.names.contains(where: { $0.hasPrefix("req\(k)_") }) {
                    throw .malformed("Message \(k) is a field map; Flint takes messages as raw JSON (reqN___data__).")
                }
                throw .malformed("Message \(k) of \(count) is missing (req\(k)___data__).")
            }
            batch.messages.append(message)
        }
        return batch
    }

    /// `Name:value\r\n` lines, as the client's `$httpHeaders` and `headers` fields carry them.
    public static func headerBlock(_ text: String) throws(WebChannelError) -> [String: String] {
        var headers: [String: String] = [:]
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }) {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw .malformed("A header line has no name: \(line.prefix(40))")
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }
}

/// The fields of an `application/x-www-form-urlencoded` text, each name's first value.
struct FormFields {
    private var values: [String: String] = [:]
    private(set) var names: [String] = []

    init(_ text: String) throws(WebChannelError) {
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try Self.decode(parts[0])
            let value = parts.count > 1 ? try Self.decode(parts[1]) : ""
            if values[name] == nil {
                values[name] = value
                names.append(name)
            }
        }
    }

    subscript(name: String) -> String? { values[name] }
    var isEmpty: Bool { values.isEmpty }
    var count: Int { values.count }

    private static func decode(_ text: Substring) throws(WebChannelError) -> String {
        guard let decoded = text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
            throw .malformed("The form body has a bad percent-encoding near \(text.prefix(40)).")
        }
        return decoded
    }
}

/// A request the channel protocol cannot take, with the text it is answered with.
public enum WebChannelError: Error, Equatable, Sendable {
    case malformed(String)
    /// The session is gone (ended, expired, or never made). Clients look for these words.
    case unknownSession
    /// As many sessions as the registry holds are open.
    case tooManySessions(Int)

    public var message: String {
        switch self {
        case .malformed(let text): text
        case .unknownSession: "Unknown SID"
        case .tooManySessions(let capacity):
            "\(capacity) WebChannel sessions are open, as many as Flint holds; one frees when its client terminates it or a minute after its last back channel."
        }
    }
}

public enum WebChannelLimits {
    /// Clients send at most 1000 maps in one request.
    public static let messagesPerRequest = 1000
}
