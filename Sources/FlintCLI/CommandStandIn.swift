import CParentDeath
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What `flint exec` spawns for its command on Linux: Flint's own binary again, which asks the
/// kernel for SIGTERM should Flint die, then replaces itself with the command. posix_spawn has
/// no way to ask that for the command directly, and without it a Flint killed outright
/// (SIGKILL from a CI job's timeout, a crash) left the command running against a port nobody
/// answers, its clients retrying.
public enum CommandStandIn {
    /// The first argument that marks a stand-in; nobody types it.
    static let marker = "__flint-exec-command"

    /// The path and arguments that start a stand-in for `command`, or nil where there is none
    /// (no parent-death signal outside Linux, or no /proc to find Flint's binary by).
    static func invocation(for command: [String]) -> (path: String, arguments: [String])? {
        #if os(Linux)
            let binary = "/proc/self/exe"
            guard access(binary, X_OK) == 0 else { return nil }
            return (binary, [binary, marker, String(getpid())] + command)
        #else
            return nil
        #endif
    }

    /// Called first in `main`: in a stand-in it becomes the command and never returns; in any
    /// other Flint it does nothing.
    public static func becomeTheCommandIfAsked() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 4, arguments[1] == marker, let flint = pid_t(arguments[2]) else { return }
        let command = Array(arguments[3...])
        // SIGTERM, what Flint passes on when it is stopped itself: most commands end on it, and
        // one that cleans up first still can. It is asked for before checking that Flint is
        // alive, so Flint cannot die unseen in between.
        if flint_signal_on_parent_death(SIGTERM) == 0, getppid() != flint {
            raise(SIGTERM)
            _exit(128 + SIGTERM)
        }
        // The command starts with no signal blocked, whatever the runtime blocked on this
        // thread; exec keeps the caller's mask.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        pthread_sigmask(SIG_SETMASK, &unblocked, nil)
        let cArguments = command.map { strdup($0) } + [nil]
        execvp(command[0], cArguments)
        exit(ChildCommand.cannotRun(command[0], errno))
    }
}
