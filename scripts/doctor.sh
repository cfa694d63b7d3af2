#!/usr/bin/env bash
# Installs what is missing (scripts/install-deps.sh), builds sqlcipher-doctor and runs it.
# Arguments go to the doctor (e.g. --json, --library PATH, inspect FILE...); its exit status is
# this script's: 0 all checks passed, 1 a check failed, 2 usage error.
set -euo pipefail
# Relative paths among the arguments (inspect FILE, --library PATH) are the caller's.
caller_dir=$(pwd)
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
echo "doctor.sh: building sqlcipher-doctor (the first build takes a few minutes)" >&2
set +e
swift build -q --product sqlcipher-doctor 2>&1 | grep -v '^\[[0-9]*/[0-9]*\]' >&2
build_status=${PIPESTATUS[0]}
set -e
if [ "$build_status" -ne 0 ]; then
  echo "doctor.sh: the build failed" >&2
  exit "$build_status"
fi
doctor="$(swift build --product sqlcipher-doctor --show-bin-path)/sqlcipher-doctor"
cd "$caller_dir"
exec "$doctor" "$@"
