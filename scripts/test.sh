#!/usr/bin/env bash
# Runs SqlCipherKit's whole test suite: once against SQLCipher 4.x and once against SQLCipher
# 3.4.1 (where the distribution has it). Installs what it needs through apt when it is missing.
# Extra arguments go to `swift test` (e.g. --filter DatabaseTests).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
libdir=/usr/lib/$multiarch
libraries=()
for name in libsqlcipher.so.1 libsqlcipher.so.0; do
  [ -e "$libdir/$name" ] && libraries+=("$libdir/$name")
done
if [ ${#libraries[@]} -eq 0 ]; then
  echo "test.sh: no SQLCipher library found in $libdir" >&2
  exit 1
fi

swift build --build-tests "$@" 2>&1 | grep -v '^\[' || true
swift build --build-tests "$@" >/dev/null

status=0
for lib in "${libraries[@]}"; do
  echo "=== SqlCipherKit tests against $lib"
  if ! SQLCIPHERKIT_LIBRARY="$lib" swift test --skip-build "$@"; then
    status=1
    echo "=== FAILED against $lib"
  fi
done
exit $status
