// swift-tools-version: 6.2
// Builds the protoc plugins that scripts/gen-protos.sh uses, from the same package versions
// the project depends on.
import PackageDescription

let package = Package(
    name: "FlintProtocPlugins",
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf", exact: "2.4.1"),
    ],
    targets: []
)
