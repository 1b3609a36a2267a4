import GRPCCore

/// The gRPC transport with the clients' deadlines (`grpc-timeout`) taken out of each call's
/// metadata before grpc-swift reads them.
///
/// grpc-swift enforces a deadline with a `Task.sleep` raced against the call, and the Swift
/// runtime on Linux keeps that sleep's task until its timer fires, even when the call ended
/// long before: the server SDKs give every call a 60-second deadline, so each call held about
/// 1.7 KiB for a minute (`bench/clients.py` reports the memory gRPC writes add).
/// Flint answers in microseconds and the clients enforce their own deadlines, cancelling calls
/// they give up on, which ends them here too; so nothing is lost by not timing calls twice.
struct DeadlineFreeTransport<Base: ServerTransport>: WrappingServerTransport {
    typealias Bytes = Base.Bytes

    let base: Base

    func listen(
        streamHandler: @escaping @Sendable (RPCStream<Inbound, Outbound>, ServerContext) async -> Void
    ) async throws {
        try await base.listen { stream, context in
            let inbound = stream.inbound.map { part -> RPCRequestPart<Bytes> in
                guard case .metadata(var metadata) = part else { return part }
                metadata.removeAllValues(forKey: "grpc-timeout")
                return .metadata(metadata)
            }
            let withoutDeadline = RPCStream(descriptor: stream.descriptor, inbound: RPCAsyncSequence(wrapping: inbound), outbound: stream.outbound)
            await streamHandler(withoutDeadline, context)
        }
    }
}
