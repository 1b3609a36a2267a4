/// A vector travels as a map, `{__type__: "__vector__", value: [doubles]}`, in every format
/// Flint reads and writes (REST and gRPC values, fixtures, exports).
extension Value {
    /// The map that stands for a vector of `components`.
    public static func vectorShape(_ components: [Double]) -> MapValue {
        ["__type__": "__vector__", "value": .array(components.map { .double($0) })]
    }

    /// The vector a map in vector shape stands for, nil for any other map; a malformed one is
    /// refused with the reference emulator's messages, in its order.
    public static func vector(shapedAs map: MapValue) throws(FlintError) -> Value? {
        guard case .string("__vector__")? = map["__type__"] else { return nil }
        guard let value = map["value"] else { throw .invalidArgument("Vector map is missing key 'value'.") }
        guard case .array(let items) = value else { throw .invalidArgument("Vector Value type must be an array.") }
        guard map.count == 2 else { throw .invalidArgument("Vector Value map has extraneous entries.") }
        try Limits.checkDimensions(items.count)
        var components: [Double] = []
        components.reserveCapacity(items.count)
        for item in items {
            guard case .double(let d) = item else { throw .invalidArgument("Vector must only contain values of type 'double'") }
            components.append(d)
        }
        return .vector(components)
    }
}
