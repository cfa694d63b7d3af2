import Foundation
import SqlCipherKit
import Testing

/// Many tasks on one actor; two `Database` values on one WAL file.
@Suite struct ConcurrencyTests {
    @Test func manyTasksOnOneDatabase() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE t(task INTEGER, n INTEGER)")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<32 {
                group.addTask {
                    for n in 0..<20 {
                        if n % 5 == 0 {
                            try await db.transaction { conn in
                                try conn.execute("INSERT INTO t VALUES (?, ?)", task, n)
                                _ = try conn.query("SELECT count(*) FROM t WHERE task = ?", task)
                            }
                        } else {
                            try await db.execute("INSERT INTO t VALUES (?, ?)", task, n)
                        }
                        _ = try await db.query("SELECT max(n) FROM t WHERE task = ?", task)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await countRows(db) == 32 * 20)
        #expect(try await db.query("SELECT count(DISTINCT task) FROM t")[0].get(0, as: Int.self) == 32)
    }

    @Test func twoDatabasesOnOneWALFile() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        let writer = try Database(path: path, key: "shared", cipher: fastCipher)
        try await writer.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, who TEXT)")
        let other = try Database(path: path, key: "shared", cipher: fastCipher)
        #expect(other.journalMode == .wal)
        // A read transaction on one does not block writes on the other (WAL).
        try await other.execute("BEGIN")
        #expect(try await countRows(other) == 0)
        try await writer.execute("INSERT INTO t(who) VALUES ('writer')")
        #expect(try await countRows(other) == 0)   // its snapshot
        try await other.execute("COMMIT")
        #expect(try await countRows(other) == 1)
        // Both write concurrently; the busy timeout serializes them.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (name, db) in [("a", writer), ("b", other)] {
                group.addTask {
                    for _ in 0..<50 {
                        try await db.transaction { conn in try conn.execute("INSERT INTO t(who) VALUES (?)", name) }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await countRows(writer) == 101)
        #expect(try await countRows(other) == 101)
        #expect(try await other.verifyIntegrity().isOK)
    }
}
