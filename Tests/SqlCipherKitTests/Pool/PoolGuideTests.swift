import Foundation
import SqlCipherKit
import Testing

/// The examples of the DocC article "Database pools", each copied as it stands in the article
/// (checked by `ArticleCodeBlockTests`). Block 2's path is the reader's own: compiled, not run.
@Suite struct PoolGuideTests {
    /// DatabasePools.md, block 2.
    func openingAPool(passphrase: String, migrations: [any Migration]) async throws {
        let pool = try DatabasePool(path: "/var/lib/app/store.db", key: passphrase)
        try await pool.migrate(migrations)
    }

    @Test func codeForBothShapes() async throws {
        func archive(_ db: some DatabaseAccess, before cutoff: Date) async throws -> Int {
            try await db.execute("DELETE FROM notes WHERE created < ?", cutoff)
        }
        let dir = TemporaryDirectory()
        let pool = try DatabasePool(path: dir.path("pool.db"), rawKey: rawKey(6))
        try await pool.execute("CREATE TABLE notes(created REAL)")
        try await pool.execute("INSERT INTO notes VALUES (?), (?)", Date(timeIntervalSince1970: 0), Date())
        #expect(try await archive(pool, before: Date(timeIntervalSince1970: 1000)) == 1)
        let db = try Database(path: dir.path("single.db"), rawKey: rawKey(6))
        try await db.execute("CREATE TABLE notes(created REAL)")
        #expect(try await archive(db, before: Date()) == 0)
        await pool.close()
    }

    @Test func aRollbackJournalFileMovedToWAL() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("moved.db")
        let passphrase = "pool passphrase"
        let first = try Database(path: path, key: passphrase, journalMode: .rollback)
        await first.close()
        let db = try Database(path: path, key: passphrase)
        try await db.execute("PRAGMA journal_mode = WAL")   // stored in the file
        await db.close()
        let pool = try DatabasePool(path: path, key: passphrase)
        #expect(pool.journalMode == .wal)
        await pool.close()
    }
}
