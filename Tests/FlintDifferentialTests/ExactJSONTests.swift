import Foundation
import Testing

/// The differential suites compare doubles as read from both servers' answers, so the reading
/// must tell neighbouring doubles apart.
struct ExactJSONTests {
    @Test func doubleValuesAreReadExactly() throws {
        // Foundation reads the first as 1.180775070913641, its neighbour below.
        let texts = ["1.1807750709136413", "1.180775070913641", "2.220446049250313E-16", "-5e-324", "1.7976931348623157e308", "3"]
        let body = "[" + texts.map { #"{"doubleValue": \#($0)}"# }.joined(separator: ", ") + #", {"doubleValue": "NaN"}, {"integerValue": "7", "n": 1.5}]"#
        let read = try #require(ExactJSON.object(from: Data(body.utf8)) as? [[String: Any]])
        let doubles = read.prefix(texts.count).map { ($0["doubleValue"] as? NSNumber)?.doubleValue }
        #expect(doubles == texts.map { Double($0) })
        #expect(doubles[0] != doubles[1])
        #expect(read[texts.count]["doubleValue"] as? String == "NaN")
        #expect(read[texts.count + 1]["integerValue"] as? String == "7")
        #expect((read[texts.count + 1]["n"] as? NSNumber)?.doubleValue == 1.5)
    }
}
