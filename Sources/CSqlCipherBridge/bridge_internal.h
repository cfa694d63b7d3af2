/*
** Private to the bridge: the table of functions resolved from the loaded library.
**
** The table is filled once by scb_load (loader.c) and never written again; the `scb_loaded`
** flag is published with release ordering after the table is complete, so any thread that sees
** it set (acquire) sees a complete table. Nothing here is visible to Swift.
*/
#ifndef CSQLCIPHERBRIDGE_INTERNAL_H
#define CSQLCIPHERBRIDGE_INTERNAL_H

#include "CSqlCipherBridge.h"
#include <stdatomic.h>

#define SCB_HIDDEN __attribute__((visibility("hidden")))

/* SQLite result codes the bridge itself needs. */
#define SCB_SQLITE_OK 0
#define SCB_SQLITE_MISUSE 21
#define SCB_SQLITE_ROW 100
#define SCB_SQLITE_DONE 101
#define SCB_SQLITE_OPEN_READWRITE 0x00000002
#define SCB_SQLITE_OPEN_CREATE 0x00000004
#define SCB_SQLITE_OPEN_MEMORY 0x00000080
#define SCB_SQLITE_OPEN_FULLMUTEX 0x00010000

/*
** Every function the package requires, as X(return type, name without the sqlite3_ prefix,
** parameter list). One list drives the table's fields, the dlsym names and the ownership check,
** so a function cannot be used without being resolved and proven.
*/
#define SCB_REQUIRED_FUNCTIONS(X) \
    X(const char *, libversion, (void)) \
    X(int, libversion_number, (void)) \
    X(const char *, sourceid, (void)) \
    X(int, open_v2, (const char *, scb_db **, int, const char *)) \
    X(int, close_v2, (scb_db *)) \
    X(int, key, (scb_db *, const void *, int)) \
    X(int, rekey, (scb_db *, const void *, int)) \
    X(int, extended_result_codes, (scb_db *, int)) \
    X(int, busy_timeout, (scb_db *, int)) \
    X(int, errcode, (scb_db *)) \
    X(int, extended_errcode, (scb_db *)) \
    X(const char *, errmsg, (scb_db *)) \
    X(const char *, errstr, (int)) \
    X(int, changes, (scb_db *)) \
    X(int, total_changes, (scb_db *)) \
    X(int64_t, last_insert_rowid, (scb_db *)) \
    X(int, get_autocommit, (scb_db *)) \
    X(void, interrupt, (scb_db *)) \
    X(void, progress_handler, (scb_db *, int, scb_progress_fn, void *)) \
    X(const char *, db_filename, (scb_db *, const char *)) \
    X(int, db_readonly, (scb_db *, const char *)) \
    X(int, wal_checkpoint_v2, (scb_db *, const char *, int, int *, int *)) \
    X(int, file_control, (scb_db *, const char *, int, void *)) \
    X(scb_backup *, backup_init, (scb_db *, const char *, scb_db *, const char *)) \
    X(int, backup_step, (scb_backup *, int)) \
    X(int, backup_finish, (scb_backup *)) \
    X(int, backup_remaining, (scb_backup *)) \
    X(int, backup_pagecount, (scb_backup *)) \
    X(int, set_authorizer, (scb_db *, scb_authorizer_fn, void *)) \
    X(void *, commit_hook, (scb_db *, scb_commit_fn, void *)) \
    X(void *, rollback_hook, (scb_db *, scb_rollback_fn, void *)) \
    X(void *, update_hook, (scb_db *, scb_update_fn, void *)) \
    X(int, prepare_v2, (scb_db *, const char *, int, scb_stmt **, const char **)) \
    X(int, step, (scb_stmt *)) \
    X(int, reset, (scb_stmt *)) \
    X(int, finalize, (scb_stmt *)) \
    X(int, clear_bindings, (scb_stmt *)) \
    X(const char *, sql, (scb_stmt *)) \
    X(int, stmt_readonly, (scb_stmt *)) \
    X(int, stmt_busy, (scb_stmt *)) \
    X(scb_db *, db_handle, (scb_stmt *)) \
    X(int, bind_parameter_count, (scb_stmt *)) \
    X(int, bind_parameter_index, (scb_stmt *, const char *)) \
    X(const char *, bind_parameter_name, (scb_stmt *, int)) \
    X(int, bind_null, (scb_stmt *, int)) \
    X(int, bind_int64, (scb_stmt *, int, int64_t)) \
    X(int, bind_double, (scb_stmt *, int, double)) \
    X(int, bind_text, (scb_stmt *, int, const char *, int, void (*)(void *))) \
    X(int, bind_blob, (scb_stmt *, int, const void *, int, void (*)(void *))) \
    X(int, column_count, (scb_stmt *)) \
    X(int, data_count, (scb_stmt *)) \
    X(const char *, column_name, (scb_stmt *, int)) \
    X(const char *, column_decltype, (scb_stmt *, int)) \
    X(int, column_type, (scb_stmt *, int)) \
    X(int64_t, column_int64, (scb_stmt *, int)) \
    X(double, column_double, (scb_stmt *, int)) \
    X(const unsigned char *, column_text, (scb_stmt *, int)) \
    X(const void *, column_blob, (scb_stmt *, int)) \
    X(int, column_bytes, (scb_stmt *, int)) \
    X(void *, column_value, (scb_stmt *, int)) \
    X(int, value_type, (void *)) \
    X(int64_t, value_int64, (void *)) \
    X(double, value_double, (void *)) \
    X(const unsigned char *, value_text, (void *)) \
    X(const void *, value_blob, (void *)) \
    X(int, value_bytes, (void *)) \
    X(int, create_function_v2, (scb_db *, const char *, int, int, void *, scb_function_fn, scb_function_fn, \
                                scb_final_fn, scb_destroy_fn)) \
    X(int, create_collation_v2, (scb_db *, const char *, int, void *, scb_compare_fn, scb_destroy_fn)) \
    X(void *, user_data, (scb_context *)) \
    X(void *, aggregate_context, (scb_context *, int)) \
    X(void, result_null, (scb_context *)) \
    X(void, result_int64, (scb_context *, int64_t)) \
    X(void, result_double, (scb_context *, double)) \
    X(void, result_text, (scb_context *, const char *, int, void (*)(void *))) \
    X(void, result_blob, (scb_context *, const void *, int, void (*)(void *))) \
    X(void, result_error, (scb_context *, const char *, int)) \
    X(void, result_error_toobig, (scb_context *)) \
    X(void, result_error_nomem, (scb_context *)) \
    X(void *, vfs_find, (const char *)) \
    X(int, vfs_register, (void *, int)) \
    X(int, vfs_unregister, (void *)) \
    X(void, free, (void *))

/* Newer functions the package uses when present (indexed by scb_optional_function). */
#define SCB_OPTIONAL_FUNCTIONS(X) \
    X(int, prepare_v3, (scb_db *, const char *, int, unsigned int, scb_stmt **, const char **)) \
    X(char *, expanded_sql, (scb_stmt *)) \
    X(int, key_v2, (scb_db *, const char *, const void *, int)) \
    X(int, rekey_v2, (scb_db *, const char *, const void *, int)) \
    X(int, db_cacheflush, (scb_db *)) \
    X(int, db_config, (scb_db *, int, ...))

#define SCB_FIELD(ret, name, args) ret (*name) args;
typedef struct scb_api {
    SCB_REQUIRED_FUNCTIONS(SCB_FIELD)
    SCB_OPTIONAL_FUNCTIONS(SCB_FIELD)
} scb_api;
#undef SCB_FIELD

/* The resolved table; complete and immutable once scb_loaded reads nonzero (acquire). */
SCB_HIDDEN extern scb_api scb_fn;
SCB_HIDDEN extern atomic_int scb_loaded;

/* Result of the relocation audit (audit.c). */
typedef struct scb_audit_result {
    int supported;          /* 0 where the platform has no audit (non-ELF) */
    int checked;
    int foreign;
    int checked_family[SCB_FAMILY_COUNT];  /* `checked`, split by symbol family */
    int foreign_family[SCB_FAMILY_COUNT];  /* `foreign`, split by symbol family */
    int unbound;            /* of `foreign`: lazy PLT slots not filled yet whose binding is unproven */
    int lazy_local;         /* lazy PLT slots not filled yet that the global scope binds to the library itself */
    int first_is_elsewhere; /* whether first_symbol's slot points into another object */
    char first_symbol[128];
    char first_object[4096];
    char error[256];        /* set when the library's dynamic section could not be read */
} scb_audit_result;

/*
** Audits `handle`: every relocation slot of the library that refers to a symbol the library
** itself defines (sqlite3_*, sqlcipher_* or any other name) must hold that definition's address. Fills `out`; returns 0 on success
** (even with foreign slots, which `out->foreign` counts) and -1 when the audit could not run.
*/
SCB_HIDDEN int scb_audit_library(void *handle, scb_audit_result *out);

/*
** Whether `address` lies in the object loaded as `handle`. Used to prove that each function
** dlsym returned is the library's own definition, not one found in a dependency.
*/
SCB_HIDDEN int scb_address_in_library(void *handle, const void *address, char *owner, size_t owner_len);

/*
** The handle of the proven library (loader.c), for kdf.c, which finds the crypto library that
** this library itself links; NULL before a successful scb_load.
*/
SCB_HIDDEN void *scb_library_handle(void);

/*
** The exit gate (exit.c): what keeps a process that exits while its threads still call the library
** from freeing the crypto provider's objects under them.
*/
typedef struct scb_exit_slot {
    atomic_int depth;               /* the owning thread's gated calls in progress (nested count) */
    atomic_int in_use;              /* owned by a live thread */
    struct scb_exit_slot *next;     /* the next slot; the list only grows */
} scb_exit_slot;

SCB_HIDDEN extern _Thread_local scb_exit_slot *scb_exit_my_slot;
SCB_HIDDEN extern atomic_int scb_exit_started;
/* Whether the gate counts calls at all: only when its handler is registered (SCB_EXIT_GATED).
** Written once, at load, before the library is published to any thread (exit.c). */
SCB_HIDDEN extern atomic_int scb_exit_gate_on;
SCB_HIDDEN extern int scb_exit_full_fence;
SCB_HIDDEN scb_exit_slot *scb_exit_attach(void);
SCB_HIDDEN int scb_exit_refuse(scb_exit_slot *slot);
SCB_HIDDEN void scb_exit_track(scb_db *db);
SCB_HIDDEN void scb_exit_untrack(scb_db *db);

/* What scb_exit_prepare found and did. */
enum scb_exit_mode {
    SCB_EXIT_NOT_OPENSSL = 0,   /* the library's crypto provider is not OpenSSL's libcrypto */
    SCB_EXIT_CLEANUP_OFF = 1,   /* libcrypto came with the library: its exit cleanup is off */
    SCB_EXIT_GATED = 2          /* libcrypto was already loaded: the exit handler waits for calls */
};

/*
** Called once by the loader after the library's bindings are proven and before its first call
** into its crypto provider. Guarantees: OpenSSL's cleanup at exit is turned off when this call
** is the first initialisation of libcrypto; otherwise the exit gate's handler is registered with
** atexit, so that it runs before OpenSSL's earlier registration. Returns an scb_exit_mode.
*/
SCB_HIDDEN int scb_exit_prepare(void *handle, int library_was_present);

/*
** Called once by the loader with the proven library's handle, which is never closed afterwards.
** Guarantees: from then on fork() holds the library's VFS and memory mutexes (SQLite's, and
** SQLCipher's own from 4.7 on) in the thread that forks, so that a child of fork() finds them
** free and can exit (exit.c); a second call changes nothing.
*/
SCB_HIDDEN void scb_fork_guard_install(void *handle);

/* SQLITE_INTERRUPT: what a call refused by the closed exit gate returns (exit.c). */
#define SCB_SQLITE_INTERRUPT 9

/* What scb_gate_enter returns for a call refused because the process is exiting. */
#define SCB_GATE_REFUSED ((scb_exit_slot *)-1)

/*
** Entered by each wrapper that can reach the pager or the crypto provider, for the length of the
** call. The fast path is a thread-local increment, a compiler barrier and one load: the handler
** supplies the other half of the ordering with membarrier (exit.c). Returns SCB_GATE_REFUSED,
** without entering, when exit has begun on another thread and this call is not nested in one
** already inside: the wrapper then returns its refusal (SQLITE_INTERRUPT, or NULL) without
** calling the library.
*/
static inline scb_exit_slot *scb_gate_enter(void) {
    if (!atomic_load_explicit(&scb_exit_gate_on, memory_order_relaxed)) return NULL;
    scb_exit_slot *slot = scb_exit_my_slot;
    if (slot == NULL && (slot = scb_exit_attach()) == NULL) return NULL;
    int depth = atomic_load_explicit(&slot->depth, memory_order_relaxed);
    atomic_store_explicit(&slot->depth, depth + 1, memory_order_relaxed);
    if (depth == 0) {
        if (scb_exit_full_fence) {
            atomic_thread_fence(memory_order_seq_cst);
        } else {
            atomic_signal_fence(memory_order_seq_cst);
        }
        if (atomic_load_explicit(&scb_exit_started, memory_order_relaxed) && scb_exit_refuse(slot)) {
            return SCB_GATE_REFUSED;
        }
    }
    return slot;
}

/* Leaves the gate entered by scb_gate_enter; `slot` is what it returned (not SCB_GATE_REFUSED). */
static inline void scb_gate_leave(scb_exit_slot *slot) {
    if (slot == NULL) return;
    int depth = atomic_load_explicit(&slot->depth, memory_order_relaxed);
    atomic_store_explicit(&slot->depth, depth - 1, memory_order_release);
}

/*
** A gated call: `expression` runs inside the exit gate and the statement yields its value; a
** refused call yields `refused` without evaluating `expression`. Without the gate's handler (the
** usual case: libcrypto's cleanup is off, exit.c measure 1) the call is a plain tail call.
*/
#define SCB_GATED(type, refused, expression) \
    do { \
        if (!atomic_load_explicit(&scb_exit_gate_on, memory_order_relaxed)) return (expression); \
        scb_exit_slot *scb_gate_slot_ = scb_gate_enter(); \
        if (scb_gate_slot_ == SCB_GATE_REFUSED) return (refused); \
        type scb_gate_result_ = (expression); \
        scb_gate_leave(scb_gate_slot_); \
        return scb_gate_result_; \
    } while (0)

#endif /* CSQLCIPHERBRIDGE_INTERNAL_H */
