/*
** A rekey that can be watched and stopped: scb_rekey_watched.
**
** SQLCipher's sqlite3_rekey rewrites every page of the main database inside one write
** transaction and calls nothing back while it does. Each page it rewrites and does not find in
** the page cache is read, in page order, through the database file's sqlite3_io_methods, so the
** bridge watches those reads: for the time of the call the file's method table is replaced by a
** copy whose xRead also asks the caller's `check`. When `check` says stop, that one read fails
** with SQLITE_IOERR_READ. SQLCipher then leaves its page loop and rolls the transaction back (the
** pages already written go back through the rollback journal, or stay uncommitted in the WAL):
** the path SQLite takes after an I/O error or a crash, so the file keeps its old key and its
** contents. Every later read goes through untouched, so the rollback itself is never disturbed.
**
** Only the table pointer of this one connection's open file changes, and it is put back before
** the function returns; the copy lives on this function's stack. No other connection, file or
** thread sees it.
*/
#include "bridge_internal.h"
#include <stddef.h>
#include <string.h>

#define SCB_SQLITE_IOERR_READ (10 | (1 << 8))
#define SCB_SQLITE_FCNTL_FILE_POINTER 7

/* sqlite3_file and sqlite3_io_methods (https://sqlite.org/c3ref/io_methods.html), version 3. */
typedef struct scb_file scb_file;
typedef struct scb_io_methods {
    int iVersion;
    int (*xClose)(scb_file *);
    int (*xRead)(scb_file *, void *, int, int64_t);
    int (*xWrite)(scb_file *, const void *, int, int64_t);
    int (*xTruncate)(scb_file *, int64_t);
    int (*xSync)(scb_file *, int);
    int (*xFileSize)(scb_file *, int64_t *);
    int (*xLock)(scb_file *, int);
    int (*xUnlock)(scb_file *, int);
    int (*xCheckReservedLock)(scb_file *, int *);
    int (*xFileControl)(scb_file *, int, void *);
    int (*xSectorSize)(scb_file *);
    int (*xDeviceCharacteristics)(scb_file *);
    int (*xShmMap)(scb_file *, int, int, int, void volatile **);
    int (*xShmLock)(scb_file *, int, int, int);
    void (*xShmBarrier)(scb_file *);
    int (*xShmUnmap)(scb_file *, int);
    int (*xFetch)(scb_file *, int64_t, int, void **);
    int (*xUnfetch)(scb_file *, int64_t, void *);
} scb_io_methods;
struct scb_file {
    const scb_io_methods *pMethods;
};

/*
** The watched copy of a file's methods. `methods` comes first, so a watched file's pMethods
** pointer is also a pointer to the whole watch, which is how watched_read finds it.
*/
typedef struct scb_rekey_watch {
    scb_io_methods methods;
    const scb_io_methods *original;
    int64_t page_size;
    scb_rekey_check_fn check;
    void *context;
    int stopped;
} scb_rekey_watch;

/*
** The watched xRead: asks `check` with the number of the page being read, and fails this one
** read when it says stop. The failing read still fills the buffer: SQLite's pager passes what it
** read to SQLCipher's decryption even when the read reported an error, and SQLCipher treats a
** page that does not decrypt as permanent damage (the pager's error state, in which the rollback
** is left to the next connection as a hot journal). With the real bytes the page decrypts, the
** error is only the read's, and the rollback runs at once. After the first stop every read is
** the original's.
*/
static int watched_read(scb_file *file, void *buffer, int amount, int64_t offset) {
    scb_rekey_watch *watch = (scb_rekey_watch *)file->pMethods;
    int rc = watch->original->xRead(file, buffer, amount, offset);
    if (!watch->stopped && watch->check(watch->context, offset / watch->page_size + 1) != 0) {
        watch->stopped = 1;
        return rc == SCB_SQLITE_OK ? SCB_SQLITE_IOERR_READ : rc;
    }
    return rc;
}

/* How many bytes of a method table of version `version` exist (fields past it may not). */
static size_t methods_size(int version) {
    if (version <= 1) return offsetof(scb_io_methods, xShmMap);
    if (version == 2) return offsetof(scb_io_methods, xFetch);
    return sizeof(scb_io_methods);
}

int scb_rekey_watched(scb_db *db, const void *key, int key_len, int page_size, scb_rekey_check_fn check,
                      void *context, int *stopped) {
    if (stopped) *stopped = 0;
    scb_file *file = 0;
    if (check == 0 || page_size <= 0
        || scb_fn.file_control(db, "main", SCB_SQLITE_FCNTL_FILE_POINTER, &file) != SCB_SQLITE_OK || file == 0
        || file->pMethods == 0 || file->pMethods->xRead == 0) {
        return scb_rekey(db, key, key_len);
    }

    scb_rekey_watch watch;
    memset(&watch, 0, sizeof watch);
    memcpy(&watch.methods, file->pMethods, methods_size(file->pMethods->iVersion));
    if (watch.methods.iVersion > 3) watch.methods.iVersion = 3;
    watch.methods.xRead = watched_read;
    watch.original = file->pMethods;
    watch.page_size = page_size;
    watch.check = check;
    watch.context = context;

    file->pMethods = &watch.methods;
    int rc = scb_rekey(db, key, key_len);
    /* The file stays open during a rekey; the test only guards against a library that closed it. */
    if (file->pMethods == &watch.methods) file->pMethods = watch.original;

    if (stopped) *stopped = watch.stopped;
    return rc;
}
