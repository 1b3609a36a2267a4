#!/usr/bin/env bash
# Runs every Flint test. Installs what a fresh machine of this kind lacks, then builds and
# runs the Swift test suites.
set -euo pipefail
cd "$(dirname "$0")/.."

# The fixtures must be exactly what their generator writes.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 scripts/gen-fixtures.py "$tmp"
if ! diff -r -q "$tmp" fixtures >/dev/null; then
  echo "fixtures/ is stale: run python3 scripts/gen-fixtures.py" >&2
  diff -r -q "$tmp" fixtures >&2 || true
  exit 1
fi

# The generated protobuf Swift must be exactly what the .proto files give. The serializer the
# generated service code names is written by hand and lives beside it.
scripts/gen-protos.sh "$tmp/proto-swift" >/dev/null
written_by_hand=(-x OrderedProtobufSerializer.swift)
if ! diff -r -q "${written_by_hand[@]}" "$tmp/proto-swift" Sources/FlintProto >/dev/null; then
  echo "Sources/FlintProto is stale: run scripts/gen-protos.sh" >&2
  diff -r -q "${written_by_hand[@]}" "$tmp/proto-swift" Sources/FlintProto >&2 || true
  exit 1
fi

# The durable store links the system SQLite.
if [ ! -f /usr/include/sqlite3.h ]; then
  apt-get install -y libsqlite3-dev >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y libsqlite3-dev >/dev/null; }
fi

swift build --build-tests
# The differential suites start Google's emulator (a JVM that takes both cores for seconds while
# it warms up); they run after the others so its start does not starve their waits.
swift test --skip-build --skip FlintDifferentialTests
swift test --skip-build --filter FlintDifferentialTests

# The official clients, unchanged, against a Flint started by the suite.
scripts/interop.sh
# The Python client's own system tests, written against production, against `flint exec`.
scripts/client-system-tests.sh
