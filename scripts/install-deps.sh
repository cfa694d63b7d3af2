#!/usr/bin/env bash
# Installs what SqlCipherKit's build, doctor and tests need, through apt, when it is missing:
#   - SQLCipher 4.x (libsqlcipher1, plus the `sqlcipher` CLI of the same version),
#   - SQLCipher 3.4.1 (libsqlcipher0) where the distribution has it, and its CLI unpacked
#     beside the 4.x one (both CLIs are called `sqlcipher`, so only one can be installed),
#   - libsqlite3-dev (the plaintext SQLite the tests link on purpose) and the sqlite3 CLI (a test
#     reads a decrypted export with it), a C compiler and binutils
#     (the linking tests build small C programs and read ELF files), musl-tools (the tests check
#     that the C bridge also compiles for musl).
# Idempotent and non-interactive; prints nothing when everything is already present.
set -euo pipefail

SQLCIPHER3_CLI_DIR=${SQLCIPHERKIT_CLI3_DIR:-/opt/sqlcipherkit/sqlcipher-3.4.1}
export DEBIAN_FRONTEND=noninteractive

# Optional `sudo` for non-root users; CI and the workplace run as root.
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

. /etc/os-release
codename=${VERSION_CODENAME:-}
multiarch=$(gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
libdir=/usr/lib/$multiarch

updated=0
apt_update() {
  if [ "$updated" -eq 0 ]; then
    $SUDO apt-get update -qq >/dev/null
    updated=1
  fi
}
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# Debian 12 ships SQLCipher 3.4.1 in main and 4.6.1 in bookworm-backports.
backports=()
if [ "${ID:-}" = "debian" ] && [ "$codename" = "bookworm" ]; then
  src=/etc/apt/sources.list.d/sqlcipherkit-bookworm-backports.sources
  if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    $SUDO tee "$src" >/dev/null <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    updated=0
  fi
  backports=(-t bookworm-backports)
fi

need=()
for p in libsqlite3-dev sqlite3 gcc libc6-dev binutils musl-tools; do have_pkg "$p" || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
  apt_update
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# SQLCipher 4.x: the library and its CLI, from backports on bookworm, else from the main archive.
if ! have_pkg libsqlcipher1 || ! have_pkg sqlcipher || ! sqlcipher -version 2>/dev/null | grep -q 'SQLCipher 4'; then
  apt_update
  $SUDO apt-get install -y -qq --no-install-recommends "${backports[@]}" libsqlcipher1 sqlcipher >/dev/null
fi

# SQLCipher 3.4.1 where the distribution has it (Debian 12 main). Later releases dropped it.
if ! have_pkg libsqlcipher0; then
  apt_update
  if apt-cache show libsqlcipher0 >/dev/null 2>&1; then
    $SUDO apt-get install -y -qq --no-install-recommends libsqlcipher0 >/dev/null
  fi
fi

# The 3.4.1 CLI: unpack the main archive's `sqlcipher` 3.4.1 package into its own directory.
if have_pkg libsqlcipher0 && [ ! -x "$SQLCIPHER3_CLI_DIR/usr/bin/sqlcipher" ]; then
  apt_update
  ver=$(apt-cache madison sqlcipher | awk -F'|' '$2 ~ /^ *3\.4/ {gsub(/ /,"",$2); print $2; exit}')
  if [ -n "$ver" ]; then
    tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download -qq "sqlcipher=$ver" >/dev/null 2>&1)
    $SUDO mkdir -p "$SQLCIPHER3_CLI_DIR"
    $SUDO dpkg-deb -x "$tmp"/sqlcipher_*.deb "$SQLCIPHER3_CLI_DIR"
    rm -rf "$tmp"
  fi
fi

# Report only problems.
[ -e "$libdir/libsqlcipher.so.1" ] || [ -e "$libdir/libsqlcipher.so.2" ] || echo "install-deps: warning: no SQLCipher 4.x library in $libdir" >&2
exit 0
