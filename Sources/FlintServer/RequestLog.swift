import FlintEngine
import Hummingbird
import Logging

/// One log line per request: method, path, status, latency and the rules' verdicts, at `info`.
struct RequestLog<Context: RequestContext>: RouterMiddleware {
    let logger: Logger
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        metrics.httpRequests.add(1, ordering: .relaxed)
        guard logger.logLevel <= .info else { return try await next(request, context) }
        let start = ContinuousClock.now
        let trace = RulesTrace()
        let response = try await RulesTrace.$current.withValue(trace) { try await next(request, context) }
        let elapsed = ContinuousClock.now - start
        let micros = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
        let rules = trace.all
        let outcome = rules.isEmpty ? "" : " rules: " + rules.joined(separator: "; ")
        logger.info("\(request.method) \(request.uri.path) \(response.status.code) \(Double(micros) / 1000) ms\(outcome)")
        return response
    }
}
