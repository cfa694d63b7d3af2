#!/usr/bin/env bash
# Regenerates the SqlCipherKit test fixtures with the REAL command-line tools:
#   - SQLCipher 4.6.1 CLI   (default /usr/bin/sqlcipher,                           override SQLCIPHERKIT_CLI4)
#   - SQLCipher 3.4.1 CLI   ($SQLCIPHERKIT_CLI3_DIR/usr/bin/sqlcipher, default dir /opt/sqlcipherkit/sqlcipher-3.4.1)
#   - plain sqlite3 CLI     (default /usr/bin/sqlite3,                             override SQLCIPHERKIT_SQLITE3)
#   - python3 (byte flips, truncation, the JSON manifest)
# All of them are installed by scripts/install-deps.sh.
#
# Usage: Fixtures/generate.sh          (from any directory; writes next to itself)
#
# The SQL content is deterministic; the bytes of the encrypted files are not (SQLCipher draws a
# random salt and random per-page IVs), so every run produces different files with the same content.
# Each file is verified with the CLI that made it (and cross-checked with the other CLI), then the
# old fixtures are replaced and fixtures.json is rewritten (sizes and sha256 of the new files).
set -euo pipefail

HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
CLI3_DIR=${SQLCIPHERKIT_CLI3_DIR:-/opt/sqlcipherkit/sqlcipher-3.4.1}
CLI3=$CLI3_DIR/usr/bin/sqlcipher
CLI4=${SQLCIPHERKIT_CLI4:-/usr/bin/sqlcipher}
SQLITE3=${SQLCIPHERKIT_SQLITE3:-/usr/bin/sqlite3}
PYTHON=${PYTHON:-python3}

die() { echo "generate.sh: error: $*" >&2; exit 1; }

# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------
[ -x "$CLI4" ] || die "SQLCipher 4.6.1 CLI not found or not executable at '$CLI4' (run scripts/install-deps.sh, or set SQLCIPHERKIT_CLI4)"
[ -x "$CLI3" ] || die "SQLCipher 3.4.1 CLI not found or not executable at '$CLI3' (run scripts/install-deps.sh, or set SQLCIPHERKIT_CLI3_DIR to the directory that contains usr/bin/sqlcipher)"
[ -x "$SQLITE3" ] || die "sqlite3 CLI not found or not executable at '$SQLITE3' (install sqlite3, or set SQLCIPHERKIT_SQLITE3)"
command -v "$PYTHON" >/dev/null 2>&1 || die "python3 not found (set PYTHON to a Python 3 interpreter)"

cli_query() { # cli sql -> last line of stdout, on an in-memory database
  printf '%s\n' "$2" | "$1" -batch -init /dev/null :memory: 2>/dev/null | tail -n 1
}
V3=$(cli_query "$CLI3" "PRAGMA key = 'v'; PRAGMA cipher_version;") || true
V4=$(cli_query "$CLI4" "PRAGMA key = 'v'; PRAGMA cipher_version;") || true
S3=$(cli_query "$CLI3" "SELECT sqlite_version();") || true
S4=$(cli_query "$CLI4" "SELECT sqlite_version();") || true
SP=$(cli_query "$SQLITE3" "SELECT sqlite_version();") || true
V3=${V3%% *}                 # "3.4.1"
V4FULL=$V4; V4=${V4%% *}     # "4.6.1 community" -> "4.6.1"
[ "$V3" = "3.4.1" ] || die "'$CLI3' is not the SQLCipher 3.4.1 CLI (PRAGMA cipher_version said '${V3:-nothing}')"
[ "$V4" = "4.6.1" ] || die "'$CLI4' is not the SQLCipher 4.6.1 CLI (PRAGMA cipher_version said '${V4FULL:-nothing}')"
[ -n "$SP" ] || die "'$SQLITE3' does not answer SELECT sqlite_version()"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-fixtures.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT
OUTDIR=$WORK/out; SCRATCH=$WORK/scratch; FACTS=$WORK/facts
mkdir -p "$OUTDIR" "$SCRATCH" "$FACTS"

# ---------------------------------------------------------------------------------------------
# Keys (ASCII, fixed, documented in README.md)
# ---------------------------------------------------------------------------------------------
PASS3=fixture-passphrase-3
PASS4=fixture-passphrase-4
RAWKEY=7a1c3e5f9b2d4f60a8c6e4b2d0f1e3c5a7b9d1f3e5c7a9b1d3f5e7c9a1b3d5f7      # 32 bytes
SALT=73616c742d666978747572652d303031                                     # "salt-fixture-001"
MARKER=FIXTURE-MARKER-Q7Z3K9
ZEROKEY=0000000000000000000000000000000000000000000000000000000000000000    # the "wrong" raw key

# ---------------------------------------------------------------------------------------------
# Content (SQLite 3.15.2 compatible: no UPSERT, RETURNING, window functions)
# ---------------------------------------------------------------------------------------------
SCHEMA_SQL="CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER, price REAL, data BLOB);
CREATE INDEX items_name ON items(name);
CREATE TABLE filler(id INTEGER PRIMARY KEY, body TEXT NOT NULL);"

# Rows 1-15 ("part A") and 16-20 ("part B"). In the WAL fixtures part B exists only in the -wal.
ITEMS_A_SQL="INSERT INTO items VALUES(1, 'apple', 3, 0.5, NULL);
INSERT INTO items VALUES(2, 'banana', 12, 0.25, NULL);
INSERT INTO items VALUES(3, 'cherry', 100, 4.75, X'00');
INSERT INTO items VALUES(4, 'damson', 0, 1.0, NULL);
INSERT INTO items VALUES(5, 'elderberry', -2, 2.5, NULL);
INSERT INTO items VALUES(6, 'fig', 7, 3.125, NULL);
INSERT INTO items VALUES(7, 'grape', 42, 0.0, X'');
INSERT INTO items VALUES(8, 'Grüße aus Köln — 日本語 ☕ 🍣', 1, 9.75, NULL);
INSERT INTO items VALUES(9, 'honeydew', NULL, NULL, NULL);
INSERT INTO items VALUES(10, 'blob-item', 1, 1.5, X'00FF102030405060708090A0B0C0D0E0F0DEADBEEFCAFEBABE');
INSERT INTO items VALUES(11, 'O''Brien''s kiwi', 5, 6.25, NULL);
INSERT INTO items VALUES(12, 'lemon', 1000000, 0.125, NULL);
INSERT INTO items VALUES(13, 'mango', 9223372036854775807, 1e100, NULL);
INSERT INTO items VALUES(14, 'nectarine', -9223372036854775808, -0.5, NULL);
INSERT INTO items VALUES(15, 'olive', 15, 15.0, X'0102030405060708');"
ITEMS_B_SQL="INSERT INTO items VALUES(16, 'papaya', 16, 16.5, NULL);
INSERT INTO items VALUES(17, 'quince', 17, 17.25, NULL);
INSERT INTO items VALUES(18, '$MARKER', 18, 18.0, NULL);
INSERT INTO items VALUES(19, 'raspberry', 19, 19.75, NULL);
INSERT INTO items VALUES(20, 'strawberry', 20, 20.0, X'000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F');"
# 200 rows of exactly 200 ASCII bytes each, so the files span several pages.
FILLER_SQL="WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
INSERT INTO filler(id, body)
  SELECT i, substr(printf('filler-%03d-', i) || replace(hex(zeroblob(100)), '00', printf('%02d', i % 100)), 1, 200) FROM n;"
ITEMS_ROWS=20
ITEMS_ROWS_A=15
USER_VERSION=7

# Reads everything (both tables, the index, the schema) and prints a stable digest.
DIGEST_SQL="PRAGMA user_version;
SELECT type, name, tbl_name FROM sqlite_master ORDER BY name;
SELECT id, name, quote(qty), quote(price), quote(data) FROM items ORDER BY id;
SELECT count(*) FROM items INDEXED BY items_name WHERE name >= '';
SELECT count(*), sum(length(body)), min(body), max(body) FROM filler;
PRAGMA integrity_check;"

# ---------------------------------------------------------------------------------------------
# Fixture descriptions
# ---------------------------------------------------------------------------------------------
declare -A TOOL FORMAT KEYKIND KEY PAGESIZE KDFITER HEADER JOURNAL
FILES=()
# def file tool(3|4|plain) format key_kind key page_size kdf_iter plaintext_header journal
def() {
  FILES+=("$1"); TOOL[$1]=$2; FORMAT[$1]=$3; KEYKIND[$1]=$4; KEY[$1]=$5
  PAGESIZE[$1]=$6; KDFITER[$1]=$7; HEADER[$1]=$8; JOURNAL[$1]=$9
}
#   file                               tool  format      key_kind    key              page  kdf    hdr  journal
def sqlcipher3-default.db              3     sqlcipher3  passphrase  "$PASS3"         1024  64000  0    delete
def sqlcipher3-custom.db               3     sqlcipher3  passphrase  "$PASS3"         4096  4000   0    delete
def sqlcipher3-rawkey.db               3     sqlcipher3  raw         "$RAWKEY"        1024  ""     0    delete
def sqlcipher3-wal.db                  3     sqlcipher3  passphrase  "$PASS3"         1024  64000  0    wal
def sqlcipher4-default.db              4     sqlcipher4  passphrase  "$PASS4"         4096  256000 0    delete
def sqlcipher4-compat3.db              4     sqlcipher3  passphrase  "$PASS4"         1024  64000  0    delete
def sqlcipher4-rawkey.db               4     sqlcipher4  raw         "$RAWKEY"        4096  ""     0    delete
def sqlcipher4-custom.db               4     sqlcipher4  passphrase  "$PASS4"         8192  10000  0    delete
def sqlcipher4-plaintext-header.db     4     sqlcipher4  raw+salt    "$RAWKEY$SALT"   4096  ""     32   delete
def sqlcipher4-wal.db                  4     sqlcipher4  passphrase  "$PASS4"         4096  256000 0    wal
def plaintext.db                       plain plaintext   none        ""               4096  ""     ""   delete
# Damaged copies (made from the *-default.db files after those are verified).
DAMAGED=()
for base in sqlcipher3-default sqlcipher4-default; do
  for kind in damaged-page1 damaged-middle damaged-last truncated; do
    f=$base-$kind.db
    DAMAGED+=("$f")
    def "$f" "${TOOL[$base.db]}" "${FORMAT[$base.db]}" "${KEYKIND[$base.db]}" "${KEY[$base.db]}" \
        "${PAGESIZE[$base.db]}" "${KDFITER[$base.db]}" "${HEADER[$base.db]}" "${JOURNAL[$base.db]}"
  done
done

is_default() { # file -> 0 if the file uses its format's default page size and kdf_iter
  local f=$1
  case ${FORMAT[$f]} in
    sqlcipher3) [ "${PAGESIZE[$f]}" = 1024 ] && { [ -z "${KDFITER[$f]}" ] || [ "${KDFITER[$f]}" = 64000 ]; } ;;
    sqlcipher4) [ "${PAGESIZE[$f]}" = 4096 ] && { [ -z "${KDFITER[$f]}" ] || [ "${KDFITER[$f]}" = 256000 ]; } ;;
    *) return 0 ;;
  esac
}

# The statements (after the key) that reader 3|4 needs to open file f. One per line.
open_pragmas() {
  local f=$1 reader=$2
  [ "${FORMAT[$f]}" = plaintext ] && return 0
  if [ "$reader" = 4 ] && [ "${FORMAT[$f]}" = sqlcipher3 ]; then
    echo "PRAGMA cipher_compatibility = 3;"      # must come first: it resets page size and kdf_iter
  fi
  if ! is_default "$f"; then
    echo "PRAGMA cipher_page_size = ${PAGESIZE[$f]};"
    [ -n "${KDFITER[$f]}" ] && echo "PRAGMA kdf_iter = ${KDFITER[$f]};"
  fi
  if [ "${HEADER[$f]:-0}" != 0 ]; then
    echo "PRAGMA cipher_plaintext_header_size = ${HEADER[$f]};"
  fi
  return 0
}

key_pragma() { # key_kind key -> PRAGMA key statement (empty for none)
  case $1 in
    passphrase) printf "PRAGMA key = '%s';\n" "$2" ;;
    raw|raw+salt) printf "PRAGMA key = \"x'%s'\";\n" "$2" ;;
    none) ;;
  esac
}

# SQL prelude for reader 3|4 opening file f: silent key + settings.
# WRONG_KEY=yes: a wrong key of the same kind instead (plaintext.db: a passphrase).
prelude() {
  echo ".output /dev/null"
  if [ "${WRONG_KEY:-no}" = yes ]; then
    case ${KEYKIND[$1]} in
      passphrase|none) key_pragma passphrase wrong-passphrase ;;
      raw) key_pragma raw "$ZEROKEY" ;;
      raw+salt) key_pragma raw+salt "$ZEROKEY$SALT" ;;      # wrong key, right salt
    esac
  else
    key_pragma "${KEYKIND[$1]}" "${KEY[$1]}"
  fi
  open_pragmas "$1" "$2"
  echo ".output stdout"
}

cli_for() { case $1 in 3) echo "$CLI3" ;; 4) echo "$CLI4" ;; plain) echo "$SQLITE3" ;; esac; }

# run CLI DB SQL -> sets RUN_OUT (stdout), RUN_ERR (stderr without 4.x log lines), RUN_RC
run() {
  local rc=0
  RUN_OUT=$(printf '%s\n' "$3" | "$1" -batch -bail -init /dev/null "$2" 2>"$WORK/stderr") || rc=$?
  RUN_RC=$rc
  RUN_ERR=$(grep -v -E '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.]+: ' "$WORK/stderr" || true)
}

clean_message() { sed -e 's/^.*near line [0-9]*: //' -e 's/ ([0-9]*)$//' <<<"$1"; }
classify() { # stderr text -> notADatabase | corrupt | other
  case $1 in
    *"file is not a database"*|*"file is encrypted or is not a database"*) echo notADatabase ;;
    *"database disk image is malformed"*) echo corrupt ;;
    *"SQL logic error"*) echo error ;;
    *) echo other ;;
  esac
}

# Read a copy of f (plus its -wal when asked) with reader 3|4|plain; sets RUN_* .
read_copy() {
  local f=$1 reader=$2 with_wal=${3:-yes} sql=${4:-$DIGEST_SQL}
  rm -rf -- "$SCRATCH"; mkdir -p "$SCRATCH"
  cp -- "$OUTDIR/$f" "$SCRATCH/$f"
  if [ "$with_wal" = yes ] && [ -e "$OUTDIR/$f-wal" ]; then cp -- "$OUTDIR/$f-wal" "$SCRATCH/$f-wal"; fi
  local r=$reader; [ "$r" = plain ] && r=4
  run "$(cli_for "$reader")" "$SCRATCH/$f" "$(prelude "$f" "$r")
$sql"
}

# ---------------------------------------------------------------------------------------------
# Create
# ---------------------------------------------------------------------------------------------
create() {
  local f=$1 tool=${TOOL[$1]} cli
  cli=$(cli_for "$tool")
  local sql
  if [ "${JOURNAL[$f]}" = wal ]; then
    # Part A is checkpointed into the main file; part B and user_version are committed but stay in
    # the -wal (autocheckpoint off). The CLI copies both files while its connection is still open:
    # on close SQLite would checkpoint and delete the -wal.
    sql="$(prelude "$f" "$tool")
.output /dev/null
PRAGMA journal_mode = WAL;
$SCHEMA_SQL
$ITEMS_A_SQL
$FILLER_SQL
PRAGMA wal_checkpoint(TRUNCATE);
PRAGMA wal_autocheckpoint = 0;
BEGIN;
$ITEMS_B_SQL
COMMIT;
PRAGMA user_version = $USER_VERSION;
.system cp $f snapshot-$f
.system cp $f-wal snapshot-$f-wal"
  else
    sql="$(prelude "$f" "$tool")
.output /dev/null
BEGIN;
$SCHEMA_SQL
$ITEMS_A_SQL
$FILLER_SQL
$ITEMS_B_SQL
PRAGMA user_version = $USER_VERSION;
COMMIT;"
  fi
  local dir=$WORK/create-$f; mkdir -p "$dir"
  (cd "$dir" && run "$cli" "$f" "$sql" && { [ "$RUN_RC" = 0 ] || die "creating $f failed: $RUN_ERR"; })
  if [ "${JOURNAL[$f]}" = wal ]; then
    [ -s "$dir/snapshot-$f-wal" ] || die "$f: the -wal snapshot is missing or empty"
    mv -- "$dir/snapshot-$f" "$OUTDIR/$f"; mv -- "$dir/snapshot-$f-wal" "$OUTDIR/$f-wal"
  else
    [ ! -e "$dir/$f-journal" ] && [ ! -e "$dir/$f-wal" ] || die "$f: a journal was left behind"
    mv -- "$dir/$f" "$OUTDIR/$f"
  fi
  rm -rf -- "$dir"
}

damage() { # base damaged-file kind page_size
  "$PYTHON" - "$OUTDIR/$1" "$OUTDIR/$2" "$3" "$4" >"$FACTS/$2.damage" <<'PY'
import json, sys
src, dst, kind, ps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
data = bytearray(open(src, "rb").read())
n = len(data) // ps
assert len(data) % ps == 0 and n >= 5, (len(data), ps)
middle = (n + 1) // 2                       # 1-based page number, distinct from 1 and n
if kind == "truncated":
    size = (middle - 1) * ps + ps // 2      # cut in the middle of the middle page
    out = data[:size]
    info = {"kind": "truncate", "page": middle, "size": size, "original_size": len(data)}
else:
    page = {"damaged-page1": 1, "damaged-middle": middle, "damaged-last": n}[kind]
    off = (page - 1) * ps + 100             # page 1: after the 16-byte salt, inside the ciphertext
    for i in range(off, off + 8):
        data[i] ^= 0xFF
    out = data
    info = {"kind": "xor_ff", "page": page, "offset": off, "length": 8, "pages": n}
open(dst, "wb").write(out)
print(json.dumps(info))
PY
}

# ---------------------------------------------------------------------------------------------
# Generate and verify
# ---------------------------------------------------------------------------------------------
echo "SQLCipher $V3 CLI: $CLI3 (SQLite $S3)"
echo "SQLCipher $V4FULL CLI: $CLI4 (SQLite $S4)"
echo "sqlite3 CLI: $SQLITE3 (SQLite $SP)"
echo "work dir: $WORK"
echo

for f in "${FILES[@]}"; do
  case " ${DAMAGED[*]} " in *" $f "*) continue ;; esac
  create "$f"
done

# Reference digest: the plaintext file read by the plain sqlite3 CLI.
read_copy plaintext.db plain
[ "$RUN_RC" = 0 ] || die "plaintext.db unreadable: $RUN_ERR"
REFERENCE=$RUN_OUT
last_line=$(printf '%s\n' "$REFERENCE" | tail -n 1)
[ "$last_line" = ok ] || die "plaintext.db: integrity_check said '$last_line'"
grep -q "^$ITEMS_ROWS$" <<<"$REFERENCE" || die "plaintext.db: unexpected digest"

for base in sqlcipher3-default sqlcipher4-default; do
  for kind in damaged-page1 damaged-middle damaged-last truncated; do
    damage "$base.db" "$base-$kind.db" "$kind" "${PAGESIZE[$base.db]}"
  done
done

expected_readers() { # file -> space separated reader list the format allows
  case ${FORMAT[$1]} in sqlcipher3|plaintext) echo "3 4" ;; sqlcipher4) echo "4" ;; esac
}
damaged_from() { local b=${1%-damaged-*}; b=${b%-truncated.db}; echo "${b%.db}.db"; }
declare -A READABLE
label() { case $1 in 3) echo "$V3" ;; 4) echo "$V4" ;; esac; }

for f in "${FILES[@]}"; do
  damaged=no; case " ${DAMAGED[*]} " in *" $f "*) damaged=yes ;; esac
  tool=${TOOL[$f]}
  # 1. With the tool that made it.
  read_copy "$f" "$tool"
  expected_error=null; message=""; fails_at=""
  if [ "$damaged" = yes ]; then
    [ "$RUN_RC" != 0 ] || die "$f: damaged file read without error with the tool that made it"
    expected_error=$(classify "$RUN_ERR"); message=$(printf '%s\n' "$RUN_ERR" | tail -n 1)
    # The failing statement of DIGEST_SQL (one statement per line, after the prelude).
    line=$(sed -n 's/.*near line \([0-9]*\):.*/\1/p' <<<"$message")
    fails_at=$(printf '%s\n' "$DIGEST_SQL" | sed -n "$(( line - $(prelude "$f" "$tool" | wc -l) ))p")
    message=$(clean_message "$message")
    [ "$expected_error" != other ] || die "$f: unexpected error: $RUN_ERR"
  else
    [ "$RUN_RC" = 0 ] || die "$f: unreadable with the tool that made it: $RUN_ERR"
    [ "$RUN_OUT" = "$REFERENCE" ] || die "$f: content differs from plaintext.db:
$(diff <(printf '%s\n' "$REFERENCE") <(printf '%s\n' "$RUN_OUT") || true)"
  fi
  extra=""
  # 2. Every SQLCipher reader, with the settings that reader needs.
  readable=(); cross=()
  for reader in 3 4; do
    read_copy "$f" "$reader"
    if [ "$damaged" = yes ]; then
      # A damaged file is "readable by" the readers of its undamaged original; each of them must
      # fail with the same error class.
      err=$(classify "$RUN_ERR"); [ "$RUN_RC" = 0 ] && err=read
      cross+=("$(label "$reader"):$err")
      case " ${READABLE[$(damaged_from "$f")]} " in
        *" $reader "*)
          [ "$err" = "$expected_error" ] || die "$f: $(label "$reader") gives '$err', $(label "$tool") gives '$expected_error'"
          readable+=("$reader") ;;
      esac
    else
      if [ "$RUN_RC" = 0 ] && [ "$RUN_OUT" = "$REFERENCE" ]; then readable+=("$reader"); cross+=("$(label "$reader"):ok")
      else cross+=("$(label "$reader"):$(classify "$RUN_ERR")"); fi
    fi
  done
  READABLE[$f]="${readable[*]}"
  [ "${readable[*]}" = "$(expected_readers "$f")" ] ||
    die "$f: readable by '${readable[*]}' but the format allows '$(expected_readers "$f")' (${cross[*]})"
  # 3. A wrong key, with the tool that made the file (4.6.1 for plaintext.db).
  wrong_key_error=null; wrong_key_message=""
  if [ "$damaged" = no ]; then
    wk_reader=$tool; [ "$wk_reader" = plain ] && wk_reader=4
    WRONG_KEY=yes read_copy "$f" "$wk_reader"
    [ "$RUN_RC" != 0 ] || die "$f: readable with a wrong key"
    wrong_key_error=$(classify "$RUN_ERR"); wrong_key_message=$(clean_message "$(printf '%s\n' "$RUN_ERR" | tail -n 1)")
    extra=" wrong key: $wrong_key_error;"
  fi
  # 4. WAL fixtures: the rows and user_version of part B must be in the -wal only.
  if [ "${JOURNAL[$f]}" = wal ]; then
    read_copy "$f" "$tool" no "SELECT count(*) FROM items; SELECT count(*) FROM items WHERE name = '$MARKER'; PRAGMA user_version;"
    [ "$RUN_RC" = 0 ] || die "$f without -wal: unreadable: $RUN_ERR"
    [ "$RUN_OUT" = "$ITEMS_ROWS_A"$'\n'"0"$'\n'"0" ] || die "$f without -wal: expected $ITEMS_ROWS_A rows, user_version 0; got: $RUN_OUT"
    extra="$extra without -wal: $ITEMS_ROWS_A rows, user_version 0;"
  fi
  # 5. No plaintext leaks; the expected first bytes.
  for part in "$f" "$f-wal"; do
    [ -e "$OUTDIR/$part" ] || continue
    if [ "${FORMAT[$f]}" = plaintext ]; then
      grep -aq "$MARKER" "$OUTDIR/$part" || die "$part: marker missing from the plaintext file"
    else
      ! grep -aq "$MARKER" "$OUTDIR/$part" || die "$part: the marker is readable in the encrypted file"
    fi
  done
  head16=$(head -c 16 "$OUTDIR/$f" | od -An -tx1 | tr -d ' \n')
  sqlite_magic=53514c69746520666f726d6174203300
  if [ "${FORMAT[$f]}" = plaintext ] || [ "${HEADER[$f]:-0}" != 0 ]; then
    [ "$head16" = "$sqlite_magic" ] || die "$f: does not start with 'SQLite format 3\\0'"
  else
    [ "$head16" != "$sqlite_magic" ] || die "$f: starts with the plaintext SQLite header"
  fi

  labels=(); for r in "${readable[@]}"; do labels+=("$(label "$r")"); done
  pragmas=(); for r in "${readable[@]}"; do pragmas+=("$(label "$r")=$(open_pragmas "$f" "$r" | tr '\n' ' ')"); done
  {
    echo "file=$f"; echo "tool=${tool}"; echo "format=${FORMAT[$f]}"; echo "key_kind=${KEYKIND[$f]}"
    echo "key=${KEY[$f]}"; echo "page_size=${PAGESIZE[$f]}"; echo "kdf_iter=${KDFITER[$f]}"
    echo "header=${HEADER[$f]}"; echo "journal=${JOURNAL[$f]}"; echo "expected_error=$expected_error"
    echo "message=$message"; echo "wrong_key_error=$wrong_key_error"; echo "fails_at=$fails_at"; echo "wrong_key_message=$wrong_key_message"
    echo "readable_by=${labels[*]}"; echo "damaged=$damaged"
    for r in "${readable[@]}"; do echo "open_pragmas_$(label "$r")=$(open_pragmas "$f" "$r" | tr '\n' '|')"; done
  } >"$FACTS/$f.facts"
  if [ "$damaged" = yes ]; then
    printf 'ok  %-40s %-22s expected_error=%-13s (%s) at: %s readable_by=[%s] cross: %s\n' "$f" "$([ "$tool" = 3 ] && echo "sqlcipher $V3" || echo "sqlcipher $V4")" "$expected_error" "$message" "$fails_at" "${labels[*]}" "${cross[*]}"
  else
    printf 'ok  %-40s %-22s %s rows, user_version %s, integrity ok;%s readable_by=[%s] cross: %s\n' "$f" "$(case $tool in 3) echo "sqlcipher $V3" ;; 4) echo "sqlcipher $V4" ;; plain) echo "sqlite3 $SP" ;; esac)" "$ITEMS_ROWS" "$USER_VERSION" "$extra" "${labels[*]}" "${cross[*]}"
  fi
done

# ---------------------------------------------------------------------------------------------
# Negative cross-checks (documented in README.md): each must fail.
# ---------------------------------------------------------------------------------------------
echo
expect_failure() { # description cli file sql
  cp -- "$OUTDIR/$3" "$SCRATCH/x.db"; rm -f -- "$SCRATCH/x.db-wal"
  run "$2" "$SCRATCH/x.db" ".output /dev/null
$4
.output stdout
SELECT count(*) FROM items;"
  [ "$RUN_RC" != 0 ] || die "cross-check unexpectedly succeeded: $1"
  printf 'ok  fails as expected: %-70s -> %s\n' "$1" "$(printf '%s\n' "$RUN_ERR" | tail -n 1)"
}
rm -rf -- "$SCRATCH"; mkdir -p "$SCRATCH"
expect_failure "4.6.1 reads sqlcipher3-default.db without cipher_compatibility" "$CLI4" sqlcipher3-default.db "PRAGMA key = '$PASS3';"
expect_failure "3.4.1 reads sqlcipher4-default.db" "$CLI3" sqlcipher4-default.db "PRAGMA key = '$PASS4';"
expect_failure "3.4.1 reads sqlcipher4-default.db with page size 4096, kdf_iter 256000" "$CLI3" sqlcipher4-default.db "PRAGMA key = '$PASS4'; PRAGMA cipher_page_size = 4096; PRAGMA kdf_iter = 256000;"
expect_failure "4.6.1 reads sqlcipher4-default.db with a wrong passphrase" "$CLI4" sqlcipher4-default.db "PRAGMA key = 'wrong-passphrase';"
expect_failure "3.4.1 reads sqlcipher3-default.db with a wrong passphrase" "$CLI3" sqlcipher3-default.db "PRAGMA key = 'wrong-passphrase';"
expect_failure "4.6.1 reads sqlcipher4-custom.db with default settings" "$CLI4" sqlcipher4-custom.db "PRAGMA key = '$PASS4';"
expect_failure "4.6.1 reads sqlcipher4-plaintext-header.db with the 64-hex key only (no salt)" "$CLI4" sqlcipher4-plaintext-header.db "PRAGMA key = \"x'$RAWKEY'\"; PRAGMA cipher_plaintext_header_size = 32;"
expect_failure "4.6.1 reads sqlcipher4-plaintext-header.db with a wrong passphrase + cipher_salt" "$CLI4" sqlcipher4-plaintext-header.db "PRAGMA key = 'wrong-passphrase'; PRAGMA cipher_plaintext_header_size = 32; PRAGMA cipher_salt = \"x'$SALT'\";"
expect_failure "sqlite3 reads sqlcipher4-plaintext-header.db" "$SQLITE3" sqlcipher4-plaintext-header.db ""
expect_failure "4.6.1 reads sqlcipher4-plaintext-header.db without cipher_plaintext_header_size" "$CLI4" sqlcipher4-plaintext-header.db "PRAGMA key = \"x'$RAWKEY$SALT'\";"
expect_failure "4.6.1 reads plaintext.db with a key" "$CLI4" plaintext.db "PRAGMA key = '$PASS4';"
expect_failure "4.6.1 reads sqlcipher4-default.db without a key" "$CLI4" sqlcipher4-default.db ""
expect_failure "sqlite3 reads sqlcipher4-default.db" "$SQLITE3" sqlcipher4-default.db ""

# ---------------------------------------------------------------------------------------------
# Manifest, then replace the old fixtures
# ---------------------------------------------------------------------------------------------
"$SQLITE3" -batch -init /dev/null -json "$OUTDIR/plaintext.db" \
  "SELECT id, name, qty, price, CASE WHEN data IS NULL THEN NULL ELSE hex(data) END AS data_hex, typeof(data) AS data_type FROM items ORDER BY id;" >"$WORK/items.json"

"$PYTHON" - "$OUTDIR" "$FACTS" "$WORK/items.json" "$V3" "$S3" "$V4" "$V4FULL" "$S4" "$SP" \
  "$MARKER" "$USER_VERSION" "$ITEMS_ROWS" "$ITEMS_ROWS_A" "$SALT" <<'PY' >"$OUTDIR/fixtures.json"
import hashlib, json, os, sys
(outdir, facts_dir, items_path, v3, s3, v4, v4full, s4, sp,
 marker, user_version, rows, rows_a, salt) = sys.argv[1:]
user_version, rows, rows_a = int(user_version), int(rows), int(rows_a)

def facts(name):
    d = {}
    for line in open(os.path.join(facts_dir, name + ".facts"), encoding="utf-8"):
        k, _, v = line.rstrip("\n").partition("=")
        d[k] = v
    return d

def file_info(path):
    b = open(path, "rb").read()
    return {"size": len(b), "sha256": hashlib.sha256(b).hexdigest()}

entries = []
names = sorted(n[:-6] for n in os.listdir(facts_dir) if n.endswith(".facts"))
order = lambda n: (0 if n.startswith("sqlcipher3") else 1 if n.startswith("sqlcipher4") else 2, n)
for name in sorted(names, key=order):
    f = facts(name)
    tool = f["tool"]
    if tool == "3":
        tool_name, tool_version, tool_full = "sqlcipher", v3, "SQLCipher %s CLI (SQLite %s)" % (v3, s3)
    elif tool == "4":
        tool_name, tool_version, tool_full = "sqlcipher", v4, "SQLCipher %s CLI (SQLite %s)" % (v4full, s4)
    else:
        tool_name, tool_version, tool_full = "sqlite3", sp, "sqlite3 %s CLI" % sp
    fmt = f["format"]
    settings = {"page_size": int(f["page_size"]), "journal_mode": f["journal"]}
    if fmt != "plaintext":
        raw = f["key_kind"] != "passphrase"
        settings["kdf_iter"] = None if raw else int(f["kdf_iter"])
        settings["compatibility"] = 3 if fmt == "sqlcipher3" else 4
        settings["kdf_algorithm"] = None if raw else ("PBKDF2_HMAC_SHA1" if fmt == "sqlcipher3" else "PBKDF2_HMAC_SHA512")
        settings["hmac_algorithm"] = "HMAC_SHA1" if fmt == "sqlcipher3" else "HMAC_SHA512"
        settings["plaintext_header_size"] = int(f["header"] or 0)
        if f["key_kind"] == "raw+salt":
            settings["salt"] = salt
    e = {
        "file": name,
        "tool": tool_name,
        "tool_version": tool_version,
        "tool_version_full": tool_full,
        "format": fmt,
        "key_kind": f["key_kind"],
        "key": f["key"] if f["key_kind"] != "none" else None,
        "settings": settings,
        "user_version": user_version,
        "rows": rows,
        "marker": marker,
        "expected_error": None if f["expected_error"] == "null" else f["expected_error"],
        "wrong_key_error": None if f["wrong_key_error"] == "null" else f["wrong_key_error"],
        "readable_by": f["readable_by"].split() if f["readable_by"] else [],
        "open_pragmas": {k[len("open_pragmas_"):]: [s for s in v.split("|") if s]
                         for k, v in f.items() if k.startswith("open_pragmas_")},
    }
    if f["wrong_key_error"] != "null":
        e["wrong_key_message"] = f["wrong_key_message"]
    e.update(file_info(os.path.join(outdir, name)))
    if f["expected_error"] != "null":
        e["expected_message"] = f["message"]
        e["fails_at"] = f["fails_at"]
        e["damaged_from"] = name.split("-damaged")[0].split("-truncated")[0] + ".db"
        e["damage"] = json.loads(open(os.path.join(facts_dir, name + ".damage")).read())
    if f["journal"] == "wal":
        wal = name + "-wal"
        e["wal_file"] = wal
        e["wal_file_info"] = file_info(os.path.join(outdir, wal))
        e["rows_without_wal"] = rows_a
        e["user_version_without_wal"] = 0
    entries.append(e)

items = json.load(open(items_path, encoding="utf-8"))
manifest = {
    "generated_by": "Fixtures/generate.sh",
    "content": {
        "schema": [
            "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER, price REAL, data BLOB)",
            "CREATE INDEX items_name ON items(name)",
            "CREATE TABLE filler(id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
        ],
        "user_version": user_version,
        "items_rows": rows,
        "items": items,
        "filler_rows": 200,
        "filler_body_length": 200,
        "filler_body_sql": "substr(printf('filler-%03d-', id) || replace(hex(zeroblob(100)), '00', printf('%02d', id % 100)), 1, 200)",
        "marker": marker,
        "marker_row_id": 18,
    },
    "files": entries,
}
json.dump(manifest, sys.stdout, indent=2, ensure_ascii=False)
sys.stdout.write("\n")
PY

rm -f -- "$HERE"/*.db "$HERE"/*.db-wal "$HERE"/*.db-shm "$HERE"/*.db-journal "$HERE"/fixtures.json
mv -- "$OUTDIR"/* "$HERE"/
echo
echo "wrote $(ls "$HERE" | grep -c -E '\.db(-wal)?$') database files and fixtures.json to $HERE ($(du -sh "$HERE" | cut -f1) in total)"
