import Dispatch
import Foundation
import Testing
@testable import SqlCipherKit

private var cli: String { isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3 }

private let productCount = LiveRequest(placeholder: -1) { conn in
    try conn.query("SELECT count(*) FROM products")[0].get(0, as: Int.self) ?? -1
}

/// A pool with a `products` table and an unrelated `logs` table, keyed with a raw key.
private func makePool(_ dir: TemporaryDirectory) async throws -> DatabasePool {
    let pool = try DatabasePool(path: dir.path("live.db"), rawKey: rawKey(5))
    try await pool.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
    try await pool.execute("CREATE TABLE logs(msg TEXT)")
    return pool
}

@Suite("Live queries on a pool and across connections")
struct PoolLiveQueryTests {
    @Test func aPoolObservationSeesTheWritersCommitsAndOnlyThoseThatChangeIt() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir)
        let reader = LiveReader(pool.values(of: productNames))
        #expect(try await reader.next() == [])
        try await pool.execute("INSERT INTO products(name, price) VALUES ('apple', 1)")
        #expect(try await reader.next() == ["apple"])
        // A write to another table, then a sentinel: the next value is the sentinel's state.
        try await pool.execute("INSERT INTO logs VALUES ('unrelated')")
        try await pool.transaction { conn in
            try conn.execute("INSERT INTO products(name, price) VALUES ('banana', 2)")
            try conn.execute("INSERT INTO products(name, price) VALUES ('cherry', 3)")
        }
        #expect(try await reader.next() == ["apple", "banana", "cherry"])
        // A rolled-back transaction changes nothing.
        await #expect(throws: CancellationError.self) {
            try await pool.transaction { conn in
                try conn.execute("DELETE FROM products")
                throw CancellationError()
            }
        }
        try await pool.execute("DELETE FROM products WHERE name = 'apple'")
        #expect(try await reader.next() == ["banana", "cherry"])
        await pool.close()
    }

    /// A loop waiting for the next value of a pool that is then closed ends with
    /// `databaseClosed`, as one on a closed Database does; it used to wait for ever.
    @Test func closingThePoolEndsTheLoopsWaitingForAValue() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir)
        let reader = LiveReader(pool.values(of: productCount))
        #expect(try await reader.next() == 0)
        // The loop may park on its signal before the close or find the pool closed at its next
        // fetch: both must end with `databaseClosed`. The guard only stops a hang; CI failed once
        // with a 10 s guard on a loaded machine, so it is the default one.
        let waiting = Task { try await reader.next() }
        await Task.yield()
        await pool.close()
        await #expect(throws: SqlCipherError.databaseClosed) { _ = try await waiting.value }
    }

    @Test func observersFetchOnReadersWhileTheWriterIsHeld() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir)
        try await pool.execute("INSERT INTO products(name, price) VALUES ('apple', 1)")
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writer = Task {
            try await pool.transaction { conn in
                try conn.execute("INSERT INTO products(name, price) VALUES ('pending', 9)")
                holding.signal()
                // Only a hang guard: under a full run's load on 3.4.1 the reader's first fetch
                // (a reader opening, with its key derivation) once took over the default 60 s.
                return wait(release, seconds: 600)
            }
        }
        #expect(await signalled(holding))
        // The first value comes from a reader, without the writer, and without the pending row.
        let reader = LiveReader(pool.values(of: productCount))
        #expect(try await reader.next() == 1)
        release.signal()
        #expect(try await writer.value)
        #expect(try await reader.next() == 2)
        await pool.close()
    }

    @Test func aLiveQueryObjectFollowsAPool() async throws {
        let dir = TemporaryDirectory()
        let pool = try await makePool(dir)
        let query = await LiveQuery(productCount, database: pool)
        try await waitUntil { await query.value == 0 }
        #expect(await query.value == 0)
        try await pool.execute("INSERT INTO products(name, price) VALUES ('apple', 1)")
        try await waitUntil { await query.value == 1 }
        #expect(await query.value == 1)
        await pool.close()
    }

    /// Another connection rekeys the file while a database and a pool observe it with the old
    /// key. The watch for commits of others read `data_version`, which then fails with
    /// `SQLITE_NOTADB`, took that for a busy file and skipped the check, every time: the
    /// observers waited for ever for a next value. The failure now counts as a change, so each
    /// observer fetches again and ends with the key-changed error.
    @Test(arguments: ["Database", "DatabasePool"])
    func observersOfAFileRekeyedByAnotherConnectionEndWithAnError(_ kind: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("rekeyed.db")
        let pool = try DatabasePool(path: path, rawKey: rawKey(), maximumReaderCount: 2)
        try await pool.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT, price INTEGER)")
        let db = try Database(path: path, rawKey: rawKey())
        let other = try Database(path: path, rawKey: rawKey())
        let observed: any DatabaseAccess = kind == "Database" ? db : pool
        let first = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        let next = Task {
            defer { ended.signal() }
            var iterator = observed.values(of: productCount).makeAsyncIterator()
            #expect(try await iterator.next() == 0)
            first.signal()
            return try await iterator.next()
        }
        #expect(await signalled(first, seconds: 60))
        try await other.rekey(rawKey: rawKey(30))
        try await other.execute("INSERT INTO products(name, price) VALUES ('pear', 2)")
        let returned = await signalled(ended, seconds: 60)
        #expect(returned, "an observer of a \(kind) waited for ever after another connection's rekey")
        if !returned { next.cancel() }
        switch await next.result {
        case .success(let value): Issue.record("a value after the rekey: \(String(describing: value))")
        case .failure(let error):
            #expect((error as? SqlCipherError)?.description.contains("changed the key (rekey)") == true, "\(error)")
        }
        await other.close()
        await db.close()
        await pool.close()
    }

    @Test func aDatabaseSeesCommitsOfAnotherConnectionInTheSameProcess() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("two.db")
        let observed = try Database(path: path, rawKey: rawKey(5))
        try await observed.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
        let other = try Database(path: path, rawKey: rawKey(5))
        let reader = LiveReader(observed.values(of: productCount))
        #expect(try await reader.next() == 0)
        // How soon is measured by the benchmark (live.externalChange), not here.
        try await other.execute("INSERT INTO products(name, price) VALUES ('elsewhere', 1)")
        #expect(try await reader.next() == 1)
        await observed.close()
        await other.close()
    }

    @Test(arguments: [false, true])
    func aCommitByAnotherProcessIsSeen(pooled: Bool) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("process.db")
        let setup = try Database(path: path, key: "shared passphrase", cipher: CipherSettings(kdfIterations: 2000))
        try await setup.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
        await setup.close()
        let access: any DatabaseAccess = pooled
            ? try DatabasePool(path: path, key: "shared passphrase", cipher: CipherSettings(kdfIterations: 2000))
            : try Database(path: path, key: "shared passphrase", cipher: CipherSettings(kdfIterations: 2000))
        let reader = LiveReader(access.values(of: productCount))
        #expect(try await reader.next() == 0)
        // The real sqlcipher tool, in a child process, commits a row.
        _ = try SqlcipherCLI.run(cli, path, [
            SqlcipherCLI.keyPragma(passphrase: "shared passphrase"), "PRAGMA kdf_iter = 2000",
            "INSERT INTO products(name, price) VALUES ('from the cli', 1)",
        ])
        #expect(try await reader.next() == 1)
        await access.close()
    }

    /// Another process removes the observed file and creates a new one at its path (a reset):
    /// the old file's `data_version` never moves again, so the observation showed the old file's
    /// rows for ever, and the database's writes went to the old file. The watch now sees the file
    /// gone from its path, and the observation ends with the "replaced or moved" error, as does
    /// every later call of that `Database` or pool (reopening the path is the way on).
    @Test(arguments: [false, true])
    func anObservedFileRecreatedByAnotherProcessEndsTheObservation(pooled: Bool) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("reset.db")
        let key = rawKey(5)
        let db: any DatabaseAccess = pooled ? try DatabasePool(path: path, rawKey: key) : try Database(path: path, rawKey: key)
        try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
        try await db.execute("INSERT INTO products(name, price) VALUES ('old', 1)")
        let reader = LiveReader(db.values(of: productCount))
        #expect(try await reader.next() == 1)
        try runChild("/bin/rm", ["-f", path, path + "-wal", path + "-shm"])
        let created = try runHelper(["create-database", path, "rollback", "0", hex(key), hex(Data(repeating: 7, count: 16)), "new"])
        try #require(created.stdout.contains("created"), "\(created.stdout) \(created.stderr)")
        let isMovedError: @Sendable (any Error) -> Bool = { error in
            guard case SqlCipherError.sqlite(_, let extended, let message, _) = error else { return false }
            return extended == 1032 && message.contains("replaced or moved")
        }
        await #expect(performing: { _ = try await reader.next(guardTime: .seconds(30)) }, throws: isMovedError)
        await #expect(performing: { _ = try await db.query("SELECT count(*) FROM products") }, throws: isMovedError)
        await #expect(performing: { try await db.execute("INSERT INTO products(name, price) VALUES ('lost', 2)") },
                      throws: isMovedError)
        if let pool = db as? DatabasePool { await pool.close() }
        if let single = db as? Database { await single.close() }
        let reopened = try Database(path: path, rawKey: key)
        #expect(try await reopened.query("SELECT v FROM t").first?.get("v", as: String.self) == "new")
        await reopened.close()
    }

    /// Another process changes the observed file's key (the helper's `rekey-loop`): the watch can
    /// no longer read the file's version (`SQLITE_NOTADB`), counts that as a change, and the
    /// observation's next fetch ends it with the typed "changed the key" error, rather than the
    /// observation waiting for ever or showing rows of a file it can no longer read. In rollback
    /// mode too (a `Database`), where the version comes from the file's header.
    @Test(arguments: [("database", JournalMode.wal), ("database", .rollback), ("pool", .wal)])
    func anObservationEndsWithTheKeyChangeOfAnotherProcess(kind: String, mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("rekeyed.db")
        let key = rawKey(5), newKey = rawKey(6)
        let setup = try Database(path: path, rawKey: key, journalMode: mode)
        try await setup.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
        await setup.close()
        let db: any DatabaseAccess = kind == "pool" ? try DatabasePool(path: path, rawKey: key) : try Database(path: path, rawKey: key)
        let reader = LiveReader(db.values(of: productCount))
        #expect(try await reader.next() == 0)
        let result = try runHelper(["rekey-loop", path, "raw:" + hex(key), "raw:" + hex(newKey), "1"])
        try #require(result.status == 0, "\(result.stdout) \(result.stderr)")
        await #expect(performing: { _ = try await reader.next(guardTime: .seconds(30)) }, throws: { error in
            "\(error)".contains("changed the key (rekey)")
        })
        if let pool = db as? DatabasePool { await pool.close() }
        if let single = db as? Database { await single.close() }
        let reopened = try Database(path: path, rawKey: newKey)
        #expect(try await reopened.query("SELECT count(*) FROM products")[0].get(0, as: Int.self) == 0)
        await reopened.close()
    }

    @Test func theWatchRunsOnlyWhileSomethingIsObserved() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("watch.db"), rawKey: rawKey(5))
        try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
        #expect(!db.externalWatch.isRunning)
        let task = Task {
            var count = 0
            for try await _ in db.values(of: productCount) {
                count += 1
                if count == 2 { break }
            }
        }
        try await waitUntil { db.externalWatch.isRunning }
        try await db.execute("INSERT INTO products(name, price) VALUES ('a', 1)")
        try await task.value
        // The loop ended: the observation is dropped at the next check, and the watch with it.
        try await waitUntil { !db.externalWatch.isRunning }
        await db.close()
    }

    /// The pool's watch is the same mechanism: it ends when nothing is observed, and the next
    /// observation starts it again and sees another connection's commit.
    @Test func aPoolsWatchEndsWithItsObservationsAndStartsAgainForTheNext() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("poolwatch.db")
        let pool = try DatabasePool(path: path, rawKey: rawKey(5))
        try await pool.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
        #expect(!pool.observations.watch.isRunning)
        let first = Task { for try await _ in pool.values(of: productCount) {} }
        try await waitUntil { pool.observations.watch.isRunning }
        // Cancelled, the loop removes its observation; the watch ends at its next check.
        first.cancel()
        _ = await first.result
        try await waitUntil { !pool.observations.watch.isRunning }
        let other = try Database(path: path, rawKey: rawKey(5))
        let second = LiveReader(pool.values(of: productCount))
        #expect(try await second.next() == 0)
        #expect(pool.observations.watch.isRunning)
        try await other.execute("INSERT INTO products(name, price) VALUES ('elsewhere', 1)")
        #expect(try await second.next() == 1)
        await other.close()
        await pool.close()
        #expect(!pool.observations.watch.isRunning)
    }
}
