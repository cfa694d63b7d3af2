/*
** CSqlCipherTestVFS: a fault-injecting, write-watching VFS for SqlCipherKit's own tests.
**
** It wraps the loaded SQLCipher library's "unix" VFS (found and registered through the bridge's
** scb_vfs_find / scb_vfs_register, so it lives inside the same library the package uses) and:
**   - counts every read, write and sync that SQLite asks of any file, and fails the Nth one of a
**     chosen kind with a chosen SQLite result code (once, or from then on);
**   - looks for a byte string in every write, and counts the writes that contain it, by file kind
**     (main database, journal, WAL, temporary files...): how the leak tests see into temporary
**     files that the unix VFS deletes as soon as it opens them.
**
** Like the bridge, this header declares no sqlite3_* function and does not include sqlite3.h.
** Result codes and open flags are SQLite's numeric values (https://sqlite.org/rescode.html,
** https://sqlite.org/c3ref/c_open_autoproxy.html). Not for production use: one process, one
** configuration at a time.
*/
#ifndef CSQLCIPHERTESTVFS_H
#define CSQLCIPHERTESTVFS_H

#ifdef __cplusplus
extern "C" {
#endif

/* The name the VFS is registered under. */
#define SCTV_VFS_NAME "sqlcipherkit-fault"

/* The kinds of file operation that are counted and can be made to fail. */
typedef enum sctv_operation {
    SCTV_READ = 0,
    SCTV_WRITE = 1,
    SCTV_SYNC = 2
} sctv_operation;

/*
** Registers the VFS with the loaded library (scb_load must have succeeded), wrapping its "unix"
** VFS. With make_default nonzero it becomes the default, so every connection opened without an
** explicit VFS goes through it. Returns 0 (SQLITE_OK) or an SQLite error code; calling it again
** only changes whether it is the default.
*/
int sctv_register(int make_default);

/* Unregisters the VFS (connections must be closed first). */
int sctv_unregister(void);

/*
** Arms a fault: the nth (1-based) operation of kind `operation` counted after this call returns
** `result_code` instead of reaching the disk; with `persistent` nonzero every later operation of
** that kind fails too. Resets the counters. nth = 0 disarms.
*/
void sctv_arm(int operation, long long nth, int result_code, int persistent);

/*
** Calls `callback(context)` once, from inside the next xOpen of a main database file, after the
** file is open and before SQLite reads it: a test pauses an opening there (the file is created,
** nothing is read or written yet) and lets another process write the file first. `context` is
** copied. A NULL callback cancels.
*/
void sctv_pause_at_next_main_open(void (*callback)(const char *context), const char *context);

/* Disarms any fault (counters are kept). */
void sctv_disarm(void);

/* Operations of a kind counted since the last sctv_arm or sctv_reset_counts. */
long long sctv_count(int operation);

/* Operations that were failed on purpose since the last sctv_arm or sctv_reset_counts. */
long long sctv_injected(void);

/* Sets every counter to zero. */
void sctv_reset_counts(void);

/*
** Starts looking for `needle` (up to 256 bytes; length 0 stops) in every write. Resets the
** watch counters.
*/
void sctv_watch(const void *needle, int length);

/*
** Writes seen since the last sctv_watch to files opened with the SQLite open flag `file_kind`
** (SQLITE_OPEN_MAIN_DB 0x100, TEMP_DB 0x200, TRANSIENT_DB 0x400, MAIN_JOURNAL 0x800,
** TEMP_JOURNAL 0x1000, SUBJOURNAL 0x2000, SUPER_JOURNAL 0x4000, WAL 0x80000), or to any file when
** file_kind is 0. sctv_watch_hits counts only the writes that contained the needle.
*/
long long sctv_watch_writes(int file_kind);
long long sctv_watch_hits(int file_kind);

#ifdef __cplusplus
}
#endif

#endif /* CSQLCIPHERTESTVFS_H */
