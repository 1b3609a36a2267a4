import Testing

/// What a browser is told about cross-origin access, on both servers: preflights with and
/// without requested headers, the `null` origin of `file://` pages, answers and errors read
/// from another origin, pages on the internet asking for the developer's machine (Private
/// Network Access), and OPTIONS sent by something other than a browser.
struct CrossOriginDifferentialTests {
    static let grants = [
        "access-control-allow-origin", "access-control-allow-methods", "access-control-allow-credentials",
        "access-control-allow-headers", "access-control-allow-private-network",
    ]

    static let documents = "/v1/projects/flint-cross-origin/databases/(default)/documents"
    static let cases: [(method: String, path: String, headers: [String: String], body: String?)] = [
        (
            "OPTIONS", documents + ":runQuery",
            [
                "Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "x-firebase-appcheck, x-goog-api-client,content-type",
            ], nil
        ),
        ("OPTIONS", documents + "/c/d", ["Origin": "null", "Access-Control-Request-Method": "PATCH"], nil),
        ("OPTIONS", documents + "/c/d", ["Origin": "http://a.test", "Access-Control-Request-Headers": "x-anything"], nil),
        (
            "OPTIONS", documents + "/c/d",
            ["Origin": "https://app.example.com", "Access-Control-Request-Method": "GET", "Access-Control-Request-Private-Network": "true"], nil
        ),
        ("GET", "/", ["Origin": "https://app.example.com", "Access-Control-Request-Private-Network": "true"], nil),
        ("OPTIONS", "/anything/else", ["Access-Control-Request-Private-Network": "true"], nil),
        ("PATCH", documents + "/c/d", ["Origin": "http://a.test", "Content-Type": "application/json"], #"{"fields":{}}"#),
        ("GET", documents + "/c/missing", ["Origin": "http://a.test"], nil),
        ("GET", "/", ["Origin": "null"], nil),
        ("POST", documents + ":runQuery", ["Origin": "http://a.test", "Content-Type": "application/json"], "{"),
        ("GET", "/no/route/here", ["Origin": "http://a.test"], nil),
        ("GET", documents + "/c/d", [:], nil),
    ]

    @Test func browsersAreGrantedWhatTheReferenceGrants() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "cross-origin") else { return }
        defer { stop() }
        var granted = 0
        for request in Self.cases {
            var headers = request.headers
            headers["Authorization"] = "Bearer owner"
            let expected = try await RawHTTP.exchange(request.method, reference.base + request.path, headers: headers, body: request.body)
            let found = try await RawHTTP.exchange(request.method, flint + request.path, headers: headers, body: request.body)
            let label = "\(request.method) \(request.path) \(request.headers)"
            #expect(found.status == expected.status, "\(label)")
            for name in Self.grants {
                #expect(found.headers[name] == expected.headers[name], "\(name) for \(label)")
            }
            if expected.headers["access-control-allow-origin"] != nil { granted += 1 }
        }
        // Most cases come from a browser; two do not, and are told nothing.
        #expect(granted == Self.cases.count - 2)
    }
}
