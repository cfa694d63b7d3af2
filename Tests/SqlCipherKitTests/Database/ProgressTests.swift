import Foundation
import SqlCipherKit
import Synchronization
import Testing

/// Progress reports and cancellation of the long operations: encrypt, encryptInPlace, export,
/// exportDecrypted, upgradeFromSqlCipher3, rekey, verifyIntegrity.
@Suite struct ProgressTests {
    /// Rows enough for a file of several megabytes: the copies run long enough to be stopped.
    static let rows = 30_000

    /// Collects reports; cancels the task it is called on at the first report when asked.
    final class Recorder: Sendable {
        let reports = Mutex<[DatabaseProgress]>([])
        /// Cancels the task at the first report for which this is true.
        let cancelWhen: @Sendable (DatabaseProgress) -> Bool
        init(cancelAtFirst: Bool = false) {
            let cancel = cancelAtFirst
            self.cancelWhen = { _ in cancel }
        }
        init(cancelWhen: @escaping @Sendable (DatabaseProgress) -> Bool) { self.cancelWhen = cancelWhen }

        var closure: @Sendable (DatabaseProgress) -> Void {
            { progress in
                let cancel = self.reports.withLock { reports -> Bool in
                    let cancelledBefore = reports.contains(where: self.cancelWhen)
                    reports.append(progress)
                    return !cancelledBefore && self.cancelWhen(progress)
                }
                if cancel { withUnsafeCurrentTask { $0?.cancel() } }
            }
        }

        var all: [DatabaseProgress] { reports.withLock { $0 } }

        /// Checks: starts at 0, never goes down, one total and unit, ends at the total.
        func expectComplete(total: Int64? = nil, unit: DatabaseProgress.Unit,
                            sourceLocation: SourceLocation = #_sourceLocation) {
            let reports = all
            guard let first = reports.first, let last = reports.last else {
                Issue.record("no progress reported", sourceLocation: sourceLocation)
                return
            }
            #expect(first.completed == 0, sourceLocation: sourceLocation)
            #expect(last.completed == last.total, sourceLocation: sourceLocation)
            #expect(last.total > 0, sourceLocation: sourceLocation)
            if let total { #expect(last.total == total, sourceLocation: sourceLocation) }
            #expect(reports.allSatisfy { $0.total == last.total && $0.unit == unit }, sourceLocation: sourceLocation)
            #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completed < $1.completed },
                    "\(reports.map(\.completed))", sourceLocation: sourceLocation)
            // Only the last report reaches the total.
            #expect(reports.dropLast().allSatisfy { $0.completed < $0.total }, sourceLocation: sourceLocation)
        }
    }

    func makePlaintext(_ path: String, mode: JournalMode = .rollback) async throws {
        let db = try Database(unencryptedPath: path, journalMode: mode)
        try await fill(db, rows: Self.rows, marker: "PLAIN-MARKER")
        await db.close()
    }

    func makeEncrypted(_ path: String, mode: JournalMode = .wal) async throws -> Database {
        let db = try Database(path: path, key: "progress", journalMode: mode, cipher: fastCipher)
        try await fill(db, rows: Self.rows)
        return db
    }

    func pageCount(_ db: Database) async throws -> Int64 {
        try await db.query("PRAGMA page_count")[0].decode(0, as: Int64.self)
    }

    func files(in dir: TemporaryDirectory) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: dir.url.path)) ?? [])
    }

    // MARK: Reports

    @Test func exportAndExportDecryptedReportPagesUpToTheTotal() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeEncrypted(dir.path("source.db"))
        let pages = try await pageCount(db)
        let encrypted = Recorder()
        try await db.export(to: dir.path("copy.db"), key: "other", cipher: fastCipher, progress: encrypted.closure)
        encrypted.expectComplete(total: pages, unit: .pages)
        let plain = Recorder()
        try await db.exportDecrypted(to: dir.path("plain.db"), progress: plain.closure)
        plain.expectComplete(total: pages, unit: .pages)
        let copy = try Database(path: dir.path("copy.db"), key: "other", cipher: fastCipher)
        #expect(try await countRows(copy) == Self.rows)
    }

    @Test func encryptAndEncryptInPlaceReportPagesUpToTheTotal() async throws {
        let dir = TemporaryDirectory()
        let source = dir.path("plain.db")
        try await makePlaintext(source)
        let plain = try Database(unencryptedPath: source)
        let pages = try await pageCount(plain)
        await plain.close()

        let copy = Recorder()
        try Database.encrypt(plaintextAt: source, to: dir.path("enc.db"), key: "k", cipher: fastCipher, progress: copy.closure)
        copy.expectComplete(total: pages, unit: .pages)

        let inPlace = Recorder()
        try Database.encryptInPlace(path: source, key: "k", cipher: fastCipher, progress: inPlace.closure)
        inPlace.expectComplete(total: pages, unit: .pages)
        let db = try Database(path: source, key: "k", cipher: fastCipher)
        #expect(try await countRows(db) == Self.rows)
    }

    @Test(arguments: [JournalMode.rollback, .wal])
    func rekeyReportsThePagesItRewrites(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("rekey.db")
        let db = try await makeEncrypted(path, mode: mode)
        let pages = try await pageCount(db)
        let recorder = Recorder()
        try await db.rekey("new key", progress: recorder.closure)
        recorder.expectComplete(total: pages, unit: .pages)
        // The rewrite was watched: at least one report between the start and the end.
        #expect(recorder.all.count >= 3, "\(recorder.all.map(\.completed))")
        await db.close()
        #expect(try await countRows(try Database(path: path, key: "new key", cipher: fastCipher)) == Self.rows)
    }

    @Test func verifyIntegrityReportsChecks() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeEncrypted(dir.path("check.db"))
        let recorder = Recorder()
        let report = try await db.verifyIntegrity(progress: recorder.closure)
        #expect(report.isOK)
        recorder.expectComplete(total: Int64(report.checksRun.count), unit: .checks)
        #expect(recorder.all.map(\.completed) == Array(0...Int64(report.checksRun.count)))
    }

    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func upgradeReportsTheStartAndTheEnd() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("old.db")
        let old = try Database(path: path, key: "legacy", cipher: .sqlcipher3)
        try await fill(old, rows: 2_000)
        let pages = try await pageCount(old)
        await old.close()
        let recorder = Recorder()
        try Database.upgradeFromSqlCipher3(path: path, key: "legacy", progress: recorder.closure)
        recorder.expectComplete(total: pages, unit: .pages)
        #expect(try await countRows(try Database(path: path, key: "legacy")) == 2_000)
    }

    @Test func theDoctorsVerifierReportsChecks() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("verify.db")
        let db = try await makeEncrypted(path, mode: .rollback)
        await db.close()
        let library = try loadedLibrary()
        let recorder = Recorder()
        let result = DatabaseVerifier.verify(path, key: "progress", candidates: try DatabaseVerifier.candidates(for: library, given: fastCipher),
                                             library: library, progress: recorder.closure)
        #expect(result.ok)
        recorder.expectComplete(total: isSQLCipher4() ? 3 : 2, unit: .checks)
    }

    // MARK: Cancellation

    @Test func aCancelledExportLeavesNoTargetAndTheDatabaseUsable() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("source.db")
        let db = try await makeEncrypted(path, mode: .rollback)
        let before = try #require(FileManager.default.contents(atPath: path))
        let filesBefore = files(in: dir)
        for decrypted in [false, true] {
            let recorder = Recorder(cancelAtFirst: true)
            let target = dir.path("copy.db")
            let task = Task {
                if decrypted {
                    try await db.exportDecrypted(to: target, progress: recorder.closure)
                } else {
                    try await db.export(to: target, key: "other", cipher: fastCipher, progress: recorder.closure)
                }
            }
            let result = await task.result
            #expect(throws: CancellationError.self) { try result.get() }
            #expect(recorder.all.last.map { $0.completed < $0.total } == true)
            #expect(files(in: dir) == filesBefore)
            #expect(FileManager.default.contents(atPath: path) == before)
        }
        // Usable afterwards: reads, writes, and a complete export.
        #expect(try await countRows(db) == Self.rows)
        try await db.execute("INSERT INTO t(body) VALUES ('after')")
        try await db.export(to: dir.path("copy.db"), key: "other", cipher: fastCipher)
        #expect(try await countRows(try Database(path: dir.path("copy.db"), key: "other", cipher: fastCipher)) == Self.rows + 1)
    }

    @Test(arguments: [JournalMode.rollback, .wal])
    func aCancelledEncryptInPlaceLeavesTheOriginalByteForByte(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("plain.db")
        try await makePlaintext(path, mode: mode)
        let before = try #require(FileManager.default.contents(atPath: path))
        let filesBefore = files(in: dir)
        let recorder = Recorder(cancelAtFirst: true)
        let task = Task { try Database.encryptInPlace(path: path, key: "k", cipher: fastCipher, progress: recorder.closure) }
        let result = await task.result
        #expect(throws: CancellationError.self) { _ = try result.get() }
        #expect(FileManager.default.contents(atPath: path) == before)
        #expect(files(in: dir) == filesBefore)

        // A cancelled encrypt leaves no target either.
        let copy = Recorder(cancelAtFirst: true)
        let encrypt = Task { try Database.encrypt(plaintextAt: path, to: dir.path("enc.db"), key: "k", progress: copy.closure) }
        await #expect(throws: CancellationError.self) { try await encrypt.value }
        #expect(files(in: dir) == filesBefore)

        // The original still works, and can then be encrypted.
        let plain = try Database(unencryptedPath: path)
        #expect(try await countRows(plain) == Self.rows)
        await plain.close()
        try Database.encryptInPlace(path: path, key: "k", cipher: fastCipher)
        #expect(try await countRows(try Database(path: path, key: "k", cipher: fastCipher)) == Self.rows)
    }

    @Test func aCancelledVerifyIntegrityThrowsAndTheDatabaseStaysUsable() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeEncrypted(dir.path("check.db"))
        let recorder = Recorder(cancelAtFirst: true)
        let task = Task { try await db.verifyIntegrity(progress: recorder.closure) }
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(recorder.all.map(\.completed) == [0])  // stopped before the first check was reported
        #expect(try await db.verifyIntegrity().isOK)
        #expect(try await countRows(db) == Self.rows)
    }

    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func aCancelledUpgradeLeavesTheOriginal() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("old.db")
        let old = try Database(path: path, key: "legacy", journalMode: .rollback, cipher: .sqlcipher3)
        try await fill(old, rows: Self.rows)
        await old.close()
        let before = try #require(FileManager.default.contents(atPath: path))
        let filesBefore = files(in: dir)
        let recorder = Recorder(cancelAtFirst: true)
        let task = Task { try Database.upgradeFromSqlCipher3(path: path, key: "legacy", progress: recorder.closure) }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(FileManager.default.contents(atPath: path) == before)
        #expect(files(in: dir) == filesBefore)
        #expect(try await countRows(try Database(path: path, key: "legacy", cipher: .sqlcipher3)) == Self.rows)
    }

    /// Cancelled at the first report after the start: the rewrite has begun, and stops at its next
    /// page read. A cache of 10 pages makes SQLite spill rewritten pages early (to the file in
    /// rollback mode, to the WAL in WAL mode), so the rollback has real work to undo.
    @Test(arguments: [JournalMode.rollback, .wal], [false, true])
    func aRekeyCancelledMidwayLeavesTheFileWithItsOldKeyAndContents(mode: JournalMode, smallCache: Bool) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("rekey.db")
        let db = try await makeEncrypted(path, mode: mode)
        if smallCache { try await db.execute("PRAGMA cache_size = 10") }
        if mode == .wal { _ = try await db.query("PRAGMA wal_checkpoint(TRUNCATE)") }
        let pages = try await pageCount(db)
        let before = try #require(FileManager.default.contents(atPath: path))
        let recorder = Recorder(cancelWhen: { $0.completed > 0 })
        let task = Task { try await db.rekey("new key", progress: recorder.closure) }
        await #expect(throws: CancellationError.self) { try await task.value }
        let reports = recorder.all.map(\.completed)
        #expect(reports.count >= 2 && reports.allSatisfy { $0 < pages }, "\(reports) of \(pages)")

        // SQLCipher leaves the connection's keys half-changed: the Database closed itself.
        #expect(await db.isClosed)
        await #expect(throws: SqlCipherError.databaseClosed) { _ = try await db.query("SELECT 1") }
        // Rolled back at once: no journal is left for the next connection to replay. Pages that
        // the small cache spilled into the file in rollback mode come back from the journal,
        // where SQLCipher stores them encrypted again with the old key and a fresh IV: the same
        // contents in other bytes. Every other case leaves the file's bytes as they were.
        #expect(!FileManager.default.fileExists(atPath: path + "-journal"))
        if !(mode == .rollback && smallCache) {
            #expect(FileManager.default.contents(atPath: path) == before)
        }
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "new key", cipher: fastCipher) }
        let reopened = try Database(path: path, key: "progress", journalMode: mode, cipher: fastCipher)
        #expect(try await countRows(reopened) == Self.rows)
        #expect(try await reopened.verifyIntegrity().isOK)
        // And the key can then be changed.
        try await reopened.rekey("new key")
        await reopened.close()
        #expect(try await countRows(try Database(path: path, key: "new key", cipher: fastCipher)) == Self.rows)
    }

    @Test func aRekeyCancelledBeforeTheRewriteChangesNothingAndKeepsTheDatabaseOpen() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("rekey.db")
        let db = try await makeEncrypted(path, mode: .rollback)
        let before = try #require(FileManager.default.contents(atPath: path))
        let recorder = Recorder(cancelAtFirst: true)
        let task = Task { try await db.rekey("new key", progress: recorder.closure) }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(recorder.all.map(\.completed) == [0])
        #expect(!(await db.isClosed))
        #expect(try await countRows(db) == Self.rows)
        #expect(FileManager.default.contents(atPath: path) == before)

        // A task cancelled before the call does not start it either.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await db.rekey("new key")
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        try await db.rekey("new key")
        await db.close()
        #expect(try await countRows(try Database(path: path, key: "new key", cipher: fastCipher)) == Self.rows)
    }

    /// A pool's rekey stopped midway closes the pool; one stopped before the rewrite leaves it
    /// open with its old key.
    @Test func aPoolRekeyCancelledMidwayClosesThePoolAndKeepsTheOldKey() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pool.db")
        try await makeEncrypted(path).close()
        let pool = try DatabasePool(path: path, key: "progress", cipher: fastCipher)
        #expect(try await countRows(pool) == Self.rows)

        let early = Recorder(cancelAtFirst: true)
        let first = Task { try await pool.rekey("new key", progress: early.closure) }
        await #expect(throws: CancellationError.self) { try await first.value }
        #expect(try await countRows(pool) == Self.rows)

        let midway = Recorder(cancelWhen: { $0.completed > 0 })
        let second = Task { try await pool.rekey("new key", progress: midway.closure) }
        await #expect(throws: CancellationError.self) { try await second.value }
        await #expect(throws: SqlCipherError.databaseClosed) { _ = try await pool.query("SELECT 1") }
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "new key", cipher: fastCipher) }
        #expect(try await countRows(try DatabasePool(path: path, key: "progress", cipher: fastCipher)) == Self.rows)
    }
}
