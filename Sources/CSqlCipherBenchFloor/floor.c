/*
** The benchmark floor: see CSqlCipherBenchFloor.h.
**
** sqlite3.h is deliberately not included: the few function types the floor needs are declared
** here with opaque handles, and every function is resolved from the bridge's loaded library with
** scb_library_function. Nothing here links, or can bind to, any other SQLite in the process.
** Constants are SQLite's documented numeric values (https://sqlite.org/rescode.html,
** https://sqlite.org/c3ref/c_open_autoproxy.html).
*/
#include "CSqlCipherBenchFloor.h"

#include <CSqlCipherBridge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

enum {
    FLOOR_OK = 0,
    FLOOR_ERROR = 1,
    FLOOR_NOMEM = 7,
    FLOOR_MISUSE = 21,
    FLOOR_ROW = 100,
    FLOOR_DONE = 101,
    FLOOR_OPEN_READWRITE = 0x00000002,
    FLOOR_OPEN_CREATE = 0x00000004,
    FLOOR_OPEN_NOMUTEX = 0x00008000,
};

typedef struct floor_stmt floor_stmt;
/* scbf_db is the library's sqlite3 handle itself, under the floor's own name. */
typedef scbf_db floor_db;

/* The library functions the floor calls, with SQLite's documented signatures. */
static struct {
    int (*open_v2)(const char *, floor_db **, int, const char *);
    int (*close_v2)(floor_db *);
    int (*key)(floor_db *, const void *, int);
    int (*rekey)(floor_db *, const void *, int);
    int (*exec)(floor_db *, const char *, void *, void *, char **);
    const char *(*errmsg)(floor_db *);
    int (*changes)(floor_db *);
    int (*prepare_v2)(floor_db *, const char *, int, floor_stmt **, const char **);
    int (*step)(floor_stmt *);
    int (*reset)(floor_stmt *);
    int (*finalize)(floor_stmt *);
    int (*bind_int64)(floor_stmt *, int, int64_t);
    int (*bind_null)(floor_stmt *, int);
    int (*column_count)(floor_stmt *);
    const char *(*column_name)(floor_stmt *, int);
    int64_t (*column_int64)(floor_stmt *, int);
} fn;

static int loaded = 0;

int scbf_load(char *message, size_t message_len) {
    if (loaded) return 0;
    if (!scb_is_loaded()) {
        snprintf(message, message_len, "no SQLCipher library is loaded (load it through SqlCipherLibrary first)");
        return -1;
    }
    struct {
        const char *name;
        void **slot;
    } table[] = {
        {"sqlite3_open_v2", (void **)&fn.open_v2},
        {"sqlite3_close_v2", (void **)&fn.close_v2},
        {"sqlite3_key", (void **)&fn.key},
        {"sqlite3_rekey", (void **)&fn.rekey},
        {"sqlite3_exec", (void **)&fn.exec},
        {"sqlite3_errmsg", (void **)&fn.errmsg},
        {"sqlite3_changes", (void **)&fn.changes},
        {"sqlite3_prepare_v2", (void **)&fn.prepare_v2},
        {"sqlite3_step", (void **)&fn.step},
        {"sqlite3_reset", (void **)&fn.reset},
        {"sqlite3_finalize", (void **)&fn.finalize},
        {"sqlite3_bind_int64", (void **)&fn.bind_int64},
        {"sqlite3_bind_null", (void **)&fn.bind_null},
        {"sqlite3_column_count", (void **)&fn.column_count},
        {"sqlite3_column_name", (void **)&fn.column_name},
        {"sqlite3_column_int64", (void **)&fn.column_int64},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        void *address = scb_library_function(table[i].name);
        if (address == NULL) {
            snprintf(message, message_len, "the loaded library does not export %s", table[i].name);
            return -1;
        }
        /* POSIX guarantees that a data pointer from dlsym converts to a function pointer. */
        memcpy(table[i].slot, &address, sizeof address);
    }
    loaded = 1;
    return 0;
}

int64_t scbf_value(int64_t id, int column, int64_t salt) {
    /* A multiply-add, so that computing values costs next to nothing in either language. */
    return column == 0 ? id : id * column + salt;
}

int scbf_open(const char *path, const void *key, int key_len, scbf_db **db, char *message, size_t message_len) {
    *db = NULL;
    if (!loaded) {
        snprintf(message, message_len, "scbf_load has not run");
        return FLOOR_MISUSE;
    }
    floor_db *handle = NULL;
    int rc = fn.open_v2(path, &handle, FLOOR_OPEN_READWRITE | FLOOR_OPEN_CREATE | FLOOR_OPEN_NOMUTEX, NULL);
    if (rc == FLOOR_OK && key_len > 0) rc = fn.key(handle, key, key_len);
    if (rc == FLOOR_OK) rc = fn.exec(handle, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
    if (rc != FLOOR_OK) {
        snprintf(message, message_len, "%s", handle ? fn.errmsg(handle) : "out of memory");
        if (handle) fn.close_v2(handle);
        return rc;
    }
    *db = handle;
    return FLOOR_OK;
}

void scbf_close(scbf_db *db) {
    if (db) fn.close_v2(db);
}

int scbf_exec(scbf_db *db, const char *sql) { return fn.exec(db, sql, NULL, NULL, NULL); }

int scbf_rekey(scbf_db *db, const void *key, int key_len) { return fn.rekey(db, key, key_len); }

const char *scbf_errmsg(scbf_db *db) { return fn.errmsg(db); }

/* Binds the ten values of row `id` to parameters 1...10. */
static int bind_row(floor_stmt *stmt, int64_t id, int null_id, int64_t salt) {
    int rc = null_id ? fn.bind_null(stmt, 1) : fn.bind_int64(stmt, 1, id);
    for (int column = 1; rc == FLOOR_OK && column < SCBF_COLUMNS; column++) {
        rc = fn.bind_int64(stmt, column + 1, scbf_value(id, column, salt));
    }
    return rc;
}

/* Runs a bound statement once, then resets it. */
static int run_once(floor_stmt *stmt) {
    int rc = fn.step(stmt);
    int reset = fn.reset(stmt);
    if (rc != FLOOR_DONE) return rc == FLOOR_ROW ? FLOOR_MISUSE : rc;
    return reset;
}

/* Ends a transaction: COMMIT after success, ROLLBACK after a failure (whose code is kept). */
static int finish(floor_db *db, int rc) {
    if (rc == FLOOR_OK) return fn.exec(db, "COMMIT", NULL, NULL, NULL);
    fn.exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int scbf_insert_rows(scbf_db *db, const char *insert_sql, int64_t first_id, int count, int null_id, int64_t salt) {
    int rc = fn.exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != FLOOR_OK) return rc;
    floor_stmt *stmt = NULL;
    rc = fn.prepare_v2(db, insert_sql, -1, &stmt, NULL);
    for (int64_t id = first_id; rc == FLOOR_OK && id < first_id + count; id++) {
        rc = bind_row(stmt, id, null_id, salt);
        if (rc == FLOOR_OK) rc = run_once(stmt);
    }
    fn.finalize(stmt);
    return finish(db, rc);
}

int scbf_upsert_rows(scbf_db *db, const char *upsert_sql, const char *insert_sql, int64_t first_id, int count,
                     int64_t salt) {
    int rc = fn.exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != FLOOR_OK) return rc;
    floor_stmt *upsert = NULL, *insert = NULL;
    rc = fn.prepare_v2(db, upsert_sql, -1, &upsert, NULL);
    if (rc == FLOOR_OK && insert_sql != NULL) rc = fn.prepare_v2(db, insert_sql, -1, &insert, NULL);
    for (int64_t id = first_id; rc == FLOOR_OK && id < first_id + count; id++) {
        rc = bind_row(upsert, id, 0, salt);
        if (rc == FLOOR_OK) rc = run_once(upsert);
        if (rc == FLOOR_OK && insert != NULL && fn.changes(db) == 0) {
            rc = bind_row(insert, id, 0, salt);
            if (rc == FLOOR_OK) rc = run_once(insert);
        }
    }
    fn.finalize(upsert);
    fn.finalize(insert);
    return finish(db, rc);
}

/* A growing array of int64 values; `capacity` and `count` count values, not rows. */
typedef struct value_buffer {
    int64_t *values;
    size_t count;
    size_t capacity;
} value_buffer;

static int reserve_row(value_buffer *buffer) {
    if (buffer->count + SCBF_COLUMNS <= buffer->capacity) return FLOOR_OK;
    size_t capacity = buffer->capacity ? buffer->capacity * 2 : 1024 * SCBF_COLUMNS;
    int64_t *grown = realloc(buffer->values, capacity * sizeof *grown);
    if (grown == NULL) return FLOOR_NOMEM;
    buffer->values = grown;
    buffer->capacity = capacity;
    return FLOOR_OK;
}

/* Steps `stmt` to the end, storing columns index[0...9] of every row; see the header. */
static int collect(floor_stmt *stmt, const int *index, int64_t *rows, int64_t *checksum) {
    value_buffer buffer = {NULL, 0, 0};
    uint64_t sum = 0;
    int64_t count = 0;
    int rc;
    while ((rc = fn.step(stmt)) == FLOOR_ROW) {
        if ((rc = reserve_row(&buffer)) != FLOOR_OK) break;
        int64_t *row = buffer.values + buffer.count;
        for (int column = 0; column < SCBF_COLUMNS; column++) {
            row[column] = fn.column_int64(stmt, index[column]);
            sum += (uint64_t)row[column];
        }
        buffer.count += SCBF_COLUMNS;
        count++;
    }
    free(buffer.values);
    *rows = count;
    *checksum = (int64_t)sum;
    return rc == FLOOR_DONE ? FLOOR_OK : rc;
}

int scbf_fetch_by_index(scbf_db *db, const char *select_sql, int64_t *rows, int64_t *checksum) {
    static const int identity[SCBF_COLUMNS] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    floor_stmt *stmt = NULL;
    int rc = fn.prepare_v2(db, select_sql, -1, &stmt, NULL);
    if (rc == FLOOR_OK) {
        if (fn.column_count(stmt) < SCBF_COLUMNS) rc = FLOOR_MISUSE;
        else rc = collect(stmt, identity, rows, checksum);
    }
    fn.finalize(stmt);
    return rc;
}

int scbf_fetch_by_name(scbf_db *db, const char *select_sql, const char *const *names, int64_t *rows,
                       int64_t *checksum) {
    floor_stmt *stmt = NULL;
    int rc = fn.prepare_v2(db, select_sql, -1, &stmt, NULL);
    if (rc == FLOOR_OK) {
        int index[SCBF_COLUMNS];
        int width = fn.column_count(stmt);
        for (int field = 0; rc == FLOOR_OK && field < SCBF_COLUMNS; field++) {
            index[field] = -1;
            for (int column = 0; column < width && index[field] < 0; column++) {
                if (strcmp(fn.column_name(stmt, column), names[field]) == 0) index[field] = column;
            }
            for (int column = 0; column < width && index[field] < 0; column++) {
                if (strcasecmp(fn.column_name(stmt, column), names[field]) == 0) index[field] = column;
            }
            if (index[field] < 0) rc = FLOOR_ERROR;
        }
        if (rc == FLOOR_OK) rc = collect(stmt, index, rows, checksum);
    }
    fn.finalize(stmt);
    return rc;
}

int64_t scbf_heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return (int64_t)(info.uordblks + info.hblkhd);
#else
    return -1;
#endif
}
