#!/usr/bin/env bash
# Builds the benchmark in release mode and runs it at each size in a fresh process, so the
# resident memory per document is not blurred by earlier runs.
#   bench/run.sh [SIZE...]      default: 10000 100000 1000000
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product FlintBench >/dev/null
sizes=("$@")
[[ ${#sizes[@]} -eq 0 ]] && sizes=(10000 100000 1000000)
for n in "${sizes[@]}"; do
  .build/release/FlintBench "$n"
done
