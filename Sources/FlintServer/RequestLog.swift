import FlintEngine
import FlintModel
import GRPCCore
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
        logger.info("\(request.method) \(request.uri.path) \(response.status.code)\(latencyAndRules(since: start, trace))")
        return response
    }
}

/// ` 1.234 ms rules: get users/alice allowed`, the end of every request's, call's and session's line.
func latencyAndRules(since start: ContinuousClock.Instant, _ trace: RulesTrace) -> String {
    let elapsed = ContinuousClock.now - start
    let micros = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
    let rules = trace.all
    return " \(Double(micros) / 1000) ms" + (rules.isEmpty ? "" : " rules: " + rules.joined(separator: "; "))
}

/// The same line for each gRPC call, written when the call ends: `gRPC`, the method, the status
/// name, latency and the rules' verdicts. A stream's line comes when it closes.
struct GRPCCallLog: ServerInterceptor {
    let logger: Logger
    let metrics: ServerMetrics

    func intercept<Input: Sendable, Output: Sendable>(
        request: StreamingServerRequest<Input>, context: ServerContext,
        next: @Sendable (StreamingServerRequest<Input>, ServerContext) async throws -> StreamingServerResponse<Output>
    ) async throws -> StreamingServerResponse<Output> {
        metrics.grpcCalls.add(1, ordering: .relaxed)
        guard logger.logLevel <= .info else { return try await next(request, context) }
        let start = ContinuousClock.now
        let trace = RulesTrace()
        let method = context.descriptor.fullyQualifiedMethod
        let logger = logger
        @Sendable func log(_ error: (any Error)?) {
            let code = error.map(Self.code) ?? .ok
            logger.info("gRPC \(method) \(code.name)\(latencyAndRules(since: start, trace))")
        }
        let response: StreamingServerResponse<Output>
        do {
            response = try await RulesTrace.$current.withValue(trace) { try await next(request, context) }
        } catch {
            log(error)
            throw error
        }
        var contents: StreamingServerResponse<Output>.Contents
        switch response.accepted {
        case .failure(let error):
            log(error)
            return response
        case .success(let accepted):
            contents = accepted
        }
        let produce = contents.producer
        contents.producer = { writer in
            do {
                let trailers = try await RulesTrace.$current.withValue(trace) { try await produce(writer) }
                log(nil)
                return trailers
            } catch {
                log(error)
                throw error
            }
        }
        return StreamingServerResponse(accepted: .success(contents))
    }

    /// The status grpc-swift answers for an error a call throws.
    static func code(of error: any Error) -> StatusCode {
        let code: RPCError.Code =
            switch error {
            case let error as RPCError: error.code
            case let error as any RPCErrorConvertible: error.rpcErrorCode
            default: .unknown
            }
        return StatusCode(rawValue: code.rawValue) ?? .unknown
    }
}
