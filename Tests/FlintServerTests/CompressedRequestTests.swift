import CompressNIO
import FlintEngine
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FlintServer

/// Request bodies sent compressed (`Content-Encoding: gzip` or `deflate`), over a real loopback
/// connection and piece by piece.
struct CompressedRequestTests {
    static let base = "/v1/projects/compressed/databases/(default)/documents"

    static func body(_ n: Int) -> ByteBuffer { ByteBuffer(string: #"{"fields": {"n": {"integerValue": "\#(n)"}}}"#) }

    static func compressed(_ plain: ByteBuffer, _ algorithm: CompressionAlgorithm) throws -> ByteBuffer {
        var plain = plain
        return try plain.compress(with: algorithm)
    }

    /// Writes document `d` with `bytes` sent under `coding`, and answers the status and what was
    /// stored in `n` (or the error's message).
    static func write(_ client: any TestClientProtocol, _ d: String, _ bytes: ByteBuffer, coding: String) async throws -> (HTTPResponse.Status, String) {
        let headers: HTTPFields = [.contentType: "application/json", .contentEncoding: coding]
        return try await client.execute(uri: base + "/c/" + d, method: .patch, headers: headers, body: bytes) { response in
            let json = try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
            if let error = json?["error"] as? [String: Any] { return (response.status, error["message"] as? String ?? "") }
            let n = ((json?["fields"] as? [String: Any])?["n"] as? [String: Any])?["integerValue"] as? String
            return (response.status, n ?? "")
        }
    }

    @Test func gzipAndDeflateBodiesAreInflated() async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        try await server.makeApplication().test(.live) { client in
            let gzip = try Self.compressed(Self.body(1), .gzip())
            // The name in any case, with spaces around it, or its x- form.
            for (n, coding) in ["gzip", "GZIP", " x-gzip "].enumerated() {
                let again = try Self.compressed(Self.body(10 + n), .gzip())
                #expect(try await Self.write(client, "g\(n)", again, coding: coding) == (.ok, "\(10 + n)"))
            }
            // deflate: zlib's wrapping or a raw stream.
            #expect(try await Self.write(client, "z", try Self.compressed(Self.body(2), .zlib()), coding: "deflate") == (.ok, "2"))
            #expect(try await Self.write(client, "r", try Self.compressed(Self.body(3), .deflate()), coding: "x-deflate") == (.ok, "3"))
            // Two gzip members make one body; bytes after the last member, or a member cut
            // short of its checksum, are read as far as they go (as on the reference).
            let plain = Self.body(4)
            var members = try Self.compressed(plain.getSlice(at: 0, length: 10)!, .gzip())
            var second = try Self.compressed(plain.getSlice(at: 10, length: plain.readableBytes - 10)!, .gzip())
            members.writeBuffer(&second)
            #expect(try await Self.write(client, "m", members, coding: "gzip") == (.ok, "4"))
            var trailing = gzip
            trailing.writeString("not gzip")
            #expect(try await Self.write(client, "t", trailing, coding: "gzip") == (.ok, "1"))
            #expect(try await Self.write(client, "cut", gzip.getSlice(at: 0, length: gzip.readableBytes - 8)!, coding: "gzip") == (.ok, "1"))
        }
    }

    @Test func otherCodingsAndFaultsAreRefusedOrLeftAlone() async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        try await server.makeApplication().test(.live) { client in
            // Codings the reference does not inflate leave the body as it came.
            for coding in ["br", "identity", "gzip, identity"] {
                #expect(try await Self.write(client, "plain", Self.body(5), coding: coding) == (.ok, "5"), "\(coding)")
            }
            #expect(try await Self.write(client, "bad", Self.body(6), coding: "gzip")
                == (.badRequest, "The request body could not be read (the body is not valid gzip data)."))
            #expect(try await Self.write(client, "bad", try Self.compressed(Self.body(6), .gzip()), coding: "deflate")
                == (.badRequest, "The request body could not be read (the body is not valid deflate data)."))
            // 64 MiB that compress to 64 KiB: refused at 10 MiB of inflated bytes.
            var huge = ByteBuffer(string: #"{"fields": {"s": {"stringValue": ""#)
            huge.writeRepeatingByte(UInt8(ascii: "0"), count: 64 << 20)
            let bomb = try Self.compressed(huge, .gzip())
            #expect(bomb.readableBytes < 1 << 20)
            #expect(try await Self.write(client, "bomb", bomb, coding: "gzip") == (.badRequest, "Request payload size exceeds the limit: 10485760 bytes."))
            #expect(try await Self.write(client, "after", Self.body(7), coding: "identity") == (.ok, "7"))
            // The admin routes read bodies the same way and say the same.
            for (method, path) in [(HTTPRequest.Method.put, ":securityRules"), (.post, ":evaluateRules"), (.post, ":export")] {
                let message = try await client.execute(uri: "/emulator/v1/projects/compressed" + path, method: method,
                                                       headers: [.contentEncoding: "gzip"], body: ByteBuffer(string: "{}")) { response in
                    #expect(response.status == .badRequest, "\(path)")
                    let json = try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                    return (json?["error"] as? [String: Any])?["message"] as? String
                }
                #expect(message == "The request body could not be read (the body is not valid gzip data).", "\(path)")
            }
        }
    }

    /// The inflater's state across pieces of input: one byte at a time (a deflate body's header
    /// split, a gzip member's magic split) gives the same bytes as one piece, and no piece handed
    /// on is larger than the bound (the whole body is twice that).
    @Test(arguments: ["gzip", "gzip-members", "zlib", "raw"])
    func bodiesArrivingByteByByteInflateWhole(_ form: String) async throws {
        var plain = ByteBuffer(string: #"{"fields": {"s": {"stringValue": ""#)
        for i in 0..<60_000 { plain.writeString(String(i % 97)) }
        plain.writeString(#""}}}"#)
        let compressed: ByteBuffer
        let coding: BodyCoding
        switch form {
        case "gzip-members":
            var members = try Self.compressed(plain.getSlice(at: 0, length: 1_000)!, .gzip())
            var rest = try Self.compressed(plain.getSlice(at: 1_000, length: plain.readableBytes - 1_000)!, .gzip())
            members.writeBuffer(&rest)
            (compressed, coding) = (members, .gzip)
        case "zlib": (compressed, coding) = (try Self.compressed(plain, .zlib()), .deflate)
        case "raw": (compressed, coding) = (try Self.compressed(plain, .deflate()), .deflate)
        default: (compressed, coding) = (try Self.compressed(plain, .gzip()), .gzip)
        }
        for pieceSize in [1, 7, compressed.readableBytes] {
            let (body, source) = RequestBody.makeStream()
            Task {
                var rest = compressed
                while rest.readableBytes > 0 {
                    await source.yield(rest.readSlice(length: Swift.min(pieceSize, rest.readableBytes))!)
                }
                source.finish()
            }
            var inflated = ByteBuffer()
            for try await var piece in InflatedBody(compressed: body, coding: coding) {
                #expect(piece.readableBytes <= InflatedBody.Iterator.pieceBytes)
                inflated.writeBuffer(&piece)
            }
            #expect(inflated == plain, "\(form) in pieces of \(pieceSize)")
        }
    }
}
