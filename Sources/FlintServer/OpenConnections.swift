import NIOCore
import Synchronization

/// Every connection the shared port has accepted and not yet closed. A stop waits a grace
/// period for connections to finish, then closes whatever is left (a request sent in part, a
/// WebSocket client that never answers the close), so no client can hold a stop up.
final class OpenConnections: Sendable {
    private let open = Mutex<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        open.withLock { $0[id] = channel }
        channel.closeFuture.whenComplete { [self] _ in
            _ = open.withLock { $0.removeValue(forKey: id) }
        }
    }

    var count: Int { open.withLock { $0.count } }

    func closeAll() {
        for channel in open.withLock({ Array($0.values) }) {
            channel.close(promise: nil)
        }
    }
}
