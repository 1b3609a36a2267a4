import HummingbirdCore
import NIOCore
import NIOHTTP1

/// Drops the `Upgrade` offer from a connection's first request unless it is a WebSocket
/// handshake on the listen path, the one upgrade Flint serves, so the request is answered as
/// plain HTTP/1.1 (RFC 9110 §7.8 lets a server ignore the offer; the reference does), and the
/// connection closes after the answer.
/// NIO's upgrade negotiation loses the head of a request whose offer no upgrader takes, and the
/// client then got an empty reply: `curl --http2`, and Java's `HttpClient`, which offers `h2c`
/// on every `http://` connection, could not make a first request.
final class UnservedUpgrades: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(var head) = unwrapInboundIn(data), head.headers.contains(name: "upgrade"), !Self.isServed(head) {
            head.headers.remove(name: "upgrade")
            // The decoder still took the request for an upgrade and parses nothing after it, so
            // the connection ends with this answer; the client's next request opens another.
            head.headers.replaceOrAdd(name: "connection", value: "close")
            context.fireChannelRead(wrapInboundOut(.head(head)))
        } else {
            context.fireChannelRead(data)
        }
        // Only a connection's first request can be upgraded; the negotiation leaves after it.
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// A WebSocket handshake with its key and version 13 (the only one), on `…/documents:listen`.
    /// An incomplete one is answered by the REST side, which says what the handshake needs.
    static func isServed(_ head: HTTPRequestHead) -> Bool {
        let offers = head.headers[canonicalForm: "upgrade"].map { $0.lowercased() }
        guard offers.contains("websocket"), head.headers.contains(name: "sec-websocket-key"),
            head.headers["sec-websocket-version"] == ["13"]
        else { return false }
        return (try? RESTAPI.parse(URI(head.uri).path))?.verb == "listen"
    }
}
