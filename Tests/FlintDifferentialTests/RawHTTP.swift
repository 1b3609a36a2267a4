import FlintEngine
import FlintServer
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP exchange with a body sent byte for byte, so the reference and Flint get the same.
enum RawHTTP {
    /// A nil `authorization` sends none: a signed-out client.
    static func send(_ method: String, _ url: String, _ body: String?, authorization: String? = "Bearer owner") async throws -> (status: Int, json: Any?) {
        var headers = ["Content-Type": "application/json"]
        if let authorization { headers["Authorization"] = authorization }
        let answer = try await exchange(method, url, headers: headers, body: body)
        return (answer.status, ExactJSON.object(from: answer.body))
    }

    /// An exchange with exactly the given headers; the answer's header names in lower case.
    static func exchange(_ method: String, _ url: String, headers: [String: String], body: String? = nil) async throws -> (
        status: Int, headers: [String: String], body: Data
    ) {
        try await exchange(method, url, headers: headers, bytes: body.map { Data($0.utf8) })
    }

    /// The same, with a body of any bytes (a compressed one).
    static func exchange(_ method: String, _ url: String, headers: [String: String], bytes: Data?) async throws -> (
        status: Int, headers: [String: String], body: Data
    ) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = bytes
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        var answered: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] { answered["\(name)".lowercased()] = "\(value)" }
        return (http?.statusCode ?? 0, answered, data)
    }

    /// The reference and a Flint server on a free port, to send both the same requests; nil
    /// (after saying so) when the reference is not installed.
    static func bothServers(for suite: String) async throws -> (reference: ReferenceEmulator, flint: String, stop: @Sendable () -> Void)? {
        guard let (reference, port, stop) = try await bothServerPorts(for: suite) else { return nil }
        return (reference, "http://127.0.0.1:\(port)", stop)
    }

    /// The same, with Flint's port, for gRPC clients.
    static func bothServerPorts(for suite: String) async throws -> (reference: ReferenceEmulator, flint: Int, stop: @Sendable () -> Void)? {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential \(suite) test skipped")
            return nil
        }
        let flint = try await FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0)).start()
        return (reference, flint.port, {
            flint.stop()
            reference.stop()
        })
    }

    /// Loads a rules source for `project` on the server at `base` through the admin API: the
    /// answer's status.
    static func loadRules(_ source: String, project: String, on base: String) async throws -> Int {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["rules": ["files": [["content": source]]]]), as: UTF8.self)
        return try await send("PUT", base + "/emulator/v1/projects/\(project):securityRules", body).status
    }

    /// The message of a google.rpc.Status answer.
    static func message(_ json: Any?) -> String? {
        ((json as? [String: Any])?["error"] as? [String: Any])?["message"] as? String
    }
}

/// Reads answers with every `doubleValue` number exact. Foundation's JSON reader on Linux lands
/// a unit in the last place away for about one double in five (more in Java's `1.0E-5` form),
/// and reads two neighbouring doubles alike about as often, which would hide a last-bit
/// difference between the two servers. `Double(_:)` reads a number's text exactly.
enum ExactJSON {
    static func object(from data: Data) -> Any? {
        let marked = String(decoding: data, as: UTF8.self)
            .replacing(/("doubleValue"\s*:\s*)(-?[0-9][0-9.eE+-]*)/) { "\($0.output.1)\"\\u0000\($0.output.2)\"" }
        guard let object = try? JSONSerialization.jsonObject(with: Data(marked.utf8), options: [.fragmentsAllowed]) else { return nil }
        return exact(object)
    }

    private static func exact(_ any: Any) -> Any {
        switch any {
        case let text as String where text.hasPrefix("\u{0}"):
            guard let number = Double(text.dropFirst()) else { return text }
            return NSNumber(value: number)
        case let map as [String: Any]: return map.mapValues(exact)
        case let list as [Any]: return list.map(exact)
        default: return any
        }
    }
}
