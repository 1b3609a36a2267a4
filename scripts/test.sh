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
# generated service code names, and the map key the generated maps of values name, are written
# by hand and live beside it.
scripts/gen-protos.sh "$tmp/proto-swift" >/dev/null
written_by_hand=(-x OrderedProtobufSerializer.swift -x ProtobufExactString.swift)
if ! diff -r -q "${written_by_hand[@]}" "$tmp/proto-swift" Sources/FlintProto >/dev/null; then
  echo "Sources/FlintProto is stale: run scripts/gen-protos.sh" >&2
  diff -r -q "${written_by_hand[@]}" "$tmp/proto-swift" Sources/FlintProto >&2 || true
  exit 1
fi

# The durable store links the system SQLite.
if [ ! -f /usr/include/sqlite3.h ]; then
  apt-get install -y libsqlite3-dev >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y libsqlite3-dev >/dev/null; }
fi

# Each test stage has a time limit well above what it takes (a few minutes each), so a hang
# fails with the stage named instead of running out the whole run's clock. The limit sends
# SIGABRT to the stage's processes, and Python stages print every thread's stack on it.
stage() {
  local limit=$1 status=0
  shift
  timeout --signal=ABRT --kill-after=60 "$limit" "$@" || status=$?
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "test.sh: '$*' did not finish within $limit" >&2
  fi
  return "$status"
}
export PYTHONFAULTHANDLER=1

swift build --build-tests
# The fuzz targets (a package of their own, built only by scripts/fuzz.sh) still compile.
scripts/check-fuzz.sh
# The differential suites start Google's emulator (a JVM that takes both cores for seconds while
# it warms up); they run after the others so its start does not starve their waits.
stage 25m swift test --skip-build --skip FlintDifferentialTests
stage 15m swift test --skip-build --filter FlintDifferentialTests

# The official clients, unchanged, against a Flint started by the suite.
stage 10m scripts/interop.sh
# The Python client's own system tests, written against production, against `flint exec`.
stage 10m scripts/client-system-tests.sh
# The same, with Flint keeping its databases in SQLite (--data-dir).
stage 10m scripts/client-system-tests.sh durable
# Google's Go client (grpc-go): the integration tests it ships, then Flint's own Go tests.
stage 10m scripts/go-client-tests.sh
