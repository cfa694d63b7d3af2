import Foundation
import Testing
@testable import SqlCipherKit

/// An adversarial review of cancellation, cursors, streams, read bodies, the raw-SQL guards and
/// entity decoding, through the public API only. Tests that fail expose a defect; tests that pass
/// prove that a suspected hole is closed.
@Suite struct AdversarialReviewTests {
    /// A write that runs for minutes unless interrupted; `started()` signals that it runs.
    static let longWrite = """
        INSERT INTO big(x) SELECT x FROM (WITH RECURSIVE c(x) AS (SELECT started() UNION ALL SELECT x + 1 FROM c \
        LIMIT 2000000000) SELECT x FROM c)
        """
    /// A read that runs for minutes unless interrupted; `started()` signals that it runs.
    static let longRead = """
        WITH RECURSIVE c(x) AS (SELECT started() UNION ALL SELECT x + 1 FROM c LIMIT 2000000000) SELECT sum(x) FROM c
        """

    /// The database, with `started()` (see ``RunningSignal``) signalling `running`.
    func database(_ directory: TemporaryDirectory, _ name: String = "a.db",
                  running: RunningSignal = RunningSignal()) async throws -> Database {
        let db = try Database(path: directory.path(name), rawKey: rawKey())
        try await db.add(function: running.function)
        try await db.execute("CREATE TABLE IF NOT EXISTS t(x INTEGER)")
        try await db.execute("CREATE TABLE IF NOT EXISTS big(x INTEGER)")
        try await db.execute("INSERT INTO t VALUES (1)")
        return db
    }

    func values(_ db: Database, _ sql: String = "SELECT x FROM t ORDER BY x") async throws -> [Int] {
        try await db.query(sql).map { try $0.decode(0, as: Int.self) }
    }

    /// Starts `operation`, cancels it once its long statement runs, and returns its outcome.
    func cancelled<T: Sendable>(once running: RunningSignal,
                                _ operation: @escaping @Sendable () async throws -> T) async -> Result<T, any Error> {
        let task = Task { try await operation() }
        await running.wait(orEndOf: task)
        task.cancel()
        return await task.result
    }

    var isSqlCipher4: Bool { (try? SqlCipherLibrary.shared)?.cipherVersionIsAtLeast(4) ?? false }

    // MARK: 1. Cancellation

    /// An interrupted *write* makes SQLite roll back the whole transaction by itself
    /// (https://sqlite.org/c3ref/interrupt.html). A body that swallows the error and writes again
    /// then writes in autocommit mode: that write is committed at once, although the transaction
    /// call throws `CancellationError` ("a cancelled transaction leaves nothing behind").
    @Test func cancelledTransactionWhoseBodySwallowsAnInterruptedWriteLeavesNothing() async throws {
        let directory = TemporaryDirectory()
        let running = RunningSignal()
        let db = try await database(directory, running: running)
        let result = await cancelled(once: running) {
            try await db.transaction { conn in
                try conn.execute("INSERT INTO t VALUES (10)")
                _ = try? conn.execute(Self.longWrite)  // interrupted; error ignored by a careless body
                _ = try? conn.execute("INSERT INTO t VALUES (11)")
                return 0
            }
        }
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(try await values(db) == [1])
        #expect(try await db.query("SELECT count(*) FROM big")[0].decode(0, as: Int.self) == 0)
    }

    /// The same through a nested savepoint: the savepoint's interrupted write takes the outer
    /// transaction with it; the outer body catches the savepoint's CancellationError and writes on.
    @Test func cancelledSavepointInsideTransactionThenOuterWriteLeavesNothing() async throws {
        let directory = TemporaryDirectory()
        let running = RunningSignal()
        let db = try await database(directory, running: running)
        let result = await cancelled(once: running) {
            try await db.transaction { conn in
                try conn.execute("INSERT INTO t VALUES (20)")
                do {
                    try conn.savepoint { sp in _ = try sp.execute(Self.longWrite) }
                } catch {}
                _ = try? conn.execute("INSERT INTO t VALUES (21)")
                return 0
            }
        }
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(try await values(db) == [1])
    }

    /// Held: a cancelled nested savepoint whose error propagates rolls back everything, and the
    /// database stays usable for a transaction right after.
    @Test func cancelledNestedSavepointPropagatingRollsBackAll() async throws {
        let directory = TemporaryDirectory()
        let running = RunningSignal()
        let db = try await database(directory, running: running)
        let result = await cancelled(once: running) {
            try await db.transaction { conn in
                try conn.execute("INSERT INTO t VALUES (30)")
                return try conn.savepoint { sp in
                    try sp.execute("INSERT INTO t VALUES (31)")
                    return try sp.savepoint { inner in try inner.query(Self.longRead).count }
                }
            }
        }
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(try await values(db) == [1])
        try await db.transaction { conn in _ = try conn.execute("INSERT INTO t VALUES (2)") }
        #expect(try await values(db) == [1, 2])
    }

    /// Held: many concurrent tasks, half cancelled at random moments; uncancelled ones all commit,
    /// cancelled ones leave nothing or everything, never a part, and no call gets a foreign
    /// cancellation.
    @Test func manyConcurrentTasksCancelledAtRandomCommitAllOrNothing() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("CREATE TABLE pairs(k INTEGER, half INTEGER)")
        let outcomes = await withTaskGroup(of: (Int, Bool, Bool).self) { group in
            var tasks: [(Int, Task<Void, any Error>)] = []
            for k in 0..<40 {
                let task = Task {
                    try await db.transaction { conn in
                        try conn.execute("INSERT INTO pairs VALUES (?, 0)", k)
                        if k % 4 == 0 { _ = try conn.query(Self.longRead) }
                        try conn.execute("INSERT INTO pairs VALUES (?, 1)", k)
                    }
                }
                tasks.append((k, task))
            }
            for (k, task) in tasks {
                group.addTask {
                    let cancel = k % 2 == 0
                    if cancel {
                        // A random moment: each transaction must commit whole or not at all.
                        try? await Task.sleep(for: .milliseconds(Int.random(in: 0...30)))
                        task.cancel()
                    }
                    let ok = (try? await task.value) != nil
                    return (k, cancel, ok)
                }
            }
            var all: [(Int, Bool, Bool)] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        let rows = try await db.query("SELECT k, count(*) FROM pairs GROUP BY k")
        var counts: [Int: Int] = [:]
        for row in rows { counts[try row.decode(0, as: Int.self)] = try row.decode(1, as: Int.self) }
        for (k, cancel, ok) in outcomes {
            if !cancel { #expect(ok, "uncancelled task \(k) failed") }
            #expect(counts[k] == (ok ? 2 : nil), "task \(k): ok=\(ok) rows=\(counts[k] ?? 0)")
        }
        #expect(try await values(db) == [1])
    }

    /// Held: cancel racing close(); no crash, every later call is databaseClosed.
    @Test func cancelRacingCloseDoesNotCrash() async throws {
        for round in 0..<5 {
            let directory = TemporaryDirectory()
            let db = try await database(directory, "r\(round).db")
            let task = Task { try await db.query(Self.longRead) }
            // Races close and cancel at a moment left to chance: any order must end without a crash.
            try await Task.sleep(for: .milliseconds(20))
            async let closing: Void = db.close()
            task.cancel()
            await closing
            _ = await task.result
            await #expect(throws: SqlCipherError.self) { try await db.query("SELECT 1") }
        }
    }

    /// Held: a cancelled integrity check leaves the database usable.
    @Test func cancelledLongVerifyIntegrityLeavesTheDatabaseUsable() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("INSERT INTO big(x) SELECT x FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 200000) SELECT x FROM c)")
        // Cancelled at a moment left to chance: whichever it is, the database stays usable.
        let check = Task { try await db.verifyIntegrity() }
        try await Task.sleep(for: .milliseconds(5))
        check.cancel()
        _ = await check.result
        try await db.execute("INSERT INTO t VALUES (2)")
        #expect(try await values(db) == [1, 2])
        #expect(try await db.query("PRAGMA foreign_keys")[0].decode(0, as: Int.self) >= 0)
    }

    // MARK: 2. Cursors and streams

    /// A stream left early releases its statement only "shortly after" (a Task started from the
    /// iterator's deinit): a DROP TABLE right after the loop can meet the still-open statement.
    @Test func streamLeftEarlyThenDropTableRightAway() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        var failures: [String] = []
        for round in 0..<30 {
            try await db.execute("CREATE TABLE s\(round)(x INTEGER)")
            try await db.execute("INSERT INTO s\(round) VALUES (1), (2), (3)")
            for try await _ in db.stream("SELECT x FROM s\(round)", batchSize: 1) { break }
            do { try await db.execute("DROP TABLE s\(round)") } catch { failures.append("\(round): \(error)") }
        }
        #expect(failures.isEmpty, "\(failures.count) of 30 DROP TABLE after a left stream failed: \(failures.first ?? "")")
    }

    /// A stream whose SQL writes (`DELETE … RETURNING`), left open after its first batch, keeps a
    /// write statement pending: a later autocommit write of the same Database reports success but
    /// is not committed (another connection does not see it).
    @Test(.enabled(if: isSQLCipher4(), "RETURNING needs SQLite 3.35 (4.6.1 only)")) func writingStreamLeftOpenSilentlyHoldsBackLaterCommits() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("INSERT INTO t VALUES (2), (3)")
        var iterator = db.stream("DELETE FROM t RETURNING x", batchSize: 1).makeAsyncIterator()
        let first: Row?
        do { first = try await iterator.next() } catch {
            // A typed refusal of writing SQL in a stream would close the hole.
            #expect(error is SqlCipherError)
            return
        }
        #expect(first != nil)
        try await db.execute("INSERT INTO t VALUES (42)")
        let other = try Database(path: directory.path("a.db"), rawKey: rawKey())
        let seen = try await other.query("SELECT count(*) FROM t WHERE x = 42")[0].decode(0, as: Int.self)
        #expect(seen == 1, "an execute that returned normally was not committed")
        await other.close()
        _ = try await iterator.next()
    }

    /// Held: two iterators of one stream do not disturb each other (each prepares its own statement).
    @Test func twoIteratorsOfOneStreamInterleave() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("INSERT INTO t VALUES (2), (3), (4)")
        let stream = db.stream("SELECT x FROM t ORDER BY x", batchSize: 1)
        var a = stream.makeAsyncIterator()
        var b = stream.makeAsyncIterator()
        var left: [Int] = []
        var right: [Int] = []
        for _ in 0..<4 {
            if let row = try await a.next() { left.append(try row.decode(0, as: Int.self)) }
            if let row = try await b.next() { right.append(try row.decode(0, as: Int.self)) }
            _ = try await db.query("SELECT x FROM t ORDER BY x")  // the cached statement of the same text
        }
        #expect(left == [1, 2, 3, 4])
        #expect(right == [1, 2, 3, 4])
    }

    /// Held: batchSize 0, negative and Int.max.
    @Test func extremeBatchSizes() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("INSERT INTO t VALUES (2), (3)")
        for size in [0, -5, Int.min, Int.max] {
            var got: [Int] = []
            for try await row in db.stream("SELECT x FROM t ORDER BY x", batchSize: size) {
                got.append(try row.decode(0, as: Int.self))
            }
            #expect(got == [1, 2, 3], "batchSize \(size)")
        }
    }

    /// Held: close() during iteration ends the stream with a typed error, not a crash.
    @Test func closeDuringStreamIteration() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("INSERT INTO t VALUES (2), (3)")
        var iterator = db.stream("SELECT x FROM t", batchSize: 1).makeAsyncIterator()
        _ = try await iterator.next()
        await db.close()
        await #expect(throws: SqlCipherError.self) { _ = try await iterator.next() }
    }

    /// Held: a cursor escaped out of its body (through an unchecked box) is refused afterwards,
    /// also after close(), and one from a nested savepoint is refused in the outer body.
    @Test func escapedCursorIsRefused() async throws {
        final class Box: @unchecked Sendable { var cursor: Cursor<Row>? }
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("INSERT INTO t VALUES (2), (3)")
        let box = Box()
        try await db.read { conn in box.cursor = try conn.cursor("SELECT x FROM t") }
        #expect(throws: SqlCipherError.self) { _ = try box.cursor?.next() }
        try await db.transaction { conn in
            #expect(throws: SqlCipherError.self) { _ = try box.cursor?.next() }
            let inner = try conn.savepoint { sp in try sp.cursor("SELECT x FROM t") }
            #expect(throws: SqlCipherError.self) { _ = try inner.next() }
            try conn.execute("INSERT INTO t VALUES (4)")
        }
        try await db.read { conn in box.cursor = try conn.cursor("SELECT x FROM t") }
        await db.close()
        #expect(throws: SqlCipherError.self) { _ = try box.cursor?.next() }
    }

    /// Held: a cursor left mid-way inside a transaction does not block DROP TABLE after the body.
    @Test func cursorLeftEarlyThenDropTable() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("INSERT INTO t VALUES (2), (3)")
        try await db.transaction { conn in
            let cursor = try conn.cursor("SELECT x FROM t")
            #expect(try cursor.next() != nil)
        }
        try await db.execute("DROP TABLE t")
        #expect(try await db.query("SELECT name FROM sqlite_master WHERE name = 't'").isEmpty)
    }

    // MARK: 3. read bodies

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

    // MARK: 4. Raw SQL guards

    /// Held: spellings of the refused cipher pragmas.
    @Test func cipherPragmaSpellings() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        var attempts = [
            "PRAGMA \"cipher_use_hmac\" = OFF", "PRAGMA main.\"cipher_use_hmac\" = OFF", "PRAGMA [main].cipher_use_hmac = 0",
            "PRAGMA /* c */ cipher_use_hmac /* c */ = /* c */ OFF", "pragma CIPHER_USE_HMAC(off)", "PRAGMA `kdf_iter` = 1",
            "PRAGMA \"main\".key = 'b'", "PRAGMA main . rekey = 'b'", "PRAGMA 'cipher_page_size' = 512",
            "PRAGMA temp.key = 'b'", "PRAGMA cipher_default_use_hmac = off",
        ]
        if isSqlCipher4 {
            attempts += ["PRAGMA cipher_plaintext_header_size = 32", "PRAGMA \"cipher_hmac_algorithm\" = HMAC_SHA1",
                         "PRAGMA main.cipher_compatibility = 3", "PRAGMA cipher_salt = \"x'00112233445566778899aabbccddeeff'\""]
        }
        for sql in attempts {
            await #expect(throws: SqlCipherError.self, "\(sql)") { _ = try await db.execute(sql) }
            await #expect(throws: SqlCipherError.self, "\(sql)") { _ = try await db.query(sql) }
        }
        try await db.execute("INSERT INTO t VALUES (2)")
        await db.close()
        let again = try Database(path: directory.path("a.db"), rawKey: rawKey())
        #expect(try await values(again) == [1, 2])
    }

    /// `VACUUM INTO` a URI whose `key=` parameter is empty: SQLCipher attaches the copy with the
    /// URI's key (none) instead of the database's, so the whole database is written in the clear.
    /// `ATTACH` refuses the same URI; `VACUUM INTO` does not check it.
    @Test(.enabled(if: isSQLCipher4(), "SQLite 3.15 (3.4.1) has no VACUUM INTO")) func vacuumIntoUriWithEmptyKeyWritesPlaintext() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("INSERT INTO t VALUES (?)", 777_777)
        try await db.execute("CREATE TABLE secret(s TEXT)")
        try await db.execute("INSERT INTO secret VALUES ('TOP-SECRET-MARKER')")
        let target = directory.path("copy.db")
        for sql in ["VACUUM INTO 'file:\(target)?key='", "VACUUM main INTO 'file:\(target)?key='"] {
            _ = try? await db.execute(sql)
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: target))) ?? Data()
            #expect(bytes.range(of: Data("TOP-SECRET-MARKER".utf8)) == nil, "\(sql) wrote plaintext")
            #expect(bytes.range(of: Data("SQLite format 3".utf8)) == nil, "\(sql) wrote a plaintext SQLite file")
            try? FileManager.default.removeItem(atPath: target)
        }
    }

    /// Held: ATTACH with key expressions that evaluate to empty, and a key= URI.
    @Test func attachWithEmptyKeyExpressions() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let target = directory.path("p.db")
        for sql in ["ATTACH '\(target)' AS p KEY ''", "ATTACH '\(target)' AS p KEY substr('a', 5)",
                    "ATTACH '\(target)' AS p KEY cast(x'' AS TEXT)",
                    "ATTACH 'file:\(target)?key=' AS p", "ATTACH '\(target)' AS \"p q\" KEY ''",
                    "ATTACH (SELECT '\(target)') AS p KEY ''"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") { _ = try await db.execute(sql) }
            _ = try? await db.execute("CREATE TABLE p.leak(x)")
            _ = try? await db.execute("INSERT INTO p.leak VALUES ('TOP-SECRET')")
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: target))) ?? Data()
            #expect(bytes.range(of: Data("TOP-SECRET".utf8)) == nil, "\(sql)")
            _ = try? await db.execute("DETACH p")
            try? FileManager.default.removeItem(atPath: target)
        }
    }

    /// Held: a view or trigger that runs a refused function is refused when it is used (its
    /// creation is allowed, as docs/security.md says), and pragma table functions of cipher
    /// pragmas do not exist.
    @Test func triggerAndViewCannotCarryRefusedSQL() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("CREATE VIEW v AS SELECT sqlcipher_export('main') AS r")
        await #expect(throws: SqlCipherError.self) { _ = try await db.query("SELECT * FROM v") }
        try await db.execute("CREATE TABLE log(x)")
        try await db.execute(
            "CREATE TRIGGER tr AFTER INSERT ON log BEGIN SELECT sqlcipher_export('main'); END")
        await #expect(throws: SqlCipherError.self) { try await db.execute("INSERT INTO log VALUES (1)") }
        await #expect(throws: (any Error).self) {
            try await db.execute("SELECT * FROM pragma_cipher_use_hmac('OFF')")
        }
    }

    /// REINDEX rewrites index pages: a read { } body must refuse it.
    @Test func readBodyRefusesReindex() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("CREATE INDEX tx ON t(x)")
        for sql in ["REINDEX", "REINDEX tx", "REINDEX t", "REINDEX BINARY"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") {
                try await db.read { conn in _ = try conn.execute(sql) }
            }
        }
    }

    // MARK: 5. Entities from any query

    struct Narrow: Decodable, Sendable { let x: Int8 }
    struct Unsigned: Decodable, Sendable { let x: UInt }
    struct Whole: Decodable, Sendable { let x: Int }
    struct Nested: Decodable, Sendable {
        struct Inner: Decodable, Sendable { let a: Int }
        let x: Inner
    }
    struct Listed: Decodable, Sendable { let x: [Int] }
    struct Flag: Decodable, Sendable { let x: Bool }
    struct Stamp: Decodable, Sendable { let x: Date }
    struct Small: Decodable, Sendable { let x: Float }
    struct Named: Decodable, Sendable { let x: String }
    enum Kind: String, Decodable, Sendable { case a }
    struct Kinded: Decodable, Sendable { let x: Kind }

    func expectThrows<T: Decodable & Sendable>(_ type: T.Type, _ sql: String, _ db: Database) async {
        await #expect(throws: (any Error).self, "\(T.self) from \(sql)") { _ = try await db.fetch(type, sql: sql) }
        await #expect(throws: (any Error).self, "\(T.self) row.decode from \(sql)") {
            _ = try await db.query(sql).map { try $0.decode(type) }
        }
        await #expect(throws: (any Error).self, "\(T.self) stream from \(sql)") {
            for try await _ in db.stream(type, sql: sql) {}
        }
        await #expect(throws: (any Error).self, "\(T.self) cursor from \(sql)") {
            try await db.read { conn in try conn.cursor(type, sql: sql).forEach { _ in } }
        }
    }

    /// Held: values that do not fit throw instead of trapping.
    @Test func decodingValuesThatDoNotFitThrows() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        await expectThrows(Narrow.self, "SELECT 1000 AS x", db)
        await expectThrows(Unsigned.self, "SELECT -1 AS x", db)
        await expectThrows(Whole.self, "SELECT 1e300 AS x", db)
        await expectThrows(Whole.self, "SELECT 'abc' AS x", db)
        await expectThrows(Whole.self, "SELECT NULL AS x", db)
        await expectThrows(Whole.self, "SELECT 1 AS y", db)
        await expectThrows(Nested.self, "SELECT 1 AS x", db)
        await expectThrows(Listed.self, "SELECT 'not json' AS x", db)
        await expectThrows(Flag.self, "SELECT 'maybe' AS x", db)
        await expectThrows(Stamp.self, "SELECT 'not a date' AS x", db)
        await expectThrows(Small.self, "SELECT 1e300 AS x", db)
        await expectThrows(Named.self, "SELECT x'fffe' AS x", db)
        await expectThrows(Kinded.self, "SELECT 'b' AS x", db)
        await expectThrows(Whole.self, "SELECT 9.5 AS x", db)
        // Duplicate column names: decoding picks one, or refuses; never traps.
        _ = try? await db.fetch(Whole.self, sql: "SELECT 1 AS x, 2 AS x")
    }
}
