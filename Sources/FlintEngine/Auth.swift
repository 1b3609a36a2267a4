import FlintModel
import Foundation
import Synchronization

/// Who is asking: the owner (rules skipped), a signed-in user with token claims, or nobody.
public enum AuthContext: Sendable, Equatable {
    case owner
    /// `uid` is the `sub` claim (nil when it is not a string, even with a `user_id`, as on the
    /// reference); `token` holds every claim, as rules see `request.auth.token`.
    case user(uid: String?, token: MapValue)
    case unauthenticated

    /// Reads an `Authorization` header as the reference emulator does: `Bearer owner` is the
    /// owner, any other bearer token is a JWT whose claims are taken without checking its
    /// signature or expiry (unsigned `alg: none` tokens and real Firebase ID tokens alike).
    public init(authorization header: String?) throws(FlintError) {
        guard let header, !header.isEmpty else {
            self = .unauthenticated
            return
        }
        // Admin SDKs send exactly this on every request.
        if header == "Bearer owner" {
            self = .owner
            return
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw FlintError(.unauthenticated, "The Authorization header must be \"Bearer owner\" or \"Bearer <ID token>\".")
        }
        // Trailing whitespace is dropped, as HTTP drops it around a header's value; a space
        // too many after "Bearer" makes the token something else, as on the reference.
        // (Trimmed without Foundation's trimmingCharacters, which bridges through NSString and
        // cost as much as the rest of reading the header.)
        var trimmed = parts[1]
        while trimmed.last?.isWhitespace == true { trimmed.removeLast() }
        let token = String(trimmed)
        if token == "owner" {
            self = .owner
            return
        }
        if let known = Self.recentTokens.withLock({ $0[token] }) {
            self = known
            return
        }
        self = try Self.init(token: token)
        Self.recentTokens.withLock { recent in
            if recent.count >= Self.recentTokenLimit { recent.removeAll(keepingCapacity: true) }
            recent[token] = self
        }
    }

    /// Tokens already read. A client sends the same token on every request, and reading its
    /// JSON claims cost more than the rest of a small read; the cap keeps a test run that
    /// signs in thousands of users from growing it without end.
    private static let recentTokens = Mutex<[String: AuthContext]>([:])
    private static let recentTokenLimit = 256

    /// The claims of a JWT, taken without checking its signature or expiry. Its header must
    /// still be a JSON object, as the reference requires.
    private init(token: String) throws(FlintError) {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let header = Self.base64URL(segments[0]),
            (try? JSONSerialization.jsonObject(with: header)) is [String: Any],
            let payload = Self.base64URL(segments[1]),
            let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
        else { throw .invalidArgument("invalid jwt") }
        var map = MapValue()
        for (k, v) in claims { map[k] = PlainJSON.value(v) }
        var uid: String?
        if case .string(let s)? = map["sub"] { uid = s }
        self = .user(uid: uid, token: map)
    }

    private static func base64URL(_ text: Substring) -> Data? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.utf8.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s)
    }

}
