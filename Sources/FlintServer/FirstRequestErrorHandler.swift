import NIOCore
import NIOHTTP1

/// Answers an HTTP/1.1 connection whose first request cannot be parsed with `400 Bad Request`
/// and closes it. Until a first request arrives, the connection waits in the WebSocket upgrade
/// negotiation, which never hears of a parse error: without this, a client that sent garbage
/// and kept its socket open would hold the connection forever. Once the first request head
/// arrives the handler leaves, and Hummingbird answers later parse errors itself.
final class FirstRequestErrorHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Puts the handler right after the HTTP/1.1 request decoder, where parse errors surface.
    static func add(to channel: any Channel) {
        let operations = channel.pipeline.syncOperations
        guard let decoder = try? operations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self) else { return }
        try? operations.addHandler(FirstRequestErrorHandler(), position: .after(decoder.handler))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        let head = HTTPResponseHead(version: .http1_1, status: .badRequest, headers: ["Connection": "close", "Content-Length": "0"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            // Told as the client's end of input, the negotiation closes the connection and ends
            // quietly; a plain close would be logged as a failed upgrade.
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            context.close(promise: nil)
        }
    }
}
