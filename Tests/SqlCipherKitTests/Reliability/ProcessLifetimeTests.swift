import Foundation
import Testing
@testable import SqlCipherKit

/// A process's life around its databases: exit() while the package is in the middle of a write,
/// a rekey, a copy, a conversion, a migration, a live query or a stream; exit() from inside the
/// package's own closures; `atexit` handlers that use a database; SIGTERM handlers; fork(); many
/// threads. Each case is a real child process (`sqlcipherkit-test-helper exit-during`), with
/// libcrypto coming with the library (its cleanup at exit turned off) and with libcrypto loaded
/// and initialised first (the exit gate holds the exit: docs/reliability.md, "A process that exits
/// while it reads"). Every exit must end with the program's own status, in time (well under the
/// gate's 10-second bound), and leave the file opening with one of its keys, intact, in its old or
/// its new state.
@Suite struct ProcessLifetimeTests {
    static let key = rawKey(83)
    static let otherKey = Data(rawKey(83).map { ~$0 })
    static let rows = 2000

    /// exit() while detached tasks are in the middle of the work.
    @Test(arguments: ["pool-write", "rekey", "pool-rekey", "export", "backup", "encrypt", "migrate", "observe", "stream"],
          [false, true])
    func exitInTheMiddleOfWork(_ scenario: String, preloadedLibcrypto: Bool) async throws {
        for round in 1...Reliability.count(short: 3, long: 20) {
            let dir = TemporaryDirectory()
            let path = dir.path("work.db")
            try await Self.makeFile(path, encrypted: scenario != "encrypt")
            let run = try await offThePool { try Self.run(scenario, path, preloadedLibcrypto) }
            #expect(run.endedInTime && !run.signaled && run.status == 0 && run.stdout.contains("exiting 0"),
                    "\(scenario) round \(round): \(run)")
            try await Self.checkFile(scenario, path)
        }
    }

    /// exit() called from inside a closure the package runs (on the thread of a database call)
    /// while other tasks read: the exiting thread must not wait for itself.
    @Test(arguments: ["in-read", "in-transaction", "in-function", "in-prepare", "in-trace", "in-rekey-progress"], [false, true])
    func exitFromInsideAClosure(_ scenario: String, preloadedLibcrypto: Bool) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("closure.db")
        try await Self.makeFile(path, encrypted: true)
        let run = try await offThePool { try Self.run(scenario, path, preloadedLibcrypto) }
        #expect(run.endedInTime && !run.signaled && run.status == 7 && run.seconds < 8, "\(scenario): \(run)")
        try await Self.checkFile(scenario, path)
        let db = try Database(path: path, rawKey: Self.key)
        #expect(try await db.query("PRAGMA integrity_check")[0].decode(0, as: String.self) == "ok")
        #expect(try await db.query("SELECT count(*) FROM t WHERE v = 'must not survive'")[0].decode(0, as: Int.self) == 0)
        await db.close()
    }

    /// An `atexit` handler that saves a row with the open database and waits for it, registered
    /// before the library was loaded or after: the process ends. Where the handler runs before
    /// the exit gate closes (registered after the first opening, or no gate), the row is saved;
    /// where it runs after (registered before, with the gate), its call is refused with an error
    /// (it hung the process forever when the gate parked the database's thread). SQLCipher 4.7
    /// and later always have the gate (their own atexit cleanup frees their memory): there a
    /// handler registered before is refused without libcrypto preloaded too, where it crashed.
    @Test(arguments: ["atexit-before", "atexit-after"], [false, true])
    func anAtexitHandlerUsesTheDatabase(_ scenario: String, preloadedLibcrypto: Bool) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("atexit.db")
        try await Self.makeFile(path, encrypted: true)
        let run = try await offThePool { try Self.run(scenario, path, preloadedLibcrypto) }
        #expect(run.endedInTime && !run.signaled && run.status == 0, "\(scenario): \(run)")
        let refused = scenario == "atexit-before" && (preloadedLibcrypto || ProcessExitTests.plainProtection == "exit-gate")
        #expect(run.stdout.contains(refused ? "the process is exiting" : "atexit wrote"), "\(scenario): \(run)")
        let db = try Database(path: path, rawKey: Self.key)
        #expect(try await db.query("SELECT count(*) FROM t WHERE v = 'atexit'")[0].decode(0, as: Int.self) == (refused ? 0 : 1),
                "\(run)")
        #expect(try await db.query("PRAGMA integrity_check")[0].decode(0, as: String.self) == "ok")
        await db.close()
    }

    /// A SIGTERM handler that calls exit() while tasks read a pool: a dispatch signal source, the
    /// way a Swift service handles it. (exit() from a plain signal handler is not
    /// async-signal-safe: it can stop in malloc's lock whatever the package does.)
    @Test(arguments: ["sigterm-dispatch"], [false, true])
    func sigtermWithAnExitHandler(_ scenario: String, preloadedLibcrypto: Bool) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("sigterm.db")
        try await Self.makeFile(path, encrypted: true)
        let run = try await offThePool { try Self.run(scenario, path, preloadedLibcrypto, signalOnReady: SIGTERM) }
        #expect(run.endedInTime && !run.signaled && run.status == 0, "\(scenario): \(run)")
        try await Self.checkFile(scenario, path)
    }

    /// fork() with connections open and tasks reading: each child exits at once, without waiting
    /// for the parent's threads, and the parent keeps reading. (A child that opens a database
    /// can block on a lock of SQLite that a thread of the parent held at the moment of the fork,
    /// in either mode: after fork() in a threaded program only async-signal-safe calls are safe.)
    @Test(arguments: ["fork-idle"], [false, true])
    func forkedChildrenExit(_ scenario: String, preloadedLibcrypto: Bool) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("fork.db")
        try await Self.makeFile(path, encrypted: true)
        let run = try await offThePool { try Self.run(scenario, path, preloadedLibcrypto) }
        #expect(run.endedInTime && !run.signaled && run.status == 0 && run.stdout.contains("forks ok"), "\(scenario): \(run)")
        try await Self.checkFile(scenario, path)
    }

    /// The same forks with a SQLCipher 4.7 or later (`SQLCIPHERKIT_NEWER_LIBRARY`), which frees its
    /// memory in an atexit handler of its own under SQLite's and its own memory mutexes: a child
    /// forked while a reader of the parent held one of them hung in exit() for ever (most runs,
    /// measured with 4.9.0 and 4.7.0). The bridge now holds those mutexes across fork().
    @Test(.enabled(if: NewerReleaseInteropTests.library != nil && isSQLCipher4(),
                   "needs SQLCIPHERKIT_NEWER_LIBRARY and a SQLCipher 4 file"),
          arguments: [false, true])
    func forkedChildrenOfANewerReleaseExit(preloadedLibcrypto: Bool) async throws {
        let newer = try #require(NewerReleaseInteropTests.library)
        for round in 1...5 {
            let dir = TemporaryDirectory()
            let path = dir.path("fork.db")
            try await Self.makeFile(path, encrypted: true)
            let run = try await offThePool { try Self.run("fork-idle", path, preloadedLibcrypto, library: newer) }
            #expect(run.endedInTime && !run.signaled && run.status == 0 && run.stdout.contains("forks ok"),
                    "round \(round): \(run)")
            try await Self.checkFile("fork-idle", path)
        }
    }

    /// Threads that used the library and ended, then 300 threads opening databases at exit.
    @Test(arguments: [false, true])
    func manyThreadsAtExit(preloadedLibcrypto: Bool) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("threads.db")
        try await Self.makeFile(path, encrypted: true)
        let run = try await offThePool { try Self.run("threads", path, preloadedLibcrypto) }
        #expect(run.endedInTime && !run.signaled && run.status == 0, "\(run)")
        try await Self.checkFile("threads", path)
    }

    /// A connection waiting in SQLite's busy handler for a lock that another connection of the
    /// process holds (in a transaction that will never end): exit() must not wait out the busy
    /// timeout (8 s here).
    @Test(arguments: [false, true])
    func exitWhileAConnectionWaitsForALock(preloadedLibcrypto: Bool) async throws {
        for round in 1...3 {
            let dir = TemporaryDirectory()
            let path = dir.path("busy.db")
            try await Self.makeFile(path, encrypted: true)
            let run = try await offThePool { try Self.run("busy", path, preloadedLibcrypto) }
            #expect(run.endedInTime && !run.signaled && run.status == 0 && run.seconds < 4, "round \(round): \(run)")
            try await Self.checkFile("busy", path)
            let db = try Database(path: path, rawKey: Self.key)
            #expect(try await db.query("SELECT count(*) FROM t WHERE v IN ('held', 'waited')")[0].decode(0, as: Int.self) == 0)
            await db.close()
        }
    }

    // MARK: Support

    /// A file of table `t(id, v, b)` with ``rows`` rows; plaintext for `encrypt`.
    static func makeFile(_ path: String, encrypted: Bool) async throws {
        let db = encrypted ? try Database(path: path, rawKey: key) : try Database(unencryptedPath: path)
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB, b INTEGER)")
        try await db.transaction { c in
            for _ in 0..<rows { try c.execute("INSERT INTO t(v) VALUES (randomblob(300))") }
        }
        await db.close()
    }

    /// What a run of the helper did.
    struct Run: CustomStringConvertible, Sendable {
        var status: Int32 = -1
        var signaled = false
        var endedInTime = false
        var seconds = 0.0
        var stdout = ""
        var stderr = ""
        var description: String {
            "status \(status), signaled \(signaled), ended in time \(endedInTime), \(String(format: "%.1f", seconds)) s, "
                + "stdout: \(stdout.split(separator: "\n").joined(separator: " | ")), stderr: \(stderr.prefix(400))"
        }
    }

    /// Runs `exit-during SCENARIO PATH` and waits at most 30 seconds for it (then kills it: a
    /// hang). With `signalOnReady`, sends that signal once the child prints `ready`.
    /// Runs `scenario` in a child; `library` replaces the library the child loads (the test
    /// process's own when nil).
    static func run(_ scenario: String, _ path: String, _ preloadedLibcrypto: Bool, signalOnReady: Int32? = nil,
                    library: String? = nil) throws -> Run {
        var arguments = ["exit-during", scenario, path, "raw:" + hex(key)]
        if preloadedLibcrypto {
            _ = try SqlCipherLibrary.shared
            let libcrypto = try #require(KeyDerivation.cryptoLibraryPath, "the loaded library's libcrypto was not found")
            arguments.append(URL(fileURLWithPath: libcrypto).lastPathComponent)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: productPath("sqlcipherkit-test-helper"))
        process.arguments = arguments
        if let library {
            var environment = ProcessInfo.processInfo.environment
            environment[SqlCipherLibrary.environmentVariable] = library
            process.environment = environment
        }
        process.standardInput = FileHandle.nullDevice
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        let start = Date()
        try launch(process)
        let pid = process.processIdentifier
        nonisolated(unsafe) var outData = Data(), errData = Data()
        let readers = DispatchGroup()
        blockingOnAThreadOfItsOwn(readers) {
            let handle = out.fileHandleForReading
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                outData.append(chunk)
                if let signalOnReady, String(decoding: outData, as: UTF8.self).contains("ready\n") {
                    kill(pid, signalOnReady)
                }
            }
        }
        blockingOnAThreadOfItsOwn(readers) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        var run = Run()
        run.endedInTime = ended.wait(timeout: .now() + 30) == .success
        if !run.endedInTime {
            kill(pid, SIGKILL)
            ended.wait()
        }
        run.seconds = Date().timeIntervalSince(start)
        readers.wait()
        run.status = process.terminationStatus
        run.signaled = process.terminationReason == .uncaughtSignal
        run.stdout = String(decoding: outData, as: UTF8.self)
        run.stderr = String(decoding: errData, as: UTF8.self)
        return run
    }

    /// The file after `scenario`: it opens with exactly one of the two keys (or, for `encrypt`,
    /// as plaintext or with the key), passes integrity_check, and holds the old or the new state
    /// of the interrupted work, never a part of it.
    static func checkFile(_ scenario: String, _ path: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        // One opening at a time, each closed before the next: on SQLCipher 3.4.1 (SQLite 3.15.2)
        // a connection that fails with the wrong key can checkpoint and remove the -wal when it
        // closes, under another connection of this process (reliability.md, "Observations").
        var keys: [Data?] = []
        for candidate in [key, otherKey, nil] as [Data?] where candidate != nil || scenario == "encrypt" {
            guard let opened = try? await openChecked(path, key: candidate) else { continue }
            await opened.close()
            keys.append(candidate)
        }
        #expect(keys.count == 1, "\(scenario): the file opens with \(keys.count) of key, other key, plaintext",
                sourceLocation: sourceLocation)
        guard keys.count == 1, let db = try? await openChecked(path, key: keys[0]) else { return }
        defer { Task { await db.close() } }
        #expect(try await db.query("PRAGMA integrity_check")[0].decode(0, as: String.self) == "ok", sourceLocation: sourceLocation)
        #expect(try await db.query("SELECT count(*) FROM t WHERE b IS NULL")[0].decode(0, as: Int.self) >= rows,
                sourceLocation: sourceLocation)
        let partial = try await db.query("SELECT b FROM t WHERE b IS NOT NULL GROUP BY b HAVING count(*) != 20")
        #expect(partial.isEmpty, "\(scenario): transactions saved in part", sourceLocation: sourceLocation)
        if scenario == "migrate" {
            let tables = try await db.query("SELECT count(*) FROM sqlite_master WHERE name = 'm'")[0].decode(0, as: Int.self)
            if tables == 1 {
                #expect(try await countRows(db, table: "m") == 2000, "a migration saved in part", sourceLocation: sourceLocation)
            }
        }
        if scenario == "export" || scenario == "backup", FileManager.default.fileExists(atPath: path + ".copy") {
            let header = FileManager.default.contents(atPath: path + ".copy")?.prefix(16) ?? Data()
            #expect(header != Data("SQLite format 3\0".utf8), "the copy is plaintext", sourceLocation: sourceLocation)
            let copy = try await openChecked(path + ".copy", key: otherKey)
            #expect(try await countRows(copy) >= rows, sourceLocation: sourceLocation)
            await copy.close()
        }
    }

    /// Opens `path` with `key` (nil: as plaintext) and reads its schema, which fails unless the
    /// key is the file's.
    static func openChecked(_ path: String, key: Data?) async throws -> Database {
        let db = key.map { try? Database(path: path, rawKey: $0) } ?? (try? Database(unencryptedPath: path))
        guard let db else { throw CancellationError() }
        do {
            _ = try await db.query("SELECT count(*) FROM sqlite_master")
            return db
        } catch {
            await db.close()
            throw error
        }
    }
}
