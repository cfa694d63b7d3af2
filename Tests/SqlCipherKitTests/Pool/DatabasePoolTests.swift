import Dispatch
import Foundation
import Synchronization
import Testing
@testable import SqlCipherKit

/// The CLI of the library under test.
private var cli: String { isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3 }

/// A pool on a new file with a table `t(id INTEGER PRIMARY KEY, v INTEGER)` holding `rows` rows.
private func makePool(_ dir: TemporaryDirectory, rows: Int = 0, maximumReaderCount: Int = 4) async throws -> DatabasePool {
    let pool = try DatabasePool(path: dir.path("pool.db"), rawKey: rawKey(), maximumReaderCount: maximumReaderCount)
    try await pool.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER)")
    if rows > 0 {
        try await pool.transaction { conn in
            for index in 0..<rows { try conn.execute("INSERT INTO t(v) VALUES (?)", index) }
        }
    }
    return pool
}

/// Waits on a semaphore at most `seconds`; false when it timed out. The 60 s bound only stops a
/// hang (a loaded machine can take seconds). Blocks its thread: from async code, ``signalled(_:seconds:)``.
func wait(_ semaphore: DispatchSemaphore, seconds: Double = 300) -> Bool {
    semaphore.wait(timeout: .now() + seconds) == .success
}

/// Whether `condition` held within `seconds`, looked at every millisecond: for a state the
/// package shows (a call waiting for a reader) that a test waits for instead of sleeping. The time
/// limit only stops a hang.
func reached(seconds: Double = 60, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// Waits for a semaphore on a dispatch thread, never blocking Swift's cooperative pool (whose
/// threads the pool's own calls need); false when it timed out.
func signalled(_ semaphore: DispatchSemaphore, seconds: Double = 300) async -> Bool {
    await withCheckedContinuation { continuation in
        // A thread of its own, not the global queue: see blockingOnAThreadOfItsOwn.
        Thread { continuation.resume(returning: wait(semaphore, seconds: seconds)) }.start()
    }
}

@Suite("DatabasePool")
struct DatabasePoolTests {
    @Test func readsAndWritesGoThroughTheSameMethodsAsADatabase() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir, rows: 10)
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 10)
        #expect(try await pool.execute("UPDATE t SET v = v + 1") == 10)
        let sum = try await pool.read { conn in try conn.query("SELECT sum(v) FROM t")[0].get(0, as: Int.self) }
        #expect(sum == 55)
        // Generic code written against DatabaseAccess works with both types.
        func total(_ db: some DatabaseAccess) async throws -> Int? {
            try await db.query("SELECT sum(v) FROM t")[0].get(0, as: Int.self)
        }
        #expect(try await total(pool) == 55)
        await pool.close()
        let db = try Database(path: dir.path("pool.db"), rawKey: rawKey())
        #expect(try await total(db) == 55)
    }

    @Test func readersAreOpenedLazilyAndReused() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir, rows: 3, maximumReaderCount: 4)
        #expect(pool.openReaderCount == 0)
        for _ in 0..<20 { _ = try await pool.query("SELECT * FROM t") }
        // Sequential reads reuse the most recently used reader.
        #expect(pool.openReaderCount == 1)
        await pool.close()
    }

    @Test func aReadTransactionKeepsItsSnapshotWhileAWriteCommits() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir, rows: 5)
        let firstRead = DispatchSemaphore(value: 0)
        let written = DispatchSemaphore(value: 0)
        async let counts: (Int, Int, Bool) = pool.read { conn in
            let before = try conn.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) ?? -1
            firstRead.signal()
            let committed = wait(written)
            let after = try conn.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) ?? -1
            return (before, after, committed)
        }
        #expect(await signalled(firstRead))
        try await pool.execute("INSERT INTO t(v) VALUES (100)")
        written.signal()
        let (before, after, committed) = try await counts
        #expect(committed)
        #expect(before == 5)
        #expect(after == 5, "the read transaction saw a commit made during it")
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 6)
        await pool.close()
    }

    /// SQLCipher does not encrypt temporary files: the writer, a reader and a reader reopened after
    /// a rekey all keep sorts and temporary tables in memory (`temp_store` 2, MEMORY), as a
    /// `Database` does (Reliability/LeakTests watches what a `Database` writes).
    @Test func everyConnectionKeepsTemporaryDataInMemory() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir, rows: 1)
        let writer = try await pool.transaction { conn in try conn.query("PRAGMA temp_store")[0].get(0, as: Int.self) }
        let reader = try await pool.read { conn in try conn.query("PRAGMA temp_store")[0].get(0, as: Int.self) }
        try await pool.rekey(rawKey: rawKey(9))
        let reopened = try await pool.read { conn in try conn.query("PRAGMA temp_store")[0].get(0, as: Int.self) }
        #expect([writer, reader, reopened] == [2, 2, 2])
        await pool.close()
    }

    @Test func readsRunWhileTheWriterIsHeldByATransaction() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir, rows: 5)
        let writing = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let write = Task {
            try await pool.transaction { conn in
                try conn.execute("INSERT INTO t(v) VALUES (1)")
                writing.signal()
                // Holds the writer until the reads below are done (or 20 s: then they waited).
                return wait(release)
            }
        }
        #expect(await signalled(writing))
        for _ in 0..<10 {
            #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 5)
        }
        let snapshot = try await pool.read { conn in try conn.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) }
        #expect(snapshot == 5)
        release.signal()
        #expect(try await write.value, "the reads waited for the writer")
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 6)
        await pool.close()
    }

    @Test func aHundredConcurrentReadsRespectTheReaderLimit() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir, rows: 50, maximumReaderCount: 3)
        let counters = Counters()
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    try await pool.read { conn in
                        let now = counters.active.add(1, ordering: .relaxed).newValue
                        counters.peak.max(now, ordering: .relaxed)
                        defer { counters.active.subtract(1, ordering: .relaxed) }
                        usleep(2000)  // makes reads overlap; the limit must hold however they overlap
                        return try conn.query("SELECT sum(v) FROM t")[0].get(0, as: Int.self) ?? -1
                    }
                }
            }
            var all: [Int] = []
            for try await value in group { all.append(value) }
            return all
        }
        #expect(results.count == 100)
        #expect(results.allSatisfy { $0 == (0..<50).reduce(0, +) })
        #expect(counters.peak.load(ordering: .relaxed) <= 3)
        #expect(counters.peak.load(ordering: .relaxed) >= 2, "reads did not run concurrently")
        #expect(pool.openReaderCount <= 3)
        await pool.close()
    }

    @Test func readsRefuseWritesAndWritingQueriesGoToTheWriter() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir, rows: 1)
        await #expect(throws: SqlCipherError.readOnlyViolation(sql: "INSERT INTO t(v) VALUES (2)")) {
            try await pool.read { conn in try conn.execute("INSERT INTO t(v) VALUES (2)") }
        }
        // query() of a statement that writes runs on the writer rather than failing.
        _ = try await pool.query("INSERT INTO t(v) VALUES (3)")
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 2)
        // query_only backs up the refusal even for a pragma that turns it off.
        await #expect(throws: (any Error).self) {
            try await pool.read { conn in
                _ = try conn.query("PRAGMA query_only = 0")
                return try conn.execute("INSERT INTO t(v) VALUES (4)")
            }
        }
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 2)
        await pool.close()
    }

    @Test func aFileInRollbackModeOrInMemoryIsRefused() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("rollback.db")
        let db = try Database(path: path, rawKey: rawKey(), journalMode: .rollback)
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: SqlCipherError.poolRequiresWAL(path: path, journalMode: "delete")) {
            try DatabasePool(path: path, rawKey: rawKey())
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "refusing changed the file")
        let message = SqlCipherError.poolRequiresWAL(path: path, journalMode: "delete").description
        #expect(message.contains("PRAGMA journal_mode = WAL"))
        #expect(throws: SqlCipherError.poolRequiresWAL(path: ":memory:", journalMode: "memory")) {
            try DatabasePool(path: ":memory:", rawKey: rawKey())
        }
        // Converting as the message says makes the pool open.
        let convert = try Database(path: path, rawKey: rawKey())
        try await convert.execute("PRAGMA journal_mode = WAL")
        await convert.close()
        let pool = try DatabasePool(path: path, rawKey: rawKey())
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 0)
        await pool.close()
    }

    /// A pool's readers read beside its writer only in WAL mode, which the pool proves at open;
    /// `PRAGMA journal_mode = DELETE` as raw SQL took its writer (and the file) out of it, and the
    /// pool went on as if nothing had changed. Every mode but WAL is refused on every connection
    /// of a pool, however it is spelled; reading the mode and setting WAL stay allowed, and so does
    /// any mode of an attached schema.
    @Test func aPoolRefusesToLeaveWALMode() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pool.db")
        let pool = try DatabasePool(path: path, rawKey: rawKey())
        try await pool.execute("CREATE TABLE t(x)")
        for statement in ["PRAGMA journal_mode = DELETE", "pragma JOURNAL_MODE='memory'", "PRAGMA main.journal_mode = off",
                          "PRAGMA journal_mode(truncate)", "PRAGMA journal_mode = persist"] {
            await #expect(performing: { try await pool.execute(statement) }, throws: { error in
                guard case SqlCipherError.unsafePragma(let name, _, _) = error else { return false }
                return name.lowercased() == "journal_mode" && "\(error)".contains("Database(path:key:journalMode:)")
            })
            await #expect(throws: SqlCipherError.self) { try await pool.transaction { conn in try conn.execute(statement) } }
            await #expect(throws: SqlCipherError.self) { try await pool.read { conn in _ = try conn.query(statement) } }
        }
        #expect(try await pool.query("PRAGMA journal_mode")[0].get(0, as: String.self) == "wal")
        #expect(try await pool.query("PRAGMA journal_mode = WAL")[0].get(0, as: String.self) == "wal")
        // An attached file's modes are its own: the readers never read it. Refused too until the
        // review of stop 41 (the rule looked at the pragma, not at its schema).
        try await pool.execute("ATTACH ? AS aux KEY ?", dir.path("aux.db"), "aux key")
        // On the writer, which holds the attachment (a pool's `query` reads on a reader).
        let mode = try await pool.transaction { conn in
            try conn.query("PRAGMA aux.journal_mode = DELETE")[0].get(0, as: String.self)
        }
        #expect(mode == "delete")
        await #expect(throws: SqlCipherError.self) { try await pool.execute("PRAGMA journal_mode = DELETE") }
        try await pool.execute("DETACH aux")
        try await pool.execute("INSERT INTO t VALUES (1)")
        #expect(try await pool.read { conn in try conn.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) } == 1)
        await pool.close()
        let reopened = try DatabasePool(path: path, rawKey: rawKey())
        #expect(reopened.journalMode == .wal)
        await reopened.close()
    }

    /// `PRAGMA locking_mode = EXCLUSIVE` in a pool's prepareConnection, where the refusal of it as
    /// raw SQL sent it, was run (found by the review): the writer kept its lock on the file from
    /// its first write on, and every read of the readers failed with "database is locked". It is
    /// refused there, with what to do; `NORMAL` stays allowed in prepareConnection.
    @Test func aPoolRefusesExclusiveLocking() async throws {
        let dir = TemporaryDirectory()
        let refusesExclusive: @Sendable (any Error) -> Bool = { error in
            guard case SqlCipherError.unsafePragma(let name, _, _) = error else { return false }
            return name.lowercased() == "locking_mode" && "\(error)".contains("database is locked")
        }
        for statement in ["PRAGMA locking_mode = EXCLUSIVE", "pragma main.LOCKING_MODE = 'exclusive'"] {
            var configuration = DatabaseConfiguration()
            configuration.prepareConnection = { conn in _ = try conn.query(statement) }
            #expect(performing: { try DatabasePool(path: dir.path("p.db"), rawKey: rawKey(), configuration: configuration) },
                    throws: refusesExclusive)
        }
        var normal = DatabaseConfiguration()
        normal.prepareConnection = { conn in _ = try conn.query("PRAGMA locking_mode = NORMAL") }
        let pool = try DatabasePool(path: dir.path("p.db"), rawKey: rawKey(), configuration: normal)
        try await pool.execute("CREATE TABLE t(x)")
        try await pool.execute("INSERT INTO t VALUES (1)")
        // As raw SQL it is refused as every per-connection pragma is.
        await #expect(throws: SqlCipherError.self) { try await pool.execute("PRAGMA locking_mode = EXCLUSIVE") }
        #expect(try await pool.read { conn in try conn.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) } == 1)
        await pool.close()
    }

    @Test func aWrongKeyIsRefused() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir, rows: 1)
        await pool.close()
        #expect(throws: SqlCipherError.self) {
            try DatabasePool(path: dir.path("pool.db"), rawKey: rawKey(9))
        }
        #expect(throws: SqlCipherError.self) {
            try DatabasePool(path: dir.path("pool.db"), key: "not the key")
        }
        #expect(throws: SqlCipherError.self) {
            try DatabasePool(path: dir.path("pool.db"), rawKey: rawKey(), maximumReaderCount: 0)
        }
    }

    @Test func closeEndsEveryConnectionAndLaterCallsThrow() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir, rows: 20, maximumReaderCount: 2)
        let started = DispatchSemaphore(value: 0)
        let inFlight = Task {
            try await pool.read { conn in
                started.signal()
                usleep(200_000)  // keeps the read in flight during close(); it must finish either way
                return try conn.query("SELECT count(*) FROM t")[0].get(0, as: Int.self)
            }
        }
        #expect(await signalled(started))
        await pool.close()
        await pool.close()
        // The read in flight finished on its reader.
        #expect(try await inFlight.value == 20)
        await #expect(throws: SqlCipherError.databaseClosed) { try await pool.query("SELECT 1") }
        await #expect(throws: SqlCipherError.databaseClosed) { try await pool.execute("DELETE FROM t") }
        await #expect(throws: SqlCipherError.databaseClosed) {
            try await pool.read { conn in try conn.query("SELECT 1") }
        }
        #expect(pool.isClosed)
        // The message names the pool too: it said "Open a new Database" to pool users.
        #expect(SqlCipherError.databaseClosed.description.contains("new Database or DatabasePool"))
        // Every connection is gone: the file is no longer locked and opens afresh.
        let db = try Database(path: dir.path("pool.db"), rawKey: rawKey())
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 20)
    }

    @Test func aCancelledWaitForAReaderThrowsAndLeavesNothingBehind() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir, rows: 1, maximumReaderCount: 1)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Task {
            try await pool.read { _ in
                holding.signal()
                return wait(release)
            }
        }
        #expect(await signalled(holding))
        let waiter = Task { try await pool.query("SELECT 1") }
        // Lets the query reach its wait for the reader. Nothing outside the pool shows that wait
        // (no hook in Sources); cancelled earlier, it still throws CancellationError, so a loaded
        // machine weakens this test but cannot fail it wrongly.
        try await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        release.signal()
        #expect(try await holder.value)
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await pool.close()
    }

    @Test func streamsReadOnAReaderAndGiveItBack() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir, rows: 1000, maximumReaderCount: 1)
        var seen = 0
        for try await row in pool.stream("SELECT v FROM t ORDER BY id", batchSize: 100) {
            #expect(row.get(0, as: Int.self) == seen)
            seen += 1
        }
        #expect(seen == 1000)
        // A stream left early gives its reader back: with one reader, later reads still run.
        for try await _ in pool.stream("SELECT v FROM t") { break }
        for _ in 0..<3 {
            #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1000)
        }
        // Writes run while a stream is open, and the stream goes on reading its own snapshot.
        var iterator = pool.stream("SELECT v FROM t", batchSize: 10).makeAsyncIterator()
        var streamed = 0
        if try await iterator.next() != nil { streamed += 1 }
        try await pool.execute("DELETE FROM t WHERE id > 10")
        while try await iterator.next() != nil { streamed += 1 }
        #expect(streamed == 1000)
        #expect(try await pool.fetchCount() == 10)
        await pool.close()
    }

    @Test func aPoolFileOpensWithTheCLIAndACLIFileOpensInAPool() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pool.db")
        let pool = try DatabasePool(path: path, key: "pool passphrase")
        try await pool.execute("CREATE TABLE t(x TEXT)")
        try await pool.execute("INSERT INTO t VALUES ('from the pool')")
        _ = try await pool.read { conn in try conn.query("SELECT * FROM t") }
        await pool.close()
        let lines = try SqlcipherCLI.run(cli, path, [SqlcipherCLI.keyPragma(passphrase: "pool passphrase"), "SELECT x FROM t"])
        #expect(lines == ["from the pool"])

        let cliPath = dir.path("cli.db")
        _ = try SqlcipherCLI.run(cli, cliPath, [
            SqlcipherCLI.keyPragma(passphrase: "cli passphrase"), "PRAGMA journal_mode = WAL",
            "CREATE TABLE u(y)", "INSERT INTO u VALUES ('from the cli')",
        ])
        let opened = try DatabasePool(path: cliPath, key: "cli passphrase")
        #expect(try await opened.query("SELECT y FROM u")[0].get(0, as: String.self) == "from the cli")
        await opened.close()
        #expect(throws: SqlCipherError.self) { try DatabasePool(path: cliPath, key: "wrong passphrase") }
    }

    @Test func rekeyWaitsForReadsAndEveryReaderUsesTheNewKey() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pool.db")
        let pool = try DatabasePool(path: path, key: "old passphrase", cipher: CipherSettings(kdfIterations: 4000))
        try await pool.execute("CREATE TABLE t(v)")
        try await pool.execute("INSERT INTO t VALUES (1), (2), (3)")
        let counters = Counters()
        // `peak` counts the reads done; `active` set to 1 stops them.
        let reads = Task { () async throws -> Int in
            var done = 0
            while counters.active.load(ordering: .relaxed) == 0 {
                let count = try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self)
                #expect(count == 3)
                done += 1
                counters.peak.store(done, ordering: .relaxed)
            }
            return done
        }
        // Handshakes instead of sleeps: reads run before the rekey starts, and again after it.
        func readsPassed(_ count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(60)  // only stops a hang
            while counters.peak.load(ordering: .relaxed) < count && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        try await readsPassed(1)
        try await pool.rekey("new passphrase")
        try await readsPassed(counters.peak.load(ordering: .relaxed) + 2)
        counters.active.store(1, ordering: .relaxed)
        #expect(try await reads.value > 2)
        // Readers opened after the rekey use the new key.
        try await withThrowingTaskGroup(of: Int?.self) { group in
            for _ in 0..<8 { group.addTask { try await pool.query("SELECT sum(v) FROM t")[0].get(0, as: Int.self) } }
            for try await sum in group { #expect(sum == 6) }
        }
        await pool.close()
        let settings = ["PRAGMA kdf_iter = 4000"]
        #expect(try SqlcipherCLI.run(cli, path, [SqlcipherCLI.keyPragma(passphrase: "new passphrase")] + settings
            + ["SELECT count(*) FROM t"]) == ["3"])
        #expect(throws: (any Error).self) {
            try SqlcipherCLI.run(cli, path, [SqlcipherCLI.keyPragma(passphrase: "old passphrase")] + settings
                + ["SELECT count(*) FROM t"])
        }
    }
}

/// Counters shared by concurrent tasks of a test.
private final class Counters: Sendable {
    let active = Atomic<Int>(0)
    let peak = Atomic<Int>(0)
}

extension DatabasePool {
    /// The rows of `t`, for the tests above.
    fileprivate func fetchCount() async throws -> Int? {
        try await query("SELECT count(*) FROM t")[0].get(0, as: Int.self)
    }
}

@Suite("DatabasePool key derivation")
struct DatabasePoolKeyDerivationTests {
    /// Opens four readers at once: each read waits until all four run.
    private func readOnFourReaders(_ pool: DatabasePool) async throws {
        let counters = Counters()
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await pool.read { conn in
                        _ = try conn.query("SELECT count(*) FROM sqlite_master")
                        counters.active.add(1, ordering: .relaxed)
                        let deadline = Date().addingTimeInterval(60)  // only stops a hang
                        while counters.active.load(ordering: .relaxed) < 4 && Date() < deadline { usleep(1000) }
                        return counters.active.load(ordering: .relaxed) >= 4
                    }
                }
            }
            for try await allRan in group { #expect(allRan) }
        }
    }

    @Test(arguments: [CipherSettings.default, CipherSettings(kdfIterations: 12_000), CipherSettings.sqlcipher3])
    func onePassphrasePoolDerivesTheKeyOnceForEveryConnection(cipher: CipherSettings) async throws {
        if cipher.compatibility == 3 && !isSQLCipher4() { return }  // 3.4.1 has only its own format
        KeyDerivation.recordDerivationsByPath()
        let dir = TemporaryDirectory()
        let path = dir.path("derive.db")
        let pool = try DatabasePool(path: path, key: "one derivation", cipher: cipher)
        #expect(pool.derivationFallback == nil)
        try await pool.execute("CREATE TABLE t(x)")
        try await readOnFourReaders(pool)
        #expect(pool.openReaderCount == 4)
        #expect(KeyDerivation.derivationCount(path: path) == 1)
        #expect(KeyDerivation.passphraseKeyingCount(path: path) == 0, "a connection ran SQLCipher's derivation")
        await pool.close()

        // Opening the existing file again: one more derivation, from the salt in the file.
        let again = try DatabasePool(path: path, key: "one derivation", cipher: cipher)
        try await readOnFourReaders(again)
        #expect(KeyDerivation.derivationCount(path: path) == 2)
        #expect(KeyDerivation.passphraseKeyingCount(path: path) == 0)
        await again.close()

        // The real CLI opens the pool's file with the passphrase and the same settings.
        var settings: [String] = []
        if let compatibility = cipher.compatibility { settings.append("PRAGMA cipher_compatibility = \(compatibility)") }
        if let iterations = cipher.kdfIterations { settings.append("PRAGMA kdf_iter = \(iterations)") }
        let cli = isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3
        let lines = try SqlcipherCLI.run(cli, path, [SqlcipherCLI.keyPragma(passphrase: "one derivation")] + settings
            + ["SELECT count(*) FROM sqlite_master"])
        #expect(lines == ["1"])
        // A wrong passphrase still fails, after SQLCipher's own derivation confirms it.
        #expect(throws: SqlCipherError.self) { try DatabasePool(path: path, key: "wrong", cipher: cipher) }
    }

    @Test func rekeyDerivesTheNewKeyOnceAndTheKeyIsWipedAtClose() async throws {
        KeyDerivation.recordDerivationsByPath()
        let dir = TemporaryDirectory()
        let path = dir.path("rekey.db")
        let pool = try DatabasePool(path: path, key: "first", cipher: CipherSettings(kdfIterations: 8000))
        try await pool.execute("CREATE TABLE t(x)")
        try await pool.rekey("second")
        try await readOnFourReaders(pool)
        #expect(KeyDerivation.derivationCount(path: path) == 2)
        #expect(KeyDerivation.passphraseKeyingCount(path: path) == 0)
        await pool.close()
        #expect(throws: SqlCipherError.databaseClosed) { try pool.key?.material() }
        let db = try Database(path: path, key: "second", cipher: CipherSettings(kdfIterations: 8000))
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 0)
    }
}

@Suite("DatabasePool extensions")
struct DatabasePoolExtensionTests {
    @Test func functionsAndCollationsReachEveryReaderAndTracesNameTheConnection() async throws {
        let dir = TemporaryDirectory()
        let pool = try DatabasePool(path: dir.path("ext.db"), rawKey: rawKey(), maximumReaderCount: 3)
        try await pool.execute("CREATE TABLE t(name TEXT)")
        try await pool.execute("INSERT INTO t VALUES ('b'), ('A'), ('c')")
        // Readers opened before the registration pick it up at their next statement.
        _ = try await pool.query("SELECT 1")
        try await pool.add(function: DatabaseFunction("twice", deterministic: true) { (x: String) in x + x })
        try await pool.add(collation: DatabaseCollation("nocase_rev") { a, b in
            let (x, y) = (a.lowercased(), b.lowercased())
            return x == y ? .orderedSame : (x < y ? .orderedDescending : .orderedAscending)
        })
        let events = TraceCollector()
        let token = try await pool.trace { events.append($0) }
        try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<6 {
                group.addTask {
                    try await pool.read { conn in
                        try conn.query("SELECT twice(name) FROM t ORDER BY name COLLATE nocase_rev")
                            .compactMap { $0.get(0, as: String.self) }
                    }
                }
            }
            for try await names in group { #expect(names == ["cc", "bb", "AA"]) }
        }
        try await pool.execute("INSERT INTO t VALUES (twice('d'))")
        token.cancel()
        let seen = events.all
        #expect(seen.contains { $0.connection == .reader && $0.sql.contains("twice(name)") })
        #expect(seen.contains { $0.connection == .writer && $0.sql.contains("INSERT INTO t") })
        #expect(!seen.contains { $0.connection == .reader && $0.sql.contains("INSERT") })
        await pool.close()
    }
}

extension DatabasePoolExtensionTests {
    /// A rekey closes every reader and opens new ones with the new key: the pool's functions and
    /// collations reach those too, each of several readers held at once (a handshake keeps them
    /// all busy), and a function removed afterwards is gone from every one of them.
    @Test func functionsAndCollationsReachReadersReopenedAfterARekey() async throws {
        let dir = TemporaryDirectory()
        let pool = try DatabasePool(path: dir.path("rekeyed.db"), key: "before", maximumReaderCount: 3)
        try await pool.execute("CREATE TABLE t(name TEXT)")
        try await pool.execute("INSERT INTO t VALUES ('b'), ('A'), ('c')")
        try await pool.add(function: DatabaseFunction("twice", deterministic: true) { (x: String) in x + x })
        try await pool.add(collation: DatabaseCollation("nocase_rev") { a, b in
            let (x, y) = (a.lowercased(), b.lowercased())
            return x == y ? .orderedSame : (x < y ? .orderedDescending : .orderedAscending)
        })
        func onEveryReader(_ sql: String) async throws -> [Result<[String], any Error>] {
            let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            return try await withThrowingTaskGroup(of: Result<[String], any Error>.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        do {
                            return .success(try await pool.read { conn in
                                started.signal()
                                _ = release.wait(timeout: .now() + 300)
                                return try conn.query(sql).compactMap { $0.get(0, as: String.self) }
                            })
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                // Waited for off the cooperative pool: the reads need its threads to reach their readers.
                for _ in 0..<3 { #expect(await signalled(started)) }
                for _ in 0..<3 { release.signal() }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        let query = "SELECT twice(name) FROM t ORDER BY name COLLATE nocase_rev"
        _ = try await onEveryReader(query)
        try await pool.rekey("after")
        let answers = try await onEveryReader(query)
        #expect(pool.openReaderCount == 3)
        for answer in answers { #expect((try? answer.get()) == ["cc", "bb", "AA"], "\(answer)") }
        try await pool.remove(function: DatabaseFunction("twice", deterministic: true) { (x: String) in x })
        for answer in try await onEveryReader("SELECT twice('x')") {
            #expect((try? answer.get()) == nil, "a removed function still ran on a reader: \(answer)")
        }
        await pool.close()
    }
}

/// Trace events gathered from any thread.
final class TraceCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [TraceEvent] = []
    func append(_ event: TraceEvent) { lock.withLock { events.append(event) } }
    var all: [TraceEvent] { lock.withLock { events } }
}
