import GRPCCore

/// A transport that changes only how calls reach the server; everything else is its base's.
protocol WrappingServerTransport: ServerTransport {
    associatedtype Base: ServerTransport
    var base: Base { get }
}

extension WrappingServerTransport {
    func configure(context: GRPCServerContext) {
        base.configure(context: context)
    }

    func beginGracefulShutdown() {
        base.beginGracefulShutdown()
    }
}
