import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP exchange with a body sent byte for byte, so the reference and Flint get the same.
enum RawHTTP {
    static func send(_ method: String, _ url: String, _ body: String?, authorization: String = "Bearer owner") async throws -> (status: Int, json: Any?) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(authorization, forHTTPHeaderField: "Authorization")
        request.httpBody = body.map { Data($0.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONSerialization.jsonObject(with: data))
    }

    /// The message of a google.rpc.Status answer.
    static func message(_ json: Any?) -> String? {
        ((json as? [String: Any])?["error"] as? [String: Any])?["message"] as? String
    }
}
