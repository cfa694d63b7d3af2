import Dispatch
import Foundation
import SqlCipherKit
import Synchronization
import Testing

/// Close, rekey and cancellation of a pool racing its reads, streams and each other: nothing
/// hangs, the file ends with one key, the pool stays consistent.
@Suite("DatabasePool: close, rekey and cancellation")
struct PoolCloseRekeyCancellationTests: PoolFixture {
    /// close() while a rekey waits for a running read must not leave the rekey waiting forever.
    @Test func closeWhileARekeyWaitsForAReadEndsTheRekey() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir)
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let read = Task {
            try await pool.read { _ in
                entered.signal()
                release.wait()
                return 1
            }
        }
        #expect(await signalled(entered))
        let rekeyDone = DispatchSemaphore(value: 0)
        let rekey = Task {
            defer { rekeyDone.signal() }
            try await pool.rekey(rawKey: rawKey(9))
        }
        // The rekey reaches its wait for the running read before the close.
        #expect(await reached { pool.pendingReaderWaits.exclusive })
        await pool.close()
        release.signal()
        _ = try? await read.value
        let returned = await signalled(rekeyDone)
        #expect(returned, "the rekey never returned after close")
        if returned { await #expect(throws: SqlCipherError.databaseClosed) { try await rekey.value } }
    }

    /// close() while a transaction runs on the writer: the article said the writer was closed "at
    /// once", but its call finishes first, as a read's does, and commits. close() returns after it;
    /// calls made after close() throw `databaseClosed`.
    @Test func closeLetsTheRunningTransactionFinishAndCommit() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir)
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let write = Task {
            try await pool.transaction { conn in
                try conn.execute("INSERT INTO t(v) VALUES (2)")
                entered.signal()
                release.wait()
                return try conn.execute("INSERT INTO t(v) VALUES (3)")
            }
        }
        #expect(await signalled(entered))
        let closed = Task { await pool.close() }
        #expect(await reached { pool.isClosed })
        await #expect(throws: SqlCipherError.databaseClosed) { try await pool.query("SELECT 1") }
        release.signal()
        await closed.value
        #expect(try await write.value == 1)
        let reopened = try DatabasePool(path: dir.path("p.db"), rawKey: rawKey())
        #expect(try await reopened.query("SELECT v FROM t ORDER BY id").map { $0["v"] } == [.integer(1), .integer(2), .integer(3)])
        await reopened.close()
    }

    /// A stream left open with one reader, then a rekey in another task, then the stream ended:
    /// the rekey finishes, and the stream's rows come from one key. A loaded machine that stalls
    /// this loop between two batches for ``DatabaseStream/preemptionDelay`` lets the waiting rekey
    /// take the reader (`streamPreempted`, as documented): then the rows read until then are whole
    /// and the rekey still finishes.
    @Test func rekeyWaitsForAStreamThenRuns() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir, readers: 1)
        try await pool.transaction { conn in for value in 0..<600 { try conn.execute("INSERT INTO t(v) VALUES (?)", value) } }
        var iterator = pool.stream("SELECT v FROM t", batchSize: 10).makeAsyncIterator()
        _ = try await iterator.next()
        let rekey = Task { try await pool.rekey(rawKey: rawKey(3)) }
        var rows = 1
        var seen: Set<Int> = []
        do {
            while let row = try await iterator.next() {
                rows += 1
                if let value = row.get("v", as: Int.self) { seen.insert(value) }
            }
            #expect(rows == 601)
        } catch SqlCipherError.streamPreempted(let reason) {
            #expect(reason.contains("rekey"), "\(reason)")
            #expect(rows < 601 && seen.count == rows - 1, "\(rows) rows, \(seen.count) distinct after the first")
        }
        try await rekey.value
        #expect(try await count(pool) == 601)
        await pool.close()
        let reopened = try DatabasePool(path: dir.path("p.db"), rawKey: rawKey(3))
        #expect(try await count(reopened) == 601)
        await reopened.close()
    }

    /// Concurrent rekeys run one after the other, and the file ends with one of their keys.
    @Test func concurrentRekeysLeaveOneKey() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for seed in UInt8(10)..<14 {
                group.addTask { try await pool.rekey(rawKey: rawKey(seed)) }
                group.addTask { _ = try await pool.query("SELECT count(*) FROM t") }
            }
            try await group.waitForAll()
        }
        #expect(try await count(pool) == 1)
        await pool.close()
        var opened = 0
        for seed in UInt8(10)..<14 {
            if let db = try? DatabasePool(path: dir.path("p.db"), rawKey: rawKey(seed)) {
                opened += 1
                await db.close()
            }
        }
        #expect(opened == 1)
    }

    /// A read waiting for the only reader can be cancelled, and the pool keeps working.
    @Test func cancellingAReadThatWaitsForAReader() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir, readers: 1)
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let holder = Task { try await pool.read { _ in entered.signal(); release.wait(); return 1 } }
        #expect(await signalled(entered))
        let waiting = Task { try await pool.query("SELECT 1") }
        // The query reaches its wait for the reader before it is cancelled.
        #expect(await reached { pool.pendingReaderWaits.calls == 1 })
        waiting.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        release.signal()
        _ = try await holder.value
        #expect(try await count(pool) == 1)
        #expect(pool.openReaderCount == 1)
        await pool.close()
    }

    /// A reader whose opening fails (here its `prepareConnection` throws; in a service, the
    /// process out of file descriptors) while a rekey waits for the busy readers: the failed
    /// opening counts as a reader come back. It did not wake the rekey, which waited for ever,
    /// and every later read of the pool with it.
    @Test func aReaderOpeningThatFailsWhileARekeyWaitsLetsTheRekeyRun() async throws {
        struct OpeningRefused: Error {}
        let dir = TemporaryDirectory()
        let opening = DispatchSemaphore(value: 0), fail = DispatchSemaphore(value: 0)
        let connections = Mutex(0)
        var configuration = DatabaseConfiguration()
        configuration.prepareConnection = { _ in
            // The writer is the first connection, the first reader the second.
            guard connections.withLock({ $0 += 1; return $0 }) == 2 else { return }
            opening.signal()
            fail.wait()
            throw OpeningRefused()
        }
        let pool = try DatabasePool(path: dir.path("p.db"), rawKey: rawKey(), maximumReaderCount: 2,
                                    configuration: configuration)
        try await pool.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER); INSERT INTO t(v) VALUES (1)")
        let read = Task { try await pool.query("SELECT count(*) FROM t") }
        #expect(await signalled(opening))
        let rekeyDone = DispatchSemaphore(value: 0)
        let rekey = Task {
            defer { rekeyDone.signal() }
            try await pool.rekey(rawKey: rawKey(9))
        }
        // The rekey waits for the reader being opened before that opening fails.
        #expect(await reached { pool.pendingReaderWaits.exclusive })
        fail.signal()
        await #expect(throws: (any Error).self) { _ = try await read.value }
        let returned = await signalled(rekeyDone, seconds: 20)
        #expect(returned, "the rekey still waits for a reader that never opened")
        guard returned else { return }
        try await rekey.value
        #expect(try await count(pool) == 1)
        await pool.close()
        let reopened = try Database(path: dir.path("p.db"), rawKey: rawKey(9))
        #expect(try await reopened.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await reopened.close()
    }

    /// Two hundred tasks reading, writing and being cancelled: the pool stays consistent.
    @Test func twoHundredMixedTasks() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir, readers: 3)
        let inserted = await withTaskGroup(of: Int.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let task = Task { () -> Int in
                        switch index % 4 {
                        case 0:
                            return (try? await pool.execute("INSERT INTO t(v) VALUES (?)", index)) ?? 0
                        case 1: _ = try? await pool.read { conn in try conn.query("SELECT sum(v) FROM t") }
                        case 2: for try await _ in pool.stream("SELECT v FROM t", batchSize: 2) {}
                        default: _ = try? await pool.fetchOne(PoolReviewRow.self, id: 1)
                        }
                        return 0
                    }
                    if index % 7 == 0 { task.cancel() }
                    return (try? await task.value) ?? 0
                }
            }
            return await group.reduce(0, +)
        }
        #expect(pool.openReaderCount <= 3)
        #expect(try await count(pool) == 1 + inserted)
        await pool.close()
    }

    /// close() during a stream: the next batch throws databaseClosed, never hangs or crashes.
    @Test func closeDuringAStream() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir, readers: 1)
        try await pool.transaction { conn in for value in 0..<100 { try conn.execute("INSERT INTO t(v) VALUES (?)", value) } }
        var iterator = pool.stream("SELECT v FROM t", batchSize: 5).makeAsyncIterator()
        _ = try await iterator.next()
        await pool.close()
        await #expect(throws: (any Error).self) {
            while try await iterator.next() != nil {}
        }
        await #expect(throws: SqlCipherError.databaseClosed) { try await pool.query("SELECT 1") }
    }
}

struct PoolReviewRow: Codable, Sendable, Entity {
    static let tableName = TableName("t")
    static let primaryKey: WritableKeyPath<PoolReviewRow, Int64?> & Sendable = \.id
    var id: Int64?
    var v: Int
}

@Suite("DatabasePool: close racing a rekey")
struct PoolRekeyCloseRaceTests {
    /// A close that arrives while the writer re-encrypts: the rekey either did not start (it
    /// throws, the old key opens the file) or completed (it returns, the new key opens the file).
    /// Never a thrown error with the file already under the new key.
    @Test func aRekeyThatThrowsLeftTheOldKeyAndOneThatReturnedLeftTheNewOne() async throws {
        for round in 0..<3 {
            let dir = TemporaryDirectory()
            let path = dir.path("race\(round).db")
            let pool = try DatabasePool(path: path, rawKey: rawKey(1))
            try await pool.execute("CREATE TABLE t(x)")
            try await pool.transaction { conn in
                for index in 0..<2000 { try conn.execute("INSERT INTO t VALUES (?)", String(repeating: "x", count: 100) + "\(index)") }
            }
            let started = DispatchSemaphore(value: 0)
            let rekey = Task {
                try await pool.rekey(rawKey: rawKey(2), progress: { _ in started.signal() })
            }
            #expect(await signalled(started))
            await pool.close()
            let outcome = await rekey.result
            let newKeyOpens = (try? await Database(path: path, rawKey: rawKey(2)).query("SELECT count(*) FROM t")) != nil
            let oldKeyOpens = (try? await Database(path: path, rawKey: rawKey(1)).query("SELECT count(*) FROM t")) != nil
            switch outcome {
            case .success:
                #expect(newKeyOpens && !oldKeyOpens, "round \(round): the rekey returned but the file has the old key")
            case .failure(let error):
                #expect(oldKeyOpens && !newKeyOpens, "round \(round): the rekey threw \(error) but the file has the new key")
            }
        }
    }
}
