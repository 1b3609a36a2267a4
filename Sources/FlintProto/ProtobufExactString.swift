public import FlintModel
public import SwiftProtobuf

/// The key type of the maps that hold Firestore values (a document's fields, a map value's, an
/// aggregation's results): a string on the wire, kept as a `UTF8Key`.
///
/// With `String` keys, the library's dictionaries hold canonically equivalent names (`é` written
/// as one scalar, or as `e` and a combining accent) as one key, so a document with both would
/// lose one field as it is read, or be refused as a malformed map. Firestore keeps both.
/// `scripts/gen-protos.sh` puts this type into the generated code of those maps.
public struct ProtobufExactString: MapKeyType {
    public typealias BaseType = UTF8Key

    public static var proto3DefaultValue: UTF8Key { UTF8Key("") }

    public static func decodeSingular<D: Decoder>(value: inout UTF8Key?, from decoder: inout D) throws {
        var string: String?
        try decoder.decodeSingularStringField(value: &string)
        value = string.map { UTF8Key($0) }
    }

    public static func decodeRepeated<D: Decoder>(value: inout [UTF8Key], from decoder: inout D) throws {
        var strings: [String] = []
        try decoder.decodeRepeatedStringField(value: &strings)
        value += strings.map { UTF8Key($0) }
    }

    public static func visitSingular<V: Visitor>(value: UTF8Key, fieldNumber: Int, with visitor: inout V) throws {
        try visitor.visitSingularStringField(value: value.string, fieldNumber: fieldNumber)
    }

    public static func visitRepeated<V: Visitor>(value: [UTF8Key], fieldNumber: Int, with visitor: inout V) throws {
        try visitor.visitRepeatedStringField(value: value.map(\.string), fieldNumber: fieldNumber)
    }

    // Strings are never packed.
    public static func visitPacked<V: Visitor>(value: [UTF8Key], fieldNumber: Int, with visitor: inout V) throws {
        try visitRepeated(value: value, fieldNumber: fieldNumber, with: &visitor)
    }
}
