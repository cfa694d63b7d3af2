import Dispatch
import Foundation
import Synchronization
import Testing
@testable import SqlCipherKit

/// An adversarial review of `DatabasePool` (issue 15) through the public API: writes smuggled
/// through reads, live queries missing a change, hangs around close and rekey, key material and
/// odd paths. Tests that passed at once guard a suspected hole that turned out closed.
@Suite struct AdversarialReviewPoolTests {
    func pool(_ dir: TemporaryDirectory, _ name: String = "p.db", readers: Int = 4) async throws -> DatabasePool {
        let pool = try DatabasePool(path: dir.path(name), rawKey: rawKey(), maximumReaderCount: readers)
        try await pool.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v INTEGER)")
        try await pool.execute("INSERT INTO t(v) VALUES (1)")
        return pool
    }

    func count(_ pool: DatabasePool) async throws -> Int {
        try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) ?? -1
    }

    // MARK: Writes through reads

    /// A read body refuses every spelling of a write, including after turning `query_only` off.
    @Test func aReadBodyRefusesWritesInEverySpelling() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir)
        let writes = [
            "INSERT INTO t(v) VALUES (2)",
            "WITH x(a) AS (SELECT 5) INSERT INTO t(v) SELECT a FROM x",
            "CREATE TEMP TABLE tmp(a)",
            "CREATE TABLE u(a)",
            "DELETE FROM t",
            "VACUUM",
            "PRAGMA user_version = 7",
        ]
        for sql in writes {
            await #expect(throws: SqlCipherError.self, "\(sql)") {
                try await pool.read { conn in
                    _ = try? conn.execute("PRAGMA query_only = 0")
                    try conn.execute(sql)
                }
            }
        }
        #expect(try await count(pool) == 1)
        #expect(try await pool.query("PRAGMA user_version")[0].get(0, as: Int.self) == 0)
        await pool.close()
    }

    /// Turning `query_only` off through a query or a stream must not make a later read write.
    @Test func queryOnlyOffOnAReaderDoesNotLetALaterReadWrite() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir, readers: 1)
        _ = try? await pool.query("PRAGMA query_only = 0")
        for try await _ in pool.stream("PRAGMA query_only = 0") {}
        await #expect(throws: SqlCipherError.self) {
            try await pool.read { conn in try conn.execute("INSERT INTO t(v) VALUES (3)") }
        }
        #expect(try await count(pool) == 1)
        await pool.close()
    }

    /// A query that writes (RETURNING, a CTE with INSERT) goes to the writer and runs exactly once.
    @Test func aWritingQueryRunsOnceOnTheWriter() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir)
        if isSQLCipher4() {
            let rows = try await pool.query("INSERT INTO t(v) VALUES (9) RETURNING v")
            #expect(rows.count == 1)
        } else {
            _ = try await pool.query("INSERT INTO t(v) VALUES (9)")
        }
        #expect(try await count(pool) == 2)
        await pool.close()
    }

    /// A pool must stay in WAL: `journal_mode` changed through a reader or the writer would make
    /// readers block the writer (or fail), which the pool promises never happens.
    @Test func journalModeCannotBeChangedUnderAPool() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir)
        _ = try? await pool.query("PRAGMA journal_mode = DELETE")
        _ = try? await pool.read { conn in try conn.query("PRAGMA journal_mode = DELETE") }
        await #expect(throws: SqlCipherError.self) { for try await _ in pool.stream("PRAGMA journal_mode = DELETE") {} }
        _ = try? await pool.execute("PRAGMA journal_mode = DELETE")
        let mode = try await pool.query("PRAGMA journal_mode")[0].get(0, as: String.self)
        #expect(mode?.lowercased() == "wal")
        await pool.close()
    }

    // MARK: Opening

    @Test func badReaderCountsAndPathsGetTypedErrors() async throws {
        let dir = TemporaryDirectory()
        for count in [0, -1, Int.min] {
            #expect(throws: SqlCipherError.self) { try DatabasePool(path: dir.path("n.db"), rawKey: rawKey(), maximumReaderCount: count) }
        }
        let huge = try DatabasePool(path: dir.path("huge.db"), rawKey: rawKey(), maximumReaderCount: Int.max)
        try await huge.execute("CREATE TABLE t(a)")
        #expect(try await huge.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 0)
        await huge.close()
        try FileManager.default.createDirectory(atPath: dir.path("folder"), withIntermediateDirectories: true)
        // (URIs are not interpreted: SQLite opens without SQLITE_OPEN_URI, so only these spell memory.)
        for path in ["", ":memory:", "file::memory:?cache=shared", dir.path("folder"), dir.path("nul") + "\0.db"] {
            #expect(throws: SqlCipherError.self, "\(path)") { try DatabasePool(path: path, rawKey: rawKey()) }
        }
    }

    @Test func keyMismatchesGetTypedErrorsAndNeverTheKey() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("k.db")
        let made = try DatabasePool(path: path, key: "right horse")
        try await made.execute("CREATE TABLE t(a)")
        await made.close()
        do {
            _ = try DatabasePool(path: path, key: "wrong horse")
            Issue.record("a wrong passphrase opened the pool")
        } catch let error as SqlCipherError {
            guard case .keyFailed = error else { Issue.record("\(error)"); return }
        }
        #expect(throws: SqlCipherError.emptyKey) { try DatabasePool(path: path, key: "") }
        #expect(throws: SqlCipherError.passphraseLooksLikeRawKey) {
            try DatabasePool(path: path, key: "x'" + String(repeating: "ab", count: 32) + "'")
        }
        #expect(throws: SqlCipherError.self) { try DatabasePool(unencryptedPath: path) }
        #expect(throws: SqlCipherError.self) { try DatabasePool(path: path, rawKey: rawKey()) }
        // A plaintext file with a key.
        let plain = try DatabasePool(unencryptedPath: dir.path("plain.db"))
        try await plain.execute("CREATE TABLE t(a)")
        await plain.close()
        #expect(throws: SqlCipherError.self) { try DatabasePool(path: dir.path("plain.db"), key: "x") }
    }

    /// No error or description of a pool shows the key derived from the passphrase.
    @Test func theDerivedKeyNeverReachesAnErrorOrADescription() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("d.db")
        let pool = try DatabasePool(path: path, key: "secret words")
        try await pool.execute("CREATE TABLE t(a)")
        await pool.close()
        let salt = try Data(FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 16) ?? Data())
        let material = try KeyMaterial(passphrase: Array("secret words".utf8))
        guard case .derived(let derived) = try KeyDerivation.derivedKey(
            passphrase: material, path: path, settings: .default, library: SqlCipherLibrary.shared) else { return }
        let literal = derived.key.withBytes { String(decoding: $0, as: UTF8.self) }
        let keyHex = String(literal.dropFirst(2).prefix(64)).lowercased()
        #expect(derived.salt == salt)
        var texts: [String] = ["\(pool)", String(reflecting: pool)]
        do { _ = try DatabasePool(path: path, key: "wrong words") } catch { texts.append("\(error)"); texts.append(String(reflecting: error)) }
        do {
            let again = try DatabasePool(path: path, key: "secret words")
            do { try await again.execute("SELEC nonsense") } catch { texts.append("\(error)") }
            do { try await again.read { conn in try conn.execute("INSERT INTO t VALUES (1)") } } catch { texts.append("\(error)") }
            texts.append(String(reflecting: again))
            await again.close()
        }
        for text in texts {
            #expect(!text.lowercased().contains(keyHex), "\(text)")
            #expect(!text.contains("secret words"), "\(text)")
        }
    }

    /// A file in rollback mode is refused, also while a `Database` has it open, and is left in it.
    @Test func aRollbackFileIsRefusedAndLeftAsItWas() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("r.db")
        let db = try Database(path: path, rawKey: rawKey(), journalMode: .rollback)
        try await db.execute("CREATE TABLE t(a)")
        #expect(throws: SqlCipherError.self) { try DatabasePool(path: path, rawKey: rawKey()) }
        #expect(try await db.query("PRAGMA journal_mode")[0].get(0, as: String.self)?.lowercased() == "delete")
        await db.close()
        #expect(throws: SqlCipherError.self) { try DatabasePool(path: path, rawKey: rawKey()) }
        let check = try Database(path: path, rawKey: rawKey(), journalMode: .rollback)
        #expect(try await check.query("PRAGMA journal_mode")[0].get(0, as: String.self)?.lowercased() == "delete")
        await check.close()
    }

    /// Files created with non-default settings open in a pool with the same settings.
    @Test func poolsOnFilesWithOtherCipherSettings() async throws {
        let dir = TemporaryDirectory()
        var settings: [CipherSettings] = [CipherSettings(kdfIterations: 1000)]
        if isSQLCipher4() { settings.append(.sqlcipher3) }
        for (index, setting) in settings.enumerated() {
            let path = dir.path("s\(index).db")
            let db = try Database(path: path, key: "pw", cipher: setting)
            try await db.execute("CREATE TABLE t(a)")
            try await db.execute("INSERT INTO t VALUES (42)")
            await db.close()
            let pool = try DatabasePool(path: path, key: "pw", cipher: setting)
            #expect(try await pool.query("SELECT a FROM t")[0].get(0, as: Int.self) == 42)
            try await pool.execute("INSERT INTO t VALUES (43)")
            await pool.close()
            let again = try Database(path: path, key: "pw", cipher: setting)
            #expect(try await again.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 2)
            await again.close()
            #expect(throws: SqlCipherError.self) { try DatabasePool(path: path, key: "pX", cipher: setting) }
        }
    }

    /// A pool rekeyed to a passphrase (keyed internally with the key derived from it) leaves a
    /// file that SQLCipher's own derivation opens with that passphrase, and the old one fails.
    @Test func aPassphraseRekeyOpensWithThePassphraseElsewhere() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("rk.db")
        let pool = try DatabasePool(path: path, key: "old words")
        try await pool.execute("CREATE TABLE t(a)")
        try await pool.execute("INSERT INTO t VALUES (1)")
        try await pool.rekey("new words")
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await pool.close()
        let db = try Database(path: path, key: "new words")
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await db.close()
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "old words") }
    }

    /// A plaintext-header file: the pool needs the salt with the raw key, and every reader uses it.
    @Test(.enabled(if: isSQLCipher4(), "plaintext headers are SQLCipher 4 only")) func aPlaintextHeaderFileInAPool() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("ph.db")
        let settings = CipherSettings(plaintextHeaderSize: 32)
        let salt = Data((0..<16).map { UInt8($0) &+ 100 })
        let pool = try DatabasePool(path: path, rawKey: rawKey(), salt: salt, cipher: settings, maximumReaderCount: 3)
        try await pool.execute("CREATE TABLE t(a)")
        try await pool.execute("INSERT INTO t VALUES (1)")
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 { group.addTask { try await pool.read { conn in try conn.query("SELECT count(*) FROM t")[0].decode(0, as: Int.self) } } }
            for try await value in group { #expect(value == 1) }
        }
        try await pool.rekey(rawKey: rawKey(2))
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await pool.close()
        let header = try Data(FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 16) ?? Data())
        #expect(header == Data("SQLite format 3\0".utf8))
        let db = try Database(path: path, rawKey: rawKey(2), salt: salt, cipher: settings)
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await db.close()
    }

    // MARK: Close, rekey, cancellation

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
        // Lets the rekey reach its wait for the running read (the outcome asserted below holds
        // whichever comes first).
        try await Task.sleep(for: .milliseconds(200))
        await pool.close()
        release.signal()
        _ = try? await read.value
        let returned = await signalled(rekeyDone)
        #expect(returned, "the rekey never returned after close")
        if returned { await #expect(throws: SqlCipherError.databaseClosed) { try await rekey.value } }
    }

    /// A stream left open with one reader, then a rekey in another task, then the stream ended:
    /// the rekey finishes, and the stream's rows come from one key.
    @Test func rekeyWaitsForAStreamThenRuns() async throws {
        let dir = TemporaryDirectory()
        let pool = try await pool(dir, readers: 1)
        try await pool.transaction { conn in for value in 0..<600 { try conn.execute("INSERT INTO t(v) VALUES (?)", value) } }
        var iterator = pool.stream("SELECT v FROM t", batchSize: 10).makeAsyncIterator()
        _ = try await iterator.next()
        let rekey = Task { try await pool.rekey(rawKey: rawKey(3)) }
        var rows = 1
        while try await iterator.next() != nil { rows += 1 }
        #expect(rows == 601)
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
        // Lets the query reach its wait for the reader. Nothing outside the pool shows that wait
        // (no hook in Sources); cancelled earlier, it still throws CancellationError, so a loaded
        // machine weakens this test but cannot fail it wrongly.
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        release.signal()
        _ = try await holder.value
        #expect(try await count(pool) == 1)
        #expect(pool.openReaderCount == 1)
        await pool.close()
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

    // MARK: Live queries

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
            var seen = -1
            while seen != expected {
                guard let next = try await reader.next() else { break }
                seen = next
            }
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
            var seen = -1
            while seen != expected {
                guard let next = try await reader.next() else { break }
                seen = next
            }
            #expect(seen == expected, "round \(round)")
            if seen != expected { break }
        }
        await pool.close()
    }
}

let countOfT = LiveRequest(placeholder: -1) { conn in
    try conn.query("SELECT count(*) FROM t")[0].decode(0, as: Int.self)
}

struct PoolReviewRow: Codable, Sendable, Entity {
    static let tableName = TableName("t")
    static let primaryKey: WritableKeyPath<PoolReviewRow, Int64?> & Sendable = \.id
    var id: Int64?
    var v: Int
}

@Suite("Adversarial review: close racing a pool rekey")
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
