import FlintEngine
import FlintModel
import Foundation
import Hummingbird

/// The reference emulator's admin endpoints that test suites call between tests.
struct AdminAPI: Sendable {
    let engine: Engine

    /// `DELETE /emulator/v1/projects/{p}/databases/{d}/documents[/{path}]` empties the database
    /// or the subtree at `path` (its document and everything below it), and answers `{}`.
    func clear(_ request: Request) async -> Response {
        do throws(FlintError) {
            let path = request.uri.path.dropFirst("/emulator/v1/".count)
            guard let decoded = String(path).removingPercentEncoding else {
                throw .invalidArgument("The path \"\(request.uri.path)\" has invalid percent-encoding.")
            }
            let name = try ResourceName.parse(decoded)
            await engine.database(name.database).clear(under: name.path)
            return RESTAPI.respond(Data("{}".utf8))
        } catch {
            return error.restResponse()
        }
    }
}
