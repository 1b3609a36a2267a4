#!/usr/bin/env bash
# Type-checks the fuzz package (fuzz/) against the debug build of Flint's modules, in seconds.
# scripts/fuzz.sh builds it with sanitizers, which takes minutes, so scripts/test.sh runs this
# instead: a change to Flint's types that breaks a fuzz target is then told at once, not at the
# next fuzzing run. Needs `swift build --build-tests` first (its modules allow @testable).
set -euo pipefail
cd "$(dirname "$0")/.."

modules=.build/debug/Modules
[ -d "$modules" ] || { echo "check-fuzz.sh: build first (swift build --build-tests)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The C modules Flint's Swift modules import, as SwiftPM's build plan names them (each once: a
# plugin's copy of a module, in a *-tool.build directory, would define it twice).
flags=(-swift-version 6 -I "$modules" -I "$out")
while read -r map; do
  flags+=(-Xcc "$map")
done < <(grep -o -- '-fmodule-map-file=[^"]*' .build/debug.yaml | grep -v -- '-tool.build/' | sort -u)
# The fuzz package's own C driver.
printf 'module CFuzzDriver {\n  header "%s"\n  export *\n}\n' \
  "$PWD/fuzz/Sources/CFuzzDriver/include/CFuzzDriver.h" > "$out/module.modulemap"
flags+=(-Xcc "-fmodule-map-file=$out/module.modulemap")

# Libraries first, as modules the executables import; then each executable.
for library in FuzzSupport RulesFuzzing; do
  swiftc "${flags[@]}" -parse-as-library -emit-module -module-name "$library" \
    -emit-module-path "$out/$library.swiftmodule" fuzz/Sources/"$library"/*.swift
done
for executable in FuzzRules FuzzRulesExpression FuzzRegex FuzzRequests; do
  swiftc "${flags[@]}" -typecheck -module-name "$executable" fuzz/Sources/"$executable"/*.swift
done
echo "fuzz targets type-check"
