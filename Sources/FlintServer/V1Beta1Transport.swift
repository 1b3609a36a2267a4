import FlintProto
import GRPCCore

/// `google.firestore.v1beta1.Firestore`, served through v1.
enum FirestoreV1Beta1 {
    static let service = "google.firestore.v1beta1.Firestore"

    /// Method name → v1's descriptor, for the methods v1beta1 has.
    static let v1Methods: [String: MethodDescriptor] = {
        let methods = Google_Firestore_V1_Firestore.Method.descriptors.filter {
            $0 != Google_Firestore_V1_Firestore.Method.RunAggregationQuery.descriptor
        }
        return Dictionary(uniqueKeysWithValues: methods.map { ($0.method, $0) })
    }()
}

/// The gRPC transport with calls to `google.firestore.v1beta1.Firestore`, the API's earlier
/// version, handed to the same method of v1. The two versions' messages share names and field
/// numbers, so v1's handlers read and answer them unchanged. The call's context keeps the name
/// the client used, so the request log shows it. v1beta1 has no RunAggregationQuery: a call
/// to it stays unrouted and gets UNIMPLEMENTED, as on Google's emulator.
struct V1Beta1Transport<Base: ServerTransport>: ServerTransport {
    typealias Bytes = Base.Bytes

    let base: Base

    func configure(context: GRPCServerContext) {
        base.configure(context: context)
    }

    func listen(
        streamHandler: @escaping @Sendable (RPCStream<Inbound, Outbound>, ServerContext) async -> Void
    ) async throws {
        try await base.listen { stream, context in
            guard stream.descriptor.service.fullyQualifiedService == FirestoreV1Beta1.service,
                let v1 = FirestoreV1Beta1.v1Methods[stream.descriptor.method]
            else {
                return await streamHandler(stream, context)
            }
            await streamHandler(RPCStream(descriptor: v1, inbound: stream.inbound, outbound: stream.outbound), context)
        }
    }

    func beginGracefulShutdown() {
        base.beginGracefulShutdown()
    }
}
