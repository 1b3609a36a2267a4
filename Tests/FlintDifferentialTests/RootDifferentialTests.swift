import Foundation
import Testing

/// `GET /`, which tools poll to see that the emulator is up, answers the reference's bytes;
/// so do requests for what neither serves.
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

    @Test func unservedPathsAnswerTheReferencesNotFound() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "unserved paths") else { return }
        defer { stop() }
        let requests = [
            ("GET", "/foo"), ("POST", "/foo"), ("PUT", "/"), ("DELETE", "/"), ("GET", "/shutdown"), ("GET", "/emulator/v2/x"),
            ("GET", "/v2/projects/p/databases/(default)/documents/c/a"), ("GET", "/google.firestore.v1.Firestore/Nope/channel"),
        ]
        for (method, path) in requests {
            let expected = try await RawHTTP.exchange(method, reference.base + path, headers: [:])
            let found = try await RawHTTP.exchange(method, flint + path, headers: [:])
            #expect(expected.status == 404)
            #expect(found.status == expected.status, "\(method) \(path)")
            #expect(String(decoding: found.body, as: UTF8.self) == String(decoding: expected.body, as: UTF8.self), "\(method) \(path)")
        }
    }
}
