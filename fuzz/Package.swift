// swift-tools-version: 6.2
import PackageDescription

// Fuzz targets for Flint's own parsers and request handling, built by scripts/fuzz.sh with
// libFuzzer (-sanitize=fuzzer). A package of its own, so Flint's build and tests never need it.
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "FlintFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Flint", path: ".."),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
    ],
    targets: [
        // libFuzzer's driver, called from Swift.
        .target(name: "CFuzzDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzDriver"], swiftSettings: strict),
        // Requests of every kind, put to rules that loaded.
        .target(
            name: "RulesFuzzing",
            dependencies: [.product(name: "FlintRules", package: "Flint"), .product(name: "FlintModel", package: "Flint")],
            swiftSettings: strict),
        .executableTarget(name: "FuzzRules", dependencies: ["FuzzSupport", "RulesFuzzing"], swiftSettings: strict),
        .executableTarget(name: "FuzzRulesExpression", dependencies: ["FuzzSupport", "RulesFuzzing"], swiftSettings: strict),
        .executableTarget(
            name: "FuzzRegex", dependencies: ["FuzzSupport", .product(name: "FlintRules", package: "Flint")], swiftSettings: strict),
        // The server's Firestore calls, reached with @testable (scripts/fuzz.sh builds with testing).
        .executableTarget(
            name: "FuzzRequests",
            dependencies: [
                "FuzzSupport", .product(name: "FlintServer", package: "Flint"), .product(name: "FlintEngine", package: "Flint"),
                .product(name: "FlintModel", package: "Flint"), .product(name: "FlintWire", package: "Flint"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"), .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
    ]
)
