/*
** The fault-injecting VFS of CSqlCipherTestVFS.h.
**
** sqlite3.h (from libsqlite3-dev) is included for the sqlite3_vfs / sqlite3_file / sqlite3_io_methods
** struct layouts and the constants only: this file calls no sqlite3_* function. Every call goes
** through the wrapped VFS's own method pointers, or through the bridge's scb_* wrappers, so it
** always reaches the SQLCipher library the bridge loaded (and never a libsqlite3 linked into the
** process). The struct layouts are stable across SQLite versions: new members are only appended,
** behind iVersion (https://sqlite.org/c3ref/vfs.html).
*/
#include "CSqlCipherTestVFS.h"

#include <CSqlCipherBridge.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* The wrapped VFS ("unix" of the loaded library) and ours. */
static sqlite3_vfs *base_vfs = NULL;
static sqlite3_vfs fault_vfs;
static int registered = 0;

/* The armed fault. */
static _Atomic int armed_operation = -1;
static _Atomic long long armed_nth = 0;
static _Atomic int armed_code = 0;
static _Atomic int armed_persistent = 0;

/* Counters. */
static _Atomic long long counts[3];
static _Atomic long long injected = 0;

/* The write watch. */
static unsigned char watch_needle[256];
static _Atomic int watch_length = 0;
enum { KIND_SLOTS = 9 };
static _Atomic long long watch_writes[KIND_SLOTS];
static _Atomic long long watch_hits[KIND_SLOTS];
static const int kind_flags[KIND_SLOTS - 1] = {
    SQLITE_OPEN_MAIN_DB, SQLITE_OPEN_TEMP_DB, SQLITE_OPEN_TRANSIENT_DB, SQLITE_OPEN_MAIN_JOURNAL,
    SQLITE_OPEN_TEMP_JOURNAL, SQLITE_OPEN_SUBJOURNAL, 0x4000 /* SUPER_JOURNAL */, SQLITE_OPEN_WAL,
};

/* One open file: our header, then the wrapped VFS's own file structure right after it. */
typedef struct fault_file {
    sqlite3_file base;
    sqlite3_file *real;
    int kind_slot; /* index into the watch counters; KIND_SLOTS - 1 for "other" */
} fault_file;

static int kind_slot_for_flags(int flags) {
    for (int i = 0; i < KIND_SLOTS - 1; i++) {
        if (flags & kind_flags[i]) return i;
    }
    return KIND_SLOTS - 1;
}

/* Counts an operation and says whether it must fail, and with which code. */
static int should_fail(int operation) {
    long long n = atomic_fetch_add(&counts[operation], 1) + 1;
    if (atomic_load(&armed_operation) != operation) return 0;
    long long nth = atomic_load(&armed_nth);
    if (nth <= 0) return 0;
    if (n == nth || (n > nth && atomic_load(&armed_persistent))) {
        atomic_fetch_add(&injected, 1);
        return atomic_load(&armed_code);
    }
    return 0;
}

static int contains(const void *haystack, int length, const unsigned char *needle, int needle_length) {
    if (needle_length <= 0 || length < needle_length) return 0;
    const unsigned char *bytes = haystack;
    for (int i = 0; i + needle_length <= length; i++) {
        if (bytes[i] == needle[0] && memcmp(bytes + i, needle, (size_t)needle_length) == 0) return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* File methods: count, maybe fail, else forward.                                            */
/* ---------------------------------------------------------------------------------------- */

static int f_close(sqlite3_file *file) {
    fault_file *p = (fault_file *)file;
    return p->real->pMethods->xClose(p->real);
}

static int f_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    fault_file *p = (fault_file *)file;
    int rc = should_fail(SCTV_READ);
    if (rc) return rc;
    return p->real->pMethods->xRead(p->real, buffer, amount, offset);
}

static int f_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    fault_file *p = (fault_file *)file;
    int needle_length = atomic_load(&watch_length);
    if (needle_length > 0) {
        atomic_fetch_add(&watch_writes[p->kind_slot], 1);
        if (contains(buffer, amount, watch_needle, needle_length)) atomic_fetch_add(&watch_hits[p->kind_slot], 1);
    }
    int rc = should_fail(SCTV_WRITE);
    if (rc) return rc;
    return p->real->pMethods->xWrite(p->real, buffer, amount, offset);
}

static int f_truncate(sqlite3_file *file, sqlite3_int64 size) {
    fault_file *p = (fault_file *)file;
    return p->real->pMethods->xTruncate(p->real, size);
}

static int f_sync(sqlite3_file *file, int flags) {
    fault_file *p = (fault_file *)file;
    int rc = should_fail(SCTV_SYNC);
    if (rc) return rc;
    return p->real->pMethods->xSync(p->real, flags);
}

static int f_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    fault_file *p = (fault_file *)file;
    return p->real->pMethods->xFileSize(p->real, size);
}

static int f_lock(sqlite3_file *file, int level) {
    fault_file *p = (fault_file *)file;
    return p->real->pMethods->xLock(p->real, level);
}

static int f_unlock(sqlite3_file *file, int level) {
    fault_file *p = (fault_file *)file;
    return p->real->pMethods->xUnlock(p->real, level);
}

static int f_check_reserved_lock(sqlite3_file *file, int *out) {
    fault_file *p = (fault_file *)file;
    return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int f_file_control(sqlite3_file *file, int op, void *arg) {
    fault_file *p = (fault_file *)file;
    return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int f_sector_size(sqlite3_file *file) {
    fault_file *p = (fault_file *)file;
    return p->real->pMethods->xSectorSize(p->real);
}

static int f_device_characteristics(sqlite3_file *file) {
    fault_file *p = (fault_file *)file;
    return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static int f_shm_map(sqlite3_file *file, int region, int size, int extend, void volatile **out) {
    fault_file *p = (fault_file *)file;
    if (p->real->pMethods->iVersion < 2 || !p->real->pMethods->xShmMap) return SQLITE_IOERR;
    return p->real->pMethods->xShmMap(p->real, region, size, extend, out);
}

static int f_shm_lock(sqlite3_file *file, int offset, int n, int flags) {
    fault_file *p = (fault_file *)file;
    if (p->real->pMethods->iVersion < 2 || !p->real->pMethods->xShmLock) return SQLITE_IOERR;
    return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}

static void f_shm_barrier(sqlite3_file *file) {
    fault_file *p = (fault_file *)file;
    if (p->real->pMethods->iVersion >= 2 && p->real->pMethods->xShmBarrier) p->real->pMethods->xShmBarrier(p->real);
}

static int f_shm_unmap(sqlite3_file *file, int delete_flag) {
    fault_file *p = (fault_file *)file;
    if (p->real->pMethods->iVersion < 2 || !p->real->pMethods->xShmUnmap) return SQLITE_OK;
    return p->real->pMethods->xShmUnmap(p->real, delete_flag);
}

/* No memory mapping: every page must come through f_read, where it is counted and can fail. */
static int f_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) {
    (void)file; (void)offset; (void)amount;
    *out = NULL;
    return SQLITE_OK;
}

static int f_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    (void)file; (void)offset; (void)pointer;
    return SQLITE_OK;
}

static const sqlite3_io_methods fault_io_methods = {
    3,
    f_close, f_read, f_write, f_truncate, f_sync, f_file_size, f_lock, f_unlock, f_check_reserved_lock,
    f_file_control, f_sector_size, f_device_characteristics,
    f_shm_map, f_shm_lock, f_shm_barrier, f_shm_unmap,
    f_fetch, f_unfetch,
};

/* ---------------------------------------------------------------------------------------- */
/* VFS methods: forward to the wrapped VFS.                                                  */
/* ---------------------------------------------------------------------------------------- */

static void (*_Atomic pause_callback)(const char *context);
static char pause_context[4096];

void sctv_pause_at_next_main_open(void (*callback)(const char *context), const char *context) {
    atomic_store(&pause_callback, NULL);
    snprintf(pause_context, sizeof pause_context, "%s", context ? context : "");
    atomic_store(&pause_callback, callback);
}

static int v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    fault_file *p = (fault_file *)file;
    p->real = (sqlite3_file *)&p[1];
    p->kind_slot = kind_slot_for_flags(flags);
    int rc = base_vfs->xOpen(base_vfs, name, p->real, flags, out_flags);
    /* SQLite calls xClose only when pMethods is set: set it only when the real file is open. */
    p->base.pMethods = (rc == SQLITE_OK && p->real->pMethods) ? &fault_io_methods : NULL;
    if (rc == SQLITE_OK && (flags & SQLITE_OPEN_MAIN_DB)) {
        void (*callback)(const char *) = atomic_exchange(&pause_callback, NULL);
        if (callback) callback(pause_context);
    }
    return rc;
}

static int v_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    (void)vfs;
    return base_vfs->xDelete(base_vfs, name, sync_dir);
}

static int v_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return base_vfs->xAccess(base_vfs, name, flags, out);
}

static int v_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return base_vfs->xFullPathname(base_vfs, name, size, out);
}

static void *v_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return base_vfs->xDlOpen(base_vfs, name);
}

static void v_dl_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    base_vfs->xDlError(base_vfs, size, out);
}

static void (*v_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return base_vfs->xDlSym(base_vfs, handle, symbol);
}

static void v_dl_close(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    base_vfs->xDlClose(base_vfs, handle);
}

static int v_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return base_vfs->xRandomness(base_vfs, size, out);
}

static int v_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return base_vfs->xSleep(base_vfs, microseconds);
}

static int v_current_time(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return base_vfs->xCurrentTime(base_vfs, out);
}

static int v_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return base_vfs->xGetLastError ? base_vfs->xGetLastError(base_vfs, size, out) : 0;
}

static int v_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return base_vfs->xCurrentTimeInt64(base_vfs, out);
}

static int v_set_system_call(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr pointer) {
    (void)vfs;
    return base_vfs->xSetSystemCall(base_vfs, name, pointer);
}

static sqlite3_syscall_ptr v_get_system_call(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return base_vfs->xGetSystemCall(base_vfs, name);
}

static const char *v_next_system_call(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return base_vfs->xNextSystemCall(base_vfs, name);
}

/* ---------------------------------------------------------------------------------------- */
/* Public functions                                                                          */
/* ---------------------------------------------------------------------------------------- */

int sctv_register(int make_default) {
    if (!scb_is_loaded()) return SQLITE_MISUSE;
    if (!registered) {
        base_vfs = scb_vfs_find("unix");
        if (!base_vfs) base_vfs = scb_vfs_find(NULL);
        if (!base_vfs) return SQLITE_ERROR;
        memset(&fault_vfs, 0, sizeof fault_vfs);
        /* Version 3 at most: the members this file knows how to forward. */
        fault_vfs.iVersion = base_vfs->iVersion < 3 ? base_vfs->iVersion : 3;
        fault_vfs.szOsFile = (int)sizeof(fault_file) + base_vfs->szOsFile;
        fault_vfs.mxPathname = base_vfs->mxPathname;
        fault_vfs.zName = SCTV_VFS_NAME;
        fault_vfs.xOpen = v_open;
        fault_vfs.xDelete = v_delete;
        fault_vfs.xAccess = v_access;
        fault_vfs.xFullPathname = v_full_pathname;
        fault_vfs.xDlOpen = v_dl_open;
        fault_vfs.xDlError = v_dl_error;
        fault_vfs.xDlSym = v_dl_sym;
        fault_vfs.xDlClose = v_dl_close;
        fault_vfs.xRandomness = v_randomness;
        fault_vfs.xSleep = v_sleep;
        fault_vfs.xCurrentTime = v_current_time;
        fault_vfs.xGetLastError = v_get_last_error;
        if (fault_vfs.iVersion >= 2) fault_vfs.xCurrentTimeInt64 = v_current_time_int64;
        if (fault_vfs.iVersion >= 3) {
            fault_vfs.xSetSystemCall = v_set_system_call;
            fault_vfs.xGetSystemCall = v_get_system_call;
            fault_vfs.xNextSystemCall = v_next_system_call;
        }
    }
    /* Registering again moves it to the head of the list when make_default is set. */
    int rc = scb_vfs_register(&fault_vfs, make_default);
    if (rc == SQLITE_OK) registered = 1;
    return rc;
}

int sctv_unregister(void) {
    if (!registered) return SQLITE_OK;
    int rc = scb_vfs_unregister(&fault_vfs);
    if (rc == SQLITE_OK) registered = 0;
    return rc;
}

void sctv_reset_counts(void) {
    for (int i = 0; i < 3; i++) atomic_store(&counts[i], 0);
    atomic_store(&injected, 0);
}

void sctv_arm(int operation, long long nth, int result_code, int persistent) {
    atomic_store(&armed_nth, 0);
    sctv_reset_counts();
    atomic_store(&armed_operation, operation);
    atomic_store(&armed_code, result_code);
    atomic_store(&armed_persistent, persistent ? 1 : 0);
    atomic_store(&armed_nth, nth);
}

void sctv_disarm(void) {
    atomic_store(&armed_nth, 0);
    atomic_store(&armed_operation, -1);
}

long long sctv_count(int operation) {
    if (operation < 0 || operation > 2) return 0;
    return atomic_load(&counts[operation]);
}

long long sctv_injected(void) { return atomic_load(&injected); }

void sctv_watch(const void *needle, int length) {
    atomic_store(&watch_length, 0);
    for (int i = 0; i < KIND_SLOTS; i++) {
        atomic_store(&watch_writes[i], 0);
        atomic_store(&watch_hits[i], 0);
    }
    if (!needle || length <= 0) return;
    if (length > (int)sizeof watch_needle) length = (int)sizeof watch_needle;
    memcpy(watch_needle, needle, (size_t)length);
    atomic_store(&watch_length, length);
}

static long long sum_slots(_Atomic long long *slots, int file_kind) {
    long long total = 0;
    for (int i = 0; i < KIND_SLOTS; i++) {
        int matches = file_kind == 0 || (i < KIND_SLOTS - 1 && kind_flags[i] == file_kind);
        if (matches) total += atomic_load(&slots[i]);
    }
    return total;
}

long long sctv_watch_writes(int file_kind) { return sum_slots(watch_writes, file_kind); }

long long sctv_watch_hits(int file_kind) { return sum_slots(watch_hits, file_kind); }
