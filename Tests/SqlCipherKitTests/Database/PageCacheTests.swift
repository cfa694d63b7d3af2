import Foundation
import SqlCipherKit
import Testing

/// The page cache every connection gets (issue 13 item 4): pages found in SQLite's cache are not
/// decrypted again, so each connection gets room for an 8 MiB working set.
@Suite struct PageCacheTests {
    func cacheSize(_ db: Database) async throws -> Int? {
        try await db.query("PRAGMA cache_size")[0].get(0, as: Int.self)
    }

    @Test func everyKindOfOpeningGetsTheDefaultCache() async throws {
        let dir = TemporaryDirectory()
        #expect(Database.defaultPageCacheKiB == 8192)
        let encrypted = try Database(path: dir.path("e.db"), rawKey: rawKey())
        let passphrase = try Database(path: dir.path("p.db"), key: "a passphrase", cipher: fastCipher)
        let plain = try Database(unencryptedPath: dir.path("u.db"))
        let memory = try Database(path: ":memory:", rawKey: rawKey())
        for db in [encrypted, passphrase, plain, memory] {
            try await db.execute("CREATE TABLE t(x)")
            #expect(try await cacheSize(db) == -8192, "\(db.path)")
            await db.close()
        }
        let readOnly = try Database(path: dir.path("e.db"), rawKey: rawKey(), readOnly: true)
        #expect(try await cacheSize(readOnly) == -8192)
    }

    @Test func aDatabaseCanBeGivenAnotherSize() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("e.db"), rawKey: rawKey())
        try await db.execute("PRAGMA cache_size = -65536")
        #expect(try await cacheSize(db) == -65536)
        try await db.execute("PRAGMA cache_size = -2000")
        #expect(try await cacheSize(db) == -2000)
        // Inside a body as well.
        try await db.transaction { conn in try conn.execute("PRAGMA cache_size = 100") }
        #expect(try await cacheSize(db) == 100)
    }
}
