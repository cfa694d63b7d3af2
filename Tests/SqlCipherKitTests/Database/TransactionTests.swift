import Foundation
import SqlCipherKit
import Testing

/// `transaction` and `savepoint`: commit, rollback, values, nesting, hand-written transactions.
@Suite struct TransactionTests {
    func database() async throws -> Database {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE t(x TEXT)")
        return db
    }

    func values(_ db: Database) async throws -> [String] {
        try await db.query("SELECT x FROM t ORDER BY rowid").compactMap { $0.get(0, as: String.self) }
    }

    struct Expected: Error, Equatable {}

    @Test func commitsAndReturnsTheBodysValue() async throws {
        let db = try await database()
        let count = try await db.transaction { conn in
            try conn.execute("INSERT INTO t VALUES ('a')")
            try conn.execute("INSERT INTO t VALUES (?)", "b")
            // Reads inside see the body's own uncommitted writes.
            return try conn.query("SELECT count(*) FROM t")[0].decode(0, as: Int.self)
        }
        #expect(count == 2)
        #expect(try await values(db) == ["a", "b"])
        #expect(try await db.query("SELECT 1")[0].get(0, as: Int.self) == 1)
    }

    @Test func rollsBackWhenTheBodyThrows() async throws {
        let db = try await database()
        await #expect(throws: Expected()) {
            try await db.transaction { conn in
                try conn.execute("INSERT INTO t VALUES ('gone')")
                throw Expected()
            }
        }
        #expect(try await values(db).isEmpty)
        // A failing statement inside rolls back the earlier ones too.
        await #expect(throws: SqlCipherError.self) {
            try await db.transaction { conn in
                try conn.execute("INSERT INTO t VALUES ('gone too')")
                try conn.execute("INSERT INTO missing VALUES (1)")
            }
        }
        #expect(try await values(db).isEmpty)
        // The database is usable afterwards, not stuck in a transaction.
        try await db.transaction { conn in try conn.execute("INSERT INTO t VALUES ('kept')") }
        #expect(try await values(db) == ["kept"])
    }

    /// `ATTACH` and `DETACH` inside a transaction: SQLite refuses a `DETACH` of a schema the
    /// transaction holds ("database other is locked", read as a busy file) and SQLCipher 3 any
    /// `ATTACH` ("cannot ATTACH database within transaction"); each message says to run it outside
    /// the transaction. SQLCipher 4 attaches inside one.
    @Test func attachAndDetachInsideATransactionSayWhereTheyRun() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("main.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE t(x TEXT)")
        let other = dir.path("other.db")
        let attachError: SqlCipherError? = try await db.transaction { conn in
            do {
                try conn.execute("ATTACH DATABASE ? AS other KEY ?", other, "other passphrase")
                return nil
            } catch let error as SqlCipherError { return error }
        }
        if isSQLCipher4() {
            #expect(attachError == nil)
        } else {
            let message = String(describing: try #require(attachError))
            #expect(message.contains("attaches a database only outside a transaction"), "\(message)")
            #expect(!message.contains("other passphrase"), "\(message)")
            try await db.execute("ATTACH DATABASE ? AS other KEY ?", other, "other passphrase")
        }
        let detach = try await db.transaction { conn -> String in
            try conn.execute("CREATE TABLE IF NOT EXISTS other.u(y)")
            let error = try #require(throws: SqlCipherError.self) { try conn.execute("DETACH DATABASE other") }
            return String(describing: error)
        }
        #expect(detach.contains("cannot detach a database while this connection has a transaction open"), "\(detach)")
        try await db.execute("DETACH DATABASE other")
        #expect(try await db.query("PRAGMA database_list").count == 1)
        await db.close()
    }

    @Test func savepointUndoesOnlyItsOwnWork() async throws {
        let db = try await database()
        try await db.transaction { conn in
            try conn.execute("INSERT INTO t VALUES ('outer')")
            #expect(throws: Expected()) {
                try conn.savepoint { conn in
                    try conn.execute("INSERT INTO t VALUES ('inner')")
                    throw Expected()
                }
            }
            let kept = try conn.savepoint { conn in
                try conn.execute("INSERT INTO t VALUES ('second')")
                return "returned"
            }
            #expect(kept == "returned")
        }
        #expect(try await values(db) == ["outer", "second"])
    }

    @Test func savepointsNestToAnyDepth() async throws {
        let db = try await database()
        // Each level inserts a row and opens a savepoint for the next; level 21 throws, and level
        // 20 catches it: levels 21...30 are undone, 1...20 stay.
        @Sendable func nest(_ conn: borrowing Connection, depth: Int) throws {
            try conn.execute("INSERT INTO t VALUES (?)", "level \(depth)")
            if depth < 30 {
                do {
                    try conn.savepoint { conn in try nest(conn, depth: depth + 1) }
                } catch is Expected {
                    #expect(depth == 20)
                }
            }
            if depth == 21 { throw Expected() }
        }
        try await db.transaction { conn in
            try conn.execute("INSERT INTO t VALUES ('start')")
            try conn.savepoint { conn in try nest(conn, depth: 1) }
            // Inside, the rows of the undone levels are already gone.
            #expect(try conn.query("SELECT count(*) FROM t")[0].decode(0, as: Int.self) == 21)
        }
        let all = try await values(db)
        #expect(all.first == "start")
        #expect(all.count == 21)
        #expect(all.last == "level 20")
    }

    @Test func databaseSavepointOutsideATransaction() async throws {
        let db = try await database()
        try await db.savepoint { conn in try conn.execute("INSERT INTO t VALUES ('sp')") }
        await #expect(throws: Expected()) {
            try await db.savepoint { conn in
                try conn.execute("INSERT INTO t VALUES ('undone')")
                throw Expected()
            }
        }
        #expect(try await values(db) == ["sp"])
    }

    /// A savepoint outside a transaction takes the write lock before its body runs, as
    /// `transaction` does. SQLite's bare `SAVEPOINT` begins a deferred transaction: another
    /// connection could commit after the body's first read, and the body's write then failed at
    /// once (`SQLITE_BUSY_SNAPSHOT`) whatever the busy timeout. Now the other connection's write is
    /// the one that waits, and the savepoint's body commits.
    @Test func aSavepointOutsideATransactionHoldsTheWriteLockFromItsStart() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        let db = try Database(path: path, rawKey: rawKey(75), journalMode: .wal)
        try await db.execute("CREATE TABLE t(x TEXT)")
        var quick = DatabaseConfiguration()
        quick.busyTimeout = .milliseconds(50)
        let other = try Database(path: path, rawKey: rawKey(75), configuration: quick)
        let read = DispatchSemaphore(value: 0), tried = DispatchSemaphore(value: 0)
        let body = Task {
            try await db.savepoint { conn in
                _ = try conn.query("SELECT count(*) FROM t")
                read.signal()
                tried.wait()
                try conn.execute("INSERT INTO t VALUES ('savepoint')")
            }
        }
        #expect(await signalled(read))
        let otherWrite: (any Error)?
        do { try await other.execute("INSERT INTO t VALUES ('other')"); otherWrite = nil } catch { otherWrite = error }
        tried.signal()
        #expect(otherWrite is SqlCipherError, "the other connection wrote while the savepoint's body ran: \(String(describing: otherWrite))")
        try await body.value
        #expect(try await values(db) == ["savepoint"])
        await other.close()
        await db.close()
    }

    @Test func handWrittenTransactionThroughExecute() async throws {
        let db = try await database()
        try await db.execute("BEGIN")
        try await db.execute("INSERT INTO t VALUES ('manual')")
        #expect(try await values(db) == ["manual"])
        try await db.execute("ROLLBACK")
        #expect(try await values(db).isEmpty)
        try await db.execute("BEGIN IMMEDIATE")
        try await db.execute("INSERT INTO t VALUES ('committed')")
        // transaction(_:) inside a hand-written transaction becomes a savepoint.
        await #expect(throws: Expected()) {
            try await db.transaction { conn in
                try conn.execute("INSERT INTO t VALUES ('nested, undone')")
                throw Expected()
            }
        }
        try await db.execute("COMMIT")
        #expect(try await values(db) == ["committed"])
        // A script with its own BEGIN/COMMIT.
        try await db.execute("BEGIN; INSERT INTO t VALUES ('script'); COMMIT;")
        #expect(try await values(db) == ["committed", "script"])
    }

    @Test func failingCommitRollsBackAndThrows() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE parent(id INTEGER PRIMARY KEY)")
        try await db.execute("""
            CREATE TABLE child(id INTEGER PRIMARY KEY,
                               parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)
            """)
        await #expect {
            try await db.transaction { conn in
                try conn.execute("INSERT INTO parent VALUES (1)")
                try conn.execute("INSERT INTO child(parent) VALUES (99)")   // checked at COMMIT
                return 1
            }
        } throws: { error in
            guard case SqlCipherError.sqlite(let code, _, let message, _) = error else { return false }
            return code == 19 && message.contains("FOREIGN KEY")
        }
        #expect(try await db.query("SELECT count(*) FROM parent")[0].get(0, as: Int.self) == 0)
        #expect(try await db.query("SELECT count(*) FROM child")[0].get(0, as: Int.self) == 0)
        // Not left inside a transaction.
        try await db.execute("BEGIN")
        try await db.execute("COMMIT")
    }

    @Test func transactionIsImmediate() async throws {
        // A second connection holding the write lock makes BEGIN IMMEDIATE wait and then fail,
        // before the body runs.
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let first = try Database(path: path, rawKey: rawKey(), journalMode: .wal)
        try await first.execute("CREATE TABLE t(x)")
        let second = try Database(path: path, rawKey: rawKey())
        try await second.execute("PRAGMA busy_timeout = 50")
        try await first.execute("BEGIN IMMEDIATE")
        let ran = ReachedFlag()
        await #expect(throws: SqlCipherError.self) {
            try await second.transaction { conn in
                ran.mark()
                try conn.execute("INSERT INTO t VALUES (1)")
            }
        }
        #expect(!ran.value)
        try await first.execute("COMMIT")
    }

    @Test func lastInsertRowID() async throws {
        let db = try await database()
        let id = try await db.transaction { conn in
            try conn.execute("INSERT INTO t VALUES ('a')")
            try conn.execute("INSERT INTO t VALUES ('b')")
            return conn.lastInsertRowID
        }
        #expect(id == 2)
    }
}

/// A flag a non-escaping body can set.
final class ReachedFlag: @unchecked Sendable {
    private(set) var value = false
    func mark() { value = true }
}
