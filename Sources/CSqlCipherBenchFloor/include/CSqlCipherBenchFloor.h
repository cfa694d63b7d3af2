/*
** CSqlCipherBenchFloor: the benchmark's floor, the same loops as sqlcipherkit-bench's Swift
** workloads written in plain C against the SAME loaded SQLCipher library.
**
** Functions are taken from the library the bridge loaded and proved (scb_library_function), so
** the floor and SqlCipherKit run the very same SQLite code. Load the library first (in Swift:
** `SqlCipherLibrary.shared`), then call scbf_load. Like the bridge, this header declares no
** sqlite3_* function and does not include sqlite3.h. Every function returns SQLite's result code
** (0 is SQLITE_OK, https://sqlite.org/rescode.html) unless it says otherwise.
**
** Rows are those of the benchmark table: an integer `id` and nine integer columns c1...c9, whose
** values come from scbf_value so that both languages write and check the same numbers.
*/
#ifndef CSQLCIPHERBENCHFLOOR_H
#define CSQLCIPHERBENCHFLOOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An open connection of the floor (an sqlite3* of the loaded library, opened by the floor). */
typedef struct scbf_db scbf_db;

/* The number of integer columns of a benchmark row (id and c1...c9). */
#define SCBF_COLUMNS 10

/*
** Resolves the functions the floor uses from the bridge's loaded library. Returns 0, or -1 when
** no library is loaded or one is missing; `message` then says which.
*/
int scbf_load(char *message, size_t message_len);

/*
** The value of column `column` (1...9) of row `id`, shifted by `salt` (upserts write other
** values than the rows they replace). Column 0 is the id itself.
*/
int64_t scbf_value(int64_t id, int column, int64_t salt);

/*
** Opens `path` (creating it), applies `key` when key_len > 0 (a passphrase, or x'<64 hex>' for
** a raw key) and reads the schema once: the read is where SQLCipher derives and checks the key,
** so this is the whole cost of opening. On failure *db is NULL and `message` holds the reason.
*/
int scbf_open(const char *path, const void *key, int key_len, scbf_db **db, char *message, size_t message_len);

/* Closes a connection of scbf_open; NULL is ignored. */
void scbf_close(scbf_db *db);

/* Runs SQL without result rows (sqlite3_exec). */
int scbf_exec(scbf_db *db, const char *sql);

/*
** Changes the key (sqlite3_rekey): nothing more, no lock taken first and no proof afterwards,
** which SQLCipher's own success code does not give (it reports success for a rekey it rolled back).
*/
int scbf_rekey(scbf_db *db, const void *key, int key_len);

/* The last error message of the connection. */
const char *scbf_errmsg(scbf_db *db);

/*
** Inside BEGIN IMMEDIATE ... COMMIT, prepares `insert_sql` once and runs it for ids
** first_id ... first_id + count - 1, binding the ten values of each row (bind, step, reset).
** With null_id nonzero, parameter 1 is bound to NULL and SQLite assigns the rowid.
*/
int scbf_insert_rows(scbf_db *db, const char *insert_sql, int64_t first_id, int count, int null_id, int64_t salt);

/*
** Inside one transaction, writes rows first_id ... + count - 1 over existing ones with
** `upsert_sql` (ten parameters: id, then c1...c9). When `insert_sql` is not NULL, `upsert_sql`
** is an UPDATE, and a row it changes nothing for is inserted with
** `insert_sql`: the way to upsert on SQLite before 3.24.
*/
int scbf_upsert_rows(scbf_db *db, const char *upsert_sql, const char *insert_sql, int64_t first_id, int count,
                     int64_t salt);

/*
** Runs `select_sql` (ten integer columns) and copies every value into one growing array of
** int64, reading each column by its index (sqlite3_column_int64): the cheapest result set C can
** hold. Reports the number of rows and the sum of all values (wrapping), then frees the array.
*/
int scbf_fetch_by_index(scbf_db *db, const char *select_sql, int64_t *rows, int64_t *checksum);

/*
** Like scbf_fetch_by_index, but into an array of row structs whose fields are found by column
** name: each of the `names` is looked up among the result's column names once per query (exact
** match, then ignoring ASCII case), which is how a C program maps a result onto a struct.
*/
int scbf_fetch_by_name(scbf_db *db, const char *select_sql, const char *const *names, int64_t *rows,
                       int64_t *checksum);

/*
** The bytes the C allocator has handed out and not taken back, over every arena: in-use chunks
** plus chunks served by mmap (glibc's mallinfo2), for the benchmark's memory figures. SQLite and
** Swift allocate through the same malloc, so both sides of the benchmark are counted alike.
** Returns -1 where the C library does not report it.
*/
int64_t scbf_heap_in_use(void);

#ifdef __cplusplus
}
#endif

#endif /* CSQLCIPHERBENCHFLOOR_H */
