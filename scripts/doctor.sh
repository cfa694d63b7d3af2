#!/usr/bin/env bash
# Installs what is missing (scripts/install-deps.sh), builds sqlcipher-doctor and runs it.
# Arguments go to the doctor (e.g. --json, --library PATH, inspect FILE...); its exit status is
# this script's: 0 all checks passed, 1 a check failed, 2 usage error.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
set +e
swift build -q --product sqlcipher-doctor 2>&1 | grep -v '^\[[0-9]*/[0-9]*\]' >&2
build_status=${PIPESTATUS[0]}
set -e
if [ "$build_status" -ne 0 ]; then
  echo "doctor.sh: the build failed" >&2
  exit "$build_status"
fi
exec "$(swift build --product sqlcipher-doctor --show-bin-path)/sqlcipher-doctor" "$@"
