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
# The symbol graphs come from a build of the SqlCipherKit target in its own scratch folder
# (.build/docs-build): the flags that emit them differ from the normal build's, and sharing the
# normal build folder would make every later `swift build` rebuild everything.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=${SQLCIPHERKIT_DOCS_SCRATCH:-.build/docs-build}
output=${SQLCIPHERKIT_DOCS_OUTPUT:-.build/docs}
mkdir -p "$scratch"
graphs="$(cd "$scratch" && pwd)/symbol-graphs"

# The toolchain's docc: beside the swift driver (e.g. /opt/swift/usr/bin/docc), else on the PATH.
swift_dir=$(dirname "$(readlink -f "$(command -v swift)")")
docc=${DOCC:-$swift_dir/docc}
if [ ! -x "$docc" ]; then docc=$(command -v docc || true); fi
if [ -z "$docc" ] || [ ! -x "$docc" ]; then
  echo "docs.sh: docc not found beside $(command -v swift) nor on the PATH; set DOCC to its path" >&2
  exit 1
fi

build=(swift build --target SqlCipherKit --scratch-path "$scratch"
       -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs"
       -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public)
# The graphs are written when the module is emitted. An up-to-date build emits nothing, so remove
# the module (re-emitting it takes seconds; the object files stay) and the old graphs first.
bin=$("${build[@]}" --show-bin-path)
rm -rf "$graphs"
mkdir -p "$graphs"
rm -f "$bin/Modules/SqlCipherKit.swiftmodule" "$bin/SqlCipherKit.swiftmodule"
set +e
"${build[@]}" 2>&1 | grep -v '^\[[0-9]*/[0-9]*\]' >&2
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ] || [ ! -f "$graphs/SqlCipherKit.symbols.json" ]; then
  echo "docs.sh: building SqlCipherKit's symbol graphs failed" >&2
  exit 1
fi

# Undocumented public symbols: docc itself does not warn about them.
swift scripts/docs-coverage.swift "$graphs"

# docc's warnings, as errors; its output is kept to show them.
rm -rf "$output"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
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
