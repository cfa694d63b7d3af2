import Foundation
import SqlCipherKit
import Testing

/// A `read` body refuses every kind of write: DML, export into main, transaction control.
@Suite("Read bodies refuse writes")
struct ReadBodyGuardTests: InterruptibleDatabaseFixture {
    /// Held: statements that write, in any spelling, are refused inside read { }.
    @Test func readBodyRefusesWrites() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let attempts = [
            "CREATE TEMP TABLE tmp(a)", "INSERT INTO t VALUES (9)", "PRAGMA user_version = 7", "ANALYZE",
            "SELECT 1; DELETE FROM t", "PRAGMA journal_mode = DELETE", "CREATE TEMP VIEW v AS SELECT 1",
            "WITH d AS (SELECT 1) DELETE FROM t", "VACUUM",
        ]
        for sql in attempts {
            await #expect(throws: (any Error).self, "\(sql)") {
                try await db.read { conn in _ = try conn.execute(sql) }
            }
        }
        #expect(try await values(db) == [1])
        #expect(try await db.query("PRAGMA user_version")[0].decode(0, as: Int.self) == 0)
        #expect(try await db.query("PRAGMA journal_mode")[0].decode(0, as: String.self) == "wal")
        #expect(try await db.query("SELECT count(*) FROM sqlite_temp_master")[0].decode(0, as: Int.self) == 0)
    }

    /// Held: a trigger cannot be reached from a read body, and sqlcipher_export into main through
    /// an attached encrypted database is refused.
    @Test func readBodyCannotExportIntoMain() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let other = try Database(path: directory.path("o.db"), rawKey: rawKey())
        try await other.execute("CREATE TABLE evil(x)")
        await other.close()
        await #expect(throws: (any Error).self) {
            try await db.read { conn in
                _ = try conn.execute("ATTACH '\(directory.path("o.db"))' AS o")
                _ = try conn.query("SELECT sqlcipher_export('main', 'o')")
            }
        }
        _ = try? await db.execute("DETACH o")
        #expect(try await db.query("SELECT count(*) FROM sqlite_master WHERE name = 'evil'")[0].decode(0, as: Int.self) == 0)
    }

    /// Held: transaction control cannot escape a read body, whatever the spelling.
    @Test func readBodyRefusesTransactionControl() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        for sql in ["COMMIT", "END", "ROLLBACK", "/* x */ commit", "RELEASE sqlcipherkit_sp1", "ROLLBACK TO sqlcipherkit_sp1",
                    "BEGIN", "SAVEPOINT x", "end transaction"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") {
                try await db.read { conn in _ = try conn.execute(sql) }
            }
        }
        try await db.transaction { conn in _ = try conn.execute("INSERT INTO t VALUES (2)") }
        #expect(try await values(db) == [1, 2])
    }
}
