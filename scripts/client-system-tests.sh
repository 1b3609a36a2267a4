#!/usr/bin/env bash
# Runs the system tests that google-cloud-firestore ships in its source release (written
# against production Firestore) against a Flint started by `flint exec`. The release is the
# version the interop suite pins, checked against its hash and kept under .build. Run after
# scripts/interop.sh, which installs the test dependencies into .venv.
#   scripts/client-system-tests.sh            # databases in memory
#   scripts/client-system-tests.sh durable    # databases in a new SQLite data directory
set -euo pipefail
cd "$(dirname "$0")/.."

store=()
case "${1:-}" in
  "") ;;
  durable)
    data=$(mktemp -d)
    trap 'rm -rf "$data"' EXIT
    store=(--data-dir "$data") ;;
  *) echo "usage: $0 [durable]" >&2; exit 2 ;;
esac

version=2.34.1
sha256=d403b12375e4f68176bb638451417330a7a66d11c9cace98f7778109b884d9ab
work=.build/client-system-tests
archive=$work/google_cloud_firestore-$version.tar.gz

if ! { [ -f "$archive" ] && echo "$sha256  $archive" | sha256sum -c --status; }; then
  rm -rf "$work"
  mkdir -p "$work"
  .venv/bin/pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    "google-cloud-firestore==$version" -d "$work"
  if ! echo "$sha256  $archive" | sha256sum -c --status; then
    echo "google-cloud-firestore $version: the downloaded source release is not the expected one" >&2
    exit 1
  fi
fi
rm -rf "$work/google_cloud_firestore-$version"
tar -xzf "$archive" -C "$work"
tests=$work/google_cloud_firestore-$version/tests/system

# The suite skips what Google's emulator does not serve; Flint serves explain and partition
# queries, and vector searches once the suite's own seed documents are written, so those run
# too. Enterprise databases (BSON types, pipelines) are out of scope.
sed -i \
  -e 's/FIRESTORE_EMULATOR, reason="Query profile not supported in emulator."/False, reason="served by Flint"/' \
  -e 's/FIRESTORE_EMULATOR, reason="PartitionQuery not implemented in emulator"/False, reason="served by Flint"/' \
  -e 's/FIRESTORE_EMULATOR, reason="Require index and seed data"/False, reason="seeded below"/' \
  "$tests/test_system.py" "$tests/test_system_async.py"
# A pattern that no longer matches would silently leave those tests skipped.
for reason in "served by Flint" "seeded below"; do
  for file in test_system.py test_system_async.py; do
    if ! grep -q "reason=\"$reason\"" "$tests/$file"; then
      echo "client system tests: no emulator skip was turned on in $file ($reason)" >&2
      exit 1
    fi
  done
done

flint="$(swift build --show-bin-path)/flint"
export PYTHON="$PWD/.venv/bin/python" GCLOUD_PROJECT=flint-client-system-tests
# The plugin that ends the run once its results are reported (see the module's docstring).
export PYTHONPATH="$PWD/Tests/Interop${PYTHONPATH:+:$PYTHONPATH}"
cd "$tests"
"$flint" exec --log-level error "${store[@]}" -- bash -c '
  set -e
  "$PYTHON" -c "
import sys
sys.path.insert(0, \"util\")
from bootstrap_vector_index import create_vector_documents
from google.cloud import firestore
create_vector_documents(firestore.Client(), \"vector_search\")
"
  exec "$PYTHON" -m pytest -p no:cacheprovider -p exit_after_report -p stalls -o faulthandler_timeout=120 -q test_system.py test_system_async.py -k "not enterprise and not bson"
'
