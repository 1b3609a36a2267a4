import FlintProto
import GRPCCore

/// `google.firestore.v1beta1.Firestore`, the API's earlier version, served through v1: the two
/// versions' messages share names and field numbers, so v1's handlers read and answer them
/// unchanged. v1beta1 has every v1 method but RunAggregationQuery.
enum FirestoreV1Beta1 {
    static let service = "google.firestore.v1beta1.Firestore"

    /// The v1 method v1beta1 lacks; the reference declares it in v1beta1 but does not implement it.
    static let lacking = Google_Firestore_V1_Firestore.Method.RunAggregationQuery.descriptor.method

    /// Method name → v1's descriptor, for the methods v1beta1 has.
    static let v1Methods: [String: MethodDescriptor] = {
        let methods = Google_Firestore_V1_Firestore.Method.descriptors.filter { $0.method != lacking }
        return Dictionary(uniqueKeysWithValues: methods.map { ($0.method, $0) })
    }()

    /// The reference's words for a call to `lacking`, over gRPC and REST alike.
    static var lackingMessage: String { "Method \(service)/\(lacking) is unimplemented" }
}

/// The gRPC transport with each call's method decided as Google's emulator decides it, before
/// grpc-swift's router sees the call:
/// - a call to a v1beta1 method goes to the v1 method of the same name; its context keeps the
///   name the client used, so the request log shows it;
/// - a call to a method the server does not serve is answered UNIMPLEMENTED in the reference's
///   words, which name the method (`Method not found: x.Y/Z`), where grpc-swift's do not.
struct CallRoutingTransport<Base: ServerTransport>: WrappingServerTransport {
    typealias Bytes = Base.Bytes

    let base: Base
    /// Every method the server's router has a handler for.
    let served: Set<MethodDescriptor>

    func listen(
        streamHandler: @escaping @Sendable (RPCStream<Inbound, Outbound>, ServerContext) async -> Void
    ) async throws {
        try await base.listen { stream, context in
            var routed = stream
            if stream.descriptor.service.fullyQualifiedService == FirestoreV1Beta1.service,
                let v1 = FirestoreV1Beta1.v1Methods[stream.descriptor.method]
            {
                routed = RPCStream(descriptor: v1, inbound: stream.inbound, outbound: stream.outbound)
            }
            guard served.contains(routed.descriptor) else {
                return await Self.refuse(stream)
            }
            await streamHandler(routed, context)
        }
    }

    /// The method v1beta1 lacks is told apart from a method the reference has never heard of.
    static func refuse(_ stream: RPCStream<Inbound, Outbound>) async {
        let lacking = stream.descriptor.service.fullyQualifiedService == FirestoreV1Beta1.service
            && stream.descriptor.method == FirestoreV1Beta1.lacking
        let message = lacking ? FirestoreV1Beta1.lackingMessage : "Method not found: \(stream.descriptor.fullyQualifiedMethod)"
        // A stream that cannot take the status is already gone.
        try? await stream.outbound.write(.status(Status(code: .unimplemented, message: message), [:]))
        await stream.outbound.finish()
    }
}
