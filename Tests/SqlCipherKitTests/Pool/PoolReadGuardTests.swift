import Dispatch
import Foundation
import SqlCipherKit
import Synchronization
import Testing

/// A pool's readers never write: every spelling of a write in a read body is refused, and a
/// writing query runs once, on the writer.
@Suite("DatabasePool: reads never write")
struct PoolReadGuardTests: PoolFixture {
    /// A read body refuses every spelling of a write, including after turning `query_only` off.
    @Test func aReadBodyRefusesWritesInEverySpelling() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir)
        let writes = [
            "INSERT INTO t(v) VALUES (2)",
            "WITH x(a) AS (SELECT 5) INSERT INTO t(v) SELECT a FROM x",
            "CREATE TEMP TABLE tmp(a)",
            "CREATE TABLE u(a)",
            "DELETE FROM t",
            "VACUUM",
            "PRAGMA user_version = 7",
        ]
        for sql in writes {
            await #expect(throws: SqlCipherError.self, "\(sql)") {
                try await pool.read { conn in
                    _ = try? conn.execute("PRAGMA query_only = 0")
                    try conn.execute(sql)
                }
            }
        }
        #expect(try await count(pool) == 1)
        #expect(try await pool.query("PRAGMA user_version")[0].get(0, as: Int.self) == 0)
        await pool.close()
    }

    /// Turning `query_only` off through a query or a stream must not make a later read write.
    @Test func queryOnlyOffOnAReaderDoesNotLetALaterReadWrite() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir, readers: 1)
        // Refused as raw SQL on a pool (a per-connection pragma), by a query and by a stream.
        await #expect(throws: SqlCipherError.self) { _ = try await pool.query("PRAGMA query_only = 0") }
        await #expect(throws: SqlCipherError.self) { for try await _ in pool.stream("PRAGMA query_only = 0") {} }
        await #expect(throws: SqlCipherError.self) {
            try await pool.read { conn in try conn.execute("INSERT INTO t(v) VALUES (3)") }
        }
        #expect(try await count(pool) == 1)
        await pool.close()
    }

    /// A query that writes (RETURNING, a CTE with INSERT) goes to the writer and runs exactly once.
    @Test func aWritingQueryRunsOnceOnTheWriter() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir)
        if isSQLCipher4() {
            let rows = try await pool.query("INSERT INTO t(v) VALUES (9) RETURNING v")
            #expect(rows.count == 1)
        } else {
            _ = try await pool.query("INSERT INTO t(v) VALUES (9)")
        }
        #expect(try await count(pool) == 2)
        await pool.close()
    }

    /// A pool must stay in WAL: `journal_mode` changed through a reader or the writer would make
    /// readers block the writer (or fail), which the pool promises never happens.
    @Test func journalModeCannotBeChangedUnderAPool() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir)
        _ = try? await pool.query("PRAGMA journal_mode = DELETE")
        _ = try? await pool.read { conn in try conn.query("PRAGMA journal_mode = DELETE") }
        await #expect(throws: SqlCipherError.self) { for try await _ in pool.stream("PRAGMA journal_mode = DELETE") {} }
        _ = try? await pool.execute("PRAGMA journal_mode = DELETE")
        let mode = try await pool.query("PRAGMA journal_mode")[0].get(0, as: String.self)
        #expect(mode?.lowercased() == "wal")
        await pool.close()
    }
}
