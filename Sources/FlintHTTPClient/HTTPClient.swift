import FlintModel
import NIOCore
import NIOHTTP1
import NIOPosix

/// One HTTP/1.1 exchange with a running emulator, for the CLI's `export` and the rules tests'
/// remote mode. Built on NIO rather than URLSession so the `flint` binary does not load
/// FoundationNetworking and the TLS and network libraries behind it, which would cost every
/// `flint start` about 6 MiB of resident memory.
public enum HTTPClient {
    /// The client's own event loop. In a process that also serves (tests, an embedded server),
    /// the shared loops can be held by a long request, and a connect waiting behind one timed out.
    private static let eventLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    public struct Response: Sendable {
        public let status: Int
        public let body: [UInt8]
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends `method path` to `address` ("host:port", "[v6]:port", or either after "http://")
    /// and collects the whole answer. The connection is closed afterwards. A server that has
    /// not answered within `timeout` gets a Failure instead of a caller waiting forever.
    public static func send(
        _ method: String, _ path: String, to address: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        timeout: Duration = .seconds(300)
    ) async throws -> Response {
        try await withThrowingTaskGroup(of: Response.self) { group in
            group.addTask { try await exchange(method, path, to: address, headers: headers, body: body) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw Failure(description: "no answer from \(address) within \(timeout)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    private static func exchange(
        _ method: String, _ path: String, to address: String, headers: [(String, String)], body: [UInt8]?
    ) async throws -> Response {
        let target = try parse(address)
        let (host, port) = (target.host, target.port)
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(.seconds(5))
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel(wrappingChannelSynchronously: channel)
                    }
                }
        } catch let error as NIOConnectionError {
            // NIO reports every address it tried; the first failure says what went wrong.
            let reason = error.connectionErrors.first.map { "\($0.error)" } ?? (error.dnsAError ?? error.dnsAAAAError).map { "\($0)" } ?? "\(error)"
            throw Failure(description: "cannot connect to \(host):\(port): \(reason)")
        }
        do {
            return try await channel.executeThenClose { inbound, outbound in
                var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path)
                head.headers.add(name: "Host", value: target.description)
                head.headers.add(name: "Connection", value: "close")
                head.headers.add(name: "Content-Length", value: String(body?.count ?? 0))
                for (name, value) in headers { head.headers.add(name: name, value: value) }
                // A server may answer and close before the whole request is written; its answer
                // is still read, and without one the caller gets a Failure, not a channel error.
                var unsent: (any Error)?
                do {
                    try await outbound.write(.head(head))
                    if let body, !body.isEmpty { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
                    try await outbound.write(.end(nil))
                } catch {
                    unsent = error
                }

                var status: Int?
                var collected = ByteBuffer()
                for try await part in inbound {
                    switch part {
                    case .head(let h): status = Int(h.status.code)
                    case .body(var b): collected.writeBuffer(&b)
                    case .end:
                        guard let status else { break }
                        return Response(status: status, body: Array(collected.readableBytesView))
                    }
                }
                if let unsent { throw Failure(description: "the connection to \(address) closed while the request was sent: \(unsent)") }
                throw Failure(description: "the connection to \(address) closed before a whole answer arrived")
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            // A reset or a closed channel mid-exchange is the server's doing, told as a Failure.
            throw Failure(description: "the exchange with \(address) failed: \(error)")
        }
    }

    /// The host and port of an address, which may start with "http://".
    static func parse(_ address: String) throws -> HostAndPort {
        do {
            return try HostAndPort(parsing: address.hasPrefix("http://") ? String(address.dropFirst(7)) : address)
        } catch {
            throw Failure(description: error.message)
        }
    }
}
