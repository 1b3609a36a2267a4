public import GRPCCore
public import SwiftProtobuf

/// Encodes gRPC messages with every map's entries in key order.
///
/// SwiftProtobuf keeps protobuf maps in Swift dictionaries, whose order is seeded per process, so
/// a document's fields would reach clients in a different order on every run of Flint. Clients
/// that keep the wire order (the JavaScript SDKs build plain objects in it) would then print the
/// same document differently from run to run. The REST side writes its JSON in key order too.
/// `scripts/gen-protos.sh` puts this serializer into the generated service code.
public struct OrderedProtobufSerializer<Message: SwiftProtobuf.Message>: MessageSerializer {
    public init() {}

    public func serialize<Bytes: GRPCContiguousBytes>(_ message: Message) throws -> Bytes {
        var options = BinaryEncodingOptions()
        options.useDeterministicOrdering = true
        do {
            let bytes: [UInt8] = try message.serializedBytes(options: options)
            return Bytes(bytes)
        } catch {
            throw RPCError(code: .internalError, message: "Can't serialize message of type \(Message.self).", cause: error)
        }
    }
}
