import Testing

@testable import FlintWebChannel

/// Forward-channel bodies as the web SDK's channel writes them.
struct ForwardBatchTests {
    @Test func rawJSONMessagesAreNumberedFromTheOffset() throws {
        let body = "count=2&ofs=7&req0___data__=%7B%22database%22%3A%22d%22%7D&req1___data__=%7B%22removeTarget%22%3A2%7D"
        let batch = try ForwardBatch.parse(body)
        #expect(batch.firstMapID == 7)
        #expect(batch.messages == [#"{"database":"d"}"#, #"{"removeTarget":2}"#])
        #expect(batch.headers.isEmpty)
    }

    @Test func headersInTheBodyAreReadAsAHeaderBlock() throws {
        // What `encodeInitMessageHeaders` puts before the messages: "Name:value\r\n" lines, encoded.
        let block = "Authorization:Bearer owner\r\nX-Goog-Api-Client:gl-js/ fire/12.0.0\r\ncontent-type:text/plain\r\n"
        let encoded = block.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let batch = try ForwardBatch.parse("headers=\(encoded)&count=1&ofs=0&req0___data__=%7B%7D")
        #expect(batch.headers == ["authorization": "Bearer owner", "x-goog-api-client": "gl-js/ fire/12.0.0", "content-type": "text/plain"])
        #expect(batch.messages == ["{}"])
    }

    @Test func aBodyWithoutMessagesIsEmpty() throws {
        #expect(try ForwardBatch.parse("") == ForwardBatch())
        #expect(try ForwardBatch.parse("count=0") == ForwardBatch())
        // Spaces may come as `+`, as form encoders write them.
        #expect(try ForwardBatch.parse("count=1&ofs=0&req0___data__=%22a+b%22").messages == [#""a b""#])
    }

    @Test func malformedBodiesAreRefusedWithTheReason() {
        let cases: [(String, String)] = [
            ("count=2&ofs=0&req0___data__=%7B%7D", "Message 1 of 2 is missing (req1___data__)."),
            ("count=1&req0___data__=%7B%7D", "A forward-channel request with messages names the first one's id (ofs=N)."),
            ("count=1&ofs=0&req0_type=listen", "Message 0 is a field map; Flint takes messages as raw JSON (reqN___data__)."),
            ("count=x", "count=x is not a message count from 0 to 1000."),
            ("count=1001&ofs=0", "count=1001 is not a message count from 0 to 1000."),
            ("count=1&ofs=0&req0___data__=%zz", "The form body has a bad percent-encoding near %zz."),
            ("ofs=0&req0___data__=%7B%7D", "A forward-channel request names its message count (count=N)."),
        ]
        for (body, reason) in cases {
            #expect(throws: WebChannelError.malformed(reason), "\(body)") { try ForwardBatch.parse(body) }
        }
    }

    @Test func headerBlocksTakeEveryLineEnding() throws {
        #expect(try ForwardBatch.headerBlock("A: 1\nb:two words \r\n\r\n") == ["a": "1", "b": "two words"])
        #expect(throws: WebChannelError.malformed("A header line has no name: :x")) { try ForwardBatch.headerBlock(":x\r\n") }
        #expect(throws: WebChannelError.malformed("A header line has no name: nocolon")) { try ForwardBatch.headerBlock("nocolon") }
    }
}
