import FlintEngine
import FlintServer
import HummingbirdTesting
import Testing

struct HealthTests {
    /// Over a real loopback connection on a free port, as tools probe the reference emulator.
    @Test func rootAnswersOk() async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        try await server.makeApplication().test(.live) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "Ok\n")
            }
            try await client.execute(uri: "/nothing-here", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }
}
