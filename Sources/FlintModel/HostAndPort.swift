/// An emulator's address as `FIRESTORE_EMULATOR_HOST` and `--host` give it: `HOST:PORT`, with an
/// IPv6 host in brackets (`[::1]:8080`).
public struct HostAndPort: Sendable, Equatable, CustomStringConvertible {
    /// Without brackets, as sockets take it.
    public let host: String
    public let port: Int

    public init(parsing text: String) throws(FlintError) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port)
        else { throw .invalidArgument("The emulator host must be HOST:PORT, not \"\(text)\".") }
        var host = text[..<colon]
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { throw .invalidArgument("The emulator host must be HOST:PORT, not \"\(text)\".") }
        self.host = String(host)
        self.port = port
    }

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// The address a client on this machine dials: 0.0.0.0 and `::` (every interface) are
    /// not addresses to connect to everywhere, so they become 127.0.0.1 and ::1, as
    /// firebase-tools does with the address it hands to tests.
    public var connectable: HostAndPort {
        switch host {
        case "0.0.0.0": HostAndPort(host: "127.0.0.1", port: port)
        case "::": HostAndPort(host: "::1", port: port)
        default: self
        }
    }

    /// `HOST:PORT` again, with brackets around an IPv6 host (the form of an HTTP `Host` header).
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
