import Foundation
import Synchronization
import Testing
@testable import SqlCipherKit

/// The cancellable rekey (`scb_rekey_watched`, `Database.rekey`, `DatabasePool.rekey`) and the
/// cancellable `encryptInPlace` of a WAL-mode original, cancelled or killed at every stage, with
/// real files: the file always ends with exactly one key and all its rows.
@Suite("Rekey and encryptInPlace cancelled")
struct RekeyCancellationTests {
    /// A key and the way to open the file with it.
    enum Key: Sendable, CustomStringConvertible {
        case passphrase(String)
        case raw(Data)

        func open(_ path: String, _ mode: JournalMode = .wal, cipher: CipherSettings = fastCipher) throws -> Database {
            switch self {
            case .passphrase(let text): try Database(path: path, key: text, journalMode: mode, cipher: cipher)
            case .raw(let bytes): try Database(path: path, rawKey: bytes, journalMode: mode, cipher: cipher)
            }
        }

        func rekey(_ db: Database, progress: (@Sendable (DatabaseProgress) -> Void)? = nil) async throws {
            switch self {
            case .passphrase(let text): try await db.rekey(.passphrase(text), progress: progress)
            case .raw(let bytes): try await db.rekey(rawKey: bytes, progress: progress)
            }
        }

        var description: String {
            switch self {
            case .passphrase(let text): "passphrase \(text)"
            case .raw(let bytes): "raw \(bytes.first ?? 0)"
            }
        }
    }

    /// Cancels the task it is called on at the first report for which `when` is true.
    final class CancelAt: Sendable {
        let reports = Mutex<[Int64]>([])
        let when: @Sendable (DatabaseProgress) -> Bool
        init(_ when: @escaping @Sendable (DatabaseProgress) -> Bool) { self.when = when }
        var closure: @Sendable (DatabaseProgress) -> Void {
            { progress in
                let cancel = self.reports.withLock { reports -> Bool in
                    reports.append(progress.completed)
                    return self.when(progress)
                }
                if cancel { withUnsafeCurrentTask { $0?.cancel() } }
            }
        }
        var all: [Int64] { reports.withLock { $0 } }
    }

    static let rows = 20_000

    func make(_ path: String, key: Key, mode: JournalMode, rows: Int = rows, size: Int = 100,
              cipher: CipherSettings = fastCipher) async throws {
        let db = try key.open(path, mode, cipher: cipher)
        try await fill(db, rows: rows, size: size)
        await db.close()
    }

    /// The file opens with exactly `expected` (not with `other`), holds every row, passes the
    /// integrity checks, and no hot journal is left beside it.
    func expectOnly(_ expected: Key, not other: Key, at path: String, rows: Int = rows, mode: JournalMode = .wal,
                    cipher: CipherSettings = fastCipher, _ note: String = "",
                    sourceLocation: SourceLocation = #_sourceLocation) async throws {
        // No hot journal: none, or one that journal_mode PERSIST zeroed or TRUNCATE emptied.
        let journal = FileManager.default.contents(atPath: path + "-journal")
        #expect(journal.map { $0.isEmpty || $0.prefix(28).allSatisfy { $0 == 0 } } ?? true,
                "a hot journal was left \(note)", sourceLocation: sourceLocation)
        #expect(throws: (any Error).self, "\(other) still opens the file \(note)", sourceLocation: sourceLocation) {
            let db = try other.open(path, mode, cipher: cipher)
            _ = db
        }
        let db = try expected.open(path, mode, cipher: cipher)
        #expect(try await countRows(db) == rows, "\(note)", sourceLocation: sourceLocation)
        let report = try await db.verifyIntegrity()
        #expect(report.isOK, "\(report.problems) \(note)", sourceLocation: sourceLocation)
        await db.close()
    }

    // MARK: Journal modes set by hand

    /// Defect found: with `PRAGMA journal_mode = OFF` (which SQL may set on a rollback-journal
    /// file) a rekey stopped midway left the pages the rewrite had already spilled to the file
    /// under the new key and the rest under the old one: the old key opened the file and every
    /// read of a table failed with "database disk image is malformed" (all rows lost). The rekey
    /// now lends such a connection (and one on MEMORY, whose journal a crash loses) a journal on
    /// disk, so every mode is stopped and rolled back as the default one is, and the connection's
    /// own mode is back afterwards.
    @Test(arguments: ["OFF", "MEMORY", "PERSIST", "TRUNCATE"])
    func aRekeyCancelledMidwayInAHandSetJournalMode(journal: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("j.db")
        let old = Key.passphrase("old"), new = Key.passphrase("new")
        try await make(path, key: old, mode: .rollback)
        let db = try old.open(path, .rollback)
        #expect(try await db.query("PRAGMA journal_mode = \(journal)")[0].get(0, as: String.self)?.uppercased() == journal)
        // A small cache: the rewrite spills rewritten pages to the file long before its end.
        try await db.execute("PRAGMA cache_size = 10")
        let cancel = CancelAt { $0.completed > 0 }
        let result = await Task { try await new.rekey(db, progress: cancel.closure) }.result
        let note = "journal \(journal), reports \(cancel.all)"
        #expect(cancel.all.count >= 2, "\(note)")
        #expect(throws: CancellationError.self, "\(note)") { try result.get() }
        #expect(await db.isClosed)
        try await expectOnly(old, not: new, at: path, mode: .rollback, note)
        // Before the rewrite a cancellation still stops it, journal or not, with the Database open.
        let again = try old.open(path, .rollback)
        _ = try await again.query("PRAGMA journal_mode = \(journal)")
        await #expect(throws: CancellationError.self) {
            try await Task { try await Key.raw(rawKey(99)).rekey(again, progress: CancelAt { _ in true }.closure) }.value
        }
        #expect(try await countRows(again) == Self.rows)
        // A completed rekey gives the connection its own journal mode back.
        try await Key.raw(rawKey(99)).rekey(again, progress: nil)
        #expect(try await again.query("PRAGMA journal_mode")[0].get(0, as: String.self)?.uppercased() == journal)
        #expect(try await countRows(again) == Self.rows)
    }

    // MARK: Settings of the connection

    /// Connection settings a user may set with SQL before a rekey.
    enum Tweak: String, CaseIterable, Sendable {
        case exclusiveLocking, mmap, smallCache, bigCache, cacheSpillOff, secureDelete, autoVacuum
        var statements: [String] {
            switch self {
            case .exclusiveLocking: ["PRAGMA locking_mode = EXCLUSIVE"]
            case .mmap: ["PRAGMA mmap_size = 268435456"]
            case .smallCache: ["PRAGMA cache_size = 10"]
            case .bigCache: ["PRAGMA cache_size = -200000"]
            case .cacheSpillOff: ["PRAGMA cache_size = 10", "PRAGMA cache_spill = OFF"]
            case .secureDelete: ["PRAGMA secure_delete = ON", "PRAGMA cache_size = 10"]
            case .autoVacuum: ["PRAGMA cache_size = 10"]
            }
        }
    }

    /// Cancelled at the first report after the start, whatever the connection's settings (memory
    /// mapping, exclusive locking, tiny or huge cache, no cache spill, secure delete, auto-vacuum
    /// pointer maps): stopped midway, the Database closed, the old key and every row kept.
    @Test(arguments: Tweak.allCases, [JournalMode.rollback, .wal])
    func aRekeyCancelledMidwayWithConnectionSettings(tweak: Tweak, mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("s.db")
        let old = Key.raw(rawKey(3)), new = Key.passphrase("new")
        var rows = Self.rows
        if tweak == .autoVacuum {
            // Pointer-map pages, and a file that shrank when rows were deleted.
            let db = try old.open(path, mode)
            try await db.execute("PRAGMA auto_vacuum = FULL")
            try await db.execute("VACUUM")
            #expect(try await db.query("PRAGMA auto_vacuum")[0].get(0, as: Int.self) == 1)
            try await fill(db, rows: Self.rows)
            try await db.execute("DELETE FROM t WHERE id % 4 = 0")
            rows -= Self.rows / 4
            await db.close()
        } else {
            try await make(path, key: old, mode: mode)
        }
        let db = try old.open(path, mode)
        for statement in tweak.statements { _ = try await db.query(statement) }
        let cancel = CancelAt { $0.completed > 0 }
        let task = Task { try await new.rekey(db, progress: cancel.closure) }
        let result = await task.result
        let note = "\(tweak) \(mode), reports \(cancel.all)"
        switch result {
        case .success:
            Issue.record("the rekey was not stopped: \(note)")
            try await expectOnly(new, not: old, at: path, rows: rows, mode: mode, note)
        case .failure(let error):
            #expect(error is CancellationError, "\(error) \(note)")
            #expect(await db.isClosed)
            try await expectOnly(old, not: new, at: path, rows: rows, mode: mode, note)
        }
    }

    /// SQLCipher 3 settings and an 8 KiB page size, passphrase to raw key and back: each change
    /// cancelled midway keeps the old key, and the same change then completes.
    @Test(arguments: [JournalMode.rollback, .wal])
    func sqlcipher3SettingsAndRawPassphraseSwaps(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        for (index, cipher) in [CipherSettings.sqlcipher3, CipherSettings(pageSize: 8192, kdfIterations: 3)].enumerated() {
            let path = dir.path("v\(index).db")
            let pairs: [(Key, Key)] = [(.passphrase("p"), .raw(rawKey(9))), (.raw(rawKey(9)), .passphrase("q"))]
            try await make(path, key: pairs[0].0, mode: mode, cipher: cipher)
            for (old, new) in pairs {
                let db = try old.open(path, mode, cipher: cipher)
                try await db.execute("PRAGMA cache_size = 10")
                let cancel = CancelAt { $0.completed > 0 }
                let task = Task { try await new.rekey(db, progress: cancel.closure) }
                let result = await task.result
                let note = "\(cipher) \(mode) \(old)->\(new) reports \(cancel.all)"
                #expect(throws: CancellationError.self, "\(note)") { try result.get() }
                try await expectOnly(old, not: new, at: path, mode: mode, cipher: cipher, note)
                // And then the real change.
                let again = try old.open(path, mode, cipher: cipher)
                try await new.rekey(again)
                await again.close()
                try await expectOnly(new, not: old, at: path, mode: mode, cipher: cipher, note)
            }
        }
    }

    // MARK: Other users of the file and of the connection

    /// A stream of this Database open across the rekey: cancelled midway, the stream ends with
    /// `databaseClosed`; completed, the stream reads on with the new key.
    @Test(arguments: [JournalMode.rollback, .wal], [false, true])
    func aStreamOpenAcrossTheRekey(mode: JournalMode, cancelled: Bool) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("stream.db")
        let old = Key.raw(rawKey(4)), new = Key.raw(rawKey(5))
        try await make(path, key: old, mode: mode)
        let db = try old.open(path, mode)
        try await db.execute("PRAGMA cache_size = 10")
        var iterator = db.stream("SELECT id, body FROM t ORDER BY id").makeAsyncIterator()
        var seen = 0
        while seen < 300, try await iterator.next() != nil { seen += 1 }
        let cancel = CancelAt { cancelled && $0.completed > 0 }
        let task = Task { try await new.rekey(db, progress: cancel.closure) }
        let result = await task.result
        if cancelled {
            #expect(throws: CancellationError.self) { try result.get() }
            await #expect(throws: SqlCipherError.databaseClosed) {
                while try await iterator.next() != nil { seen += 1 }
            }
            try await expectOnly(old, not: new, at: path, mode: mode)
        } else {
            try result.get()
            while try await iterator.next() != nil { seen += 1 }
            #expect(seen == Self.rows)
            await db.close()
            try await expectOnly(new, not: old, at: path, mode: mode)
        }
    }

    /// Another Database on the same file, idle or in the middle of a stream: a rekey cancelled
    /// midway leaves it reading and writing with the old key.
    @Test(arguments: [JournalMode.rollback, .wal], [false, true])
    func anotherDatabaseOnTheFileGoesOnAfterACancelledRekey(mode: JournalMode, streaming: Bool) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("two.db")
        let old = Key.passphrase("old"), new = Key.passphrase("new")
        try await make(path, key: old, mode: mode)
        let other = try old.open(path, mode)
        var iterator = other.stream("SELECT id FROM t ORDER BY id", batchSize: 16).makeAsyncIterator()
        if streaming { _ = try await iterator.next() }
        let db = try old.open(path, mode)
        try await db.execute("PRAGMA cache_size = 10")
        try await db.execute("PRAGMA busy_timeout = 100")
        let walBefore = FileHeader(path: path + "-wal")?.fileSize ?? 0
        let cancel = CancelAt { $0.completed > 0 }
        let task = Task { try await new.rekey(db, progress: cancel.closure) }
        let result = await task.result
        if mode == .rollback && streaming {
            // The other connection's read lock keeps the rekey from starting.
            #expect(throws: SqlCipherError.self) { try result.get() }
            #expect(!(await db.isClosed))
        } else {
            #expect(throws: CancellationError.self, "reports \(cancel.all)") { try result.get() }
        }
        if mode == .wal {
            // The other connection keeps the WAL, which now ends with the stopped rewrite's
            // uncommitted frames under the new key. A crash now: the copy of file and WAL opens
            // with the old key and every row (recovery stops at the last commit).
            #expect((FileHeader(path: path + "-wal")?.fileSize ?? 0) > walBefore)
            let image = dir.path("image.db")
            try FileManager.default.copyItem(atPath: path, toPath: image)
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: image + "-wal")
            try await expectOnly(old, not: new, at: image, mode: mode, "crash image")
        }
        if streaming {
            var count = 1
            while try await iterator.next() != nil { count += 1 }
            #expect(count == Self.rows)
        }
        try await other.execute("INSERT INTO t(body) VALUES ('after')")
        #expect(try await countRows(other) == Self.rows + 1)
        await other.close()
        await db.close()
        try await expectOnly(old, not: new, at: path, rows: Self.rows + 1, mode: mode)
    }

    /// After a midway cancel the Database is closed: every call throws `databaseClosed`, none
    /// reaches the connection whose write key SQLCipher left changed.
    @Test func everyCallOnTheClosedDatabaseThrowsDatabaseClosed() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("closed.db")
        let old = Key.raw(rawKey(6)), new = Key.raw(rawKey(7))
        try await make(path, key: old, mode: .rollback)
        let db = try old.open(path, .rollback)
        try await db.execute("PRAGMA cache_size = 10")
        let cancel = CancelAt { $0.completed > 0 }
        await #expect(throws: CancellationError.self) { try await Task { try await new.rekey(db, progress: cancel.closure) }.value }
        #expect(await db.isClosed)
        await #expect(throws: SqlCipherError.databaseClosed) { try await db.execute("INSERT INTO t(body) VALUES ('x')") }
        await #expect(throws: SqlCipherError.databaseClosed) { _ = try await db.query("SELECT 1") }
        await #expect(throws: SqlCipherError.databaseClosed) {
            try await db.transaction { conn in try conn.execute("INSERT INTO t(body) VALUES ('x')") }
        }
        await #expect(throws: SqlCipherError.databaseClosed) { for try await _ in db.stream("SELECT * FROM t") {} }
        await #expect(throws: SqlCipherError.databaseClosed) { try await new.rekey(db) }
        await #expect(throws: SqlCipherError.databaseClosed) { try await old.rekey(db) }
        await #expect(throws: SqlCipherError.databaseClosed) { _ = try await db.verifyIntegrity() }
        await #expect(throws: SqlCipherError.databaseClosed) { try await db.export(to: dir.path("copy.db"), key: "k") }
        await #expect(throws: SqlCipherError.databaseClosed) { try await db.exportDecrypted(to: dir.path("plain.db")) }
        await db.close()
        #expect(!FileManager.default.fileExists(atPath: dir.path("copy.db")))
        #expect(!FileManager.default.fileExists(atPath: dir.path("plain.db")))
        try await expectOnly(old, not: new, at: path, mode: .rollback)
    }

    // MARK: Cancellation at random moments

    /// Rekeys back and forth on one file, each call cancelled from another task after a random
    /// delay: what the call reports (success, or `CancellationError`) is the key that opens the
    /// file afterwards, never a mix.
    @Test(arguments: [JournalMode.rollback, .wal], [false, true])
    func cancelFromAnotherTaskAtRandomMoments(mode: JournalMode, smallCache: Bool) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("random.db")
        let keys: [Key] = [.raw(rawKey(21)), .passphrase("second"), .raw(rawKey(23))]
        try await make(path, key: keys[0], mode: mode)
        // One uncancelled rekey there and back spreads the delays over the rewrite's length.
        let clock = ContinuousClock()
        let timing = try keys[0].open(path, mode)
        let start = clock.now
        try await keys[1].rekey(timing)
        try await keys[0].rekey(timing)
        let duration = (clock.now - start) / 2
        await timing.close()
        var random = SeededGenerator(seed: 0x5EED_4E4B &+ (mode == .wal ? 1 : 0) &+ (smallCache ? 2 : 0))
        var current = 0
        for round in 0..<12 {
            let next = (current + 1 + Int.random(in: 0...1, using: &random)) % keys.count
            let db = try keys[current].open(path, mode)
            if smallCache { try await db.execute("PRAGMA cache_size = 10") }
            // Spread over the rekey and a little past it: round r in ((r, r+1) / 10) of it.
            let delay = duration * ((Double(round) + Double.random(in: 0...1, using: &random)) / 10)
            let task = Task { try await keys[next].rekey(db) }
            try await Task.sleep(for: delay)
            task.cancel()
            let result = await task.result
            let note = "round \(round), \(keys[current]) -> \(keys[next]), delay \(delay)"
            switch result {
            case .success:
                #expect(!(await db.isClosed))
                await db.close()
                try await expectOnly(keys[next], not: keys[current], at: path, mode: mode, note)
                current = next
            case .failure(is CancellationError):
                await db.close()
                try await expectOnly(keys[current], not: keys[next], at: path, mode: mode, note)
            case .failure(let error):
                Issue.record("\(note): \(error)")
                await db.close()
            }
        }
    }

    // MARK: Pool

    /// A pool's rekey cancelled at random moments while reads run: reads end with rows, or with
    /// `databaseClosed` / `CancellationError`; the pool is closed only when the rewrite was
    /// stopped, and the file opens with the key the outcome says.
    @Test func aPoolRekeyCancelledWhileReadsRun() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pool.db")
        let keys = [rawKey(31), rawKey(32)]
        try await make(path, key: .raw(keys[0]), mode: .wal)
        // One uncancelled rekey there and back spreads the cancel moments over a rekey's length.
        let clock = ContinuousClock()
        let timing = try DatabasePool(path: path, rawKey: keys[0], cipher: fastCipher, maximumReaderCount: 3)
        let start = clock.now
        try await timing.rekey(rawKey: keys[1])
        try await timing.rekey(rawKey: keys[0])
        let duration = (clock.now - start) / 2
        await timing.close()
        var random = SeededGenerator(seed: 0x5EED_9001)
        var current = 0
        for round in 0..<8 {
            let pool = try DatabasePool(path: path, rawKey: keys[current], cipher: fastCipher, maximumReaderCount: 3)
            let readers = (0..<6).map { _ in
                Task { () -> Result<Int, any Error> in
                    do { return .success(try await countRows(pool)) } catch { return .failure(error) }
                }
            }
            let cancel = CancelAt { _ in false }
            let next = 1 - current
            let task = Task { try await pool.rekey(rawKey: keys[next], progress: cancel.closure) }
            // A random moment: whatever it is, the file must open with exactly one key (not a handshake on purpose).
            try await Task.sleep(for: duration * ((Double(round) + Double.random(in: 0...1, using: &random)) / 6))
            task.cancel()
            let result = await task.result
            for reader in readers {
                switch await reader.value {
                case .success(let count): #expect(count == Self.rows)
                case .failure(let error):
                    #expect(error is CancellationError || (error as? SqlCipherError) == .databaseClosed, "\(error)")
                }
            }
            let note = "round \(round) reports \(cancel.all)"
            switch result {
            case .success:
                #expect(try await countRows(pool) == Self.rows, "\(note)")
                await pool.close()
                current = next
            case .failure(let error):
                #expect(error is CancellationError, "\(error) \(note)")
                let closed = (try? await countRows(pool)) == nil
                if !closed { #expect(try await countRows(pool) == Self.rows) }
                await pool.close()
            }
            try await expectOnly(.raw(keys[current]), not: .raw(keys[1 - current]), at: path, note)
        }
    }

    // MARK: encryptInPlace of a WAL original

    func files(in dir: TemporaryDirectory) -> [String: Data] {
        Dictionary(uniqueKeysWithValues: dir.allFileContents().map { (($0.0 as NSString).lastPathComponent, $0.1) })
    }

    /// Cancelled at a report (the first, a later one) or from another task after a random delay:
    /// a cancelled call leaves every file of the folder as it was (the original, no -wal or -shm
    /// left or removed); a completed one leaves the encrypted file with every row.
    @Test(arguments: [JournalMode.wal, .rollback])
    func encryptInPlaceCancelledAtManyMoments(mode: JournalMode) async throws {
        var random = SeededGenerator(seed: 0x5EED_E1F0 &+ (mode == .wal ? 1 : 0))
        let key = DatabaseKey.rawKey(rawKey(41))
        var outcomes: [String: Int] = [:]
        // One uncancelled run to spread the delays.
        let timingDir = TemporaryDirectory()
        let timingPath = timingDir.path("plain.db")
        let plain = try Database(unencryptedPath: timingPath, journalMode: mode)
        try await fill(plain, rows: Self.rows, marker: "PLAIN-MARKER")
        await plain.close()
        let clock = ContinuousClock()
        let started = clock.now
        _ = try await Task { try Database.encryptInPlace(path: timingPath, key: key) }.value
        let duration = clock.now - started
        for round in 0..<10 {
            let dir = TemporaryDirectory()
            let path = dir.path("plain.db")
            let source = try Database(unencryptedPath: path, journalMode: mode)
            try await fill(source, rows: Self.rows, marker: "PLAIN-MARKER")
            await source.close()
            let before = files(in: dir)
            let task: Task<String?, any Error>
            switch round {
            case 0: task = Task { try Database.encryptInPlace(path: path, key: key, progress: CancelAt { _ in true }.closure) }
            case 1: task = Task { try Database.encryptInPlace(path: path, key: key, progress: CancelAt { $0.completed > 0 }.closure) }
            case 2: task = Task { try Database.encryptInPlace(path: path, key: key, progress: CancelAt { $0.completed * 3 > $0.total }.closure) }
            default:
                task = Task { try Database.encryptInPlace(path: path, key: key) }
                // A random moment: whatever it is, the file must open with exactly one key (not a handshake on purpose).
                try await Task.sleep(for: duration * Double.random(in: 0...1.2, using: &random))
                task.cancel()
            }
            let result = await task.result
            switch result {
            case .success:
                outcomes["completed", default: 0] += 1
                let db = try Database(path: path, rawKey: rawKey(41), journalMode: mode)
                #expect(try await countRows(db) == Self.rows)
                #expect(try await db.verifyIntegrity().isOK)
                await db.close()
                #expect(filesContain([path], "PLAIN-MARKER").isEmpty)
            case .failure(let error):
                outcomes["cancelled", default: 0] += 1
                #expect(error is CancellationError, "round \(round): \(error)")
                let after = files(in: dir)
                #expect(after.keys.sorted() == before.keys.sorted(), "round \(round)")
                #expect(after["plain.db"] == before["plain.db"], "round \(round): the original changed")
                let db = try Database(unencryptedPath: path, journalMode: mode)
                #expect(try await countRows(db) == Self.rows)
                await db.close()
            }
        }
        // Rounds 0 and 1 cancel at a report before the copy is done: never too late.
        #expect(outcomes["cancelled", default: 0] >= 2, "\(outcomes)")
    }

    /// A WAL original whose last writer died with rows still in the WAL: a cancelled call leaves
    /// those rows readable (the WAL is recovered, not lost).
    @Test func encryptInPlaceCancelledOnAnOriginalWithAFullWAL() async throws {
        let dir = TemporaryDirectory()
        let live = dir.path("live.db")
        let path = dir.path("crashed.db")
        let writer = try Database(unencryptedPath: live, journalMode: .wal)
        try await writer.execute("PRAGMA wal_autocheckpoint = 0")
        try await fill(writer, rows: Self.rows, marker: "PLAIN-MARKER")
        // A crash image: the file and its WAL as they are while the writer is open.
        try FileManager.default.copyItem(atPath: live, toPath: path)
        try FileManager.default.copyItem(atPath: live + "-wal", toPath: path + "-wal")
        await writer.close()
        for when in [0, 1] {
            let cancel = CancelAt { when == 0 || $0.completed > 0 }
            let result = await Task { _ = try Database.encryptInPlace(path: path, key: .rawKey(rawKey(42)), progress: cancel.closure) }.result
            #expect(throws: CancellationError.self) { try result.get() }
            // The rows of the WAL are all there, and the original is still in WAL mode. (Its bytes
            // are not all as they were: closing the source connection checkpoints the WAL into
            // the file, as closing any connection would.)
            #expect(files(in: dir)["crashed.db-journal"] == nil)
            let db = try Database(unencryptedPath: path, journalMode: .rollback)
            #expect(try await countRows(db) == Self.rows)
            #expect(try await db.query("PRAGMA journal_mode")[0].get(0, as: String.self) == "wal")
            await db.close()
        }
        try Database.encryptInPlace(path: path, key: .rawKey(rawKey(42)))
        let db = try Database(path: path, rawKey: rawKey(42))
        #expect(try await countRows(db) == Self.rows)
        #expect(filesContain([path, path + "-wal"], "PLAIN-MARKER").isEmpty)
    }

    /// SIGKILL at random moments while a child encrypts in place a WAL original whose WAL still
    /// holds rows (its last writer died): whatever the moment, the file opens as the plaintext
    /// original or as the encrypted file, with every row, and the encrypted file holds no
    /// plaintext.
    @Test func killDuringEncryptInPlaceOfAnOriginalWithAFullWAL() async throws {
        let rows = 15_000
        let key = rawKey(43)
        let seedDir = TemporaryDirectory()
        let live = seedDir.path("live.db")
        let writer = try Database(unencryptedPath: live, journalMode: .wal)
        try await writer.execute("PRAGMA wal_autocheckpoint = 0")
        try await fill(writer, rows: rows, size: 200, marker: "PLAIN-MARKER")
        func crashImage(_ path: String) throws {
            try FileManager.default.copyItem(atPath: live, toPath: path)
            try FileManager.default.copyItem(atPath: live + "-wal", toPath: path + "-wal")
        }
        let clock = ContinuousClock()
        let timingPath = seedDir.path("timing.db")
        try crashImage(timingPath)
        let timing = try KillableChild(helperArguments: ["encrypt-in-place", timingPath, "raw:" + hex(key)])
        _ = timing.waitForLine(startingWith: "start")
        let started = clock.now
        _ = timing.waitForLine(startingWith: "done")
        let duration = clock.now - started
        #expect(timing.waitForExit() == 0, "\(timing.standardError)")
        var random = SeededGenerator(seed: 0x5EED_C0DE)
        for round in 0..<8 {
            let dir = TemporaryDirectory()
            let path = dir.path("plain.db")
            try crashImage(path)
            let child = try KillableChild(helperArguments: ["encrypt-in-place", path, "raw:" + hex(key)])
            guard child.waitForLine(startingWith: "start") != nil else {
                child.killAndCollect()
                Issue.record("round \(round): the helper did not start: \(child.standardError)")
                break
            }
            // Spread over the run and a little past its end: round r in ((r, r+1) / 6) of it.
            try await Task.sleep(for: duration * ((Double(round) + Double.random(in: 0...1, using: &random)) / 6))
            child.killAndCollect()
            let done = child.lines.contains("done")
            let db: Database
            if let plain = try? Database(unencryptedPath: path) {
                #expect(!done, "round \(round): reported done, still plaintext")
                db = plain
            } else {
                db = try Database(path: path, rawKey: key)
                #expect(filesContain([path, path + "-wal", path + "-journal"], "PLAIN-MARKER").isEmpty, "round \(round)")
            }
            #expect(try await countRows(db) == rows, "round \(round)")
            #expect(try await db.verifyIntegrity().isOK, "round \(round)")
            let encrypted = db.isEncrypted
            await db.close()
            if !encrypted {
                try Database.encryptInPlace(path: path, key: .rawKey(key))
                let again = try Database(path: path, rawKey: key)
                #expect(try await countRows(again) == rows, "round \(round)")
                await again.close()
            }
        }
        await writer.close()
    }

    /// While encryptInPlace copies a WAL (or rollback) original, another connection's write must
    /// fail: one that got through would be lost when the encrypted copy replaces the original.
    @Test(arguments: [JournalMode.wal, .rollback])
    func encryptInPlaceKeepsOtherWritersOutWhileItCopies(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("plain.db")
        let source = try Database(unencryptedPath: path, journalMode: mode)
        try await fill(source, rows: Self.rows)
        await source.close()
        let attempts = Mutex<[String]>([])
        let progress: @Sendable (DatabaseProgress) -> Void = { report in
            guard report.completed > 0, attempts.withLock({ $0.isEmpty }) else { return }
            let outcome: String
            do {
                let intruder = try SQLiteConnection(path: path)
                defer { intruder.close() }
                try intruder.execute("INSERT INTO t(body) VALUES ('intruder')")
                outcome = "written"
            } catch {
                outcome = "refused: \(error)"
            }
            attempts.withLock { $0.append(outcome) }
        }
        try await Task { _ = try Database.encryptInPlace(path: path, key: .rawKey(rawKey(44)), progress: progress) }.value
        let outcomes = attempts.withLock { $0 }
        #expect(outcomes.count == 1 && outcomes.allSatisfy { $0.hasPrefix("refused") }, "\(outcomes)")
        let db = try Database(path: path, rawKey: rawKey(44), journalMode: mode)
        #expect(try await countRows(db) == Self.rows)
    }

    /// A file with a plaintext header keeps its salt outside the file: after a rekey(rawKey:)
    /// stopped midway it opens with the old raw key and that salt, and after a completed one
    /// with the new key and the same salt; the header stays plaintext.
    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only"), arguments: [JournalMode.rollback, .wal])
    func aPlaintextHeaderFileCancelledMidway(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("header.db")
        let cipher = CipherSettings(kdfIterations: 2, plaintextHeaderSize: 32)
        let salt = Data((0..<16).map { UInt8($0 * 11 + 1) })
        let (old, new) = (rawKey(61), rawKey(62))
        let made = try Database(path: path, key: .rawKey(old, salt: salt), journalMode: mode, cipher: cipher)
        try await fill(made, rows: Self.rows)
        await made.close()
        func open(_ key: Data) throws -> Database {
            try Database(path: path, key: .rawKey(key, salt: salt), journalMode: mode, cipher: cipher)
        }
        let db = try open(old)
        try await db.execute("PRAGMA cache_size = 10")
        let cancel = CancelAt { $0.completed > 0 }
        await #expect(throws: CancellationError.self) {
            try await Task { try await db.rekey(rawKey: new, progress: cancel.closure) }.value
        }
        #expect(await db.isClosed)
        #expect(FileManager.default.contents(atPath: path)?.prefix(16) == Data("SQLite format 3\0".utf8))
        #expect(throws: (any Error).self) { _ = try open(new) }
        let reopened = try open(old)
        #expect(try await countRows(reopened) == Self.rows)
        #expect(try await reopened.verifyIntegrity().isOK)
        try await reopened.rekey(rawKey: new)
        await reopened.close()
        #expect(throws: (any Error).self) { _ = try open(old) }
        let final = try open(new)
        #expect(try await countRows(final) == Self.rows)
        #expect(try await final.verifyIntegrity().isOK)
    }

    /// A file larger than the default 8 MiB page cache, rollback journal, cancelled late: the
    /// rewrite has spilled pages with the new key into the file, which the journal puts back.
    /// Reports come about every 50 ms, so one past half way may not come before the rewrite ends
    /// (then it completes, and the next attempt goes the other way); a few attempts suffice.
    @Test func aFileLargerThanTheDefaultCacheCancelledLate() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("big.db")
        var old = Key.raw(rawKey(71)), new = Key.raw(rawKey(72))
        let rows = 60_000
        try await make(path, key: old, mode: .rollback, rows: rows, size: 180)
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0) > 10 << 20)
        var stopped = false
        for _ in 0..<6 where !stopped {
            let db = try old.open(path, .rollback)
            let cancel = CancelAt { $0.completed * 2 > $0.total }
            let target = new
            let result = await Task { try await target.rekey(db, progress: cancel.closure) }.result
            switch result {
            case .success:
                // No report landed past half way: the rekey completed.
                await db.close()
                try await expectOnly(new, not: old, at: path, rows: rows, mode: .rollback, "reports \(cancel.all)")
                swap(&old, &new)
            case .failure(let error):
                #expect(error is CancellationError, "\(error)")
                stopped = true
                try await expectOnly(old, not: new, at: path, rows: rows, mode: .rollback, "reports \(cancel.all)")
            }
        }
        #expect(stopped, "no attempt was stopped past half way")
    }

    /// A rekey waiting for the exclusive lock (another connection reads), cancelled while it
    /// waits: nothing was rewritten, so the call throws `CancellationError` with the Database
    /// still open and its key unchanged, as before the rewrite. (It used to go on into the
    /// rewrite once the lock came, stop at the first page and close the Database.)
    @Test func aRekeyCancelledWhileItWaitsForTheLockKeepsTheDatabaseOpen() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("busy.db")
        let old = Key.raw(rawKey(81)), new = Key.passphrase("new")
        try await make(path, key: old, mode: .rollback)
        let db = try old.open(path, .rollback)
        let reader = try old.open(path, .rollback)
        try await reader.execute("BEGIN")
        #expect(try await countRows(reader) == Self.rows)   // a SHARED lock until COMMIT
        let started = AsyncStream<Void>.makeStream()
        let progress: @Sendable (DatabaseProgress) -> Void = { _ in started.continuation.yield() }
        // A third connection that never waits: its reads fail with SQLITE_BUSY once the rekey holds
        // the PENDING lock, which SQLite takes while it waits for the reader's SHARED lock to go.
        let probe = try old.open(path, .rollback)
        try await probe.execute("PRAGMA busy_timeout = 0")
        // The rekey waits for the lock up to its busy timeout: 60 s here, so that on a loaded
        // machine the cancel below still finds it waiting (the default 5 s can pass first).
        try await db.execute("PRAGMA busy_timeout = 60000")
        let task = Task { try await new.rekey(db, progress: progress) }
        // The first report (0) comes before the lock is asked for; the lock then waits for the
        // reader, up to the busy timeout (5 s): cancel while the probe shows it waiting.
        for await _ in started.stream { break }
        let deadline = ContinuousClock.now + .seconds(60)
        var waiting = false
        while !waiting && ContinuousClock.now < deadline {
            do {
                _ = try await countRows(probe)
                try await Task.sleep(for: .milliseconds(1))
            } catch {
                waiting = true
            }
        }
        #expect(waiting, "the rekey never waited for the reader's lock")
        task.cancel()
        await probe.close()
        try await reader.execute("COMMIT")
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!(await db.isClosed))
        #expect(try await countRows(db) == Self.rows)
        try await db.execute("INSERT INTO t(body) VALUES ('after')")
        await reader.close()
        await db.close()
        try await expectOnly(old, not: new, at: path, rows: Self.rows + 1, mode: .rollback)
    }

    /// A pool rekey waits for the running reads; a stream of the pool holds its reader from the
    /// first batch to the last. Cancelled while it waits, the rekey must end (with
    /// `CancellationError`, the pool open and its key unchanged) without the stream ending first.
    ///
    /// A stream paused for ``DatabaseStream/preemptionDelay`` (one second) gives its reader to a
    /// waiting rekey, which then goes on. On a loaded machine the cancellation can come after that
    /// (found by a run under load: the stream's next batch threw `streamPreempted`). That outcome
    /// is checked for what it promises instead: never before the delay, and the file keeps exactly
    /// the key of the rekey's outcome.
    @Test func aPoolRekeyWaitingForAStreamEndsWhenCancelled() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pool.db")
        try await make(path, key: .raw(rawKey(91)), mode: .wal)
        let pool = try DatabasePool(path: path, rawKey: rawKey(91), cipher: fastCipher)
        var iterator = pool.stream("SELECT id FROM t ORDER BY id", batchSize: 16).makeAsyncIterator()
        _ = try await iterator.next()
        let pausedAt = ContinuousClock.now
        let task = Task { try await pool.rekey(rawKey: rawKey(92)) }
        // Lets the rekey reach its wait for the stream's reader. Nothing outside the pool shows that
        // wait (no hook in Sources); cancelled earlier, the rekey still ends with CancellationError.
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        // A generous bound that only a hang exceeds; the stream is then ended to free the rekey.
        let endedAt = Mutex<ContinuousClock.Instant?>(nil)
        let watcher = Task {
            _ = await task.result
            endedAt.withLock { $0 = ContinuousClock.now }
        }
        // Polls; the 60 s bound only stops a hang (a loaded machine can take seconds).
        let deadline = ContinuousClock.now + .seconds(60)
        while endedAt.withLock({ $0 }) == nil && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let ended = endedAt.withLock { $0 }
        // Defect found: the wait for busy readers ignored cancellation, and held every new read
        // of the pool back meanwhile, until the stream ended. It now stops (ReaderSet.enterExclusive).
        try #require(ended != nil, "the cancelled rekey still waits for the stream's reader")
        #expect(try await countRows(pool) == Self.rows)
        var count = 1
        var preempted = false
        do {
            while try await iterator.next() != nil { count += 1 }
        } catch SqlCipherError.streamPreempted(let reason) {
            preempted = true
            #expect(reason.contains("rekey"), "\(reason)")
        }
        await watcher.value
        let result = await task.result
        if preempted {
            // The rekey took the reader of a stream paused for the delay, and then either ran to
            // the end or met the cancellation at its next check.
            #expect(ended! - pausedAt >= DatabaseStream<Row>.preemptionDelay, "the stream was taken before the delay")
            #expect(try await countRows(pool) == Self.rows)
            await pool.close()
            switch result {
            case .success: try await expectOnly(.raw(rawKey(92)), not: .raw(rawKey(91)), at: path)
            case .failure(let error):
                #expect(error is CancellationError, "\(error)")
                try await expectOnly(.raw(rawKey(91)), not: .raw(rawKey(92)), at: path)
            }
            return
        }
        #expect(count == Self.rows)
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(try await countRows(pool) == Self.rows)
        await pool.close()
        try await expectOnly(.raw(rawKey(91)), not: .raw(rawKey(92)), at: path)
    }

    /// Several rekeys of one Database started at once from different tasks, some cancelled at
    /// random moments: the actor runs them one after the other, and afterwards exactly one key
    /// opens the file: the old one when none succeeded, else the key of a rekey that succeeded.
    @Test(arguments: [JournalMode.rollback, .wal])
    func concurrentRekeysOfOneDatabaseSomeCancelled(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("many.db")
        let keys: [Key] = [.raw(rawKey(101)), .raw(rawKey(102)), .passphrase("three"), .raw(rawKey(104)), .passphrase("five")]
        try await make(path, key: keys[0], mode: mode, rows: 8000)
        var random = SeededGenerator(seed: 0x5EED_0C0C &+ (mode == .wal ? 1 : 0))
        var current = 0
        for round in 0..<4 {
            let db = try keys[current].open(path, mode)
            try await db.execute("PRAGMA cache_size = 20")
            let targets = keys.indices.filter { $0 != current }
            let tasks = targets.map { index in
                Task { () -> Int in
                    try await keys[index].rekey(db)
                    return index
                }
            }
            for task in tasks where Bool.random(using: &random) {
                // A random moment: whatever it is, the file must open with exactly one key (not a handshake on purpose).
                try await Task.sleep(for: .microseconds(Int.random(in: 0...20_000, using: &random)))
                task.cancel()
            }
            var succeeded: [Int] = []
            for task in tasks {
                switch await task.result {
                case .success(let index): succeeded.append(index)
                case .failure(let error):
                    #expect(error is CancellationError || (error as? SqlCipherError) == .databaseClosed,
                            "round \(round): \(error)")
                }
            }
            await db.close()
            let opening = keys.indices.filter { (try? keys[$0].open(path, mode)) != nil }
            #expect(opening.count == 1, "round \(round): keys \(opening) open the file, succeeded \(succeeded)")
            guard let now = opening.first else { break }
            #expect(succeeded.isEmpty ? now == current : succeeded.contains(now),
                    "round \(round): \(keys[now]) opens the file; succeeded \(succeeded), before \(keys[current])")
            let other = keys.indices.first { $0 != now }!
            try await expectOnly(keys[now], not: keys[other], at: path, rows: 8000, mode: mode, "round \(round)")
            current = now
        }
    }

    /// A live query waiting for changes when a rekey stopped midway closes its Database (or
    /// pool): the loop ends with `databaseClosed` rather than waiting for ever.
    @Test(arguments: [false, true])
    func aLiveQueryEndsWhenACancelledRekeyClosesItsDatabase(pool usePool: Bool) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("live.db")
        try await make(path, key: .raw(rawKey(111)), mode: .wal)
        let access: any DatabaseAccess
        let rekey: @Sendable (@escaping @Sendable (DatabaseProgress) -> Void) async throws -> Void
        if usePool {
            let pool = try DatabasePool(path: path, rawKey: rawKey(111), cipher: fastCipher)
            access = pool
            rekey = { progress in try await pool.rekey(rawKey: rawKey(112), progress: progress) }
        } else {
            let db = try Database(path: path, rawKey: rawKey(111), cipher: fastCipher)
            try await db.execute("PRAGMA cache_size = 10")
            access = db
            rekey = { progress in try await db.rekey(rawKey: rawKey(112), progress: progress) }
        }
        let first = AsyncStream<Void>.makeStream()
        let ended = Atomic<Bool>(false)
        let observer = Task { () -> String in
            defer { ended.store(true, ordering: .releasing) }
            var values = 0
            do {
                for try await _ in access.values(of: .query("SELECT count(*) FROM t")) {
                    values += 1
                    first.continuation.yield()
                }
                return "ended after \(values) values"
            } catch {
                return "threw \(error) after \(values) values"
            }
        }
        for await _ in first.stream { break }
        let cancel = CancelAt { $0.completed > 0 }
        await #expect(throws: CancellationError.self) { try await Task { try await rekey(cancel.closure) }.value }
        // Polls; the 60 s bound only stops a hang (a loaded machine can take seconds).
        let deadline = ContinuousClock.now + .seconds(60)
        while !ended.load(ordering: .acquiring) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let endedInTime = ended.load(ordering: .acquiring)
        observer.cancel()
        let outcome = await observer.value
        // Defect found: a pool's close, by a stopped rekey as by close(), did not wake the pool's
        // waiting observations, which then waited until their task was cancelled. Now both end.
        #expect(endedInTime, "the live query still waits on the closed \(usePool ? "pool" : "Database"): \(outcome)")
        #expect(outcome.hasPrefix("threw \(SqlCipherError.databaseClosed)"), "\(outcome)")
        try await expectOnly(.raw(rawKey(111)), not: .raw(rawKey(112)), at: path)
    }
}
