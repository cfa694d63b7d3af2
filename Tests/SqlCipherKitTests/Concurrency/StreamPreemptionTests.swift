import Foundation
import Testing
@testable import SqlCipherKit

/// A stream paused between batches never holds its statement or its pool reader against a call
/// that needs it (StreamHold.swift): the rule that does not depend on Swift destroying the
/// iterator of a loop that was left. The iterators here are kept alive on purpose, as top-level
/// code keeps them (IsolationContextTests runs that case from a real `main.swift`).
@Suite struct StreamPreemptionTests {
    func rows(_ count: Int, in access: some DatabaseAccess) async throws {
        try await access.execute("CREATE TABLE t(x INTEGER)")
        try await access.transaction { conn in
            for x in 0..<count { try conn.execute("INSERT INTO t VALUES (?)", x) }
        }
    }

    func isPreempted(_ error: any Error) -> Bool {
        if case SqlCipherError.streamPreempted = error { return true }
        return false
    }

    // MARK: Database

    @Test(arguments: ["DROP TABLE t", "VACUUM", "DROP INDEX i"])
    func aStatementThatNeedsAPausedStreamsTableRunsAndTheStreamEnds(statement: String) async throws {
        let directory = TemporaryDirectory()
        let db = try Database(path: directory.path("s.db"), rawKey: rawKey())
        try await rows(20, in: db)
        try await db.execute("CREATE INDEX i ON t(x)")
        var iterator = db.stream("SELECT x FROM t ORDER BY x", batchSize: 5).makeAsyncIterator()
        #expect(try await iterator.next()?.get(0, as: Int.self) == 0)
        #expect(await db.openStreamCount == 1)
        try await db.execute(statement)
        #expect(await db.openStreamCount == 0)
        // The rest of the batch already read is still delivered; the next batch is refused.
        for expected in 1..<5 { #expect(try await iterator.next()?.get(0, as: Int.self) == expected) }
        await #expect(throws: SqlCipherError.self) { _ = try await iterator.next() }
        do {
            _ = try await iterator.next()
        } catch {
            Issue.record("the stream ended with the error; a later next() returns nil, not \(error)")
        }
    }

    @Test func theErrorOfAPreemptedStreamSaysWhatTookIt() async throws {
        let directory = TemporaryDirectory()
        let db = try Database(path: directory.path("s.db"), rawKey: rawKey())
        try await rows(4, in: db)
        var iterator = db.stream("SELECT x FROM t", batchSize: 1).makeAsyncIterator()
        _ = try await iterator.next()
        try await db.execute("DROP TABLE t")
        do {
            _ = try await iterator.next()
            Issue.record("a preempted stream went on")
        } catch {
            #expect(isPreempted(error), "\(error)")
            #expect("\(error)".contains("database table is locked"), "\(error)")
            #expect("\(error)".contains("Read the stream to its end"), "\(error)")
        }
    }

    @Test func aStreamBeingReadIsNotPreemptedByAnErrorOfItsOwn() async throws {
        // Only a failure caused by an open stream statement ends paused streams: a failing
        // statement for another reason leaves the stream alone.
        let directory = TemporaryDirectory()
        let db = try Database(path: directory.path("s.db"), rawKey: rawKey())
        try await rows(10, in: db)
        var iterator = db.stream("SELECT x FROM t ORDER BY x", batchSize: 2).makeAsyncIterator()
        _ = try await iterator.next()
        await #expect(throws: SqlCipherError.self) { try await db.execute("INSERT INTO nowhere VALUES (1)") }
        var seen = 1
        while try await iterator.next() != nil { seen += 1 }
        #expect(seen == 10)
    }

    // MARK: Pool

    @Test func aReadWaitingForTheOnlyReaderTakesItFromAPausedStream() async throws {
        let directory = TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("p.db"), rawKey: rawKey(), maximumReaderCount: 1)
        try await rows(20, in: pool)
        var iterator = pool.stream("SELECT x FROM t ORDER BY x", batchSize: 5).makeAsyncIterator()
        #expect(try await iterator.next()?.get(0, as: Int.self) == 0)
        // Without preemption this read waits for the stream forever.
        let count = try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self)
        #expect(count == 20)
        for _ in 1..<5 { _ = try await iterator.next() }
        do {
            _ = try await iterator.next()
            Issue.record("the stream went on after its reader was taken")
        } catch {
            #expect(isPreempted(error), "\(error)")
        }
        // The reader came back to the pool once: one reader, and it works.
        #expect(pool.readers.openCount == 1)
        #expect(try await pool.query("SELECT max(x) FROM t")[0].get(0, as: Int.self) == 19)
        await pool.close()
    }

    @Test func aStreamReadWithoutPausingKeepsItsReaderWhileAReadWaits() async throws {
        let directory = TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("p.db"), rawKey: rawKey(), maximumReaderCount: 1)
        try await rows(200, in: pool)
        var iterator = pool.stream("SELECT x FROM t ORDER BY x", batchSize: 10).makeAsyncIterator()
        _ = try await iterator.next()
        let (started, signal) = AsyncStream.makeStream(of: Void.self)
        let read = Task {
            signal.yield()
            return try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self)
        }
        for await _ in started { break }
        // The consumer asks for each batch at once (well within the delay): it is never preempted.
        // Only a machine that stalls this loop for the delay between two rows may see it taken;
        // the longest gap says whether that happened.
        var seen = 1
        var longestGap = Duration.zero
        var last = ContinuousClock.now
        do {
            while try await iterator.next() != nil {
                seen += 1
                let now = ContinuousClock.now
                longestGap = max(longestGap, now - last)
                last = now
            }
            #expect(seen == 200)
        } catch SqlCipherError.streamPreempted {
            longestGap = max(longestGap, ContinuousClock.now - last)
            #expect(longestGap >= DatabaseStream<Row>.preemptionDelay, "preempted after a gap of \(longestGap)")
        }
        #expect(try await read.value == 200)
        await pool.close()
    }

    @Test func closingAPoolTakesTheReadersOfPausedStreams() async throws {
        let directory = TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("p.db"), rawKey: rawKey(), maximumReaderCount: 2)
        try await rows(20, in: pool)
        var first = pool.stream("SELECT x FROM t", batchSize: 5).makeAsyncIterator()
        var second = pool.stream("SELECT x FROM t", batchSize: 5).makeAsyncIterator()
        _ = try await first.next()
        _ = try await second.next()
        #expect(pool.readers.openCount == 2)
        await pool.close()
        // The readers of both paused streams were closed with the pool, not left open.
        #expect(pool.readers.openCount == 0)
        for _ in 1..<5 { _ = try await first.next() }
        await #expect(throws: SqlCipherError.self) { _ = try await first.next() }
    }

    @Test func aPoolRekeyTakesTheReaderOfAPausedStream() async throws {
        let directory = TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("p.db"), key: "old passphrase", maximumReaderCount: 1)
        try await rows(20, in: pool)
        var iterator = pool.stream("SELECT x FROM t", batchSize: 5).makeAsyncIterator()
        _ = try await iterator.next()
        try await pool.rekey("new passphrase")
        for _ in 1..<5 { _ = try await iterator.next() }
        do {
            _ = try await iterator.next()
            Issue.record("the stream read on with the old key's reader")
        } catch {
            #expect(isPreempted(error), "\(error)")
            #expect("\(error)".contains("rekey"), "\(error)")
        }
        await pool.close()
        let reopened = try DatabasePool(path: directory.path("p.db"), key: "new passphrase")
        #expect(try await reopened.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 20)
        await reopened.close()
    }

    // MARK: Isolation

    @MainActor @Test func aMainActorLoopReadsEveryRowOfEveryKindOfStream() async throws {
        let directory = TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("p.db"), rawKey: rawKey())
        try await rows(600, in: pool)
        struct X: Decodable, Sendable { var x: Int }
        var total = 0
        for try await row in pool.stream("SELECT x FROM t ORDER BY x") { total += row.get(0, as: Int.self) ?? 0 }
        for try await value in pool.stream(X.self, sql: "SELECT x FROM t") { total += value.x }
        #expect(total == 2 * (0..<600).reduce(0, +))
        await pool.close()
    }
}
