import Foundation
import Testing

/// `GET /`, which tools poll to see that the emulator is up, answers the reference's bytes.
struct RootDifferentialTests {
    @Test func theRootAnswersTheReferencesBody() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "root") else { return }
        defer { stop() }
        let expected = try await RawHTTP.exchange("GET", reference.base + "/", headers: [:])
        let found = try await RawHTTP.exchange("GET", flint + "/", headers: [:])
        #expect(expected.status == 200)
        #expect(found.status == expected.status)
        #expect(found.body == expected.body, "\(String(decoding: found.body, as: UTF8.self).debugDescription)")
    }
}
