import Foundation
import SqlCipherKit
import Testing

/// Streams and cursors left early, interleaved, escaped or closed under: their statements are
/// released and later statements (DROP TABLE, commits) are not held back.
@Suite("Stream and cursor lifetimes")
struct StreamAndCursorLifetimeTests: InterruptibleDatabaseFixture {
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
}
