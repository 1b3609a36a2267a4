import FlintEngine
import FlintModel
import Foundation
import Testing

struct AuthTests {
    static func jwt(_ claims: String) -> String {
        let b64 = { (s: String) in
            Data(s.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        return "Bearer " + b64(#"{"alg":"none"}"#) + "." + b64(claims) + "."
    }

    @Test func headersAsTheReferenceReadsThem() throws {
        #expect(try AuthContext(authorization: nil) == .unauthenticated)
        #expect(try AuthContext(authorization: "Bearer owner") == .owner)
        let alice = try AuthContext(authorization: Self.jwt(#"{"sub":"alice","email_verified":true,"exp":1700000000,"firebase":{"sign_in_provider":"password"},"roles":["a"],"score":1.5}"#))
        guard case .user(let uid, let token) = alice else {
            Issue.record("expected a user")
            return
        }
        #expect(uid == "alice")
        #expect(token["email_verified"] == true)
        #expect(token["exp"] == .integer(1_700_000_000))
        #expect(token["firebase"] == ["sign_in_provider": "password"])
        #expect(token["roles"] == ["a"])
        #expect(token["score"] == 1.5)
        // The uid is `sub`, as the reference reads it: `user_id` alone names nobody, and an
        // empty `sub` is an empty uid.
        #expect(try AuthContext(authorization: Self.jwt(#"{"user_id":"bob"}"#)) == .user(uid: nil, token: ["user_id": "bob"]))
        #expect(try AuthContext(authorization: Self.jwt(#"{"sub":"","user_id":"bob"}"#)) == .user(uid: "", token: ["sub": "", "user_id": "bob"]))
        #expect(try AuthContext(authorization: Self.jwt(#"{"sub":7}"#)) == .user(uid: nil, token: ["sub": 7]))
        // Trailing whitespace is not part of the header; a second space before the token is.
        #expect(try AuthContext(authorization: "Bearer owner ") == .owner)
        #expect(throws: FlintError.invalidArgument("invalid jwt")) { try AuthContext(authorization: "Bearer  owner") }
    }

    /// Claims that need every digit keep them: Foundation's JSON parser on Linux reads such
    /// numbers as decimals that round when asked for a double.
    @Test func claimsKeepEveryDigit() throws {
        let auth = try AuthContext(authorization: Self.jwt(#"{"sub":"d","big":9007199254740993,"long":0.30000000000000004,"huge":123456789012345678901,"whole":2.0,"one":1}"#))
        guard case .user(_, let token) = auth else {
            Issue.record("expected a user")
            return
        }
        #expect(token["big"]?.isIdentical(to: .integer(9_007_199_254_740_993)) == true)
        #expect(token["long"]?.isIdentical(to: .double(0.30000000000000004)) == true)
        #expect(token["huge"]?.isIdentical(to: .double(123_456_789_012_345_683_968)) == true)
        #expect(token["whole"]?.isIdentical(to: .integer(2)) == true)
        #expect(token["one"]?.isIdentical(to: .integer(1)) == true)
    }

    @Test func malformedTokensAreRefused() {
        // The header must be a JSON object too: `[]`, empty, and text that is not base64.
        let claims = "eyJzdWIiOiJ1MSJ9"
        for bad in ["Bearer garbage", "Bearer a.b", "Bearer eyJhbGciOiJub25lIn0.bm90anNvbg.", "Bearer W10.\(claims).", "Bearer .\(claims).", "Bearer !!.\(claims)."] {
            #expect(throws: FlintError.invalidArgument("invalid jwt")) { try AuthContext(authorization: bad) }
        }
        for bad in ["Basic xyz", "Bearer", "token"] {
            let e = #expect(throws: FlintError.self) { try AuthContext(authorization: bad) }
            #expect(e?.code == .unauthenticated)
        }
    }

    /// Tokens are remembered once read; a remembered token must still answer for itself, also
    /// after more distinct tokens than are kept have passed through.
    @Test func rememberedTokensKeepTheirOwnClaims() throws {
        for round in 0..<2 {
            for i in 0..<300 {
                let header = Self.jwt(#"{"sub":"user\#(i)","n":\#(i)}"#)
                let auth = try AuthContext(authorization: header)
                #expect(auth == .user(uid: "user\(i)", token: ["sub": .string("user\(i)"), "n": .integer(Int64(i))]), "round \(round)")
            }
        }
        #expect(throws: FlintError.invalidArgument("invalid jwt")) { try AuthContext(authorization: "Bearer garbage") }
        #expect(throws: FlintError.invalidArgument("invalid jwt")) { try AuthContext(authorization: "Bearer garbage") }
    }

    /// As on the reference: whitespace after the token is dropped, whitespace before it is
    /// part of it, which then is no JWT.
    @Test func onlyTrailingWhitespaceIsIgnored() throws {
        #expect(try AuthContext(authorization: "Bearer owner \t") == .owner)
        let token = Self.jwt(#"{"sub":"carol"}"#).dropFirst("Bearer ".count)
        #expect(try AuthContext(authorization: "Bearer " + token + "  ") == .user(uid: "carol", token: ["sub": "carol"]))
        #expect(throws: FlintError.invalidArgument("invalid jwt")) { try AuthContext(authorization: "Bearer  " + token) }
        #expect(throws: FlintError.invalidArgument("invalid jwt")) { try AuthContext(authorization: "Bearer   owner") }
    }
}
