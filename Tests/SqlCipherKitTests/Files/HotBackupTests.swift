import Foundation
import SqlCipherKit
import Synchronization
import Testing

/// Hot backup: a live database copied into a new encrypted file, in steps, verified before it takes
/// its name; a partial copy never appears under that name.
@Suite struct HotBackupTests {
    static let marker = "hotbackupmarkerqzxv"

    /// A database of about `rows` rows of 1 KiB, so that a backup takes many steps.
    func database(_ dir: TemporaryDirectory, rows: Int = 300) async throws -> Database {
        let db = try Database(path: dir.path("live.db"), key: "live passphrase")
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        try await db.transaction { conn in
            for index in 0..<rows {
                try conn.execute("INSERT INTO notes(body) VALUES (?)", "\(Self.marker) \(index) " + String(repeating: "x", count: 1000))
            }
        }
        return db
    }

    func count(_ path: String, _ key: String) async throws -> Int {
        let copy = try Database(path: path, key: key, readOnly: true)
        defer { Task { await copy.close() } }
        return try await copy.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) ?? -1
    }

    /// The files of the folder other than the source's.
    func otherFiles(_ dir: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path(""))
            .filter { !$0.hasPrefix("live.db") }.sorted()
    }

    @Test func aBackupIsAVerifiedEncryptedCopyUnderItsNameOnly() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let reports = Mutex<[DatabaseProgress]>([])
        try await db.backup(to: dir.path("copy.db"), key: "copy passphrase", pagesPerStep: 16) { progress in
            reports.withLock { $0.append(progress) }
        }
        #expect(try otherFiles(dir) == ["copy.db"])
        #expect(try await count(dir.path("copy.db"), "copy passphrase") == 300)
        await #expect(throws: SqlCipherError.self) { _ = try await count(dir.path("copy.db"), "live passphrase") }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: dir.path("copy.db")))
        #expect(!bytes.starts(with: Data("SQLite format 3\0".utf8)))
        #expect(bytes.range(of: Data(Self.marker.utf8)) == nil)

        let seen = reports.withLock { $0 }
        #expect(seen.count > 2)
        #expect(seen.first?.completed == 0)
        #expect(seen.last.map { $0.completed == $0.total && $0.total > 0 } == true)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.completed < $1.completed })

        // A raw key, and a second backup refusing an existing target.
        try await db.backup(to: dir.path("raw.db"), key: .rawKey(rawKey(9)))
        let raw = try Database(path: dir.path("raw.db"), rawKey: rawKey(9))
        #expect(try await raw.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) == 300)
        await raw.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: dir.path("copy.db")))
        await #expect(throws: SqlCipherError.self) {
            try await db.backup(to: dir.path("copy.db"), key: "another")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.path("copy.db"))) == before)
        await #expect(throws: SqlCipherError.self) {
            try await db.backup(to: dir.path("missing/copy.db"), key: "another")
        }
        await db.close()
    }

    /// SQLite takes a file named like a database's companion for that database's journal or WAL,
    /// and deletes it: such a name is refused before anything is written.
    @Test func aCompanionFileNameIsRefused() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir, rows: 10)
        let other = try Database(path: dir.path("other.db"), key: "other")
        await other.close()
        for name in ["live.db-journal", "live.db-wal", "other.db-wal", "other.db-shm", "new.db-journal"] {
            await #expect(throws: SqlCipherError.self, "\(name)") {
                try await db.backup(to: dir.path(name), key: "copy")
            }
            await #expect(throws: SqlCipherError.self, "\(name)") {
                try await db.export(to: dir.path(name), key: "copy")
            }
        }
        let left = try otherFiles(dir)
        #expect(left.allSatisfy { $0.hasPrefix("other.db") }, "\(left)")
        await db.close()
    }

    /// A step that meets a lock no later step outlives fails with what to do. Before, the
    /// `SQLITE_BUSY` that SQLite returns while the database's own transaction has written was
    /// tried again at the next step, forever: the call hung.
    @Test func aLockNoStepOutlivesFailsInsteadOfSpinning() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir, rows: 10)
        try await db.execute("BEGIN")
        try await db.execute("INSERT INTO notes(body) VALUES ('not committed')")
        do {
            try await db.backup(to: dir.path("copy.db"), key: "copy")
            Issue.record("a backup inside a transaction that wrote ended")
        } catch let SqlCipherError.conversionFailed(_, target, reason) {
            #expect(target == dir.path("copy.db"))
            #expect(reason.contains("commit or roll back"), "\(reason)")
        }
        try await db.execute("ROLLBACK")
        #expect(try otherFiles(dir).isEmpty)
        try await db.backup(to: dir.path("copy.db"), key: "copy")
        #expect(try await count(dir.path("copy.db"), "copy") == 10)
        await db.close()
    }

    /// Refusals about the copy name the target the caller gave, before any work file exists: a
    /// plaintext header with a key that does not carry its salt named the hidden work file (already
    /// removed), and a NUL in the target wrote the copy under another name.
    @Test(.enabled(if: isSQLCipher4(), "plaintext headers need SQLCipher 4"))
    func badTargetsAndKeysAreRefusedByTheTargetsName() async throws {
        let dir = TemporaryDirectory()
        let salt = Data("0123456789abcdef".utf8)
        let source = try Database(path: dir.path("live.db"), key: .rawKey(rawKey(3), salt: salt),
                                  cipher: CipherSettings(plaintextHeaderSize: 32))
        try await source.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
        for key: DatabaseKey in ["passphrase", .rawKey(rawKey(4))] {
            do {
                try await source.backup(to: dir.path("copy.db"), key: key)
                Issue.record("a copy that no key could open again was written")
            } catch let SqlCipherError.keyFailed(path, reason) {
                #expect(path == dir.path("copy.db"))
                #expect(reason.contains("backup(to:key:)"), "\(reason)")
            }
        }
        try await source.backup(to: dir.path("copy.db"), key: .rawKey(rawKey(4), salt: salt))
        let copy = try Database(path: dir.path("copy.db"), key: .rawKey(rawKey(4), salt: salt),
                                cipher: CipherSettings(plaintextHeaderSize: 32), readOnly: true)
        #expect(try await copy.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) == 0)
        await copy.close()

        do {
            try await source.backup(to: dir.url.path + "/new.db\0x", key: .rawKey(rawKey(4), salt: salt))
            Issue.record("a target with NUL was written")
        } catch let SqlCipherError.cannotOpen(_, reason) {
            #expect(reason.contains("NUL"))
        }
        do {
            try await source.backup(to: "/proc/copy.db", key: .rawKey(rawKey(4), salt: salt))
            Issue.record("a copy was written into /proc")
        } catch let SqlCipherError.cannotOpen(path, _) {
            #expect(path == "/proc/copy.db")
        }
        #expect(try otherFiles(dir) == ["copy.db"])
        await source.close()
    }

    @Test func anUnencryptedDatabaseIsRefused() async throws {
        let dir = TemporaryDirectory()
        let plain = try Database(unencryptedPath: dir.path("plain.db"))
        try await plain.execute("CREATE TABLE t(x)")
        await #expect(throws: SqlCipherError.notEncrypted) {
            try await plain.backup(to: dir.path("copy.db"), key: "k")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("copy.db")))
        await plain.close()
    }

    @Test func otherCallsOfADatabaseRunBetweenSteps() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let ended = Atomic<Bool>(false)
        let backup = Task {
            try await db.backup(to: dir.path("copy.db"), key: "copy", pagesPerStep: 1) { progress in
                if progress.completed == 1 { startedContinuation.yield() }
            }
            ended.store(true, ordering: .sequentiallyConsistent)
        }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        try await db.execute("INSERT INTO notes(body) VALUES ('written during the backup')")
        let rows = try await db.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self)
        let endedFirst = ended.load(ordering: .sequentiallyConsistent)
        #expect(!endedFirst, "the write waited for the whole backup")
        try await backup.value
        #expect(rows == 301)
        // The copy is the database as the last step left it: the write is in it.
        #expect(try await count(dir.path("copy.db"), "copy") == 301)
        await db.close()
    }

    @Test func aPoolCopiesOneSnapshotWhileTheWriterCommits() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        await db.close()
        let pool = try DatabasePool(path: dir.path("live.db"), key: "live passphrase")
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let resume = DispatchSemaphore(value: 0)
        let backup = Task {
            try await pool.backup(to: dir.path("copy.db"), key: "copy", pagesPerStep: 1) { progress in
                if progress.completed == 1 {
                    startedContinuation.yield()
                    resume.wait()
                }
            }
        }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        // The backup holds its reader; the writer commits meanwhile.
        try await pool.execute("INSERT INTO notes(body) VALUES ('after the snapshot')")
        resume.signal()
        try await backup.value
        #expect(try await pool.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) == 301)
        #expect(try await count(dir.path("copy.db"), "copy") == 300)
        await pool.close()
    }

    @Test func aCancelledBackupLeavesNothing() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let backup = Task {
            try await db.backup(to: dir.path("copy.db"), key: "copy", pagesPerStep: 1) { progress in
                if progress.completed == 1 { startedContinuation.yield() }
            }
        }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        backup.cancel()
        await #expect(throws: CancellationError.self) { try await backup.value }
        #expect(try otherFiles(dir).isEmpty)
        // The database goes on.
        #expect(try await db.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) == 300)
        await db.close()
    }
}
