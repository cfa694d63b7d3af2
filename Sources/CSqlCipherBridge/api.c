/*
** The wrappers: each scb_x calls the loaded library's sqlite3_x through the proven table.
**
** Only scb_open_v2 checks that a library is loaded: every other wrapper takes a connection or a
** statement, and those exist only after a successful load, when the table is complete and
** immutable. Each wrapper behaves exactly as SQLite documents the function it forwards to.
** Those that can reach the pager or the crypto provider run inside the exit gate (exit.c), and
** the open connections are tracked for its handler.
*/
#include "bridge_internal.h"

#define SCB_TRANSIENT ((void (*)(void *))-1)

int scb_open_v2(const char *filename, scb_db **db, int flags, const char *vfs) {
    if (!atomic_load_explicit(&scb_loaded, memory_order_acquire)) {
        if (db) *db = 0;
        return SCB_SQLITE_MISUSE;
    }
    scb_exit_slot *slot = scb_gate_enter();
    if (slot == SCB_GATE_REFUSED) {
        if (db) *db = 0;
        return SCB_SQLITE_INTERRUPT;
    }
    int rc = scb_fn.open_v2(filename, db, flags, vfs);
    /* SQLite returns a handle (to close) even when the opening failed: track it either way. */
    if (db) scb_exit_track(*db);
    scb_gate_leave(slot);
    return rc;
}

int scb_close_v2(scb_db *db) {
    scb_exit_untrack(db);
    SCB_GATED(int, SCB_SQLITE_INTERRUPT, scb_fn.close_v2(db));
}
int scb_key(scb_db *db, const void *key, int key_len) { SCB_GATED(int, SCB_SQLITE_INTERRUPT, scb_fn.key(db, key, key_len)); }
int scb_rekey(scb_db *db, const void *key, int key_len) { SCB_GATED(int, SCB_SQLITE_INTERRUPT, scb_fn.rekey(db, key, key_len)); }

int scb_key_v2(scb_db *db, const char *schema, const void *key, int key_len) {
    if (scb_fn.key_v2 == 0) return SCB_SQLITE_MISUSE;
    SCB_GATED(int, SCB_SQLITE_INTERRUPT, scb_fn.key_v2(db, schema, key, key_len));
}

int scb_extended_result_codes(scb_db *db, int on) { return scb_fn.extended_result_codes(db, on); }
int scb_busy_timeout(scb_db *db, int ms) { return scb_fn.busy_timeout(db, ms); }
int scb_errcode(scb_db *db) { return scb_fn.errcode(db); }
int scb_extended_errcode(scb_db *db) { return scb_fn.extended_errcode(db); }
const char *scb_errmsg(scb_db *db) { return scb_fn.errmsg(db); }

const char *scb_errstr(int code) {
    if (!atomic_load_explicit(&scb_loaded, memory_order_acquire)) return "library not loaded";
    return scb_fn.errstr(code);
}

int scb_changes(scb_db *db) { return scb_fn.changes(db); }
int scb_total_changes(scb_db *db) { return scb_fn.total_changes(db); }
int64_t scb_last_insert_rowid(scb_db *db) { return scb_fn.last_insert_rowid(db); }
int scb_get_autocommit(scb_db *db) { return scb_fn.get_autocommit(db); }
void scb_interrupt(scb_db *db) { scb_fn.interrupt(db); }
void scb_progress_handler(scb_db *db, int every, scb_progress_fn fn, void *ctx) {
    scb_fn.progress_handler(db, every, fn, ctx);
}
const char *scb_db_filename(scb_db *db, const char *schema) { return scb_fn.db_filename(db, schema); }
int scb_db_readonly(scb_db *db, const char *schema) { return scb_fn.db_readonly(db, schema); }

/*
** Stops `db` from checkpointing (and removing) its -wal when it is closed
** (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1006, SQLite 3.16 and later). Guarantees: returns 0 when the
** option is set on `db`; 1 when the library has no sqlite3_db_config or does not know the option
** (SQLite 3.15.2 of SQLCipher 3.4.1), and then nothing was changed.
*/
int scb_no_checkpoint_on_close(scb_db *db) {
    if (scb_fn.db_config == NULL) return 1;
    int set = 0;
    int rc = scb_fn.db_config(db, 1006, 1, &set);
    return rc == 0 && set == 1 ? 0 : 1;
}

int scb_wal_checkpoint_v2(scb_db *db, const char *schema, int mode, int *log_frames, int *checkpointed) {
    SCB_GATED(int, SCB_SQLITE_INTERRUPT, scb_fn.wal_checkpoint_v2(db, schema, mode, log_frames, checkpointed));
}

int scb_file_control(scb_db *db, const char *schema, int op, void *arg) {
    return scb_fn.file_control(db, schema, op, arg);
}

scb_backup *scb_backup_init(scb_db *dest, const char *dest_schema, scb_db *source, const char *source_schema) {
    SCB_GATED(scb_backup *, NULL, scb_fn.backup_init(dest, dest_schema, source, source_schema));
}
int scb_backup_step(scb_backup *backup, int pages) { SCB_GATED(int, SCB_SQLITE_INTERRUPT, scb_fn.backup_step(backup, pages)); }
int scb_backup_finish(scb_backup *backup) { SCB_GATED(int, SCB_SQLITE_INTERRUPT, scb_fn.backup_finish(backup)); }
int scb_backup_remaining(scb_backup *backup) { return scb_fn.backup_remaining(backup); }
int scb_backup_pagecount(scb_backup *backup) { return scb_fn.backup_pagecount(backup); }

int scb_set_authorizer(scb_db *db, scb_authorizer_fn fn, void *ctx) { return scb_fn.set_authorizer(db, fn, ctx); }
void *scb_commit_hook(scb_db *db, scb_commit_fn fn, void *ctx) { return scb_fn.commit_hook(db, fn, ctx); }
void *scb_rollback_hook(scb_db *db, scb_rollback_fn fn, void *ctx) { return scb_fn.rollback_hook(db, fn, ctx); }
void *scb_update_hook(scb_db *db, scb_update_fn fn, void *ctx) { return scb_fn.update_hook(db, fn, ctx); }

int scb_prepare(scb_db *db, const char *sql, int sql_len, unsigned int flags, scb_stmt **stmt,
                const char **tail) {
    if (stmt) *stmt = 0;  /* what a refused call leaves, as SQLite does on an error */
    if (scb_fn.prepare_v3 != 0) SCB_GATED(int, SCB_SQLITE_INTERRUPT, scb_fn.prepare_v3(db, sql, sql_len, flags, stmt, tail));
    SCB_GATED(int, SCB_SQLITE_INTERRUPT, scb_fn.prepare_v2(db, sql, sql_len, stmt, tail));
}

int scb_step(scb_stmt *stmt) { SCB_GATED(int, SCB_SQLITE_INTERRUPT, scb_fn.step(stmt)); }
int scb_reset(scb_stmt *stmt) { SCB_GATED(int, SCB_SQLITE_INTERRUPT, scb_fn.reset(stmt)); }
int scb_finalize(scb_stmt *stmt) { SCB_GATED(int, SCB_SQLITE_INTERRUPT, scb_fn.finalize(stmt)); }
int scb_clear_bindings(scb_stmt *stmt) { return scb_fn.clear_bindings(stmt); }
const char *scb_sql(scb_stmt *stmt) { return scb_fn.sql(stmt); }

/*
** The text of stmt with every bound value written in as an SQL literal (sqlite3_expanded_sql,
** SQLite 3.14 and later), or NULL when the library lacks the function or memory ran out. The
** text can hold a bound key (ATTACH ... KEY ?): release it only with scb_free_expanded_sql, which
** zeroes it first.
*/
char *scb_expanded_sql(scb_stmt *stmt) { return scb_fn.expanded_sql ? scb_fn.expanded_sql(stmt) : 0; }

/*
** Zeroes a text from scb_expanded_sql, through a volatile pointer so that the stores are kept,
** and frees it with the library's allocator. A NULL text is ignored.
*/
void scb_free_expanded_sql(char *text) {
    if (!text) return;
    volatile char *byte = text;
    while (*byte) *byte++ = 0;
    scb_free(text);
}
int scb_stmt_readonly(scb_stmt *stmt) { return scb_fn.stmt_readonly(stmt); }
int scb_stmt_busy(scb_stmt *stmt) { return scb_fn.stmt_busy(stmt); }
scb_db *scb_db_handle(scb_stmt *stmt) { return scb_fn.db_handle(stmt); }

int scb_bind_parameter_count(scb_stmt *stmt) { return scb_fn.bind_parameter_count(stmt); }
int scb_bind_parameter_index(scb_stmt *stmt, const char *name) { return scb_fn.bind_parameter_index(stmt, name); }
const char *scb_bind_parameter_name(scb_stmt *stmt, int index) { return scb_fn.bind_parameter_name(stmt, index); }
int scb_bind_null(scb_stmt *stmt, int index) { return scb_fn.bind_null(stmt, index); }
int scb_bind_int64(scb_stmt *stmt, int index, int64_t value) { return scb_fn.bind_int64(stmt, index, value); }
int scb_bind_double(scb_stmt *stmt, int index, double value) { return scb_fn.bind_double(stmt, index, value); }

int scb_bind_text(scb_stmt *stmt, int index, const char *utf8, int byte_count) {
    return scb_fn.bind_text(stmt, index, utf8, byte_count, SCB_TRANSIENT);
}

int scb_bind_blob(scb_stmt *stmt, int index, const void *bytes, int byte_count) {
    return scb_fn.bind_blob(stmt, index, bytes, byte_count, SCB_TRANSIENT);
}

int scb_column_count(scb_stmt *stmt) { return scb_fn.column_count(stmt); }
int scb_data_count(scb_stmt *stmt) { return scb_fn.data_count(stmt); }
const char *scb_column_name(scb_stmt *stmt, int index) { return scb_fn.column_name(stmt, index); }
const char *scb_column_decltype(scb_stmt *stmt, int index) { return scb_fn.column_decltype(stmt, index); }
int scb_column_type(scb_stmt *stmt, int index) { return scb_fn.column_type(stmt, index); }
int64_t scb_column_int64(scb_stmt *stmt, int index) { return scb_fn.column_int64(stmt, index); }
double scb_column_double(scb_stmt *stmt, int index) { return scb_fn.column_double(stmt, index); }
const unsigned char *scb_column_text(scb_stmt *stmt, int index) { return scb_fn.column_text(stmt, index); }
const void *scb_column_blob(scb_stmt *stmt, int index) { return scb_fn.column_blob(stmt, index); }
int scb_column_bytes(scb_stmt *stmt, int index) { return scb_fn.column_bytes(stmt, index); }

/*
** One sqlite3_column_value per column, then its type and number read from that value. The value
** is the "unprotected" kind (https://sqlite.org/c3ref/column_blob.html): reading it is safe
** because no other thread uses the connection meanwhile, which the package guarantees by giving
** each connection one owner (SQLITE_OPEN_NOMUTEX).
*/
int scb_read_columns(scb_stmt *stmt, int first, int count, unsigned char *kinds, int64_t *bits) {
    int objects = 0;
    for (int index = 0; index < count; index++) {
        void *value = scb_fn.column_value(stmt, first + index);
        int kind = scb_fn.value_type(value);
        int64_t payload = 0;
        if (kind == 1) {
            payload = scb_fn.value_int64(value);
        } else if (kind == 2) {
            union { double real; int64_t bits; } pun;  /* C11 6.5.2.3: reads the same bytes */
            pun.real = scb_fn.value_double(value);
            payload = pun.bits;
        } else if (kind == 3 || kind == 4) {
            objects++;
        }
        kinds[index] = (unsigned char)kind;
        bits[index] = payload;
    }
    return objects;
}

/*
** Guarantees: registers the function on `db` exactly as sqlite3_create_function_v2 does, with
** SQLITE_UTF8 (1) as the text encoding; `destroy` is SQLite's to call from then on, also on
** failure (SQLite calls it when the registration fails).
*/
int scb_create_function(scb_db *db, const char *name, int argc, int flags, void *app, scb_function_fn func,
                        scb_function_fn step, scb_final_fn final, scb_destroy_fn destroy) {
    return scb_fn.create_function_v2(db, name, argc, 1 | flags, app, func, step, final, destroy);
}

/*
** Guarantees: registers (or, with a NULL `compare`, deletes) the collation with SQLITE_UTF8 and
** owns `app` in every outcome: SQLite calls `destroy` when the collation is replaced, deleted or
** the connection closes, and this wrapper calls it itself when the registration fails, which
** sqlite3_create_collation_v2 does not (https://sqlite.org/c3ref/create_collation.html).
*/
int scb_create_collation(scb_db *db, const char *name, void *app, scb_compare_fn compare, scb_destroy_fn destroy) {
    int rc = scb_fn.create_collation_v2(db, name, 1, app, compare, destroy);
    if (rc != SCB_SQLITE_OK && destroy != 0 && app != 0) destroy(app);
    return rc;
}

void *scb_user_data(scb_context *ctx) { return scb_fn.user_data(ctx); }
void *scb_aggregate_context(scb_context *ctx, int bytes) { return scb_fn.aggregate_context(ctx, bytes); }

int scb_value_type(scb_value *value) { return scb_fn.value_type(value); }
int64_t scb_value_int64(scb_value *value) { return scb_fn.value_int64(value); }
double scb_value_double(scb_value *value) { return scb_fn.value_double(value); }
const unsigned char *scb_value_text(scb_value *value) { return scb_fn.value_text(value); }
const void *scb_value_blob(scb_value *value) { return scb_fn.value_blob(value); }
int scb_value_bytes(scb_value *value) { return scb_fn.value_bytes(value); }

void scb_result_null(scb_context *ctx) { scb_fn.result_null(ctx); }
void scb_result_int64(scb_context *ctx, int64_t value) { scb_fn.result_int64(ctx, value); }
void scb_result_double(scb_context *ctx, double value) { scb_fn.result_double(ctx, value); }

/* Guarantees: an empty text even for a NULL pointer (SQLite would store NULL). */
void scb_result_text(scb_context *ctx, const char *utf8, int byte_count) {
    static const char empty[1] = {0};
    scb_fn.result_text(ctx, utf8 ? utf8 : empty, utf8 ? byte_count : 0, SCB_TRANSIENT);
}

/* Guarantees: an empty blob even for a NULL pointer (SQLite would store NULL). */
void scb_result_blob(scb_context *ctx, const void *bytes, int byte_count) {
    static const unsigned char empty[1] = {0};
    scb_fn.result_blob(ctx, bytes ? bytes : (const void *)empty, bytes ? byte_count : 0, SCB_TRANSIENT);
}

void scb_result_error(scb_context *ctx, const char *message, int byte_count) {
    scb_fn.result_error(ctx, message, byte_count);
}
void scb_result_error_toobig(scb_context *ctx) { scb_fn.result_error_toobig(ctx); }
void scb_result_error_nomem(scb_context *ctx) { scb_fn.result_error_nomem(ctx); }

void *scb_vfs_find(const char *name) {
    if (!atomic_load_explicit(&scb_loaded, memory_order_acquire)) return 0;
    return scb_fn.vfs_find(name);
}

int scb_vfs_register(void *vfs, int make_default) {
    if (!atomic_load_explicit(&scb_loaded, memory_order_acquire)) return SCB_SQLITE_MISUSE;
    return scb_fn.vfs_register(vfs, make_default);
}

int scb_vfs_unregister(void *vfs) {
    if (!atomic_load_explicit(&scb_loaded, memory_order_acquire)) return SCB_SQLITE_MISUSE;
    return scb_fn.vfs_unregister(vfs);
}

void scb_free(void *p) {
    if (p && atomic_load_explicit(&scb_loaded, memory_order_acquire)) scb_fn.free(p);
}
