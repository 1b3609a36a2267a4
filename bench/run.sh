#!/usr/bin/env bash
# Builds the benchmark in release mode and runs each size in a fresh process, so memory per
# document is not blurred by earlier runs.
#   bench/run.sh [documents|queries|transactions|listeners|rules|durable|export|managed-export|client] [SIZE...]    default: documents 10000 100000 1000000
#   (for transactions, SIZE is increments per client; for listeners, the number of query
#   listeners; for rules, the number of decisions; for client, the number of round trips)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=documents
case "${1:-}" in documents|queries|transactions|listeners|rules|durable|export|managed-export|client) mode=$1; shift ;; esac
swift build -c release --product FlintBench >/dev/null
sizes=("$@")
[[ ${#sizes[@]} -eq 0 ]] && sizes=(10000 100000 1000000)
for n in "${sizes[@]}"; do
  if [[ $mode == documents ]]; then .build/release/FlintBench "$n"; else .build/release/FlintBench "$mode" "$n"; fi
done
