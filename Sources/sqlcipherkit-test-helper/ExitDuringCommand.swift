import Foundation
import SqlCipherKit
import Synchronization

/// Exits while the package is in the middle of SCENARIO on PATH (a file of table
/// `t(id INTEGER PRIMARY KEY, v TEXT)`, opened with KEY; for `encrypt`, a plaintext file), as a
/// process that stops or returns from its top-level code does. Prints `exiting STATUS` once the
/// work is under way, then exits with STATUS. The parent checks the status, that the process ended
/// in time, and the file afterwards. Scenarios:
/// - work running in detached tasks at the moment of exit: `pool-write` (transactions of 20 rows,
///   batch number in `b`), `rekey`, `pool-rekey` (between KEY and the key whose bytes are KEY's
///   complemented), `export`, `backup` (to PATH.copy with the complemented key), `encrypt`
///   (`Database.encryptInPlace` of a plaintext PATH with KEY), `migrate` (a migration adding
///   table `m` with 2000 rows), `observe` (a live query while a task writes), `stream` (a
///   `DatabaseStream` of `t`);
/// - exit(7) called from inside the package's closures, while four tasks read a pool: `in-read`,
///   `in-transaction` (after inserting a row that must not survive), `in-function` (a custom SQL
///   function), `in-prepare` (`prepareConnection` of a new `Database`), `in-trace` (a trace
///   observer), `in-rekey-progress` (the progress closure of a pool's rekey);
/// - `atexit-before`, `atexit-after`: an `atexit` handler registered before the library is loaded
///   (or after a database was opened) inserts the row `atexit` with the open `Database` and waits
///   for it, as a program that saves its state at exit does; prints `atexit wrote` then;
/// - `sigterm-signal`, `sigterm-dispatch`: a SIGTERM handler (a plain signal handler, or a
///   dispatch signal source) calls exit(0) while tasks read; prints `ready` for the parent's kill;
/// - `fork-idle`, `fork-open`: forks 10 children while tasks read a pool; each child exits at once
///   (or opens PATH with KEY first); the parent reaps each within 5 seconds, reads again, and
///   prints `forks ok`;
/// - `threads`: 300 threads each open PATH in a loop (raw key) while earlier threads have ended;
/// - `busy`: a `Database` waits (busy timeout 8 s) for the write lock another one holds in an
///   unfinished transaction.
/// With LIBCRYPTO, that library is loaded and initialised first (exit-while-reading's way).
let exitDuringCommand = HelperCommand(
    name: "exit-during",
    usage: "exit-during SCENARIO PATH raw:<hex> [LIBCRYPTO]: exits in the middle of SCENARIO (see ExitDuringCommand.swift)"
) { arguments in
    guard arguments.count == 3 || arguments.count == 4 else {
        throw DatabaseHelperError(message: "usage: exit-during SCENARIO PATH raw:<hex> [LIBCRYPTO]")
    }
    let scenario = arguments[0], path = arguments[1]
    if arguments.count == 4 { try initialiseLibcrypto(arguments[3]) }
    guard case .raw(let keyBytes) = try HelperKey(arguments[2]) else {
        throw DatabaseHelperError(message: "exit-during takes a raw: key")
    }
    let key = DatabaseKey.rawKey(keyBytes)
    let otherKey = DatabaseKey.rawKey(Data(keyBytes.map { ~$0 }))
    let started = DispatchSemaphore(value: 0)
    let once = Mutex(false)
    let signalOnce: @Sendable () -> Void = {
        if once.withLock({ let first = !$0; $0 = true; return first }) { started.signal() }
    }
    var status: Int32 = 0

    switch scenario {
    case "pool-write":
        let pool = try DatabasePool(path: path, key: key)
        for task in 0..<3 {
            Task.detached {
                for batch in 0... {
                    _ = try? await pool.transaction { c in
                        for _ in 0..<20 { try c.execute("INSERT INTO t(v, b) VALUES (randomblob(200), ?)", task * 1_000_000 + batch) }
                    }
                    signalOnce()
                }
            }
        }
    case "rekey", "pool-rekey":
        let access: any DatabaseAccess = scenario == "rekey" ? try Database(path: path, key: key) : try DatabasePool(path: path, key: key)
        startReaders(access, 2)
        Task.detached {
            let progress: @Sendable (DatabaseProgress) -> Void = { if $0.completed > 0 { signalOnce() } }
            for round in 0... {
                let next = round % 2 == 0 ? otherKey : key
                if let db = access as? Database { try? await db.rekey(next, progress: progress) }
                if let pool = access as? DatabasePool { try? await pool.rekey(next, progress: progress) }
            }
        }
    case "export", "backup":
        let db = try Database(path: path, key: key)
        startReaders(db, 2)
        Task.detached {
            let progress: @Sendable (DatabaseProgress) -> Void = { if $0.completed > 0 { signalOnce() } }
            if scenario == "export" {
                try? await db.export(to: path + ".copy", key: otherKey, progress: progress)
            } else {
                try? await db.backup(to: path + ".copy", key: otherKey, pagesPerStep: 4, progress: progress)
            }
            signalOnce()
        }
    case "encrypt":
        Task.detached {
            _ = try? Database.encryptInPlace(path: path, key: key, progress: { if $0.completed > 0 { signalOnce() } })
            signalOnce()
        }
    case "migrate":
        let db = try Database(path: path, key: key)
        Task.detached {
            try? await db.migrate([FillingMigration(started: signalOnce)])
            signalOnce()
        }
    case "observe":
        let db = try Database(path: path, key: key)
        Task.detached {
            var seen = 0
            for try await _ in db.values(of: .query("SELECT count(*), sum(length(v)) FROM t")) {
                seen += 1
                if seen == 2 { signalOnce() }
            }
        }
        Task.detached {
            while true { _ = try? await db.execute("INSERT INTO t(v) VALUES (randomblob(300))") }
        }
    case "stream":
        let db = try Database(path: path, key: key)
        Task.detached {
            while true {
                var rows = 0
                for try await _ in db.stream("SELECT * FROM t", batchSize: 16) {
                    rows += 1
                    if rows == 10 { signalOnce() }
                }
            }
        }
    case "in-read", "in-transaction", "in-function", "in-prepare", "in-trace", "in-rekey-progress":
        status = 7
        var configuration = DatabaseConfiguration()
        configuration.pageCacheKiB = 8
        let pool = try DatabasePool(path: path, key: key, configuration: configuration)
        startReaders(pool, 4, signalling: signalOnce)
        started.wait()
        report("exiting 7")
        do {
        switch scenario {
        case "in-read":
            _ = try waitForDatabaseWork {
                try await pool.read { _ -> Int in
                    if getpid() > 0 { exit(7) }
                    return 0
                }
            }
        case "in-transaction":
            _ = try waitForDatabaseWork {
                try await pool.transaction { c in
                    try c.execute("INSERT INTO t(v) VALUES ('must not survive')")
                    exit(7)
                }
            }
        case "in-function":
            try waitForDatabaseWork {
                try await pool.add(function: DatabaseFunction("bye") { () -> Int in
                    if getpid() > 0 { exit(7) }
                    return 0
                })
                _ = try await pool.execute("INSERT INTO t(v) VALUES (bye())")
            }
        case "in-rekey-progress":
            // The progress closure runs inside the rekey's call of the library.
            try waitForDatabaseWork {
                try await pool.rekey(otherKey, progress: { if $0.completed > 0 { exit(7) } })
            }
        case "in-prepare":
            var exiting = DatabaseConfiguration()
            exiting.prepareConnection = { _ in exit(7) }
            _ = try Database(path: path, key: key, configuration: exiting)
        default:
            try waitForDatabaseWork {
                try await pool.trace { _ in exit(7) }
                _ = try await pool.execute("INSERT INTO t(v) VALUES ('traced')")
            }
        }
        } catch where "\(error)".contains("the process is exiting") {
            // The closure runs on another thread (a trace observer's), which is in exit(7) now:
            // the call here was refused. Exiting too would race that exit for the status; the
            // program waits for it, as one that knows another thread ends the process would.
            while true { pause() }
        }
        throw DatabaseHelperError(message: "\(scenario): the closure did not run")
    case "busy":
        // One Database holds the write lock inside a transaction; another (busy timeout 8 s)
        // waits for it in SQLite's busy handler when the process exits.
        var patient = DatabaseConfiguration()
        patient.busyTimeout = .seconds(8)
        let holder = try Database(path: path, key: key)
        let waiter = try Database(path: path, key: key, configuration: patient)
        let holding = DispatchSemaphore(value: 0)
        Task.detached {
            try? await holder.transaction { c in
                try c.execute("INSERT INTO t(v) VALUES ('held')")
                holding.signal()
                DispatchSemaphore(value: 0).wait()  // a futex wait, never a sleep (see below)
            }
        }
        holding.wait()
        Task.detached { _ = try? await waiter.execute("INSERT INTO t(v) VALUES ('waited')") }
        // The handshake: SQLite's busy handler sleeps between its attempts, and no other thread
        // of this process sleeps (the others wait on futexes), so a thread in nanosleep or
        // clock_nanosleep is the waiter inside its busy wait.
        while !threadSleeps() { usleep(1000) }
        signalOnce()
    case "atexit-before", "atexit-after":
        if scenario == "atexit-before" { atexit(writeAtExit) }
        let db = try Database(path: path, key: key)
        atExitDatabase.withLock { $0 = db }
        if scenario == "atexit-after" { atexit(writeAtExit) }
        startReaders(db, 2, signalling: signalOnce)
    case "sigterm-signal", "sigterm-dispatch":
        let pool = try DatabasePool(path: path, key: key)
        if scenario == "sigterm-signal" {
            signal(SIGTERM) { _ in exit(0) }
        } else {
            signal(SIGTERM, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
            source.setEventHandler { exit(0) }
            source.resume()
            sigtermSource = source
        }
        startReaders(pool, 4, signalling: signalOnce)
        started.wait()
        report("ready")
        while true { sleep(60) }  // until SIGTERM
    case "fork-idle", "fork-open":
        let pool = try DatabasePool(path: path, key: key)
        startReaders(pool, 4, signalling: signalOnce)
        started.wait()
        for round in 0..<10 {
            let child = fork()
            if child == 0 {
                if scenario == "fork-open", let own = try? Database(path: path, key: key) { _ = own }
                exit(0)
            }
            guard child > 0 else { throw DatabaseHelperError(message: "fork failed") }
            var childStatus: Int32 = 0
            let deadline = Date().addingTimeInterval(5)
            while waitpid(child, &childStatus, WNOHANG) == 0 {
                if Date() > deadline {
                    report("child \(round) hangs")
                    kill(child, SIGKILL)
                    _ = waitpid(child, &childStatus, 0)
                    return 1
                }
                usleep(1000)
            }
            guard childStatus == 0 else {
                report("child \(round) ended with wait status \(childStatus)")
                return 1
            }
            _ = try waitForDatabaseWork { try await pool.query("SELECT count(*) FROM t") }
        }
        report("forks ok")
        return 0
    case "threads":
        let ended = DispatchSemaphore(value: 0)
        for _ in 0..<200 {  // threads that use the library and end: their slots are given back
            Thread {
                _ = try? Database(path: path, key: key)
                ended.signal()
            }.start()
        }
        for _ in 0..<200 { ended.wait() }
        let opened = DispatchSemaphore(value: 0)
        for _ in 0..<300 {
            Thread {
                var first = true
                while true {
                    _ = try? Database(path: path, key: key)
                    if first { first = false; opened.signal() }
                }
            }.start()
        }
        for _ in 0..<300 { opened.wait() }
        signalOnce()
    default:
        throw DatabaseHelperError(message: "exit-during: unknown scenario \(scenario)")
    }
    started.wait()
    report("exiting \(status)")
    return status
}

/// Whether a thread of this process is in nanosleep (35) or clock_nanosleep (230) on x86_64, as
/// /proc/self/task/*/syscall shows.
private func threadSleeps() -> Bool {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.contains { task in
        let call = (try? String(contentsOfFile: "/proc/self/task/\(task)/syscall", encoding: .utf8))?
            .split(separator: " ").first
        return call == "35" || call == "230"
    }
}

/// The database the `atexit` handler of `atexit-before` and `atexit-after` writes to.
private let atExitDatabase = Mutex<Database?>(nil)
/// Keeps `sigterm-dispatch`'s signal source alive.
nonisolated(unsafe) private var sigtermSource: (any DispatchSourceSignal)?

/// The `atexit` handler: saves a row with the open database and waits for it, as a program that
/// saves its state at exit does.
private func writeAtExit() {
    guard let db = atExitDatabase.withLock({ $0 }) else { return }
    do {
        _ = try waitForDatabaseWork { try await db.execute("INSERT INTO t(v) VALUES ('atexit')") }
        report("atexit wrote")
    } catch {
        report("atexit failed: \(error)")
    }
}

/// Starts `count` detached tasks that count the rows of `t` in a loop; each calls `signalling`
/// after its first read.
private func startReaders(_ access: any DatabaseAccess, _ count: Int, signalling: (@Sendable () -> Void)? = nil) {
    for _ in 0..<count {
        Task.detached {
            var first = true
            while true {
                _ = try? await access.query("SELECT count(*), sum(length(v)) FROM t")
                if first, let signalling { first = false; signalling() }
            }
        }
    }
}

/// A migration that creates table `m` and fills it with 2000 rows, calling `started` after the
/// first 100.
private struct FillingMigration: Migration {
    let started: @Sendable () -> Void
    var id: String { "fill-m" }
    func up(_ ctx: MigrationContext) throws {
        _ = try ctx.execute("CREATE TABLE m(id INTEGER PRIMARY KEY, v BLOB)")
        for row in 0..<2000 {
            _ = try ctx.execute("INSERT INTO m(v) VALUES (randomblob(300))")
            if row == 100 { started() }
        }
    }
    func down(_ ctx: MigrationContext) throws {}
}
