// swift-tools-version: 6.2
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Flint",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "flint", targets: ["flint"]),
        .library(name: "FlintEngine", targets: ["FlintEngine"]),
        .library(name: "FlintRulesTesting", targets: ["FlintRulesTesting"]),
        .library(name: "FlintFirestore", targets: ["FlintFirestore"]),
        // For the fuzz targets in fuzz/, a package of their own.
        .library(name: "FlintModel", targets: ["FlintModel"]),
        .library(name: "FlintRules", targets: ["FlintRules"]),
        .library(name: "FlintWire", targets: ["FlintWire"]),
        .library(name: "FlintProto", targets: ["FlintProto"]),
        .library(name: "FlintServer", targets: ["FlintServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        // Hummingbird's own lifecycle library, named for its graceful-shutdown handlers.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/grpc/grpc-swift-2", from: "2.4.0"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf", from: "2.4.0"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", from: "2.9.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
    ],
    targets: [
        // Values, paths, names, limits and the one error type. No dependencies.
        .target(name: "FlintModel", swiftSettings: strict),
        // Structured queries: validation, normalised order, matching, aggregation, vector search.
        .target(name: "FlintQuery", dependencies: ["FlintModel"], swiftSettings: strict),
        // Versioned documents, ordered collections, the write pipeline and the query executor.
        .target(name: "FlintStore", dependencies: ["FlintModel", "FlintQuery"], swiftSettings: strict),
        // The system SQLite (libsqlite3-dev), for the durable store.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Durable storage: every commit written through to SQLite (WAL), restored at start.
        .target(name: "FlintDurable", dependencies: ["FlintModel", "FlintQuery", "FlintStore", "FlintEngine", "CSQLite"], swiftSettings: strict),
        // Export and import: versioned gzip JSON-lines files of REST documents, and the managed
        // export format that Google's tools write.
        .target(
            name: "FlintExport",
            dependencies: [
                "FlintModel", "FlintEngine", "FlintFixtures", "FlintProto", "FlintWire",
                .product(name: "CompressNIO", package: "compress-nio"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strict),
        // Security Rules: parser, checker and evaluator with the standard library. Pure.
        .target(name: "FlintRules", dependencies: ["FlintModel"], swiftSettings: strict),
        // One actor per database composing the store and the rules; the registry of databases.
        .target(name: "FlintEngine", dependencies: ["FlintModel", "FlintQuery", "FlintStore", "FlintRules"], swiftSettings: strict),
        // Rules testing: declarative YAML/JSON specs run in process, reports (text, JUnit,
        // coverage), and a Swift API shaped like @firebase/rules-unit-testing.
        .target(
            name: "FlintRulesTesting",
            dependencies: ["FlintModel", "FlintQuery", "FlintRules", "FlintEngine", "FlintFixtures", "FlintHTTPClient",
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strict),
        // A client shaped like FirebaseFirestore's Swift API, embedded or over gRPC, with
        // document triggers for tests.
        .target(
            name: "FlintFirestore",
            dependencies: [
                "FlintModel", "FlintQuery", "FlintEngine", "FlintWire", "FlintProto", "FlintRules",
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
            ],
            swiftSettings: strict),
        // Firestore's JSON files: REST document datasets and their loader, firestore.indexes.json.
        .target(name: "FlintFixtures", dependencies: ["FlintModel", "FlintQuery", "FlintEngine"], swiftSettings: strict),
        // Generated from proto/ by scripts/gen-protos.sh: google.firestore.v1 messages and service.
        .target(
            name: "FlintProto",
            dependencies: [
                "FlintModel",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
            ],
            swiftSettings: strict),
        // gRPC server reflection, answered from the descriptors generated with FlintProto.
        .target(
            name: "FlintReflection",
            dependencies: [
                "FlintProto",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
            ],
            swiftSettings: strict),
        // The WebChannel protocol (the web SDK's streams over plain HTTP): form bodies, sessions,
        // numbered arrays and back channels. Knows nothing of Firestore or HTTP servers.
        .target(name: "FlintWebChannel", swiftSettings: strict),
        // Wire messages to Flint's model and back, shared by the REST and gRPC edges.
        .target(
            name: "FlintWire",
            dependencies: [
                "FlintModel", "FlintQuery", "FlintProto",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strict),
        // The network edge: one listener, wire formats converted to the model and back.
        .target(
            name: "FlintServer",
            dependencies: [
                "FlintModel", "FlintQuery", "FlintEngine", "FlintWire", "FlintProto", "FlintExport", "FlintReflection", "FlintWebChannel",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ],
            swiftSettings: strict),
        // One HTTP/1.1 request to a running emulator, over NIO (no URLSession in the binary).
        .target(
            name: "FlintHTTPClient",
            dependencies: [
                "FlintModel", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict),
        // Test support: a manual clock and ready-made engines.
        .target(name: "FlintTesting", dependencies: ["FlintModel", "FlintEngine"], swiftSettings: strict),
        // `flint exec`'s command is told when Flint dies (prctl is variadic, out of Swift's reach).
        .target(name: "CParentDeath"),
        // The command line, kept thin: it builds configurations and calls the library.
        .target(
            name: "FlintCLI",
            dependencies: [
                "FlintModel", "FlintEngine", "FlintFixtures", "FlintServer", "FlintRules", "FlintRulesTesting", "FlintDurable", "FlintExport",
                "FlintHTTPClient", "CParentDeath",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        .executableTarget(name: "flint", dependencies: ["FlintCLI"], swiftSettings: strict),
        .target(name: "CHeapStats", path: "bench/CHeapStats"),
        .executableTarget(
            name: "FlintBench",
            dependencies: [
                "FlintModel", "FlintStore", "FlintEngine", "FlintRules", "FlintQuery", "FlintDurable", "FlintExport", "FlintFirestore",
                "FlintServer", "CHeapStats", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"), .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
            ],
            path: "bench/FlintBench",
            swiftSettings: strict),

        .testTarget(name: "FlintModelTests", dependencies: ["FlintModel"], swiftSettings: strict),
        .testTarget(
            name: "FlintStoreTests", dependencies: ["FlintModel", "FlintStore", "FlintTesting"], swiftSettings: strict),
        .testTarget(
            name: "FlintQueryTests", dependencies: ["FlintModel", "FlintQuery", "FlintEngine", "FlintTesting"],
            swiftSettings: strict),
        .testTarget(
            name: "FlintEngineTests", dependencies: ["FlintModel", "FlintQuery", "FlintEngine", "FlintRules", "FlintRulesTesting", "FlintTesting"],
            swiftSettings: strict),
        .testTarget(name: "FlintRulesTests", dependencies: ["FlintRules", "FlintModel"], swiftSettings: strict),
        .testTarget(name: "FlintWebChannelTests", dependencies: ["FlintWebChannel"], swiftSettings: strict),
        .testTarget(
            name: "FlintExportTests", dependencies: ["FlintExport", "FlintEngine", "FlintDurable", "FlintModel", "FlintQuery"], swiftSettings: strict),
        .testTarget(name: "FlintDurableTests", dependencies: ["FlintDurable", "FlintEngine", "FlintModel", "FlintQuery"], swiftSettings: strict),
        .testTarget(
            name: "FlintRulesTestingTests",
            dependencies: [
                "FlintRulesTesting", "FlintCLI", "FlintModel", "FlintServer", "FlintEngine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "FlintFixturesTests",
            dependencies: ["FlintModel", "FlintQuery", "FlintEngine", "FlintFixtures", "FlintTesting"],
            swiftSettings: strict),
        .testTarget(
            name: "FlintDifferentialTests",
            dependencies: [
                "FlintModel", "FlintQuery", "FlintEngine", "FlintRules", "FlintTesting", "FlintRulesTesting", "FlintFixtures", "FlintFirestore",
                "FlintExport", "FlintServer", "FlintProto", "FlintHTTPClient", "FlintWebChannel",
                .product(name: "CompressNIO", package: "compress-nio"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "FlintProtoTests",
            dependencies: ["FlintModel", "FlintProto", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            swiftSettings: strict),
        .testTarget(
            name: "FlintFirestoreTests",
            dependencies: ["FlintFirestore", "FlintServer", "FlintEngine"],
            swiftSettings: strict),
        .testTarget(
            name: "FlintScenarioTests",
            dependencies: ["FlintFirestore", "FlintServer", "FlintEngine", "FlintFixtures", "FlintModel"],
            swiftSettings: strict),
        .testTarget(
            name: "FlintServerTests",
            dependencies: [
                "FlintServer", "FlintEngine", "FlintProto", "FlintReflection", "FlintHTTPClient", "FlintTesting", "FlintWebChannel", "FlintWire",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict),
    ]
)
