import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The command `flint exec` runs: spawned once Flint listens, sent the signals Flint receives
/// while it runs, and its exit status kept for Flint's own.
final class ChildCommand: Sendable {
    private enum State {
        case notStarted
        /// A signal came before the command was spawned; it is not spawned at all.
        case signalled(Int32)
        case running(pid_t)
        case ended(Int32)
    }

    private let argv: [String]
    private let state = Mutex(State.notStarted)
    /// Whether this process came with SIGPIPE at its default action. NIO ignores it once the
    /// first socket opens, and an ignored signal stays ignored across exec; the command gets
    /// the action Flint was given. (The signals Flint traps are reset by exec.)
    private let sigpipeWasDefault: Bool

    /// Descriptors this process came with (its standard streams, and any its parent passed on),
    /// which the command inherits; Flint's own are closed in it.
    private let inheritedDescriptors: Set<Int32>

    /// Says why `command` could not be started, and gives the status a shell would exit with.
    static func cannotRun(_ command: String, _ error: Int32) -> Int32 {
        Console.error("flint exec: cannot run \(command): \(String(cString: strerror(error)))\n")
        return error == ENOENT ? 127 : 126
    }

    /// Made before Flint opens a socket, to see the SIGPIPE action and descriptors it came with.
    init(_ argv: [String]) {
        self.argv = argv
        inheritedDescriptors = Self.openDescriptors()
        sigpipeWasDefault = InheritedSignalAction(of: SIGPIPE) == .default
    }

    /// The exit status: the command's own, 128 + the signal that killed it (or that came
    /// before it started), or as a shell says a command could not be started: 127 when there
    /// is no such command, 126 when there is one that cannot be run.
    var status: Int32 {
        state.withLock { state in
            switch state {
            case .notStarted, .running: 0
            case .signalled(let signal): 128 + signal
            case .ended(let status): status
            }
        }
    }

    /// Sends `signal` to the running command; false when there is none to send it to.
    func forward(_ signal: Int32) -> Bool {
        // Ctrl-C reaches the command straight from the terminal; a second SIGINT would read as
        // "press again to force quit" to the many tools that take it so.
        let alreadySent = signal == SIGINT && Self.inTerminalForeground()
        return state.withLock { state in
            switch state {
            case .notStarted:
                state = .signalled(signal)
                return false
            case .running(let pid):
                if !alreadySent { kill(pid, signal) }
                return true
            case .signalled, .ended:
                return false
            }
        }
    }

    /// The descriptors open in this process, where /proc lists them.
    private static func openDescriptors() -> Set<Int32> {
        Set(((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) })
    }

    /// Whether this process (and so the command, which shares its process group) is in the
    /// foreground of a terminal, where the terminal sends its SIGINT to the whole group.
    private static func inTerminalForeground() -> Bool {
        let terminal = open("/dev/tty", O_RDONLY | O_NOCTTY)
        guard terminal >= 0 else { return false }
        defer { close(terminal) }
        return tcgetpgrp(terminal) == getpgrp()
    }

    /// Runs the command with this process's stdio and environment plus `environment`, and
    /// waits for it on a thread of its own (waitpid blocks).
    func run(adding environment: [String: String]) async {
        let argv = self.argv
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                var env = ProcessInfo.processInfo.environment
                for (k, v) in environment { env[k] = v }
                // Through a stand-in where there is one, so that the command is stopped if Flint dies.
                // The kernel signals it when this thread ends, and this thread outlives the command.
                let standIn = CommandStandIn.invocation(for: argv)
                let cArgs = (standIn?.arguments ?? argv).map { strdup($0) } + [nil]
                let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
                defer {
                    for p in cArgs { free(p) }
                    for p in cEnv { free(p) }
                }
                // The spawning thread blocks most signals (the runtime's threads do), and a
                // spawned process inherits its mask: the command starts with none blocked.
                #if canImport(Darwin)
                    var attributes: posix_spawnattr_t = nil
                #else
                    var attributes = posix_spawnattr_t()
                #endif
                posix_spawnattr_init(&attributes)
                defer { posix_spawnattr_destroy(&attributes) }
                var unblocked = sigset_t()
                sigemptyset(&unblocked)
                posix_spawnattr_setsigmask(&attributes, &unblocked)
                var defaults = sigset_t()
                sigemptyset(&defaults)
                if self.sigpipeWasDefault { sigaddset(&defaults, SIGPIPE) }
                posix_spawnattr_setsigdefault(&attributes, &defaults)
                posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
                #if canImport(Darwin)
                    var actions: posix_spawn_file_actions_t = nil
                #else
                    var actions = posix_spawn_file_actions_t()
                #endif
                posix_spawn_file_actions_init(&actions)
                defer { posix_spawn_file_actions_destroy(&actions) }
                // Flint's own descriptors, its listening socket among them, are not the command's:
                // a command (or a process it leaves behind) holding the socket would keep the port
                // taken, and connections to it hanging, after Flint has stopped. glibc skips a
                // close of a descriptor that is no longer open.
                #if os(Linux)
                    for descriptor in Self.openDescriptors().subtracting(self.inheritedDescriptors) where descriptor > 2 {
                        posix_spawn_file_actions_addclose(&actions, descriptor)
                    }
                #endif
                // Spawned under the lock, so a signal is either seen before (no spawn) or forwarded.
                let pid = self.state.withLock { state -> pid_t? in
                    guard case .notStarted = state else { return nil }
                    var pid: pid_t = 0
                    let spawned: Int32
                    if let standIn {
                        spawned = posix_spawn(&pid, standIn.path, &actions, &attributes, cArgs, cEnv)
                    } else {
                        spawned = posix_spawnp(&pid, argv[0], &actions, &attributes, cArgs, cEnv)
                    }
                    guard spawned == 0 else {
                        state = .ended(Self.cannotRun(argv[0], spawned))
                        return nil
                    }
                    state = .running(pid)
                    return pid
                }
                if let pid {
                    // Waited for without reaping, then reaped under the lock: a signal forwarded
                    // meanwhile still goes to the command, never to a process that reused its id.
                    var info = siginfo_t()
                    while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
                    self.state.withLock { state in
                        var status: Int32 = 0
                        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                        let signaled = status & 0x7F
                        state = .ended(signaled == 0 ? (status >> 8) & 0xFF : 128 + signaled)
                    }
                }
                continuation.resume()
            }
        }
    }
}
