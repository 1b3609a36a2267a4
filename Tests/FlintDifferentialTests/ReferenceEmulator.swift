import FlintModel
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Google's Firestore emulator, started through `../shared/tools/oracle.sh` beside the
/// checkout. Absent (no script or not installed) means differential tests skip.
final class ReferenceEmulator: Sendable {
    let port: Int
    let base: String
    private let script: String

    static var scriptPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/tools/oracle.sh").path
    }

    /// The process's one emulator, shared by every suite that asks (each suite keeps to projects
    /// of its own), or nil when it is not available here. One JVM per suite meant sixteen warming
    /// up at once on two cores, and requests waited past URLSession's timeout. The script takes
    /// seconds and is waited for on a thread of its own: blocking the concurrency pool (two
    /// threads here) would stall every other test meanwhile. Each caller calls `stop()` once;
    /// the last one stops the JVM.
    static func start() async -> ReferenceEmulator? {
        let script = scriptPath
        guard FileManager.default.isExecutableFile(atPath: script) else { return nil }
        let starting = shared.withLock { state -> Task<ReferenceEmulator?, Never> in
            state.leases += 1
            if let running = state.running { return running }
            let task = Task<ReferenceEmulator?, Never> {
                let port = freePort()
                guard await runOffPool(script, ["start", String(port)]) == 0 else { return nil }
                return ReferenceEmulator(port: port, script: script)
            }
            state.running = task
            return task
        }
        guard let emulator = await starting.value else {
            release()
            return nil
        }
        return emulator
    }

    /// The shared emulator (starting or started) and how many callers have not stopped it yet.
    private static let shared = Mutex<(running: Task<ReferenceEmulator?, Never>?, leases: Int)>((nil, 0))

    /// Gives back one caller's share; true when it was the last, and the emulator is forgotten
    /// so the next caller starts a new one.
    @discardableResult
    private static func release() -> Bool {
        shared.withLock { state in
            state.leases -= 1
            guard state.leases == 0 else { return false }
            state.running = nil
            return true
        }
    }

    /// Ports handed out in this process: an emulator started after the last one stopped never
    /// gets a port its predecessor may still hold (a second JVM on a held port failed to bind
    /// while its script, answered by the first, reported success).
    private static let taken = Mutex<Set<Int>>([])

    /// A port no other suite here was given and nothing holds now, below Linux's ephemeral
    /// range (32768 and up), so no outgoing connection can be holding it either.
    private static func freePort() -> Int {
        while true {
            let port = Int.random(in: 20_000..<32_000)
            guard taken.withLock({ $0.insert(port).inserted }), isFree(port) else { continue }
            return port
        }
    }

    private static func isFree(_ port: Int) -> Bool {
        #if canImport(Glibc)
            let stream = Int32(SOCK_STREAM.rawValue)
        #else
            let stream = SOCK_STREAM
        #endif
        let fd = socket(AF_INET, stream, 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    private static func runOffPool(_ script: String, _ args: [String]) async -> Int32 {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: run(script, args)) }
        }
    }

    private init(port: Int, script: String) {
        self.port = port
        self.script = script
        self.base = "http://127.0.0.1:\(port)"
    }

    /// Ends this caller's share; the last one stops the JVM before returning (the script only
    /// signals it, in milliseconds): stopped from a detached thread, the emulator outlived a
    /// test process that ended first.
    func stop() {
        guard Self.release() else { return }
        _ = Self.run(script, ["stop", String(port)])
    }

    /// Runs the script and waits for it with posix_spawn and waitpid: Foundation's `Process`
    /// never sees the script end here, because the emulator it leaves running keeps the
    /// inherited descriptors open.
    private static func run(_ script: String, _ args: [String]) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        let argv = (["/bin/bash", script] + args).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/bin/bash", &actions, nil, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status >> 8) & 0xFF
    }

    /// Sends JSON and returns the decoded answer and the HTTP status; as the owner unless
    /// another `Authorization` value is given (nil: none).
    func request(_ method: String, _ path: String, _ body: Any? = nil, authorization: String? = "Bearer owner") async throws -> (Int, Any) {
        var r = URLRequest(url: URL(string: base + path)!)
        r.httpMethod = method
        r.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let authorization { r.setValue(authorization, forHTTPHeaderField: "Authorization") }
        if let body { r.httpBody = try JSONSerialization.data(withJSONObject: body) }
        let (data, response) = try await URLSession.shared.data(for: r)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status, ExactJSON.object(from: data) ?? [:])
    }
}

/// Firestore REST JSON for model values and queries, for talking to the reference.
enum RESTJSON {
    static func value(_ v: Value) -> [String: Any] {
        switch v {
        case .null: return ["nullValue": NSNull()]
        case .boolean(let b): return ["booleanValue": b]
        case .integer(let i): return ["integerValue": String(i)]
        case .double(let d):
            if d.isNaN { return ["doubleValue": "NaN"] }
            if d.isInfinite { return ["doubleValue": d > 0 ? "Infinity" : "-Infinity"] }
            return ["doubleValue": d]
        case .timestamp(let t): return ["timestampValue": RFC3339.format(t)]
        case .string(let s): return ["stringValue": s]
        case .bytes(let b): return ["bytesValue": Data(b).base64EncodedString()]
        case .reference(let r): return ["referenceValue": r.name]
        case .geoPoint(let g): return ["geoPointValue": ["latitude": g.latitude, "longitude": g.longitude]]
        case .array(let a): return ["arrayValue": ["values": a.map(value)]]
        case .map(let m): return ["mapValue": ["fields": fields(m)]]
        case .vector(let v):
            return ["mapValue": ["fields": ["__type__": ["stringValue": "__vector__"], "value": ["arrayValue": ["values": v.map { ["doubleValue": $0] }]]]]]
        }
    }

    static func fields(_ m: MapValue) -> [String: Any] {
        var out: [String: Any] = [:]
        for e in m.entries { out[e.key] = value(e.value) }
        return out
    }
}
