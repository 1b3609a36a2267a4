// A server that does nothing but answer: SwiftNIO's HTTP/1.1 pipeline on one event loop,
// replying to every request with a fixed document-shaped JSON body. What wrk gets from it on
// one keep-alive connection is the most any HTTP server on this machine can give a sequential
// client, whatever it does per request; bench/clients.py --ceiling reports it beside Flint's writes.
import NIOCore
import NIOHTTP1
import NIOPosix
import FlintServer
import Hummingbird
import HummingbirdCore
import Logging

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

/// Hummingbird's HTTP/1.1 channel with each connection's task kept on its event loop, as Flint
/// serves HTTP/1.1.
private struct HTTP1OnItsLoop: ServerChildChannel {
    let http1: HTTP1Channel
    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        http1.setup(channel: channel, logger: logger)
    }
    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        await withTaskExecutorPreference(EventLoopTaskExecutor(value.channel.eventLoop)) {
            await http1.handle(value: value, logger: logger)
        }
    }
}

/// The same answer through Hummingbird: its router and HTTP/1.1 channel as Flint sets them up,
/// no Flint code. Between this and the NIO server lies what the HTTP framework costs per request.
func runHummingbirdCeiling() async throws {
    let router = Router()
    router.on("/v1/**", method: .patch) { _, _ in
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: AnswerEveryRequest.body)))
    }
    var logger = Logger(label: "hummingbird-ceiling")
    logger.logLevel = .error
    let app = Application(
        router: router,
        server: HTTPServerBuilder { responder in HTTP1OnItsLoop(http1: HTTP1Channel(responder: responder)) },
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            print("listening on 127.0.0.1:\(channel.localAddress?.port ?? 0)")
            fflush(nil)
        },
        eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup(numberOfThreads: 1)),
        logger: logger)
    try await app.runService()
}
