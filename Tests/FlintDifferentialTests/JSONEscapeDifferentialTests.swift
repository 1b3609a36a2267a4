import Foundation
import Testing

/// Strings written with JSON's escapes, as encoders that keep to ASCII write them (Python's
/// `json` by default): the reference and Flint must store the same characters, in values, map
/// keys and document names.
struct JSONEscapeDifferentialTests {
    /// One character from each plane that holds any, the ends of the surrogate range's reach,
    /// and JSON's short escapes.
    static let texts = [
        "\u{10000}", "\u{1F600}", "\u{20000}", "\u{2A6D6}", "\u{30000}", "\u{E0001}", "\u{F0000}", "\u{FFFFD}",
        "\u{100000}", "\u{10FFFF}", "a\"b\\c/d\u{8}\u{C}\n\r\t\u{1}é\u{FFFD}",
    ]

    /// Every character outside printable ASCII as `\uXXXX`, pairs for those past U+FFFF.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.value >= 0x20, scalar.value < 0x7F, scalar != "\"", scalar != "\\" {
                out.unicodeScalars.append(scalar)
            } else {
                out += String(scalar).utf16.map { String(format: "\\u%04x", $0) }.joined()
            }
        }
        return out
    }

    /// What one server stored for each text: the value, the map key and the document id.
    static func stored(_ base: String) async throws -> [String] {
        let documents = "projects/flint-json-escapes/databases/(default)/documents"
        var found: [String] = []
        for (n, text) in texts.enumerated() {
            let e = escaped(text)
            let body = #"{"writes": [{"update": {"name": "\#(documents)/c/\#(n)\#(e)", "fields": {"v": {"stringValue": "\#(e)"}, "m": {"mapValue": {"fields": {"k\#(e)": {"nullValue": null}}}}}}}]}"#
            let written = try await RawHTTP.send("POST", base + "/v1/\(documents):commit", body)
            let listed = try await RawHTTP.send("GET", base + "/v1/\(documents)/c?pageSize=100", nil)
            let document = ((listed.json as? [String: Any])?["documents"] as? [[String: Any]])?.first {
                ($0["name"] as? String)?.hasPrefix("\(documents)/c/\(n)") == true
            }
            let fields = document?["fields"] as? [String: Any]
            let value = (fields?["v"] as? [String: Any])?["stringValue"] as? String ?? "none"
            let keys = ((fields?["m"] as? [String: Any])?["mapValue"] as? [String: Any])?["fields"] as? [String: Any] ?? [:]
            let name = (document?["name"] as? String ?? "none").dropFirst("\(documents)/c/".count)
            let scalars = { (s: Substring) in s.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ") }
            found.append("\(n) \(written.status): value \(scalars(Substring(value))), keys \(keys.keys.map { scalars(Substring($0)) }), id \(scalars(name))")
        }
        return found
    }

    /// A body that starts with a byte order mark, as Windows tools write UTF-8.
    @Test func aByteOrderMarkIsReadPastAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "byte order mark") else { return }
        defer { stop() }
        let path = "/v1/projects/flint-json-escapes/databases/(default)/documents/c/marked"
        let body = "\u{FEFF}" + #"{"fields": {"n": {"integerValue": "5"}}}"#
        let expected = try await RawHTTP.send("PATCH", reference.base + path, body)
        let found = try await RawHTTP.send("PATCH", flint + path, body)
        #expect(expected.status == 200)
        #expect(found.status == expected.status)
        let n = { (json: Any?) in ((json as? [String: Any])?["fields"] as? [String: Any])?["n"] as? [String: String] }
        #expect(n(found.json) == ["integerValue": "5"] && n(expected.json) == ["integerValue": "5"])
    }

    @Test func escapedCharactersAreStoredAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "JSON escape") else { return }
        defer { stop() }
        let expected = try await Self.stored(reference.base)
        #expect(expected[2] == "2 200: value 20000, keys [\"6b 20000\"], id 32 20000")
        #expect(try await Self.stored(flint) == expected)
    }
}
