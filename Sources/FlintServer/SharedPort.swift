import GRPCNIOTransportHTTP2Posix
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which protocol a new connection speaks, read from its first bytes.
enum WireProtocol: Sendable {
    /// Cleartext HTTP/2 with prior knowledge: gRPC.
    case http2
    /// Anything else: HTTP/1.1 for REST, admin, health and WebSocket upgrades.
    case http1

    /// Every HTTP/2 connection opens with this preface (RFC 9113 §3.4).
    static let http2Preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// The protocol once `bytes` decide it; nil while they are still a prefix of the preface.
    static func detect(_ bytes: ByteBufferView) -> WireProtocol? {
        for (i, byte) in zip(http2Preface.indices, bytes) where byte != http2Preface[i] { return .http1 }
        return bytes.count >= http2Preface.count ? .http2 : nil
    }
}

/// First in every connection's pipeline: holds the bytes that arrive until they tell HTTP/1.1
/// from HTTP/2, asks `decide` to build the pipeline for that protocol, and once it is removed
/// hands those bytes to the handlers that now follow it.
final class ProtocolSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private var buffered: ByteBuffer?
    private var decided = false
    private let decide: (WireProtocol, ChannelHandlerContext) -> Void
    private let closedEarly: () -> Void

    init(decide: @escaping (WireProtocol, ChannelHandlerContext) -> Void, closedEarly: @escaping () -> Void) {
        self.decide = decide
        self.closedEarly = closedEarly
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if buffered == nil { buffered = bytes } else { buffered!.writeBuffer(&bytes) }
        guard !decided, let buffered, let kind = WireProtocol.detect(buffered.readableBytesView) else { return }
        decided = true
        decide(kind, context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Held back until the bytes are replayed.
    }

    func channelInactive(context: ChannelHandlerContext) {
        reportClosedIfUndecided()
        context.fireChannelInactive()
    }

    /// A channel closed before it ever became active (a connection accepted as the server shuts
    /// down) is torn down without `channelInactive`; whoever waits for the decision still hears.
    func handlerRemoved(context: ChannelHandlerContext) {
        reportClosedIfUndecided()
    }

    private func reportClosedIfUndecided() {
        guard !decided else { return }
        decided = true
        closedEarly()
    }

    /// The server allows half-closure, so a client that closes before saying anything leaves
    /// the connection half open: nothing else would ever close it, and a graceful shutdown
    /// would wait for it forever. Likewise a connection that has said nothing when the server
    /// shuts down has no request to finish, so it is closed rather than waited for.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if !decided, (event as? ChannelEvent) == .inputClosed || event is ChannelShouldQuiesceEvent {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func removeHandler(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        if let bytes = buffered {
            buffered = nil
            context.fireChannelRead(wrapInboundOut(bytes))
            context.fireChannelReadComplete()
        }
        context.leavePipeline(removalToken: removalToken)
    }
}

/// Hummingbird's child channel for Flint's one port: each connection is sniffed, then either
/// served by Hummingbird's HTTP/1.1 channel or handed to the gRPC server.
struct SharedPortChannel: ServerChildChannel {
    enum Route: Sendable {
        case http1(HTTP1WebSocketUpgradeChannel.Value)
        case grpc
        case closed
    }

    struct Value: ServerChildChannelValue {
        let channel: any Channel
        let route: EventLoopFuture<Route>
    }

    let http1: HTTP1WebSocketUpgradeChannel
    let grpc: GRPCHandoff
    let connections: OpenConnections

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        connections.add(channel)
        return channel.eventLoop.makeCompletedFuture {
            let route = channel.eventLoop.makePromise(of: Route.self)
            let sniffer = ProtocolSniffer(
                decide: { kind, context in
                    switch kind {
                    case .http1:
                        http1.setup(channel: channel, logger: logger).assumeIsolated().whenComplete { result in
                            switch result {
                            case .success(let value):
                                // Both sit just after the request decoder, ahead of the upgrade negotiation.
                                channel.pipeline.syncOperations.addAfterRequestDecoder(FirstRequestErrorHandler())
                                channel.pipeline.syncOperations.addAfterRequestDecoder(UnservedUpgrades())
                                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                                route.succeed(.http1(value))
                            case .failure(let error):
                                route.fail(error)
                                channel.close(promise: nil)
                            }
                        }
                    case .http2:
                        // Hummingbird's listener lets peers half-close, which HTTP/1.1 needs; the
                        // gRPC transport never closes on a half-close, so a client that went away
                        // left its connection open for good. HTTP/2 has no use for half-closing
                        // a connection: its end closes it, as on the reference.
                        _ = try? channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: false)
                        grpc.accept(channel)
                        route.succeed(.grpc)
                    }
                },
                closedEarly: { route.succeed(.closed) })
            try channel.pipeline.syncOperations.addHandler(sniffer, name: GRPCHandoff.snifferName, position: .first)
            return Value(channel: channel, route: route.futureResult)
        }
    }

    func handle(value: Value, logger: Logger) async {
        // gRPC connections live on in the gRPC server; only HTTP/1.1 is served here.
        guard case .http1(let channel)? = try? await value.route.get() else { return }
        await withTaskExecutorPreference(EventLoopTaskExecutor(value.channel.eventLoop)) {
            await http1.handle(value: channel, logger: logger)
        }
    }
}

/// The gRPC server's listener. gRPC's transport consumes connections from a listening channel,
/// but on Flint's port the connections are accepted by the shared listener and recognised only
/// after their first bytes; an idle pipe channel stands in as the listening channel, and each
/// sniffed HTTP/2 connection is passed through it, configured for gRPC on the way.
final class GRPCHandoff: HTTP2ServerTransport.ListenerFactory, Sendable {
    static let snifferName = "flint.protocol-sniffer"

    let eventLoopGroup: any EventLoopGroup
    private let listening: EventLoopPromise<any Channel>

    init(eventLoopGroup: any EventLoopGroup) {
        self.eventLoopGroup = eventLoopGroup
        listening = eventLoopGroup.any().makePromise(of: (any Channel).self)
    }

    /// Passes a connection whose first bytes are the HTTP/2 preface to the gRPC server,
    /// once it is listening.
    func accept(_ connection: any Channel) {
        listening.futureResult.whenComplete { result in
            switch result {
            case .success(let listener):
                listener.eventLoop.execute {
                    listener.pipeline.syncOperations.fireChannelRead(NIOAny(connection))
                }
            case .failure:
                connection.close(promise: nil)
            }
        }
    }

    /// Fails the hand-off so connections are closed instead of waiting for a gRPC server
    /// that will not come.
    func cancel() {
        listening.fail(ChannelError.ioOnClosedChannel)
    }

    func makeListeningChannel(
        listenerConfigurator: HTTP2ServerTransport.ListenerConfigurator,
        connectionConfigurator: HTTP2ServerTransport.ConnectionConfigurator
    ) async throws -> NIOAsyncChannel<HTTP2ServerTransport.ConnectionConfigurator.ConnectionChannel, Never> {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw IOError(errnoCode: errno, reason: "pipe") }
        let listener = try await NIOPipeBootstrap(group: eventLoopGroup).takingOwnershipOfDescriptors(
            input: fds[0], output: fds[1]
        ) { channel in
            listenerConfigurator.configure(channel: channel).flatMapThrowing {
                try channel.pipeline.syncOperations.addHandler(GRPCConfiguration(configurator: connectionConfigurator))
                return try NIOAsyncChannel<HTTP2ServerTransport.ConnectionConfigurator.ConnectionChannel, Never>(
                    wrappingChannelSynchronously: channel)
            }
        }
        listening.succeed(listener.channel)
        return listener
    }
}

/// In the stand-in listener: configures each handed-off connection for gRPC, lets the sniffer
/// replay the preface into the new pipeline, and passes the configured connection on to the
/// gRPC transport.
private final class GRPCConfiguration: ChannelInboundHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = HTTP2ServerTransport.ConnectionConfigurator.ConnectionChannel

    let configurator: HTTP2ServerTransport.ConnectionConfigurator

    init(configurator: HTTP2ServerTransport.ConnectionConfigurator) {
        self.configurator = configurator
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let connection = unwrapInboundIn(data)
        let configurator = self.configurator
        let configured = connection.eventLoop.flatSubmit {
            configurator.configure(channel: connection, tls: .none).flatMap { configured in
                connection.pipeline.removeHandler(name: GRPCHandoff.snifferName).map { configured }
            }
        }
        let context = context.loopBound
        configured.hop(to: context.value.eventLoop).assumeIsolated().whenComplete { result in
            switch result {
            case .success(let configured):
                context.value.fireChannelRead(self.wrapInboundOut(configured))
                context.value.fireChannelReadComplete()
            case .failure:
                connection.close(promise: nil)
            }
        }
    }
}
