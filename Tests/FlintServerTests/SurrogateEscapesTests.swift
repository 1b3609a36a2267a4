import Foundation
import Testing

@testable import FlintServer

struct SurrogateEscapesTests {
    @Test(arguments: [
        (#""\ud840\udc00""#, "\"\u{20000}\""),
        (#""\uD83D\uDE00 and \udbff\udfff""#, "\"\u{1F600} and \u{10FFFF}\""),
        (#"{"k\ud869\uded6": "\ud800\udc00"}"#, "{\"k\u{2A6D6}\": \"\u{10000}\"}"),
    ])
    func pairsBecomeTheirUTF8(json: String, expected: String) {
        #expect(SurrogateEscapes.composed(json) == expected)
        #expect(SurrogateEscapes.composed(Data(json.utf8)) == Data(expected.utf8))
    }

    /// What is not a pair stays as written, for the JSON reader to take or refuse.
    @Test(arguments: [
        #""\\ud840\udc00""#, #""\ud840""#, #""\udc00\ud840""#, #""\ud840\u0041""#, #""\ud840\udc0""#, #""\u00e9\n\"""#,
        #""\ud840\\udc00""#, "\"plain é\"", #"\"#, "",
    ])
    func anythingElseIsLeftAlone(json: String) {
        #expect(SurrogateEscapes.composed(json) == json)
        #expect(SurrogateEscapes.composed(Data(json.utf8)) == Data(json.utf8))
    }
}
