import HummingbirdCore

/// What a request's `Expect` header asks of the server before it sends its body (RFC 9110
/// §10.1.1). As on the reference, `100-continue` is answered with `100 Continue` (curl sends
/// it for large bodies and would otherwise wait a second before sending), and any other
/// expectation gets `417 Expectation Failed`.
enum Expectation: Equatable {
    case none
    case `continue`
    case unmet

    init(_ request: Request) {
        guard let value = request.headers[.expect] else { self = .none; return }
        self = value.lowercased() == "100-continue" ? .continue : .unmet
    }
}
