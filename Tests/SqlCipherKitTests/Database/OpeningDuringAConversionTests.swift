import Foundation
import SqlCipherKit
import Synchronization
import Testing

/// An opening of a file that another process is converting in place (`encryptInPlace`) waits for
/// the conversion to end, up to the busy timeout, and then judges the file the conversion left.
/// It went ahead before: a key opening was told "it is a plaintext SQLite database" a moment
/// before the file became the encrypted one the key opens, and a plaintext opening got a
/// `Database` on the original after it had been replaced (old content, every write failing).
/// The converting child stops in the middle of its copy and goes on when the test creates a file
/// (a handshake); the test holds it there while the opening runs.
@Suite struct OpeningDuringAConversionTests {
    static let rows = 3000

    /// A plaintext file of `rows` rows of 300 bytes (about 250 pages, so that the copy reports
    /// progress between its first and last page).
    func makePlaintext(_ path: String, mode: JournalMode = .rollback) async throws {
        let db = try Database(unencryptedPath: path, journalMode: mode)
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)")
        try await db.execute("""
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < \(Self.rows))
            INSERT INTO t SELECT i, printf('%0300d', i) FROM c
            """)
        await db.close()
    }

    /// What an opening of the file gives once the conversion it waited for has ended.
    enum Opening: String, CaseIterable, Sendable {
        case database, readOnlyDatabase, pool, plaintext
    }

    @Test(arguments: Opening.allCases)
    func anOpeningWaitsForAnotherProcesssConversionThenSeesItsResult(_ opening: Opening) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("converted.db"), go = dir.path("go")
        // A pool needs WAL mode, which the conversion keeps.
        try await makePlaintext(path, mode: opening == .pool ? .wal : .rollback)
        let converter = try KillableChild(helperArguments: ["encrypt-in-place", path, "pass:converted", go])
        defer { converter.killAndCollect() }
        try #require(converter.waitForLine(startingWith: "paused") != nil, "\(converter.lines) \(converter.standardError)")

        // On a thread of its own: an opening is synchronous and blocks its thread while it waits,
        // which on the cooperative pool of a two-core machine starved the test's own tasks.
        let started = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<(any DatabaseAccess)?, any Error>?>(nil)
        // The wait lasts up to the busy timeout: long here, so that only a hang exceeds it on a
        // loaded machine (the five seconds by default were exceeded in a full run).
        var configuration = DatabaseConfiguration()
        configuration.busyTimeout = .seconds(120)
        Thread { [configuration] in
            started.signal()
            let result = Result { () throws -> (any DatabaseAccess)? in
                switch opening {
                case .database: return try Database(path: path, key: "converted", configuration: configuration)
                case .readOnlyDatabase:
                    return try Database(path: path, key: "converted", readOnly: true, configuration: configuration)
                case .pool: return try DatabasePool(path: path, key: "converted", configuration: configuration)
                case .plaintext: return try Database(unencryptedPath: path, configuration: configuration)
                }
            }
            outcome.withLock { $0 = result }
            finished.signal()
        }.start()
        #expect(await signalled(started))
        // The opening has begun while the conversion is stopped: it must still be waiting a while
        // later. (Were it not waiting, it would have failed by now, at once, on the plaintext
        // original; a slow machine only makes this check weaker, never wrong.)
        try await Task.sleep(for: .milliseconds(300))
        let finishedEarly = outcome.withLock { $0 != nil }
        #expect(!finishedEarly, "the opening did not wait for the conversion")
        #expect(FileManager.default.createFile(atPath: go, contents: Data()))
        #expect(converter.waitForExit() == 0, "\(converter.lines) \(converter.standardError)")
        #expect(converter.lines.contains("done"))
        #expect(await signalled(finished))

        switch (opening, try #require(outcome.withLock { $0 })) {
        case (.plaintext, .failure(let error)):
            guard case SqlCipherError.notPlaintextDatabase = error else {
                Issue.record("expected notPlaintextDatabase once the file is encrypted, got \(error)")
                return
            }
        case (.plaintext, .success):
            Issue.record("a plaintext opening succeeded on a file that was encrypted meanwhile")
        case (_, .success(let access)):
            let access = try #require(access)
            #expect(try await access.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == Self.rows)
            if let db = access as? Database { await db.close() }
            if let pool = access as? DatabasePool { await pool.close() }
        case (_, .failure(let error)):
            Issue.record("\(opening): \(error)")
        }
    }

    /// Another user's opening of a file that this user converts (as root, the helper runs as
    /// `nobody`). The lock file was made with mode 0600, which the other user could not open, so
    /// its opening waited for nothing and read the plaintext original in the middle of the
    /// conversion. The lock file is now as readable as the database: the opening waits, here up to
    /// its busy timeout (the conversion stays paused until the helper has ended), and names the
    /// conversion.
    @Test func anotherUsersOpeningWaitsForTheConversionToo() async throws {
        let dir = TemporaryDirectory()
        try makeWorldReadable(dir)
        let path = dir.path("shared.db")
        try await makePlaintext(path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let work = path + ".sqlcipherkit-encrypting"
        let conversion = ConcurrentConversionTests.PausedConversion(
            pauseWhen: { FileManager.default.fileExists(atPath: work) },
            { progress in try Database.encryptInPlace(path: path, key: "converted", cipher: fastCipher, progress: progress) })
        #expect(conversion.waitUntilPaused())
        let result = try runHelperUnprivileged(["open-database", "--read-only", path, "none", "SELECT count(*) FROM t"])
        try conversion.resumeAndWait()
        #expect(result.stdout.contains("error cannotOpen") && result.stdout.contains("a conversion of this file"),
                "\(result.stdout) \(result.stderr)")
    }

    /// A conversion that does not end within the busy timeout: the opening gives up with
    /// `cannotOpen` naming the conversion (not "it is a plaintext SQLite database"). Nothing of
    /// the conversion is touched; killed, it leaves the whole plaintext original.
    @Test func anOpeningGivesUpAfterTheBusyTimeoutNamingTheConversion() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("converted.db")
        try await makePlaintext(path)
        let converter = try KillableChild(helperArguments: ["encrypt-in-place", path, "pass:converted", dir.path("never")])
        try #require(converter.waitForLine(startingWith: "paused") != nil, "\(converter.lines) \(converter.standardError)")
        var configuration = DatabaseConfiguration()
        configuration.busyTimeout = .milliseconds(200)
        let error = try #require(throws: SqlCipherError.self) {
            try Database(path: path, key: "converted", configuration: configuration)
        }
        guard case .cannotOpen(_, let reason) = error else {
            Issue.record("expected cannotOpen, got \(error)")
            converter.killAndCollect()
            return
        }
        #expect(reason.contains("a conversion of this file") && reason.contains("busyTimeout"), "\(reason)")
        converter.killAndCollect()
        let original = try Database(unencryptedPath: path)
        #expect(try await original.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == Self.rows)
        await original.close()
    }
}
