#!/usr/bin/env bash
# Builds SqlCipherKit's DocC documentation with the toolchain's own docc, without a package plugin:
# symbol graphs from the compiler, then `docc convert` of Sources/SqlCipherKit/SqlCipherKit.docc
# into a static site in .build/docs (open .build/docs/documentation/sqlcipherkit/index.html
# through any static web server).
#
# Fails (exit 1) when a public symbol of SqlCipherKit has no doc comment (scripts/docs-coverage.swift)
# or when docc reports any warning (a broken symbol or article link, a malformed topic group, ...).
# scripts/test.sh runs it as a step of the test run.
#
# The symbol graphs are extracted from the module the normal debug build emits (the one
# scripts/test.sh has just built, so the build below has nothing to do): `swift
# symbolgraph-extract` reads SqlCipherKit.swiftmodule, its .swiftdoc (the doc comments) and
# .swiftsourceinfo (the source locations docs-coverage checks) in about a second. This used to be a
# second build with -emit-symbol-graph in a scratch folder of its own: minutes of CI for the same
# graphs.
set -euo pipefail
cd "$(dirname "$0")/.."
output=${SQLCIPHERKIT_DOCS_OUTPUT:-.build/docs}
graphs=$(mktemp -d)
trap 'rm -rf "$graphs"' EXIT

# The toolchain's docc: beside the swift driver (e.g. /opt/swift/usr/bin/docc), else on the PATH.
swift_dir=$(dirname "$(readlink -f "$(command -v swift)")")
docc=${DOCC:-$swift_dir/docc}
if [ ! -x "$docc" ]; then docc=$(command -v docc || true); fi
if [ -z "$docc" ] || [ ! -x "$docc" ]; then
  echo "docs.sh: docc not found beside $(command -v swift) nor on the PATH; set DOCC to its path" >&2
  exit 1
fi

set +e
swift build --target SqlCipherKit 2>&1 | grep -v '^\[[0-9]*/[0-9]*\]' >&2
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "docs.sh: building SqlCipherKit failed" >&2
  exit 1
fi
bin=$(swift build --show-bin-path)
triple=$(swift -print-target-info | sed -n 's/^ *"triple": "\(.*\)",*$/\1/p' | head -1)
set +e
swift symbolgraph-extract -module-name SqlCipherKit -target "$triple" \
  -I "$bin/Modules" -I "$bin" \
  -Xcc -fmodule-map-file="$bin/CSqlCipherBridge.build/module.modulemap" \
  -minimum-access-level public -output-dir "$graphs" >&2
status=$?
set -e
if [ "$status" -ne 0 ] || [ ! -f "$graphs/SqlCipherKit.symbols.json" ]; then
  echo "docs.sh: extracting SqlCipherKit's symbol graphs failed" >&2
  exit 1
fi

# Undocumented public symbols: docc itself does not warn about them.
swift scripts/docs-coverage.swift "$graphs"

# docc's warnings, as errors; its output is kept to show them.
rm -rf "$output"
log=$(mktemp)
trap 'rm -rf "$graphs" "$log"' EXIT
set +e
"$docc" convert Sources/SqlCipherKit/SqlCipherKit.docc \
  --additional-symbol-graph-dir "$graphs" \
  --fallback-display-name SqlCipherKit \
  --fallback-bundle-identifier org.sqlcipherkit.SqlCipherKit \
  --transform-for-static-hosting \
  --warnings-as-errors \
  --output-path "$output" >"$log" 2>&1
status=$?
set -e
if [ "$status" -ne 0 ] || grep -qiE '(^|[^a-z])(warning|error):' "$log"; then
  cat "$log" >&2
  echo "docs.sh: docc reported problems (above); fix them" >&2
  exit 1
fi
echo "docs.sh: documentation built without warnings in $output (open $output/documentation/sqlcipherkit/index.html)"
