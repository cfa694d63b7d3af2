import Dispatch
import Foundation
import SqlCipherKit
import Synchronization
import Testing

/// Live queries on a pool see every commit: from a Database beside it, trigger writes, drop and
/// recreate, rekey, racing writers.
@Suite("DatabasePool: live queries never miss a change")
struct PoolLiveQueryRaceTests: PoolFixture {
    /// A `Database` and a pool on the same file see each other's commits in their live queries.
    @Test func aDatabaseAndAPoolSeeEachOthersCommits() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir)
        let db = try Database(path: dir.path("p.db"), rawKey: rawKey())
        let request = countOfT
        let onPool = LiveReader(pool.values(of: request))
        let onDatabase = LiveReader(db.values(of: request))
        #expect(try await onPool.next() == 1)
        #expect(try await onDatabase.next() == 1)
        try await db.execute("INSERT INTO t(v) VALUES (2)")
        #expect(try await onPool.next() == 2)
        #expect(try await onDatabase.next() == 2)
        try await pool.execute("INSERT INTO t(v) VALUES (3)")
        #expect(try await onDatabase.next() == 3)
        #expect(try await onPool.next() == 3)
        await db.close()
        await pool.close()
    }

    /// Writes by a trigger, DROP and re-CREATE of the observed table, and a rekey are all seen.
    @Test func triggerWritesDropRecreateAndRekeyAreSeen() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir)
        try await pool.execute("CREATE TABLE src(a)")
        try await pool.execute("CREATE TRIGGER copy AFTER INSERT ON src BEGIN INSERT INTO t(v) VALUES (new.a); END")
        let request = countOfT
        let reader = LiveReader(pool.values(of: request))
        #expect(try await reader.next() == 1)
        try await pool.execute("INSERT INTO src VALUES (5)")
        #expect(try await reader.next() == 2)
        try await pool.savepoint { conn in
            try conn.execute("INSERT INTO t(v) VALUES (6)")
        }
        #expect(try await reader.next() == 3)
        try await pool.rekey(rawKey: rawKey(4))
        try await pool.execute("INSERT INTO t(v) VALUES (7)")
        var value = try await reader.next()
        if value == 3 { value = try await reader.next() }
        #expect(value == 4)
        try await pool.transaction { conn in
            try conn.execute("DROP TABLE t")
            try conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER)")
        }
        #expect(try await reader.next() == 0)
        await pool.close()
    }

    /// Commits of two writer calls racing an observer's fetch: the observer ends at the last
    /// state without any further write (a change staged by one call and published by another
    /// before it was visible would be lost for good).
    @Test func racingWriterCallsNeverLeaveAnObserverBehind() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir)
        try await pool.execute("CREATE TABLE other(a)")
        let request = countOfT
        let reader = LiveReader(pool.values(of: request))
        var expected = try await reader.next() ?? -1
        for round in 0..<40 {
            // A small commit to another table, and a large one to the observed table, at once.
            async let small: Void = { _ = try await pool.execute("INSERT INTO other VALUES (?)", round) }()
            async let large: Void = {
                try await pool.transaction { conn in
                    for value in 0..<400 { try conn.execute("INSERT INTO t(v) VALUES (?)", value) }
                }
            }()
            _ = try await (small, large)
            expected += 400
            let seen = try await reader.next(until: expected)
            #expect(seen == expected, "round \(round)")
            if seen != expected { break }
        }
        await pool.close()
    }

    /// Many one-statement writer calls at once, an observer fetching between them: it always
    /// reaches the last state without a further write. A commit hooked during one call and
    /// published by another call's end, before that commit was visible to readers, was lost.
    @Test func concurrentSmallWritesNeverLeaveAnObserverBehind() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir)
        let reader = LiveReader(pool.values(of: countOfT))
        var expected = try await reader.next() ?? -1
        for round in 0..<60 {
            let written = await withTaskGroup(of: Int.self) { group in
                for writer in 0..<6 {
                    group.addTask { (try? await pool.execute("INSERT INTO t(v) VALUES (?)", writer)) ?? 0 }
                }
                return await group.reduce(0, +)
            }
            expected += written
            let seen = try await reader.next(until: expected)
            #expect(seen == expected, "round \(round)")
            if seen != expected { break }
        }
        await pool.close()
    }
}

let countOfT = LiveRequest(placeholder: -1) { conn in
    try conn.query("SELECT count(*) FROM t")[0].decode(0, as: Int.self)
}
