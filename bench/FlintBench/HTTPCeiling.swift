// A server that does nothing but answer: SwiftNIO's HTTP/1.1 pipeline on one event loop,
// replying to every request with a fixed document-shaped JSON body. What wrk gets from it on
// one keep-alive connection is the most any HTTP server on this machine can give a sequential
// client, whatever it does per request; bench/clients.py --ceiling reports it beside Flint's writes.
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

private final class AnswerEveryRequest: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let body = #"{"name":"projects/p/databases/(default)/documents/c/d","fields":{"i":{"integerValue":"1"}},"#
        + #""createTime":"2026-01-01T00:00:00.000000Z","updateTime":"2026-01-01T00:00:00.000000Z"}"#

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The body is read and dropped; the answer goes once the request has ended.
        guard case .end = unwrapInboundIn(data) else { return }
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/json; charset=utf-8")
        headers.add(name: "content-length", value: String(Self.body.utf8.count))
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: Self.body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

/// Serves until killed, after printing the address it listens on.
func runHTTPCeiling() throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channel = try ServerBootstrap(group: group)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(AnswerEveryRequest())
            }
        }
        .bind(host: "127.0.0.1", port: 0).wait()
    print("listening on 127.0.0.1:\(channel.localAddress?.port ?? 0)")
    fflush(nil)  // every stream: the reader waits for this line through a pipe
    try channel.closeFuture.wait()
}
