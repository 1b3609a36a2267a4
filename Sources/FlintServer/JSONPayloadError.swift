import Foundation
import FlintModel
import SwiftProtobuf

/// A request body that is not Firestore's JSON, said in a sentence: the library's error cases
/// are names, not messages. Unknown fields read as Google's APIs say them.
enum JSONPayloadError {
    /// The refusal of `body` as an `M`, saying where the fault lies when it can be found, in
    /// production's form: `Unknown name "x" at 'writes[0]': Cannot find field.` A body that
    /// stands for one field of the request (a create's or patch's document) is named `root`.
    static func refusal<M: SwiftProtobuf.Message>(_ error: any Error, body: Data, as type: M.Type, root: String? = nil) -> FlintError {
        .invalidArgument("Invalid JSON payload received. " + describe(error, body: body, as: type, root: root))
    }

    /// The sentence `refusal` gives after its first words.
    static func describe<M: SwiftProtobuf.Message>(_ error: any Error, body: Data, as _: M.Type, root: String? = nil) -> String {
        let finding = JSONFaultLocator.locate(in: body) { data in
            do { _ = try M(jsonUTF8Data: data, options: RESTAPI.decoding); return nil } catch { return describe(error) }
        }
        let decoding = error as? JSONDecodingError
        // The library gives the same case for a missing ':' or ',' as for a value of the wrong form.
        if finding == .malformed, case .failure = decoding {
            return "The JSON is malformed: a ':' or ',' is missing, or a character is out of place."
        }
        var path: [JSONFaultLocator.Step] = []
        if case .place(let found) = finding { path = found }
        switch decoding {
        case .unknownField(let name):
            if path.last == .member(name) { path.removeLast() }
            let place = self.place(path, root: root).map { " at '\($0)'" } ?? ""
            return "Unknown name \"\(name)\"\(place): Cannot find field."
        case .conflictingOneOf:
            // Leaving out either of the two fields mends it, so the place is the value holding both.
            if case .member = path.last { path.removeLast() }
        default: break
        }
        let place = self.place(path, root: root).map { "Invalid value at '\($0)'. " } ?? ""
        return place + describe(error)
    }

    private static func place(_ path: [JSONFaultLocator.Step], root: String?) -> String? {
        let inside = JSONFaultLocator.describe(path)
        guard let root else { return inside.isEmpty ? nil : inside }
        return inside.isEmpty ? root : root + (inside.hasPrefix("[") ? "" : ".") + inside
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
        // The library's word when a value's first character is not what its field needs.
        case .failure: return "A value has the wrong form for its field: an object, a list or a string where another is needed, or bytes not in base64."
        }
    }
}
