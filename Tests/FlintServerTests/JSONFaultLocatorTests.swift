import Foundation
import Testing

@testable import FlintServer

/// The search for a refusal's place, with a stand-in decoder that refuses the first `"BADn"` in
/// document order by its name, as the JSON library stops at its first fault.
struct JSONFaultLocatorTests {
    static func firstFault(_ data: Data) -> String? {
        let text = String(decoding: data, as: UTF8.self)
        guard let range = text.range(of: #""BAD[0-9]+""#, options: .regularExpression) else { return nil }
        return String(text[range])
    }

    static func locate(_ body: String, decodes: inout Int) -> JSONFaultLocator.Finding? {
        var count = 0
        let found = JSONFaultLocator.locate(in: Data(body.utf8)) { data in
            count += 1
            return firstFault(data)
        }
        decodes = count
        return found
    }

    static func place(_ body: String) -> String? {
        var decodes = 0
        guard case .place(let path) = locate(body, decodes: &decodes) else { return nil }
        return JSONFaultLocator.describe(path)
    }

    @Test func theFirstFaultIsFoundThroughObjectsAndArrays() {
        #expect(Self.place(#"{"a": 1, "b": {"c": [1, 2, {"d": "BAD1"}]}}"#) == "b.c[2].d")
        #expect(Self.place(#"{"a": "BAD1"}"#) == "a")
        // The first in document order, not the first found by halving.
        #expect(Self.place(#"{"x": [0, 0, 0, "BAD2", 0, "BAD1", 0, 0]}"#) == "x[3]")
        // Names that are not plain, and escapes inside strings and names, are stepped over.
        #expect(Self.place(#"{"a \"b": {"ś": [ "x\\", "BAD1" ]}}"#) == #"["a \"b"].ś[1]"#)
        // Another fault in the same words stands in for the first: a place holding one is named.
        #expect(Self.place(#"{"a": {"p": "BAD1", "q": "BAD1"}}"#) == "a")
        // A fault that is the whole body has no place below it.
        #expect(Self.place(#""BAD1""#) == "")
    }

    @Test func theSearchIsBounded() {
        let members = (0..<50_000).map { "\"f\($0)\": 0" }.joined(separator: ",")
        var decodes = 0
        // Halving finds one member of thousands in a few decodes.
        let small = "{\"a\": {" + (0..<3_000).map { "\"f\($0)\": 0" }.joined(separator: ",") + ", \"z\": \"BAD1\"}}"
        #expect(Self.locate(small, decodes: &decodes) == .place([.member("a"), .member("z")]))
        #expect(decodes <= 1 + 2 * 14)
        // Past the largest body searched, nothing is decoded again.
        #expect(Self.locate("{\"a\": {" + members + ", \"z\": \"BAD1\"}}", decodes: &decodes) == nil)
        #expect(decodes == 0)
        // Deeper than the library reads: left unsearched, not called malformed.
        let deep = String(repeating: "[", count: 500) + "\"BAD1\"" + String(repeating: "]", count: 500)
        #expect(Self.locate(deep, decodes: &decodes) == nil)
        // A body that is not refused is not searched.
        #expect(Self.locate(#"{"a": 1}"#, decodes: &decodes) == nil)
        #expect(decodes == 1)
    }

    @Test func bodiesThatAreNotJSONAreMalformed() {
        var decodes = 0
        for body in [#"{"a" "BAD1"}"#, #"{"a": "BAD1",}"#, #"["BAD1" "x"]"#, #"{"a": "BAD1"} x"#, #"{"a": "BAD1", "b": [}"#] {
            #expect(Self.locate(body, decodes: &decodes) == .malformed, "\(body)")
        }
    }
}
