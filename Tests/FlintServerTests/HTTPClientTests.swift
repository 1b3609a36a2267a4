import FlintEngine
import FlintHTTPClient
import FlintServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The NIO client that `flint export` and remote rules tests use, against a live Flint.
struct HTTPClientTests {
    /// A plain socket listening on a free loopback port, which answers nothing by itself.
    static func rawListener() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        if !bound { close(fd) }
        try #require(bound)
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test func sendsARequestAndCollectsTheWholeAnswer() async throws {
        let running = try await FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0)).start()
        defer { running.stop() }

        let root = try await HTTPClient.send("GET", "/", to: running.address)
        #expect(root.status == 200)
        #expect(String(decoding: root.body, as: UTF8.self) == "Ok\n")

        let body = Array(#"{"fields":{"n":{"integerValue":"7"}}}"#.utf8)
        let written = try await HTTPClient.send(
            "PATCH", "/v1/projects/p/databases/(default)/documents/c/d", to: "http://" + running.address,
            headers: [("Content-Type", "application/json"), ("Authorization", "Bearer owner")], body: body)
        #expect(written.status == 200)
        #expect(String(decoding: written.body, as: UTF8.self).contains(#""n":{"integerValue":"7"}"#))

        let missing = try await HTTPClient.send("GET", "/v1/projects/p/databases/(default)/documents/c/absent", to: running.address)
        #expect(missing.status == 404)
        #expect(String(decoding: missing.body, as: UTF8.self).contains("NOT_FOUND"))
    }

    @Test func aClosedPortOrABadAddressIsAnError() async throws {
        // Port 1 (tcpmux) has no listener here; a port freed by a stopped server could be taken
        // by a test running beside this one.
        let refused = await #expect(throws: HTTPClient.Failure.self) { _ = try await HTTPClient.send("GET", "/", to: "127.0.0.1:1") }
        #expect(refused?.description.hasPrefix("cannot connect to 127.0.0.1:1: ") == true)
        #expect(refused?.description.contains("Connection refused") == true)
        await #expect(throws: HTTPClient.Failure.self) { _ = try await HTTPClient.send("GET", "/", to: "127.0.0.1:http") }
        await #expect(throws: HTTPClient.Failure.self) { _ = try await HTTPClient.send("GET", "/", to: ":8080") }
    }

    @Test func bracketedIPv6AddressesAreUnderstood() async throws {
        let running = try await FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "::1", port: 0)).start()
        defer { running.stop() }
        let answer = try await HTTPClient.send("GET", "/", to: "[::1]:\(running.port)")
        #expect(answer.status == 200)
    }

    /// A server that resets the connection while the request is being written: the caller gets
    /// a Failure (which it may retry), not a channel or socket error.
    @Test func aServerThatHangsUpMidRequestIsAFailure() async throws {
        let (fd, port) = try Self.rawListener()
        defer { close(fd) }
        // Accept one connection and close it at once with a reset (linger 0).
        let hangUp = Task.detached {
            let connection = accept(fd, nil, nil)
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            close(connection)
        }
        let failure = await #expect(throws: HTTPClient.Failure.self) {
            _ = try await HTTPClient.send("POST", "/", to: "127.0.0.1:\(port)", body: Array(repeating: 0x61, count: 8 << 20), timeout: .seconds(20))
        }
        #expect(failure?.description.contains("127.0.0.1:\(port)") == true)
        await hangUp.value
    }

    /// A listener that accepts (the kernel's backlog does) but never answers.
    @Test func aServerThatNeverAnswersTimesOut() async throws {
        let (fd, port) = try Self.rawListener()
        defer { close(fd) }
        let began = ContinuousClock.now
        let silence = await #expect(throws: HTTPClient.Failure.self) {
            _ = try await HTTPClient.send("GET", "/", to: "127.0.0.1:\(port)", timeout: .milliseconds(300))
        }
        #expect(silence?.description.hasPrefix("no answer from 127.0.0.1:\(port) within") == true)
        #expect(ContinuousClock.now - began < .seconds(30))
    }
}
