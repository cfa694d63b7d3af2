import Foundation
import SqlCipherKit
import Testing

/// Cancelling a task inside a transaction or a savepoint: an interrupted write, a body that
/// swallows the interrupt, nested savepoints, a cancel racing close(). Each cancel lands while the
/// long statement runs (`started()` handshake).
@Suite("Cancelled transactions and savepoints")
struct CancelledTransactionTests: InterruptibleDatabaseFixture {
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
}
