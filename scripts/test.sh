#!/usr/bin/env bash
# Runs SqlCipherKit's whole test suite: once against SQLCipher 4.x and once against SQLCipher
# 3.4.1 (where the distribution has it). Installs what it needs through apt when it is missing.
#
# Extra arguments go to `swift test` (e.g. --filter DatabaseTests); the build options among them
# (--scratch-path, --build-path, -c/--configuration) go to `swift build` too, so both use the same
# build. The suite is built once and run once per library; a whole-suite run then builds the DocC
# documentation (scripts/docs.sh) and lints the sources (scripts/lint.sh). Exit status: 0 when
# every run and step passed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

build_args=()
test_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --scratch-path|--build-path|-c|--configuration)
      [ $# -ge 2 ] || { echo "test.sh: $1 needs a value" >&2; exit 2; }
      build_args+=("$1" "$2"); test_args+=("$1" "$2"); shift 2 ;;
    --scratch-path=*|--build-path=*|--configuration=*)
      build_args+=("$1"); test_args+=("$1"); shift ;;
    *)
      test_args+=("$1"); shift ;;
  esac
done

mapfile -t libraries < <(bash scripts/sqlcipher-libraries.sh)
[ ${#libraries[@]} -gt 0 ] || exit 1

# Build once; show the compiler's messages but not the progress lines.
set +e
swift build --build-tests ${build_args[@]+"${build_args[@]}"} 2>&1 | grep -v '^\[[0-9]*/[0-9]*\]'
build_status=${PIPESTATUS[0]}
set -e
if [ "$build_status" -ne 0 ]; then
  echo "test.sh: the build failed" >&2
  exit "$build_status"
fi

# At most 24 tests run at once. Swift Testing otherwise starts every test together, and with
# ~700 tests holding databases (3 descriptors each) the process passed 1,400 open descriptors,
# where Foundation's Process.run on Linux crashed in memcpy (SIGSEGV) while a child process was
# spawned: it copies the descriptor list while other threads open files. Measured: 125
# descriptors at most with this limit, and the same run time (67 s against 65 s).
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-24}"

# Each run's output is also kept in a log (.build/test-logs, replaced by the next run), so that a
# failure is summarised again at the very end: a CI log that shows only its last part still names
# what failed and how. Not in the temporary directory: LeakTests scans it for the secrets the tests
# write, and a failure message that quoted one would be found there.
logs=.build/test-logs
rm -rf "$logs"
mkdir -p "$logs"
status=0
failed_logs=()
for lib in "${libraries[@]}"; do
  echo "=== SqlCipherKit tests against $lib"
  log="$logs/$(basename "$lib").log"
  set +e
  SQLCIPHERKIT_LIBRARY="$lib" swift test --skip-build ${test_args[@]+"${test_args[@]}"} 2>&1 | tee "$log"
  run_status=${PIPESTATUS[0]}
  set -e
  if [ "$run_status" -ne 0 ]; then
    status=1
    failed_logs+=("$lib|$log|$run_status")
    echo "=== FAILED against $lib (exit status $run_status)"
  fi
done
if [ ${#libraries[@]} -lt 2 ]; then
  echo "=== note: only ${libraries[*]} is installed; the suite ran against it alone"
fi

# Documentation and formatting: the DocC build must have no warning and no undocumented public
# symbol (scripts/docs.sh), and swift-format must have no finding (scripts/lint.sh). Part of every
# whole-suite run; a run narrowed with --filter or --skip leaves them out.
narrowed=0
for arg in ${test_args[@]+"${test_args[@]}"}; do
  case "$arg" in --filter|--filter=*|--skip|--skip=*) narrowed=1 ;; esac
done
if [ "$narrowed" -eq 0 ]; then
  for step in docs lint; do
    echo "=== scripts/$step.sh"
    if ! bash "scripts/$step.sh"; then
      status=1
      echo "=== FAILED: scripts/$step.sh"
    fi
  done
fi
# The summary of every failed run, last, where a truncated log still shows it: the issues Swift
# Testing and XCTest reported (with the lines that follow each), then the run's last lines (a crash
# prints its signal there, and no test is marked failed).
for entry in ${failed_logs[@]+"${failed_logs[@]}"}; do
  IFS='|' read -r lib log run_status <<<"$entry"
  echo "=== summary: the run against $lib failed (exit status $run_status)"
  grep -n -E '✘ (Test|Suite).* failed|Fatal error|Caught signal|crashed|error: ' "$log" | head -n 60 || true
  echo "--- the issues they recorded:"
  grep -n -A 3 -E 'recorded an issue|XCTAssert|Expectation failed' "$log" | grep -v '^[0-9]*-↳' | head -n 120 || true
  echo "--- its last lines:"
  tail -n 12 "$log"
done
exit $status
