import Foundation
import Testing

/// Authorization headers read by both servers under rules that tell the uid apart: which
/// headers are refused, and which uid each signed-in one gives. Headers the reference answers
/// with a bare 500 (`Basic …`, `Bearer` alone) are left out; Flint answers those with 401.
struct AuthHeaderDifferentialTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /none/{id} { allow get: if request.auth.uid == null; }
            match /empty/{id} { allow get: if request.auth.uid == ''; }
            match /u1/{id} { allow get: if request.auth.uid == 'u1'; }
          }
        }
        """

    static func b64(_ s: String) -> String {
        Data(s.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    static let none = b64(#"{"alg":"none"}"#)
    static let headers: [String] = [
        "Bearer owner", "Bearer owner ", "bearer owner", "Bearer  owner",
        "Bearer \(none).\(b64(#"{"sub":"u1"}"#)).",
        "Bearer \(none).\(b64(#"{"sub":"u1"}"#)). ",
        "Bearer  \(none).\(b64(#"{"sub":"u1"}"#)).",
        "Bearer \(none).\(b64(#"{"user_id":"u1"}"#)).",
        "Bearer \(none).\(b64(#"{"sub":"","user_id":"u1"}"#)).",
        "Bearer \(none).\(b64(#"{"sub":5,"user_id":"u1"}"#)).",
        "Bearer \(none).\(b64(#"{"sub":"u1","user_id":"u2"}"#)).",
        "Bearer \(b64("{}")).\(b64(#"{"sub":"u1"}"#)).",
        "Bearer \(b64(#"{"alg":"RS256","kid":"x"}"#)).\(b64(#"{"sub":"u1"}"#)).c2ln",
        "Bearer \(b64("[]")).\(b64(#"{"sub":"u1"}"#)).",
        "Bearer .\(b64(#"{"sub":"u1"}"#)).",
        "Bearer !!.\(b64(#"{"sub":"u1"}"#)).",
        "Bearer \(none).\(b64("[]")).",
        "Bearer \(none).\(b64(#"{"sub":"u1"}"#))",
        "Bearer garbage",
    ]

    @Test func headersGiveTheReferencesUsers() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "auth header") else { return }
        defer { stop() }
        let project = "flint-auth-headers"
        let load = #"{"rules": {"files": [{"name": "firestore.rules", "content": \#(String(data: try JSONEncoder().encode(Self.rules), encoding: .utf8)!)}]}}"#
        for base in [reference.base, flint] {
            #expect(try await RawHTTP.send("PUT", base + "/emulator/v1/projects/\(project):securityRules", load).status == 200)
        }
        var refused = 0
        for header in Self.headers {
            for collection in ["none", "empty", "u1"] {
                let url = "/v1/projects/\(project)/databases/(default)/documents/\(collection)/d"
                let expected = try await RawHTTP.send("GET", reference.base + url, nil, authorization: header)
                let found = try await RawHTTP.send("GET", flint + url, nil, authorization: header)
                #expect(found.status == expected.status, "\(header) on \(collection)")
                // A denial's text is the rules' own trace; an invalid token's is the reference's words.
                if expected.status == 400 { #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(header)") }
                if expected.status == 400 { refused += 1 }
            }
        }
        #expect(refused >= 15)
    }
}
