import FlintModel
import SwiftProtobuf

/// A request body that is not Firestore's JSON, said in a sentence: the library's error cases
/// are names, not messages. Unknown fields read as Google's APIs say them.
enum JSONPayloadError {
    static func refusal(_ error: any Error) -> FlintError {
        .invalidArgument("Invalid JSON payload received. " + describe(error))
    }

    static func describe(_ error: any Error) -> String {
        guard let error = error as? JSONDecodingError else { return "\(error)" }
        switch error {
        case .unknownField(let name): return "Unknown name \"\(name)\": Cannot find field."
        case .truncated: return "The JSON ends too early."
        case .trailingGarbage: return "There is more after the JSON value."
        // The library also says this of a number too large for a double, such as 1e400.
        case .invalidUTF8: return "A number is too large for a double, or a name is not UTF-8."
        case .missingFieldNames, .unquotedMapKey: return "An object key is not a quoted string."
        case .malformedNumber: return "A number is malformed, or a value that must be a number is not."
        case .numberRange: return "A number is out of range for its field."
        case .leadingZero: return "A number has a leading zero."
        case .malformedBool: return "A value that must be true or false is not."
        case .malformedString: return "A string is malformed, or a value that must be a string is not."
        case .malformedMap: return "A map is malformed."
        case .malformedTimestamp: return "A timestamp is not RFC 3339, such as \"2026-01-02T03:04:05.678Z\"."
        case .malformedDuration: return "A duration is malformed, such as \"1.5s\"."
        case .malformedFieldMask: return "A field mask is malformed."
        case .unrecognizedEnumValue: return "An enum value is neither one of its names nor one of its numbers."
        case .illegalNull: return "null is not allowed here."
        case .conflictingOneOf: return "Two fields of a oneof are set, such as two kinds of value in one value."
        case .schemaMismatch: return "A value does not have the type its field needs."
        case .messageDepthLimit: return "It is nested too deeply."
        case .failure: return "A value does not fit its field (bytes must be base64)."
        }
    }
}
