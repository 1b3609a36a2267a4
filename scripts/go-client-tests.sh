#!/usr/bin/env bash
# Runs two suites through Google's Go client (cloud.google.com/go/firestore, from Debian's
# golang-google-cloud-dev; it speaks gRPC through grpc-go), each against a Flint started by
# `flint exec`:
#   - the integration tests the client ships, written against production Firestore;
#   - Flint's own Go tests in Tests/GoClient.
set -euo pipefail
cd "$(dirname "$0")/.."

gocode=/usr/share/gocode
needs=(golang-go golang-google-cloud-dev openssl)
if ! command -v go >/dev/null || ! command -v openssl >/dev/null ||
  [ ! -d "$gocode/src/cloud.google.com/go/firestore" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "${needs[@]}" >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get install -y -q "${needs[@]}" >/dev/null; }
fi

work=$PWD/.build/go-client-tests
rm -rf "$work/gopath" "$work/logs"
mkdir -p "$work/gopath/src/flint" "$work/logs"
cp -r Tests/GoClient "$work/gopath/src/flint/goclient"
# Debian's Go libraries are laid out for GOPATH builds; nothing is fetched.
export GOPATH="$work/gopath:$gocode" GO111MODULE=off GOPROXY=off GOCACHE="$work/cache"

# The client's suite runs only when given a project and a service-account key. Under
# FIRESTORE_EMULATOR_HOST the client never uses the key (it sends `Bearer owner`), so a
# throwaway one made here serves.
if [ ! -f "$work/key.json" ]; then
  openssl genrsa -out "$work/key.pem" 2048 2>/dev/null
  python3 - "$work/key.pem" "$work/key.json" <<'EOF'
import json, sys
key = open(sys.argv[1]).read()
json.dump({"type": "service_account", "project_id": "flint-go-integration",
           "private_key_id": "0", "private_key": key, "client_id": "0",
           "client_email": "tests@flint-go-integration.iam.gserviceaccount.com",
           "token_uri": "http://127.0.0.1:9/token"}, open(sys.argv[2], "w"))
EOF
fi

flint="$(swift build --show-bin-path)/flint"

# Production refuses a query that needs a composite index nobody defined, and the suite checks
# that it does; `--require-indexes` has Flint refuse it the same way.
"$flint" exec --log-level error --require-indexes -- env \
  GCLOUD_TESTS_GOLANG_FIRESTORE_PROJECT_ID=flint-go-integration \
  GCLOUD_TESTS_GOLANG_FIRESTORE_KEY="$work/key.json" \
  go test -count=1 -v -run '^TestIntegration_' cloud.google.com/go/firestore \
  | tee "$work/logs/integration.log"

"$flint" exec --log-level error -- go test -count=1 -v flint/goclient \
  | tee "$work/logs/flint.log"

# A suite that skips everything also passes, so each must show its tests passing and none skipped.
check() {
  local log=$1 least=$2 passed skipped
  passed=$(grep -c '^--- PASS' "$log" || true)
  skipped=$(grep -c -- '--- SKIP' "$log" || true)
  if [ "$passed" -lt "$least" ] || [ "$skipped" -ne 0 ]; then
    echo "go-client-tests: $log has $passed passing and $skipped skipped tests; want at least $least passing, none skipped" >&2
    exit 1
  fi
  echo "go-client-tests: $passed passed ($(basename "$log"))"
}
check "$work/logs/integration.log" 32
check "$work/logs/flint.log" 10
