import FlintEngine
import FlintProto
import FlintServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import SwiftProtobuf
import Testing

/// ListDocuments and ListCollectionIds with two faults each, over gRPC (a REST listing naming an
/// unknown transaction never answers on the reference): the same fault is told first.
struct ListingOrderDifferentialTests {
    static let parent = "projects/flint-listing-order/databases/(default)/documents"

    /// One fault each, as a change to a listing of `c` below the root.
    static let listingFaults: [(String, @Sendable (inout Google_Firestore_V1_ListDocumentsRequest) -> Void)] = [
        ("parent", { $0.parent = parent + "/c" }),
        ("transaction", { $0.transaction = Data([0x08, 0x01]) }),
        ("missing without a collection", { $0.showMissing = true; $0.collectionID = "" }),
        ("page size", { $0.pageSize = -1 }),
        ("collection /", { $0.collectionID = "a/b" }),
        ("collection reserved", { $0.collectionID = "__x__" }),
        ("collection length", { $0.collectionID = String(repeating: "x", count: 1501) }),
        ("order beside missing", { $0.showMissing = true; $0.orderBy = "a" }),
        ("mask", { $0.mask = .with { $0.fieldPaths = [""] } }),
        ("order", { $0.orderBy = "__x__" }),
        ("read time form", { $0.readTime = Google_Protobuf_Timestamp(seconds: -1, nanos: 0) }),
        ("read time age", { $0.readTime = Google_Protobuf_Timestamp(seconds: 1_600_000_000, nanos: 0) }),
    ]

    static let collectionIDFaults: [(String, @Sendable (inout Google_Firestore_V1_ListCollectionIdsRequest) -> Void)] = [
        ("parent", { $0.parent = parent + "/c" }),
        ("page size", { $0.pageSize = -1 }),
        ("read time age", { $0.readTime = Google_Protobuf_Timestamp(seconds: 1_600_000_000, nanos: 0) }),
        ("read time to come", { $0.readTime = Google_Protobuf_Timestamp(seconds: 4_102_444_800, nanos: 0) }),
        ("page token", { $0.pageToken = "x" }),
    ]

    static func told(_ call: () async throws -> Void) async -> String {
        do {
            try await call()
            return "served"
        } catch let error as RPCError {
            return "\(error.code): \(error.message)"
        } catch {
            return "\(error)"
        }
    }

    /// Every pair of faults, told as the server tells it. A page token that does not decode is
    /// last in its list: alone, the reference fails it with a bare `UNKNOWN`.
    static func outcomes(port: Int) async throws -> [String] {
        try await withGRPCClient(
            transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
        ) { client in
            let firestore = Google_Firestore_V1_Firestore.Client(wrapping: client)
            var lines: [String] = []
            for (i, (first, a)) in listingFaults.enumerated() {
                for (second, b) in listingFaults[(i + 1)...] {
                    var request = Google_Firestore_V1_ListDocumentsRequest()
                    request.parent = parent
                    request.collectionID = "c"
                    a(&request)
                    b(&request)
                    lines.append("list \(first) + \(second): " + (await told { _ = try await firestore.listDocuments(request) }))
                }
            }
            for (i, (first, a)) in collectionIDFaults.enumerated() {
                for (second, b) in collectionIDFaults[(i + 1)...] {
                    var request = Google_Firestore_V1_ListCollectionIdsRequest()
                    request.parent = parent
                    a(&request)
                    b(&request)
                    lines.append("ids \(first) + \(second): " + (await told { _ = try await firestore.listCollectionIds(request) }))
                }
            }
            return lines
        }
    }

    @Test func listingsTellTheFaultTheReferenceTellsFirst() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential listing order test skipped")
            return
        }
        defer { reference.stop() }
        let expected = try await Self.outcomes(port: reference.port)
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        let running = try await server.start()
        defer { running.stop() }
        let found = try await Self.outcomes(port: running.port)
        #expect(found.count == expected.count)
        for (f, e) in zip(found, expected) { #expect(f == e) }
        // Each fault is told first somewhere, so every check was reached.
        #expect(expected.contains { $0.hasSuffix("Transaction is invalid or closed.") })
        #expect(expected.contains { $0.hasSuffix("The query kind is longer than 1500 bytes.") })
        #expect(expected.contains { $0.hasSuffix("The requested 'read_time' is too old.") })
    }
}
