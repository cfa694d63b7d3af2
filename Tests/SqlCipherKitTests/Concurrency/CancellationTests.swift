import Foundation
import Synchronization
import Testing
@testable import SqlCipherKit

/// Cancelling the task that awaits a database call interrupts the statement it runs, rolls back
/// a transaction, and leaves the database usable.
@Suite struct CancellationTests {
    /// A query that runs for minutes unless interrupted: a recursive count to two billion. Its
    /// first row calls `started()`, which tells the test the statement is running (see
    /// ``RunningSignal``), so the cancel lands in the statement, not before it.
    static let longQuery = """
        WITH RECURSIVE c(x) AS (SELECT started() UNION ALL SELECT x + 1 FROM c LIMIT 2000000000)
        SELECT sum(x) FROM c
        """

    /// The database, with a `started()` function that signals `running` each time a long query
    /// begins.
    func database(_ directory: TemporaryDirectory, running: RunningSignal = RunningSignal()) async throws -> Database {
        let db = try Database(path: directory.path("c.db"), rawKey: rawKey())
        try await db.add(function: running.function)
        try await db.execute("CREATE TABLE t(x INTEGER)")
        try await db.execute("INSERT INTO t VALUES (1)")
        return db
    }

    func count(_ db: Database) async throws -> Int {
        try await db.query("SELECT count(*) FROM t")[0].decode(0, as: Int.self)
    }

    /// Starts `operation` in a task, cancels it once its long query runs (`running` signalled),
    /// and returns its outcome and the time from the cancel to the end.
    func cancelled<T: Sendable>(once running: RunningSignal,
                                _ operation: @escaping @Sendable () async throws -> T) async -> (Result<T, any Error>, Duration) {
        let task = Task { try await operation() }
        await running.wait(orEndOf: task)
        let clock = ContinuousClock()
        let start = clock.now
        task.cancel()
        let result = await task.result
        return (result, clock.now - start)
    }

    @Test func aLongQueryStopsSoonAfterItsTaskIsCancelled() async throws {
        let directory = TemporaryDirectory()
        let running = RunningSignal()
        let db = try await database(directory, running: running)
        let (result, latency) = await cancelled(once: running) { try await db.query(Self.longQuery) }
        #expect(throws: CancellationError.self) { try result.get() }
        // Uncancelled, the query runs for many minutes. The issue's bound (50 ms) is measured in
        // the benchmark; here the bound is loose, because the rest of the suite runs in parallel
        // and its blocking child-process waits can hold Swift's cooperative threads for seconds
        // before this test's task resumes.
        #expect(latency < .seconds(60), "took \(latency)")
        #expect(try await db.query("SELECT 1")[0].get(0, as: Int.self) == 1)
        #expect(try await count(db) == 1)
    }

    @Test func aCancelledTransactionLeavesNothingBehind() async throws {
        let directory = TemporaryDirectory()
        let running = RunningSignal()
        let db = try await database(directory, running: running)
        let (result, _) = await cancelled(once: running) {
            try await db.transaction { conn in
                for value in 0..<100 { try conn.execute("INSERT INTO t VALUES (?)", value) }
                return try conn.query(Self.longQuery).count
            }
        }
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(try await count(db) == 1)
        // Usable afterwards: a write commits, and a second connection sees it.
        try await db.execute("INSERT INTO t VALUES (2)")
        let other = try Database(path: directory.path("c.db"), rawKey: rawKey())
        #expect(try await other.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 2)
    }

    @Test func aBodyThatSwallowsTheInterruptStillRollsBack() async throws {
        let directory = TemporaryDirectory()
        let running = RunningSignal()
        let db = try await database(directory, running: running)
        let (result, _) = await cancelled(once: running) {
            try await db.transaction { conn in
                try conn.execute("INSERT INTO t VALUES (10)")
                _ = try? conn.query(Self.longQuery)  // interrupted; the error is ignored
                _ = try? conn.execute("INSERT INTO t VALUES (11)")
                return 0
            }
        }
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(try await count(db) == 1)
    }

    @Test func aSavepointAndAReadAreInterruptedToo() async throws {
        let directory = TemporaryDirectory()
        let running = RunningSignal()
        let db = try await database(directory, running: running)
        let (saved, _) = await cancelled(once: running) {
            try await db.savepoint { conn in
                try conn.execute("INSERT INTO t VALUES (3)")
                return try conn.query(Self.longQuery).count
            }
        }
        #expect(throws: CancellationError.self) { try saved.get() }
        let (read, _) = await cancelled(once: running) {
            try await db.read { conn in
                let cursor = try conn.cursor(Self.longQuery)
                return try cursor.next()?.count ?? 0
            }
        }
        #expect(throws: CancellationError.self) { try read.get() }
        #expect(try await count(db) == 1)
    }

    @Test func aCallCancelledBeforeItStartsDoesNotRun() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await db.execute("INSERT INTO t VALUES (5)")
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        let body = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await db.transaction { conn in try conn.execute("INSERT INTO t VALUES (6)") }
        }
        await #expect(throws: CancellationError.self) { try await body.value }
        #expect(try await count(db) == 1)
    }

    @Test func aCancelledReadFreesTheDatabaseForOthers() async throws {
        let directory = TemporaryDirectory()
        let running = RunningSignal()
        let db = try await database(directory, running: running)
        let long = Task { try await db.query(Self.longQuery) }
        await running.wait(orEndOf: long)
        let clock = ContinuousClock()
        let start = clock.now
        async let quick = db.query("SELECT 1")
        long.cancel()
        #expect(try await quick[0].get(0, as: Int.self) == 1)
        #expect(clock.now - start < .seconds(60))
        await #expect(throws: CancellationError.self) { try await long.value }
    }

    @Test func aLateCancellationStopsNoOtherCall() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        // Tasks that finish and are cancelled afterwards, while other calls run.
        for round in 0..<20 {
            let task = Task { try await db.execute("INSERT INTO t VALUES (?)", round) }
            _ = try await task.value
            task.cancel()
            #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == round + 2)
        }
    }

    @Test func manyCallsCancelledAtRandomLeaveAConsistentDatabase() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("CREATE TABLE pairs(a INTEGER, b INTEGER)")
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                let task = Task {
                    try await db.transaction { conn in
                        try conn.execute("INSERT INTO pairs(a) VALUES (?)", index)
                        _ = try conn.query("SELECT count(*) FROM (SELECT * FROM pairs, pairs AS p2, pairs AS p3)")
                        try conn.execute("UPDATE pairs SET b = a WHERE a = ?", index)
                    }
                }
                group.addTask {
                    // Spreads the cancels at random; every moment must leave the database consistent.
                    try? await Task.sleep(for: .microseconds(Int.random(in: 0...3000)))
                    task.cancel()
                    _ = await task.result
                }
            }
        }
        // Each transaction committed whole or not at all.
        let halfDone = try await db.query("SELECT count(*) FROM pairs WHERE b IS NULL")[0].get(0, as: Int.self)
        #expect(halfDone == 0)
        #expect(try await db.verifyIntegrity().isOK)
    }

    /// A call that waits for another connection's lock (SQLite's busy wait, which runs no
    /// instruction, so the progress handler never sees it) stops when its task is cancelled: it
    /// waited out its whole busy timeout before (20 s in a view model's save, found by the
    /// user-program review). The connection's own timeout, here the caller's `PRAGMA`, is back
    /// for the next call, which waits for the lock and writes.
    @Test(arguments: [false, true])
    func aCallWaitingForAnotherConnectionsLockStopsWhenCancelled(pooled: Bool) async throws {
        let directory = TemporaryDirectory()
        let path = directory.path("busy.db")
        var configuration = DatabaseConfiguration()
        // Far above the bound below: without the cut, the cancelled call ends only after this.
        configuration.busyTimeout = .seconds(150)
        let holder = try Database(path: path, rawKey: rawKey(), configuration: configuration)
        let holding = RunningSignal()
        try await holder.add(function: holding.function)
        try await holder.execute("CREATE TABLE t(x INTEGER)")
        let running = RunningSignal()
        let waiter: any DatabaseAccess
        if pooled {
            waiter = try DatabasePool(path: path, rawKey: rawKey(), configuration: configuration)
        } else {
            let db = try Database(path: path, rawKey: rawKey(), configuration: configuration)
            try await db.execute("PRAGMA busy_timeout = 140000")
            waiter = db
        }
        try await waiter.add(function: running.function)
        // The holder keeps the write lock until its semaphore is signalled; its body blocks its
        // own queue only.
        func holdTheWriteLock(inserting value: Int) async -> (release: DispatchSemaphore, hold: Task<Void, any Error>) {
            let release = DispatchSemaphore(value: 0)
            let hold = Task {
                try await holder.transaction { conn in
                    try conn.execute("INSERT INTO t VALUES (?)", value)
                    _ = try conn.query("SELECT started()")
                    release.wait()
                }
            }
            await holding.wait(orEndOf: hold)
            return (release, hold)
        }
        let (release, hold) = await holdTheWriteLock(inserting: 1)
        // `started()` runs, then the INSERT waits for the holder's lock.
        let task = Task { try await waiter.execute("SELECT started(); INSERT INTO t VALUES (2)") }
        await running.wait(orEndOf: task)
        let clock = ContinuousClock()
        let start = clock.now
        task.cancel()
        let result = await task.result
        let latency = clock.now - start
        release.signal()
        try await hold.value
        #expect(throws: CancellationError.self) { try result.get() }
        // The bound only tells a cut wait from the 150 s timeout on a loaded machine.
        #expect(latency < .seconds(60), "took \(latency)")
        if !pooled, let db = waiter as? Database {
            #expect(try await db.query("PRAGMA busy_timeout")[0].get(0, as: Int.self) == 140_000)
        }
        // The next call waits for a lock again rather than failing at once.
        let (release2, hold2) = await holdTheWriteLock(inserting: 3)
        let write = Task { try await waiter.execute("SELECT started(); INSERT INTO t VALUES (4)") }
        await running.wait(orEndOf: write)
        release2.signal()
        try await hold2.value
        _ = try await write.value
        let values = try await waiter.query("SELECT x FROM t ORDER BY x").compactMap { $0.get(0, as: Int.self) }
        #expect(values == [1, 3, 4])
        await holder.close()
        if let pool = waiter as? DatabasePool { await pool.close() } else if let db = waiter as? Database { await db.close() }
    }

    @Test func aStreamEndsWithCancellationError() async throws {
        let directory = TemporaryDirectory()
        let running = RunningSignal()
        let db = try await database(directory, running: running)
        let consumer = Task {
            var seen = 0
            for try await _ in db.stream(Self.longQuery.replacingOccurrences(of: "SELECT sum(x) FROM c", with: "SELECT x FROM c"),
                                         batchSize: 1000) {
                seen += 1
            }
            return seen
        }
        await running.wait(orEndOf: consumer)
        consumer.cancel()
        await #expect(throws: CancellationError.self) { try await consumer.value }
        // The stream's statement is released; the database writes and drops tables again.
        try await waitUntil { await db.openStreamCount == 0 }
        try await db.execute("INSERT INTO t VALUES (7)")
        try await db.execute("DROP TABLE t")
        #expect(try await db.query("SELECT name FROM sqlite_master WHERE name = 't'").isEmpty)
    }
}

/// Polls `condition`; the 60 s bound only stops a hang (a loaded machine can take seconds).
func waitUntil(_ condition: @Sendable () async -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < deadline {
        if await condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("condition not met within 60 seconds")
}
