import CompressNIO
import Hummingbird
import NIOCore

/// Inflates request bodies sent with `Content-Encoding: gzip` (or `x-gzip`) and `deflate` (or
/// `x-deflate`, zlib-wrapped or raw), as the reference emulator does on every route. The name
/// is read without case or surrounding spaces; any other value, a list included, leaves the body
/// as it came, as there. The body is inflated as it is read, so the 10 MiB limit applies to the
/// inflated bytes and a small body that inflates to gigabytes is refused without holding them.
struct CompressedRequests<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let value = request.headers[.contentEncoding], let coding = BodyCoding(value) else {
            return try await next(request, context)
        }
        var request = request
        request.body = RequestBody(asyncSequence: InflatedBody(compressed: request.body, coding: coding))
        return try await next(request, context)
    }
}

/// The codings a request body may arrive in.
enum BodyCoding: Sendable {
    case gzip, deflate

    init?(_ header: String) {
        switch header.trimmingCharacters(in: .whitespaces).lowercased() {
        case "gzip", "x-gzip": self = .gzip
        case "deflate", "x-deflate": self = .deflate
        default: return nil
        }
    }
}

/// A compressed body that could not be inflated.
struct CorruptBodyError: Error, CustomStringConvertible {
    let coding: BodyCoding
    var description: String { "the body is not valid \(coding == .gzip ? "gzip" : "deflate") data" }
}

/// A compressed body's bytes, inflated piece by piece as they are asked for.
struct InflatedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let compressed: RequestBody
    let coding: BodyCoding

    func makeAsyncIterator() -> Iterator {
        Iterator(compressed: compressed.makeAsyncIterator(), coding: coding)
    }

    struct Iterator: AsyncIteratorProtocol {
        /// How much one step hands on at most.
        static let pieceBytes = 64 * 1024

        var compressed: RequestBody.AsyncIterator
        let coding: BodyCoding
        /// Made when the first bytes come: a deflate body's first bytes tell zlib's wrapping
        /// from a raw stream.
        var inflater: ZlibDecompressor?
        var pending = ByteBuffer()
        /// Past the end of a gzip member whose next bytes start no other, or of a deflate stream:
        /// what follows is ignored, as the reference ignores it.
        var ended = false
        var inputDone = false

        mutating func next() async throws -> ByteBuffer? {
            while true {
                if !ended, pending.readableBytes > 0, let piece = try inflatePending() { return piece }
                if inputDone { return nil }
                guard let more = try await compressed.next() else {
                    // A stream cut short ends where its bytes do, as on the reference.
                    inputDone = true
                    continue
                }
                if ended { continue }
                if pending.readableBytes == 0 {
                    pending = more
                } else {
                    var more = more
                    pending.writeBuffer(&more)
                }
            }
        }

        /// Inflates what is pending into one piece, or nil when more input is needed first.
        private mutating func inflatePending() throws -> ByteBuffer? {
            var piece = ByteBuffer()
            piece.reserveCapacity(Self.pieceBytes)
            while pending.readableBytes > 0, piece.writableBytes > 0 {
                if inflater == nil {
                    // zlib needs the two header bytes to tell its wrapping from a raw stream.
                    if coding == .deflate, pending.readableBytes < 2, !inputDone { break }
                    inflater = try makeInflater()
                }
                let (unread, written) = (pending.readableBytes, piece.writerIndex)
                do {
                    try inflater!.inflate(from: &pending, to: &piece)
                } catch let error as CompressNIOError where error == .bufferOverflow || error == .inputBufferOverflow {
                    // The piece is full, or the input ran out: both end this loop. Anything
                    // else that moved nothing would loop for ever.
                    if pending.readableBytes == unread, piece.writerIndex == written, piece.writableBytes > 0 {
                        throw CorruptBodyError(coding: coding)
                    }
                    continue
                } catch {
                    throw CorruptBodyError(coding: coding)
                }
                // Returning with input left over means the stream ended. Another gzip member may
                // follow; anything else after the end is ignored, as on the reference.
                guard pending.readableBytes > 0 else { continue }
                if coding == .gzip, pending.readableBytes < 2, !inputDone { break }
                if coding == .gzip, pending.getBytes(at: pending.readerIndex, length: 2) == [0x1f, 0x8b] {
                    do { try inflater!.reset() } catch { throw CorruptBodyError(coding: coding) }
                } else {
                    ended = true
                    pending.clear()
                }
            }
            return piece.readableBytes > 0 ? piece : nil
        }

        private func makeInflater() throws -> ZlibDecompressor {
            do {
                switch coding {
                case .gzip: return try ZlibDecompressor(algorithm: .gzip)
                case .deflate:
                    // A zlib header: compression method 8, and the two bytes a multiple of 31.
                    let header = pending.getBytes(at: pending.readerIndex, length: Swift.min(2, pending.readableBytes)) ?? []
                    let wrapped = header.count == 2 && header[0] & 0x0f == 8 && (UInt16(header[0]) << 8 | UInt16(header[1])) % 31 == 0
                    return try ZlibDecompressor(algorithm: wrapped ? .zlib : .deflate)
                }
            } catch {
                throw CorruptBodyError(coding: coding)
            }
        }
    }
}
