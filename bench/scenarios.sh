#!/usr/bin/env bash
# Times the five guide scenario suites (Tests/FlintScenarioTests) with the Swift client
# embedded and over gRPC, each suite alone, three runs each; prints the median seconds.
# Debug build, as the tests run in CI: this compares the two backends, not absolute speed.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests >/dev/null
suites=(BookstoreScenarioTests VibesScenarioTests LifeSignalScenarioTests HallooScenarioTests MessageAIScenarioTests)
printf '| suite | embedded s | remote s |\n| --- | --- | --- |\n'
for suite in "${suites[@]}"; do
  row="| $suite"
  for backend in embedded remote; do
    times=()
    for _ in 1 2 3; do
      t=$(FLINT_SCENARIO_BACKENDS=$backend swift test --skip-build --filter "$suite" 2>&1 \
        | sed -n "s/.*Suite $suite passed after \([0-9.]*\) seconds.*/\1/p" | head -n1)
      [[ -n "$t" ]] || { echo "$suite ($backend) failed" >&2; exit 1; }
      times+=("$t")
    done
    median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)
    row+=" | $median"
  done
  echo "$row |"
done
