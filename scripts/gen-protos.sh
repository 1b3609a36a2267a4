#!/usr/bin/env bash
# Regenerates the Swift for proto/ into Sources/FlintProto (or the folder given), with Debian's
# protoc and the protoc-gen-swift / protoc-gen-grpc-swift-2 plugins built from the mirrored
# packages. The generated Swift is committed; scripts/test.sh checks that it is current.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-Sources/FlintProto}

if ! command -v protoc >/dev/null; then
  apt-get install -y protobuf-compiler >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y protobuf-compiler >/dev/null; }
fi

plugins=scripts/protoc-plugins
swift build -c release --package-path "$plugins" --scratch-path .build-protoc-plugins \
  --product protoc-gen-swift >/dev/null
swift build -c release --package-path "$plugins" --scratch-path .build-protoc-plugins \
  --product protoc-gen-grpc-swift-2 >/dev/null
bin=$PWD/.build-protoc-plugins/release

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/*.pb.swift "$out"/*.grpc.swift
protos=$(cd proto && find . -name '*.proto' | sed 's|^\./||' | sort)
services=$(cd proto && grep -l '^service ' $protos)
(cd proto && protoc -I . -I /usr/include \
  --plugin=protoc-gen-swift="$bin/protoc-gen-swift" \
  --swift_opt=Visibility=Public,FileNaming=PathToUnderscores --swift_out="$out" \
  $protos)
(cd proto && protoc -I . -I /usr/include \
  --plugin=protoc-gen-grpc-swift-2="$bin/protoc-gen-grpc-swift-2" \
  --grpc-swift-2_opt=Visibility=Public,FileNaming=PathToUnderscores,Client=true,Server=true --grpc-swift-2_out="$out" \
  $services)
# Answers are encoded with map entries in key order (see OrderedProtobufSerializer.swift).
sed -i 's/GRPCProtobuf\.ProtobufSerializer</OrderedProtobufSerializer</g' "$out"/*.grpc.swift
echo "generated $(ls "$out" | wc -l) files in $out"
