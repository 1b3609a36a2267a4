import FlintModel
import Foundation
import Testing

struct JSONStringTests {
    @Test func escapesWhatJSONRequiresAndNothingElse() {
        #expect(JSONString.quoted("plain") == #""plain""#)
        #expect(JSONString.quoted(#"say "hi" \ now"#) == #""say \"hi\" \\ now""#)
        #expect(JSONString.quoted("a\nb\rc\td") == #""a\nb\rc\td""#)
        #expect(JSONString.quoted("\u{0}\u{1f}\u{8}") == #""\u0000\u001f\u0008""#)
        #expect(JSONString.quoted("a/b é 🔥") == "\"a/b é 🔥\"")
        #expect(JSONString.quoted("") == #""""#)
    }

    /// Whatever goes in comes back out of a JSON parser unchanged.
    @Test func roundTripsThroughAParser() throws {
        let samples = ["", "x", "\"\\/", String((0..<0x80).map { Character(Unicode.Scalar($0)!) }), "ünï 中文 \u{1F600}"]
        for s in samples {
            let parsed = try JSONSerialization.jsonObject(with: Data(("[" + JSONString.quoted(s) + "]").utf8)) as? [String]
            #expect(parsed == [s])
        }
    }
}
