#!/usr/bin/env bash
# Coverage-guided fuzzing of Flint's own code with libFuzzer (the package in fuzz/).
#   scripts/fuzz.sh TARGET [SECONDS] [libFuzzer options...]
# TARGET: rules (whole rules files), rules-expression (one condition, evaluated), regex
# (rules' RE2 patterns and texts), requests (google.firestore.v1 requests, binary and JSON, put to
# the server's calls, and HTTP requests to its router). Findings land in
# .build/fuzz/TARGET/findings; replay one with
#   fuzz/.build/release/FuzzNAME FILE
# The corpus in .build/fuzz/TARGET/corpus grows across runs. Not part of scripts/test.sh (which
# only type-checks the targets, scripts/check-fuzz.sh): a run proves nothing in a fixed time;
# what it finds becomes a unit test.
set -euo pipefail
cd "$(dirname "$0")/.."

target=${1:?"usage: $0 rules|rules-expression|regex|requests [SECONDS] [options]"}
seconds=${2:-600}
shift $(( $# < 2 ? $# : 2 ))

case "$target" in
  rules) product=FuzzRules ;;
  rules-expression) product=FuzzRulesExpression ;;
  regex) product=FuzzRegex ;;
  requests) product=FuzzRequests ;;
  *) echo "unknown target: $target" >&2; exit 2 ;;
esac

# lld: gold fails on libFuzzer's main beside Swift's. Testing: FuzzRequests reaches internal calls.
# The cached build plan does not see source files added to Flint (a dependency of this package)
# since it was made, so the plan is made again each time.
swift build --package-path fuzz -c release --product "$product" --disable-build-manifest-caching \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld -Xswiftc -enable-testing
binary=fuzz/.build/release/$product

work=.build/fuzz/$target
mkdir -p "$work/corpus" "$work/seeds" "$work/findings"
python3 scripts/fuzz-seeds.py "$target" "$work/seeds"
export LSAN_OPTIONS=suppressions=$PWD/fuzz/lsan-suppressions.txt
options=()
if [ "$target" = requests ]; then
  "$binary" --write-seeds "$work/seeds"
  # LeakSanitizer reports about one ruleset's worth here however many inputs run: memory it
  # cannot trace through Swift's tagged pointers, not a leak per request. Memory that grows
  # shows in -rss_limit_mb instead.
  options=(-detect_leaks=0)
fi

exec "$binary" "$work/corpus" "$work/seeds" -max_total_time="$seconds" -timeout=10 \
  -rss_limit_mb=4096 -max_len=4096 -artifact_prefix="$work/findings/" -print_final_stats=1 "${options[@]}" "$@"
