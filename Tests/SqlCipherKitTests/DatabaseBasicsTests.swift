import Foundation
import SqlCipherKit
import Testing

@Suite struct DatabaseBasicsTests {
    @Test func createWriteReadEncrypted() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, key: "secret")
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, data BLOB, r REAL)")
        let changed = try await db.execute("INSERT INTO t(name, data, r) VALUES (?, ?, ?)", "MARKER-abc\u{0}def", Data([1, 2, 3]), 1.5)
        #expect(changed == 1)
        let rows = try await db.query("SELECT * FROM t")
        #expect(rows.count == 1)
        #expect(rows[0].get("name", as: String.self) == "MARKER-abc\u{0}def")
        #expect(rows[0].get("data", as: Data.self) == Data([1, 2, 3]))
        #expect(rows[0].get("R", as: Double.self) == 1.5)
        #expect(db.journalMode == .wal)
        await db.close()
        let header = try #require(FileManager.default.contents(atPath: path))
        #expect(header.prefix(16) != Data("SQLite format 3\0".utf8))
        #expect(header.range(of: Data("MARKER-abc".utf8)) == nil)
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "wrong") }
        let again = try Database(path: path, key: "secret")
        let n = try await again.transaction { conn in
            try conn.execute("INSERT INTO t(name) VALUES (?)", "two")
            return try conn.query("SELECT count(*) AS n FROM t")[0].get("n", as: Int.self)
        }
        #expect(n == 2)
    }
}

@Suite struct HelperSmokeTests {
    @Test func helperRuns() throws {
        let result = try runHelper(["ping"])
        #expect(result.status == 0)
        #expect(result.stdout == "pong\n")
    }
}
