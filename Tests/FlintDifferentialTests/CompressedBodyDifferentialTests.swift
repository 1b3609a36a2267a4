import CompressNIO
import Foundation
import NIOCore
import Testing

/// Request bodies sent with a `Content-Encoding`, on both servers: which codings are inflated
/// (the name in any case, with spaces, its x- form; deflate wrapped by zlib or raw), which are
/// left alone, and how concatenated, trailing and cut-short gzip bytes are read. Bodies the
/// reference cannot inflate are left out: it never answers them.
struct CompressedBodyDifferentialTests {
    static func body(_ n: Int) -> ByteBuffer { ByteBuffer(string: #"{"fields": {"n": {"integerValue": "\#(n)"}}}"#) }

    static func compressed(_ plain: ByteBuffer, _ algorithm: CompressionAlgorithm) throws -> ByteBuffer {
        var plain = plain
        return try plain.compress(with: algorithm)
    }

    /// Coding, the bytes sent.
    static func cases() throws -> [(String, ByteBuffer)] {
        let gzip = try compressed(body(1), .gzip())
        let plain = body(2)
        var members = try compressed(plain.getSlice(at: 0, length: 12)!, .gzip())
        var second = try compressed(plain.getSlice(at: 12, length: plain.readableBytes - 12)!, .gzip())
        members.writeBuffer(&second)
        var trailing = gzip
        trailing.writeString("garbage")
        return [
            ("gzip", gzip), ("GZIP", gzip), (" x-gzip ", gzip), ("deflate", try compressed(body(3), .zlib())),
            ("deflate", try compressed(body(4), .deflate())), ("X-Deflate", try compressed(body(5), .zlib())),
            ("gzip", members), ("gzip", trailing), ("gzip", gzip.getSlice(at: 0, length: gzip.readableBytes - 8)!),
            ("br", gzip), ("gzip;q=1", gzip), ("identity, gzip", gzip), ("identity", gzip), ("br", body(6)), ("compress", body(7)),
        ]
    }

    @Test func codingsAreReadAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "compressed bodies") else { return }
        defer { stop() }
        let documents = "/v1/projects/flint-compressed/databases/(default)/documents"
        var inflated = 0
        for (n, (coding, bytes)) in try Self.cases().enumerated() {
            var answers: [[String]] = []
            for base in [reference.base, flint] {
                let document = "\(base)\(documents)/c/d\(n)"
                let headers = ["Content-Type": "application/json", "Content-Encoding": coding]
                let answer = try await RawHTTP.exchange("PATCH", document, headers: headers, bytes: Data(buffer: bytes))
                let stored = try await RawHTTP.send("GET", document, nil)
                let value = (((stored.json as? [String: Any])?["fields"] as? [String: Any])?["n"] as? [String: Any])?["integerValue"] as? String
                answers.append(["\(answer.status)", value ?? "missing"])
            }
            #expect(answers[1] == answers[0], "\(coding) case \(n)")
            if answers[0][0] == "200" { inflated += 1 }
        }
        #expect(inflated == 11)
    }

    /// The admin API reads compressed bodies too: rules loaded gzip-compressed are in force.
    @Test func rulesMayBeLoadedCompressed() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "compressed rules") else { return }
        defer { stop() }
        let source = "rules_version = '2'; service cloud.firestore { match /databases/{d}/documents { match /{x=**} { allow read: if false; } } }"
        let json = try JSONSerialization.data(withJSONObject: ["rules": ["files": [["content": source]]]])
        let bytes = try Self.compressed(ByteBuffer(bytes: json), .gzip())
        for base in [reference.base, flint] {
            let headers = ["Content-Type": "application/json", "Content-Encoding": "gzip"]
            let load = try await RawHTTP.exchange("PUT", base + "/emulator/v1/projects/flint-compressed-rules:securityRules", headers: headers, bytes: Data(buffer: bytes))
            #expect(load.status == 200, "\(base)")
            let read = try await RawHTTP.send("GET", base + "/v1/projects/flint-compressed-rules/databases/(default)/documents/c/d", nil, authorization: nil)
            #expect(read.status == 403, "\(base)")
        }
    }
}
