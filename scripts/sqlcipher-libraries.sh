#!/usr/bin/env bash
# Prints the SQLCipher libraries the test scripts run against, newest first, one path a line:
# libsqlcipher.so.1 (SQLCipher 4.x) and libsqlcipher.so.0 (3.4.1) where they are installed.
# Exits 1 with a message when there is none. Shared by test.sh and reliability-report.sh.
set -euo pipefail
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
libdir=/usr/lib/$multiarch
found=0
for name in libsqlcipher.so.1 libsqlcipher.so.0; do
  if [ -e "$libdir/$name" ]; then echo "$libdir/$name"; found=1; fi
done
if [ "$found" -eq 0 ]; then
  echo "no SQLCipher library found in $libdir; run scripts/install-deps.sh" >&2
  exit 1
fi
