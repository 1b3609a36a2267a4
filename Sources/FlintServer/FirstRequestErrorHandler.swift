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

extension ChannelPipeline.SynchronousOperations {
    /// Puts `handler` right after the HTTP/1.1 request decoder, where request parts and parse
    /// errors first appear.
    func addAfterRequestDecoder(_ handler: any ChannelHandler) {
        guard let decoder = try? context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self) else { return }
        try? addHandler(handler, position: .after(decoder.handler))
    }
}
