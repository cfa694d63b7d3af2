/*
** CSqlCipherBridge: the only door between SqlCipherKit and SQLCipher.
**
** SqlCipherKit never links libsqlcipher or libsqlite3. This bridge loads libsqlcipher at run
** time from an explicit path, resolves every function it needs from that handle into a table
** private to the bridge, proves the binding (symbol ownership, relocation audit, cipher
** identity) and only then lets callers through.
**
** This header deliberately declares no sqlite3_* function and does not include sqlite3.h: a
** prototype visible to Swift would let Swift code call sqlite3_* directly, and the static linker
** would bind such a call to whatever SQLite it finds first. Every entry point is prefixed scb_.
** Result codes and flags are SQLite's own numeric values (https://sqlite.org/rescode.html).
**
** An internal detail of SqlCipherKit: importing CSqlCipherBridge directly (from Swift or C) is
** unsupported. Its functions may change in any release, and they bypass what the Swift layer
** adds (the on-disk proof of new files, the statement gates, key handling). Every function is
** declared with hidden visibility: it links only into the image (executable or shared object)
** that contains the bridge's objects, as SqlCipherKit's Swift code and the package's own C
** targets are, and no shared object that embeds the package exports an scb_ symbol for others
** to bind to (or to interpose on).
*/
#ifndef CSQLCIPHERBRIDGE_H
#define CSQLCIPHERBRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(hidden)
#endif

/* Opaque handles: an sqlite3 connection and an sqlite3_stmt of the loaded library. */
typedef struct scb_db scb_db;
typedef struct scb_stmt scb_stmt;

/* ------------------------------------------------------------------------------------------ */
/* Loading and proof                                                                          */
/* ------------------------------------------------------------------------------------------ */

/* Outcome of scb_load. */
typedef enum scb_load_status {
    SCB_LOAD_OK = 0,
    /* The path does not name an existing file. */
    SCB_LOAD_NOT_FOUND = 1,
    /* dlopen refused the file (not a shared library, wrong architecture, missing dependency). */
    SCB_LOAD_OPEN_FAILED = 2,
    /* A required function is not exported; `symbol` names it. */
    SCB_LOAD_MISSING_SYMBOL = 3,
    /* The library's own sqlite3_* references resolve outside it; `symbol`/`object` name one. */
    SCB_LOAD_BINDING_CONFLICT = 4,
    /* The library is loaded and bound but is not SQLCipher; `message` says why. */
    SCB_LOAD_NOT_SQLCIPHER = 5,
    /* The process cannot host the isolated load (e.g. a sanitizer runtime); `message` says why. */
    SCB_LOAD_UNSUPPORTED_RUNTIME = 6,
    /* Another library is already loaded in this process; `object` names it. */
    SCB_LOAD_ALREADY_LOADED_OTHER = 7,
    /*
    ** The process's C library is linked statically into the executable (a fully static program,
    ** e.g. swift build -Xswiftc -static-executable): a libsqlcipher loaded into it brings its own
    ** libc and libcrypto, whose initialisation never ran, so it is refused before dlopen.
    */
    SCB_LOAD_STATIC_EXECUTABLE = 8
} scb_load_status;

/*
** Families of symbol names the relocation audit counts separately: SQLite's API, SQLCipher's
** own functions, and every other name the library defines (e.g. sqlcipherCodecAttach,
** sqlite3pager_*).
*/
typedef enum scb_symbol_family {
    SCB_FAMILY_SQLITE3 = 0,
    SCB_FAMILY_SQLCIPHER = 1,
    SCB_FAMILY_OTHER = 2,
    SCB_FAMILY_COUNT = 3
} scb_symbol_family;

/* Details of a load attempt, filled by scb_load whatever the outcome. */
typedef struct scb_load_report {
    int status;                 /* an scb_load_status */
    char message[4096];         /* human-readable reason when status != SCB_LOAD_OK */
    char symbol[128];           /* missing or foreign symbol, when relevant */
    char object[4096];          /* object a foreign symbol is bound to, or the loaded path */
    int audit_checked;          /* relocations against symbols the library itself defines */
    int audit_foreign;          /* how many of them point outside the library */
    int audit_checked_family[SCB_FAMILY_COUNT];  /* audit_checked by scb_symbol_family */
    int audit_foreign_family[SCB_FAMILY_COUNT];  /* audit_foreign by scb_symbol_family */
} scb_load_report;

/*
** Loads the SQLCipher library at `path` once per process and proves it (see the .c file for the
** sequence). Thread-safe. Calling it again with the same file returns SCB_LOAD_OK; with a
** different file after a successful load returns SCB_LOAD_ALREADY_LOADED_OTHER. A failed attempt
** leaves nothing loaded, so another path may be tried.
*/
int scb_load(const char *path, scb_load_report *report);

/*
** Nonzero when the executable of this process has no program interpreter (no PT_INTERP program
** header: the C library is linked into it statically, as in a fully static program); 0 for a
** dynamically linked executable, and on platforms without ELF program headers. scb_load refuses
** such a process with SCB_LOAD_STATIC_EXECUTABLE before it loads anything.
*/
int scb_static_c_library(void);

/* Nonzero once scb_load has succeeded. */
int scb_is_loaded(void);

/* Facts about the proven library; NULL/0 before a successful load. Strings live for the process. */
const char *scb_library_path(void);
const char *scb_load_method(void);
int scb_library_was_already_loaded(void);
/*
** How a process that exits while threads still call the library is kept from crashing
** (exit.c): 1 when libcrypto arrived with the library and its cleanup at exit is turned off; 2
** when libcrypto was already loaded and the bridge's exit handler waits for calls in progress; 0
** when the library does not use OpenSSL's libcrypto (and before a successful load).
*/
int scb_exit_protection(void);
/*
** Whether the exit gate refuses this thread's calls (exit.c): 1 once exit() has begun on another
** thread in a process where the gate is in use (each call that can reach the library then fails
** with SQLITE_INTERRUPT without reaching it); 0 otherwise, and always on the exiting thread.
*/
int scb_exit_refusing(void);
const char *scb_sqlite_version(void);
int scb_sqlite_version_number(void);
const char *scb_sqlite_source_id(void);
const char *scb_cipher_version(void);
const char *scb_cipher_provider(void);
const char *scb_cipher_provider_version(void);

/* Relocation audit of the loaded library: how many slots were checked, how many were foreign
** (always 0 after a successful load), and whether this platform supports the audit at all. */
int scb_audit_checked(void);
int scb_audit_supported(void);
/* The slots checked of one scb_symbol_family; 0 for another value or before a load. */
int scb_audit_checked_family(int family);

/*
** Lists the other SQLite libraries mapped into the process: any loaded object, other than the
** bridge's library, that itself defines sqlite3_libversion. Writes the index-th one's path and
** version into the buffers and returns 1, or returns 0 when there is no such object.
*/
int scb_other_sqlite_library(int index, char *path, size_t path_len, char *version, size_t version_len);

/* Whether an optional (newer) function was found in the loaded library. */
typedef enum scb_optional_function {
    SCB_OPT_PREPARE_V3 = 0,
    SCB_OPT_EXPANDED_SQL = 1,
    SCB_OPT_KEY_V2 = 2,
    SCB_OPT_REKEY_V2 = 3,
    SCB_OPT_DB_CACHEFLUSH = 4
} scb_optional_function;
int scb_has_function(int which);

/* ------------------------------------------------------------------------------------------ */
/* Connections. Each wrapper calls the loaded library's function of the same name and         */
/* behaves exactly as SQLite documents it (https://sqlite.org/c3ref/funclist.html).            */
/* scb_open_v2 returns SQLITE_MISUSE (21) before a successful scb_load.                        */
/* ------------------------------------------------------------------------------------------ */

int scb_open_v2(const char *filename, scb_db **db, int flags, const char *vfs);
int scb_close_v2(scb_db *db);
int scb_key(scb_db *db, const void *key, int key_len);
int scb_rekey(scb_db *db, const void *key, int key_len);
/*
** sqlite3_rekey of the main database, watched: before each read of a page from the database file,
** `check(context, page)` is called on the calling thread with the page's number (1-based, from
** `page_size`). When it returns nonzero, that read fails, SQLCipher rolls the rekey's transaction
** back and the file keeps its old key and contents; `*stopped` is then set to 1 (else 0).
** Pages found in the page cache are not read, so `check` is not called for them. SQLCipher
** leaves the connection's write key changed after a stopped (as after any failed) rekey: close
** the connection. Without a file to watch (an in-memory database) the rekey runs unwatched.
** Returns sqlite3_rekey's result code, which SQLCipher reports as SQLITE_OK even for a rekey
** that was rolled back.
*/
typedef int (*scb_rekey_check_fn)(void *context, int64_t page);
int scb_rekey_watched(scb_db *db, const void *key, int key_len, int page_size, scb_rekey_check_fn check,
                      void *context, int *stopped);
/* Keys one attached schema by name; SQLITE_MISUSE when the library lacks sqlite3_key_v2. */
int scb_key_v2(scb_db *db, const char *schema, const void *key, int key_len);
int scb_extended_result_codes(scb_db *db, int on);
int scb_busy_timeout(scb_db *db, int ms);
int scb_errcode(scb_db *db);
int scb_extended_errcode(scb_db *db);
const char *scb_errmsg(scb_db *db);
const char *scb_errstr(int code);
int scb_changes(scb_db *db);
int scb_total_changes(scb_db *db);
int64_t scb_last_insert_rowid(scb_db *db);
int scb_get_autocommit(scb_db *db);
void scb_interrupt(scb_db *db);
/*
** Progress handler (https://sqlite.org/c3ref/progress_handler.html): SQLite calls `fn(ctx)` about
** every `every` virtual-machine instructions of a running statement, on the thread running it; a
** nonzero return interrupts the statement with SQLITE_INTERRUPT (9). NULL removes the handler.
*/
typedef int (*scb_progress_fn)(void *ctx);
void scb_progress_handler(scb_db *db, int every, scb_progress_fn fn, void *ctx);
const char *scb_db_filename(scb_db *db, const char *schema);
int scb_db_readonly(scb_db *db, const char *schema);
/*
** Stops `db` from checkpointing its -wal when it is closed (SQLite 3.16+): returns 0 when set, 1
** when the library cannot (SQLCipher 3.4.1), leaving `db` unchanged.
*/
int scb_no_checkpoint_on_close(scb_db *db);
int scb_wal_checkpoint_v2(scb_db *db, const char *schema, int mode, int *log_frames, int *checkpointed);
int scb_file_control(scb_db *db, const char *schema, int op, void *arg);

/*
** Online backup (https://sqlite.org/c3ref/backup_finish.html), resolved from the loaded library
** like every other function. scb_backup_init returns NULL on failure (the error is on `dest`);
** each step copies up to `pages` pages (-1: all) and returns SQLITE_OK (0), SQLITE_DONE (101),
** or an error; scb_backup_finish releases the handle whatever happened and returns the first
** error. SQLCipher encrypts each page with the destination's key as it is written, so a keyed
** destination never receives a plaintext page.
*/
typedef struct scb_backup scb_backup;
scb_backup *scb_backup_init(scb_db *dest, const char *dest_schema, scb_db *source, const char *source_schema);
int scb_backup_step(scb_backup *backup, int pages);
int scb_backup_finish(scb_backup *backup);
int scb_backup_remaining(scb_backup *backup);
int scb_backup_pagecount(scb_backup *backup);

/* Authorizer, commit, rollback and update hooks (https://sqlite.org/c3ref/set_authorizer.html). */
typedef int (*scb_authorizer_fn)(void *ctx, int action, const char *a, const char *b,
                                 const char *schema, const char *trigger);
typedef int (*scb_commit_fn)(void *ctx);
typedef void (*scb_rollback_fn)(void *ctx);
typedef void (*scb_update_fn)(void *ctx, int op, const char *schema, const char *table, int64_t rowid);
int scb_set_authorizer(scb_db *db, scb_authorizer_fn fn, void *ctx);
void *scb_commit_hook(scb_db *db, scb_commit_fn fn, void *ctx);
void *scb_rollback_hook(scb_db *db, scb_rollback_fn fn, void *ctx);
void *scb_update_hook(scb_db *db, scb_update_fn fn, void *ctx);

/* ------------------------------------------------------------------------------------------ */
/* Statements                                                                                 */
/* ------------------------------------------------------------------------------------------ */

/* sqlite3_prepare_v3 where the library has it (with `flags`), else sqlite3_prepare_v2. */
int scb_prepare(scb_db *db, const char *sql, int sql_len, unsigned int flags, scb_stmt **stmt,
                const char **tail);
int scb_step(scb_stmt *stmt);
int scb_reset(scb_stmt *stmt);
int scb_finalize(scb_stmt *stmt);
int scb_clear_bindings(scb_stmt *stmt);
const char *scb_sql(scb_stmt *stmt);
char *scb_expanded_sql(scb_stmt *stmt);
void scb_free_expanded_sql(char *text);
int scb_stmt_readonly(scb_stmt *stmt);
int scb_stmt_busy(scb_stmt *stmt);
scb_db *scb_db_handle(scb_stmt *stmt);

int scb_bind_parameter_count(scb_stmt *stmt);
int scb_bind_parameter_index(scb_stmt *stmt, const char *name);
const char *scb_bind_parameter_name(scb_stmt *stmt, int index);
int scb_bind_null(scb_stmt *stmt, int index);
int scb_bind_int64(scb_stmt *stmt, int index, int64_t value);
int scb_bind_double(scb_stmt *stmt, int index, double value);
/* Text and blobs are copied by SQLite (SQLITE_TRANSIENT): the caller's buffer may go at once. */
int scb_bind_text(scb_stmt *stmt, int index, const char *utf8, int byte_count);
int scb_bind_blob(scb_stmt *stmt, int index, const void *bytes, int byte_count);

int scb_column_count(scb_stmt *stmt);
int scb_data_count(scb_stmt *stmt);
const char *scb_column_name(scb_stmt *stmt, int index);
const char *scb_column_decltype(scb_stmt *stmt, int index);
int scb_column_type(scb_stmt *stmt, int index);
int64_t scb_column_int64(scb_stmt *stmt, int index);
double scb_column_double(scb_stmt *stmt, int index);
const unsigned char *scb_column_text(scb_stmt *stmt, int index);
const void *scb_column_blob(scb_stmt *stmt, int index);
int scb_column_bytes(scb_stmt *stmt, int index);
/*
** Reads columns first to first+count-1 of the current row in one call. kinds[i] receives column
** first+i's fundamental type code (1 integer, 2 real, 3 text, 4 blob, 5 NULL); bits[i] receives
** the integer, or the IEEE-754 bit pattern of the real, and 0 for the other kinds, whose content
** the caller reads with scb_column_text, scb_column_blob and scb_column_bytes. Each value is
** fetched from the library once (its sqlite3_value), where a type call and then a value call
** would look the column up twice; the statement must be used by one thread at a time, as every
** connection of this package is. Returns how many of the columns hold text or a blob, so that a
** caller with none to fetch need not scan the kinds.
*/
int scb_read_columns(scb_stmt *stmt, int first, int count, unsigned char *kinds, int64_t *bits);

/* ------------------------------------------------------------------------------------------ */
/* Application-defined SQL functions and collations                                          */
/* (https://sqlite.org/c3ref/create_function.html, https://sqlite.org/appfunc.html)          */
/* ------------------------------------------------------------------------------------------ */

/* Opaque handles: an sqlite3_context and an sqlite3_value of the loaded library. */
typedef struct scb_context scb_context;
typedef struct scb_value scb_value;

/* A scalar function's body, or an aggregate's step: called with the call's arguments. */
typedef void (*scb_function_fn)(scb_context *ctx, int argc, scb_value **argv);
/* An aggregate's final step. */
typedef void (*scb_final_fn)(scb_context *ctx);
/* Releases the application data given at registration. */
typedef void (*scb_destroy_fn)(void *app);
/* A collation: negative, zero or positive as the first text sorts before, with or after the
** second. The texts are UTF-8 and not NUL-terminated. */
typedef int (*scb_compare_fn)(void *app, int a_len, const void *a, int b_len, const void *b);

/*
** sqlite3_create_function_v2 with text encoding SQLITE_UTF8 and `flags` or-ed in (for example
** SQLITE_DETERMINISTIC 0x800, SQLITE_DIRECTONLY 0x80000, SQLITE_INNOCUOUS 0x200000; SQLite
** versions that do not know a flag ignore it). A scalar function passes `func`, an aggregate
** `step` and `final`; all three NULL deletes the function. Like SQLite, calls `destroy(app)`
** when the function is replaced or deleted, when the connection closes, and when the
** registration fails.
*/
int scb_create_function(scb_db *db, const char *name, int argc, int flags, void *app, scb_function_fn func,
                        scb_function_fn step, scb_final_fn final, scb_destroy_fn destroy);
/*
** sqlite3_create_collation_v2 with SQLITE_UTF8. A NULL `compare` deletes the collation. Unlike
** SQLite itself (whose sqlite3_create_collation_v2 never calls the destructor of a registration
** that failed), calls `destroy(app)` when the registration fails too, so every registration
** function of the bridge owns `app` the same way.
*/
int scb_create_collation(scb_db *db, const char *name, void *app, scb_compare_fn compare, scb_destroy_fn destroy);
/* The application data of the function being called (sqlite3_user_data). */
void *scb_user_data(scb_context *ctx);
/*
** The aggregate's memory for this call (sqlite3_aggregate_context): `bytes` zeroed bytes at the
** first call of one aggregation, the same memory afterwards, NULL when it cannot be allocated
** (or with `bytes` 0 when none was allocated yet).
*/
void *scb_aggregate_context(scb_context *ctx, int bytes);

/* An argument's fundamental type (1 integer, 2 real, 3 text, 4 blob, 5 NULL) and value. Read
** the text or blob first, then its byte count (https://sqlite.org/c3ref/value_blob.html). */
int scb_value_type(scb_value *value);
int64_t scb_value_int64(scb_value *value);
double scb_value_double(scb_value *value);
const unsigned char *scb_value_text(scb_value *value);
const void *scb_value_blob(scb_value *value);
int scb_value_bytes(scb_value *value);

/* The call's result. Text and blobs are copied by SQLite (SQLITE_TRANSIENT); a NULL pointer with
** zero bytes is an empty text or blob, never NULL. */
void scb_result_null(scb_context *ctx);
void scb_result_int64(scb_context *ctx, int64_t value);
void scb_result_double(scb_context *ctx, double value);
void scb_result_text(scb_context *ctx, const char *utf8, int byte_count);
void scb_result_blob(scb_context *ctx, const void *bytes, int byte_count);
/* Fails the call: the statement stops with SQLITE_ERROR and `message` (UTF-8, `byte_count` bytes). */
void scb_result_error(scb_context *ctx, const char *message, int byte_count);
/* Fails the call with SQLITE_TOOBIG ("string or blob too big"). */
void scb_result_error_toobig(scb_context *ctx);
/* Fails the call with SQLITE_NOMEM. */
void scb_result_error_nomem(scb_context *ctx);

/* ------------------------------------------------------------------------------------------ */
/* Low-level escape hatches for the package's own tests and benchmarks                        */
/* ------------------------------------------------------------------------------------------ */

/* VFS registration with the loaded library; `vfs` is an sqlite3_vfs* (https://sqlite.org/vfs.html). */
void *scb_vfs_find(const char *name);
int scb_vfs_register(void *vfs, int make_default);
int scb_vfs_unregister(void *vfs);
/* Frees memory the library allocated (sqlite3_free). */
void scb_free(void *p);
/*
** The address of one of the loaded library's own exported functions, or NULL. For C code of the
** package's own (benchmark floors, test VFS) that must call the same loaded library directly.
*/
void *scb_library_function(const char *name);

/* ------------------------------------------------------------------------------------------ */
/* Key derivation through the loaded library's own crypto library (kdf.c)                     */
/* ------------------------------------------------------------------------------------------ */

/* The PBKDF2 digests SQLCipher uses (`PRAGMA cipher_kdf_algorithm`). */
typedef enum scb_kdf_algorithm {
    SCB_KDF_PBKDF2_HMAC_SHA1 = 1,
    SCB_KDF_PBKDF2_HMAC_SHA256 = 2,
    SCB_KDF_PBKDF2_HMAC_SHA512 = 3
} scb_kdf_algorithm;

/* Outcome of scb_kdf_prepare. */
typedef enum scb_kdf_status {
    SCB_KDF_OK = 0,
    /* No library is loaded yet (scb_load first). */
    SCB_KDF_NOT_LOADED = 1,
    /* This platform has no link map or ELF dynamic section to read. */
    SCB_KDF_UNSUPPORTED_PLATFORM = 2,
    /* The library calls no PBKDF2 function of a library it depends on (another crypto provider). */
    SCB_KDF_NO_CRYPTO_LIBRARY = 3,
    /* The crypto library lacks a function the derivation needs; the message names it. */
    SCB_KDF_MISSING_SYMBOL = 4,
    /* A function resolved from the crypto library is not the one the library's own call is bound to. */
    SCB_KDF_BINDING_MISMATCH = 5
} scb_kdf_status;

/*
** Finds, once per process, the crypto library that the loaded library itself links (from its
** link map and its DT_NEEDED entries; never linked, never loaded anew) and resolves PBKDF2 there.
** Thread-safe; later calls return the first outcome. Writes a reason into `message` when the
** status is not SCB_KDF_OK (a NULL `message` is allowed).
*/
int scb_kdf_prepare(char *message, size_t message_len);

/* The path (as the dynamic linker recorded it) of the crypto library found; NULL before success. */
const char *scb_kdf_library_path(void);

/* Which of the library's own PBKDF2 imports was checked against the function found, e.g. "PKCS5_PBKDF2_HMAC". */
const char *scb_kdf_checked_import(void);

/*
** PBKDF2-HMAC with the given digest (an scb_kdf_algorithm) through the crypto library found by
** scb_kdf_prepare, writing `out_len` bytes to `out`. Returns 1 on success, 0 on failure (not
** prepared, bad arguments, or the crypto library reported an error). Holds no copy of the inputs.
*/
int scb_kdf_pbkdf2(int algorithm, const void *passphrase, int passphrase_len, const void *salt, int salt_len,
                   int iterations, void *out, int out_len);

/* Overwrites `len` bytes at `p` with zeros in a way the compiler cannot remove (key buffers). */
void scb_kdf_zero(void *p, size_t len);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* CSQLCIPHERBRIDGE_H */
