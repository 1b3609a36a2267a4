#!/usr/bin/env bash
# Drives a Flint built by `swift build` with the official Python clients (google-cloud-firestore,
# firebase-admin), installed at pinned versions into .venv on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

requirements=Tests/Interop/requirements.txt
if [ ! -x .venv/bin/python ]; then
  if ! python3 -m venv .venv 2>/dev/null; then
    # Debian's python3 keeps venv in a package of its own.
    rm -rf .venv
    apt-get install -y python3-venv >/dev/null
    python3 -m venv .venv
  fi
fi
# Reinstall only when the pins change.
if ! cmp -s "$requirements" .venv/installed-requirements.txt; then
  .venv/bin/pip install --quiet --disable-pip-version-check -r "$requirements"
  cp "$requirements" .venv/installed-requirements.txt
fi

FLINT_BINARY="$(swift build --show-bin-path)/flint" \
  exec .venv/bin/python -m pytest -p no:cacheprovider -o faulthandler_timeout=120 -q Tests/Interop "$@"
