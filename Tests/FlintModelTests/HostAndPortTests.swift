import FlintModel
import Testing

struct HostAndPortTests {
    @Test func namesAndIPv6BracketsAreUnderstood() throws {
        let plain = try HostAndPort(parsing: "127.0.0.1:8080")
        #expect(plain.host == "127.0.0.1")
        #expect(plain.port == 8080)
        #expect(plain.description == "127.0.0.1:8080")
        let v6 = try HostAndPort(parsing: "[::1]:9000")
        #expect(v6.host == "::1")
        #expect(v6.port == 9000)
        #expect(v6.description == "[::1]:9000")
        #expect(try HostAndPort(parsing: "localhost:0").host == "localhost")
    }

    /// What clients are told to dial: a wildcard becomes loopback, and IPv6 keeps its brackets.
    @Test func wildcardsAreDialledOnLoopback() {
        #expect(HostAndPort(host: "0.0.0.0", port: 8080).connectable.description == "127.0.0.1:8080")
        #expect(HostAndPort(host: "::", port: 8080).connectable.description == "[::1]:8080")
        #expect(HostAndPort(host: "::1", port: 8080).connectable.description == "[::1]:8080")
        #expect(HostAndPort(host: "localhost", port: 8080).connectable.description == "localhost:8080")
        #expect(HostAndPort(host: "192.168.1.5", port: 1).connectable.description == "192.168.1.5:1")
    }

    @Test(arguments: ["127.0.0.1", "127.0.0.1:http", ":8080", "[]:8080", "host:70000", "host:-1", ""])
    func anythingElseIsRefusedWithTheExpectedForm(text: String) {
        let error = #expect(throws: FlintError.self) { try HostAndPort(parsing: text) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message == "The emulator host must be HOST:PORT, not \"\(text)\".")
    }
}
