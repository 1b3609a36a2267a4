import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What this process was started to do with a signal. A caller's choice is kept where Flint can
/// keep it: `nohup` (a hangup ignored) and `trap "" PIPE` reach the command `flint exec` runs.
enum InheritedSignalAction: Equatable {
    case `default`, ignored, handled

    init(of signal: Int32) {
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0 else {
            self = .handled
            return
        }
        #if canImport(Darwin)
            let handler = current.__sigaction_u.__sa_handler
        #else
            let handler = current.__sigaction_handler.sa_handler
        #endif
        // SIG_DFL and SIG_IGN are the addresses 0 and 1, not functions.
        switch unsafeBitCast(handler, to: Int.self) {
        case 0: self = .default
        case 1: self = .ignored
        default: self = .handled
        }
    }
}
