import Dispatch
import Foundation
import Synchronization
import Testing
@testable import SqlCipherKit

/// What one connection reports of the settings a configuration sets.
private struct ConnectionSettings: Equatable, Sendable {
    var synchronous: Int
    var cacheSize: Int
    var busyTimeout: Int
    var queryOnly: Int
    var recursiveTriggers: Int

    static func read(_ conn: borrowing Connection) throws -> ConnectionSettings {
        func value(_ pragma: String) throws -> Int { try conn.query("PRAGMA \(pragma)")[0].get(0, as: Int.self) ?? -1 }
        return ConnectionSettings(
            synchronous: try value("synchronous"), cacheSize: try value("cache_size"),
            busyTimeout: try value("busy_timeout"), queryOnly: try value("query_only"),
            recursiveTriggers: try value("recursive_triggers"))
    }
}

/// Counts the connections `prepareConnection` ran on, by role (query_only tells a reader).
private final class PrepareLog: Sendable {
    private let counts = Mutex((writers: 0, readers: 0))
    func record(_ conn: borrowing Connection) throws {
        let reader = try conn.query("PRAGMA query_only")[0].get(0, as: Int.self) == 1
        counts.withLock { counts in
            if reader {
                counts.readers += 1
            } else {
                counts.writers += 1
            }
        }
    }
    var writers: Int { counts.withLock { $0.writers } }
    var readers: Int { counts.withLock { $0.readers } }
}

/// A configuration unlike the defaults in every setting, whose preparation sets a pragma a pool
/// refuses as raw SQL and records the connection.
private func tuned(_ log: PrepareLog) -> DatabaseConfiguration {
    var configuration = DatabaseConfiguration()
    configuration.synchronous = .normal
    configuration.pageCacheKiB = 1234
    configuration.busyTimeout = .milliseconds(2500)
    configuration.prepareConnection = { conn in
        try conn.execute("PRAGMA recursive_triggers = ON")
        try log.record(conn)
    }
    return configuration
}

/// Runs `count` reads at once, each holding its reader until all have started, so that the pool
/// opens `count` readers; returns what each reader reported.
private func settingsOfReaders(_ pool: DatabasePool, count: Int) async throws -> [ConnectionSettings] {
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    return try await withThrowingTaskGroup(of: ConnectionSettings.self) { group in
        for _ in 0..<count {
            group.addTask {
                try await pool.read { conn in
                    started.signal()
                    _ = wait(release, seconds: 60)
                    return try ConnectionSettings.read(conn)
                }
            }
        }
        for _ in 0..<count { #expect(await signalled(started, seconds: 60)) }
        for _ in 0..<count { release.signal() }
        return try await group.reduce(into: []) { $0.append($1) }
    }
}

@Suite("DatabaseConfiguration")
struct DatabaseConfigurationTests {
    @Test func everyConnectionOfAPoolIsSetUpAlike() async throws {
        let dir = TemporaryDirectory()
        let log = PrepareLog()
        let pool = try DatabasePool(path: dir.path("p.db"), key: "configured", maximumReaderCount: 3,
                                    configuration: tuned(log))
        let writer = try await pool.transaction { conn in try ConnectionSettings.read(conn) }
        let expected = ConnectionSettings(synchronous: 1, cacheSize: -1234, busyTimeout: 2500, queryOnly: 0,
                                          recursiveTriggers: 1)
        #expect(writer == expected)
        let readers = try await settingsOfReaders(pool, count: 3)
        #expect(pool.openReaderCount == 3)
        var readerExpected = expected
        readerExpected.queryOnly = 1
        #expect(readers == Array(repeating: readerExpected, count: 3))
        #expect(log.writers == 1 && log.readers == 3)
        #expect(pool.configuration.synchronous == .normal)
        await pool.close()
    }

    @Test func readersOpenedAfterARekeyAreSetUpToo() async throws {
        let dir = TemporaryDirectory()
        let log = PrepareLog()
        let pool = try DatabasePool(path: dir.path("r.db"), key: "before", maximumReaderCount: 2,
                                    configuration: tuned(log))
        try await pool.execute("CREATE TABLE t(v)")
        _ = try await settingsOfReaders(pool, count: 2)
        let readersBefore = log.readers
        try await pool.rekey("after")
        let readers = try await settingsOfReaders(pool, count: 2)
        #expect(readers.allSatisfy { $0.synchronous == 1 && $0.cacheSize == -1234 && $0.recursiveTriggers == 1 })
        // The rekey closed the old readers; each reader serving now was opened, and prepared, after it.
        #expect(log.readers >= readersBefore + 2)
        await pool.close()
    }

    @Test func aDatabaseIsSetUpAndKeepsTheDefaultsOtherwise() async throws {
        let dir = TemporaryDirectory()
        let log = PrepareLog()
        let db = try Database(path: dir.path("d.db"), rawKey: rawKey(), configuration: tuned(log))
        let settings = try await db.read { conn in try ConnectionSettings.read(conn) }
        #expect(settings == ConnectionSettings(synchronous: 1, cacheSize: -1234, busyTimeout: 2500, queryOnly: 0,
                                               recursiveTriggers: 1))
        #expect(log.writers == 1)
        await db.close()

        let plain = try Database(unencryptedPath: dir.path("plain.db"))
        let defaults = try await plain.read { conn in try ConnectionSettings.read(conn) }
        #expect(defaults == ConnectionSettings(synchronous: 2, cacheSize: -Database.defaultPageCacheKiB,
                                               busyTimeout: 5000, queryOnly: 0, recursiveTriggers: 0))
        await plain.close()
    }

    /// Before the configuration existed, these ran on the writer (or one reader) and left the
    /// other connections as they were.
    @Test(arguments: ["PRAGMA synchronous = NORMAL", "PRAGMA cache_size = -100", "pragma Main.Foreign_Keys=off",
                      "PRAGMA busy_timeout(10)", "PRAGMA recursive_triggers = ON", "PRAGMA query_only = 1",
                      "PRAGMA locking_mode = EXCLUSIVE", "PRAGMA mmap_size = 0"])
    func aPoolRefusesPerConnectionPragmasAsRawSQL(_ sql: String) async throws {
        let dir = TemporaryDirectory()
        let log = PrepareLog()
        // The preparation ran the same statement: a cached copy must not let raw SQL through.
        var configuration = tuned(log)
        configuration.prepareConnection = { conn in try conn.execute("PRAGMA recursive_triggers = ON") }
        let pool = try DatabasePool(path: dir.path("p.db"), rawKey: rawKey(), configuration: configuration)
        let before = try await pool.transaction { conn in try ConnectionSettings.read(conn) }
        for attempt in 0..<4 {
            do {
                switch attempt {
                case 0: try await pool.execute(sql)
                case 1: _ = try await pool.query(sql)
                case 2: try await pool.transaction { conn in try conn.execute(sql) }
                default: _ = try await pool.read { conn in try conn.query(sql) }
                }
                Issue.record("\(sql) ran on the pool (attempt \(attempt))")
            } catch let error as SqlCipherError {
                guard case .perConnectionPragma(let name, let shown) = error else {
                    Issue.record("unexpected error \(error)")
                    continue
                }
                #expect(!name.isEmpty && shown == sql)
                #expect(error.description.contains("DatabaseConfiguration"))
                #expect(error.description.contains("was not run"))
            }
        }
        #expect(try await pool.transaction { conn in try ConnectionSettings.read(conn) } == before)
        // Reading the pragma is allowed.
        #expect(try await pool.query("PRAGMA synchronous")[0].get(0, as: Int.self) == 1)
        await pool.close()
    }

    @Test func aDatabaseStillTakesPerConnectionPragmasAsRawSQL() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("d.db"), rawKey: rawKey())
        try await db.execute("PRAGMA synchronous = NORMAL")
        try await db.execute("PRAGMA cache_size = -100")
        #expect(try await db.query("PRAGMA synchronous")[0].get(0, as: Int.self) == 1)
        #expect(try await db.query("PRAGMA cache_size")[0].get(0, as: Int.self) == -100)
        await db.close()
    }

    /// The package's own uses of per-connection pragmas on a pool's writer still run: a
    /// migration that rebuilds a table turns foreign keys off and `legacy_alter_table` on.
    @Test func migrationsThatRebuildATableRunOnAPool() async throws {
        let dir = TemporaryDirectory()
        let pool = try DatabasePool(path: dir.path("m.db"), rawKey: rawKey())
        let parents = TableName("parents")
        let migrations = [
            StepMigration("001", up: { ctx in
                try ctx.execute("CREATE TABLE parents(id INTEGER PRIMARY KEY, name TEXT, extra TEXT)")
                try ctx.execute("CREATE TABLE children(id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parents(id))")
                try ctx.execute("INSERT INTO parents(id, name, extra) VALUES (1, 'p', 'x')")
                try ctx.execute("INSERT INTO children(parent) VALUES (1)")
            }),
            StepMigration("002", foreignKeyChecks: .deferred, up: { ctx in
                try ctx.execute(AlterTable(parents, dropColumn: "extra"))
            }),
        ]
        try await pool.migrate(migrations, forceTableRebuild: true)
        let columns = try await pool.query("PRAGMA table_info(parents)").compactMap { $0.get(1, as: String.self) }
        #expect(columns == ["id", "name"])
        #expect(try await pool.query("SELECT count(*) FROM children")[0].get(0, as: Int.self) == 1)
        #expect(try await pool.query("PRAGMA foreign_keys")[0].get(0, as: Int.self) == 1)
        #expect(try await pool.transaction { conn in try conn.query("PRAGMA foreign_keys")[0].get(0, as: Int.self) } == 1)
        await pool.close()
    }

    @Test func thePreparationCannotSetWhatTheEncryptionForbids() async throws {
        let dir = TemporaryDirectory()
        var configuration = DatabaseConfiguration()
        configuration.prepareConnection = { conn in try conn.execute("PRAGMA temp_store = FILE") }
        let path = dir.path("t.db")
        #expect {
            _ = try DatabasePool(path: path, rawKey: rawKey(), configuration: configuration)
        } throws: { error in
            guard case SqlCipherError.unsafePragma(let name, _, _) = error else { return false }
            return name.lowercased() == "temp_store"
        }
        // The failed initialiser created the file and removed it again.
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func anErrorOfThePreparationFailsTheOpeningWithThatError() async throws {
        struct Refused: Error, Equatable {}
        let dir = TemporaryDirectory()
        var configuration = DatabaseConfiguration()
        configuration.prepareConnection = { _ in throw Refused() }
        let path = dir.path("e.db")
        #expect(throws: Refused.self) { _ = try Database(path: path, key: "k", configuration: configuration) }
        #expect(!FileManager.default.fileExists(atPath: path))

        // A reader whose preparation fails fails the read that needed it; the writer goes on.
        let readerFails = Mutex(false)
        configuration.prepareConnection = { conn in
            let reader = try conn.query("PRAGMA query_only")[0].get(0, as: Int.self) == 1
            if reader && readerFails.withLock({ $0 }) { throw Refused() }
        }
        let pool = try DatabasePool(path: path, rawKey: rawKey(), configuration: configuration)
        try await pool.execute("CREATE TABLE t(v)")
        readerFails.withLock { $0 = true }
        await #expect(throws: Refused.self) { _ = try await pool.query("SELECT count(*) FROM t") }
        try await pool.execute("INSERT INTO t VALUES (1)")
        readerFails.withLock { $0 = false }
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await pool.close()
    }

    /// A preparation that opens a database in the folder of a database being created: the
    /// creation holds the folder's lock until its opening ends, so the inner opening waited 30
    /// seconds for its own thread and then blamed "another connection" and "a process stuck"
    /// (found by the attack review). It now fails at once, saying why, for a `Database`, a pool
    /// and the same path; the folder is free again afterwards.
    @Test func anOpeningFromInsideTheCreationOfADatabaseInItsFolderFailsAtOnce() async throws {
        let dir = TemporaryDirectory()
        let inner = Mutex<[String]>([])
        func configuration(opening path: String) -> DatabaseConfiguration {
            var configuration = DatabaseConfiguration()
            configuration.prepareConnection = { _ in
                do {
                    _ = try Database(path: path, key: "k", cipher: fastCipher)
                } catch {
                    inner.withLock { $0.append("\(error)") }
                    throw error
                }
            }
            return configuration
        }
        func expectWaitForItself(_ label: String, _ error: (any Error)?) {
            guard case SqlCipherError.cannotOpen(_, let reason)? = error else {
                Issue.record("\(label): expected cannotOpen, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("would wait for itself") && reason.contains("prepareConnection")
                    && !reason.contains("another connection"), "\(label): \(reason)")
        }
        let sibling = dir.path("sibling.db")
        expectWaitForItself("Database", #expect(throws: SqlCipherError.self) {
            try Database(path: dir.path("outer.db"), key: "k", cipher: fastCipher, configuration: configuration(opening: sibling))
        })
        expectWaitForItself("DatabasePool", #expect(throws: SqlCipherError.self) {
            try DatabasePool(path: dir.path("pool.db"), key: "k", cipher: fastCipher, configuration: configuration(opening: sibling))
        })
        let same = dir.path("same.db")
        expectWaitForItself("the same path", #expect(throws: SqlCipherError.self) {
            try Database(path: same, key: "k", cipher: fastCipher, configuration: configuration(opening: same))
        })
        #expect(inner.withLock { $0.count } == 3)
        // The lock went with the failed openings: the folder takes new databases again.
        let db = try Database(path: sibling, key: "k", cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        #expect(!FileManager.default.fileExists(atPath: dir.path("outer.db")))
    }

    @Test func aReadOnlyDatabaseIsPreparedAndStaysReadOnly() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("ro.db")
        let db = try Database(path: path, rawKey: rawKey())
        try await db.execute("CREATE TABLE t(v)")
        await db.close()
        let ran = Mutex(false)
        var configuration = DatabaseConfiguration()
        configuration.synchronous = .extra
        configuration.prepareConnection = { conn in
            ran.withLock { $0 = true }
            try conn.execute("INSERT INTO t VALUES (1)")
        }
        #expect(throws: SqlCipherError.self) {
            _ = try Database(path: path, rawKey: rawKey(), readOnly: true, configuration: configuration)
        }
        #expect(ran.withLock { $0 })
        configuration.prepareConnection = nil
        let reader = try Database(path: path, rawKey: rawKey(), readOnly: true, configuration: configuration)
        #expect(try await reader.query("PRAGMA synchronous")[0].get(0, as: Int.self) == 3)
        await reader.close()
    }

    @Test func settingsOutOfRangeAreRefusedBeforeAnythingIsCreated() throws {
        let dir = TemporaryDirectory()
        var invalid: [DatabaseConfiguration] = []
        for change in 0..<4 {
            var configuration = DatabaseConfiguration()
            switch change {
            case 0: configuration.pageCacheKiB = -1
            case 1: configuration.pageCacheKiB = Int(Int32.max) + 1
            case 2: configuration.busyTimeout = .milliseconds(-5)
            default: configuration.busyTimeout = .seconds(Int64(Int32.max))
            }
            invalid.append(configuration)
        }
        for (index, configuration) in invalid.enumerated() {
            let path = dir.path("invalid\(index).db")
            #expect {
                _ = try Database(path: path, rawKey: rawKey(), configuration: configuration)
            } throws: { error in
                guard case SqlCipherError.invalidConfiguration(let reason) = error else { return false }
                return reason.contains("pageCacheKiB") || reason.contains("busyTimeout")
            }
            #expect(throws: SqlCipherError.self) {
                _ = try DatabasePool(path: path, rawKey: rawKey(), configuration: configuration)
            }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    /// The busy timeout decides how long a write waits for another connection's lock: with
    /// `.zero` it fails at once with SQLITE_BUSY; with the default it waits until the lock is
    /// released (sequenced by the holder, not by a sleep).
    @Test func theBusyTimeoutDecidesWhetherAWriteWaitsForALock() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("busy.db")
        let holder = try Database(path: path, rawKey: rawKey())
        try await holder.execute("CREATE TABLE t(v)")
        var impatient = DatabaseConfiguration()
        impatient.busyTimeout = .zero
        let other = try Database(path: path, rawKey: rawKey(), configuration: impatient)
        let locked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holding = Task {
            try await holder.transaction { conn in
                try conn.execute("INSERT INTO t VALUES (1)")
                locked.signal()
                _ = wait(release, seconds: 60)
            }
        }
        #expect(await signalled(locked, seconds: 60))
        await #expect {
            try await other.execute("INSERT INTO t VALUES (2)")
        } throws: { error in
            guard case SqlCipherError.sqlite(let code, _, _, _) = error else { return false }
            // SQLite's bare "database is locked" comes with its cause and the remedy.
            let text = "\(error)"
            return code == 5 && text.contains("database is locked") && text.contains("another connection")
                && text.contains("busyTimeout")
        }
        // With the default timeout, a write started while the lock is held succeeds once the
        // holder ends its transaction (the release comes after the write started or while it
        // waits; either way it must succeed).
        let patient = try Database(path: path, rawKey: rawKey())
        let write = Task { try await patient.execute("INSERT INTO t VALUES (3)") }
        release.signal()
        _ = try await write.value
        try await holding.value
        #expect(try await patient.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 2)
        await holder.close()
        await other.close()
        await patient.close()
    }

    /// Every pragma of the list is refused on a pool (SQLite asks the authorizer before it looks
    /// the name up, so also those the loaded SQLite does not know), and the error's documentation
    /// names each one.
    @Test func everyPerConnectionPragmaIsRefusedOnAPoolAndDocumented() async throws {
        let dir = TemporaryDirectory()
        let pool = try DatabasePool(path: dir.path("all.db"), rawKey: rawKey())
        let names = SQLiteConnection.perConnectionPragmas.map { $0.description }
        for name in names {
            await #expect(throws: SqlCipherError.perConnectionPragma(name: name, sql: "PRAGMA \(name) = 0")) {
                try await pool.execute("PRAGMA \(name) = 0")
            }
        }
        await pool.close()
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/SqlCipherKit/Errors/SqlCipherError.swift")
        let text = try String(contentsOf: source, encoding: .utf8)
        guard let start = text.range(of: "The pragmas whose setting lives in the connection"),
              let end = text.range(of: "case perConnectionPragma", range: start.upperBound..<text.endIndex) else {
            Issue.record("the list is gone from the documentation of perConnectionPragma")
            return
        }
        let documented = text[start.upperBound..<end.lowerBound]
        for name in names { #expect(documented.contains("`\(name)`"), "\(name) is not documented") }
    }

    /// The examples of the Configuration article, as written there.
    @Test func theArticleExamplesRun() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("article.db"), otherPath = dir.path("other.db")
        let passphrase = "article passphrase"
        var configuration = DatabaseConfiguration()
        configuration.synchronous = .normal
        configuration.pageCacheKiB = 32 * 1024
        configuration.busyTimeout = .seconds(10)
        configuration.filePermissions = 0o640
        configuration.prepareConnection = { conn in
            try conn.execute("PRAGMA recursive_triggers = ON")
        }
        let pool = try DatabasePool(path: path, key: passphrase, configuration: configuration)
        let db = try Database(path: otherPath, key: passphrase, configuration: configuration)

        do {
            try await pool.execute("PRAGMA synchronous = NORMAL")
        } catch SqlCipherError.perConnectionPragma(let name, _) {
            print("set \(name) with DatabaseConfiguration")   // synchronous
        }
        // The block above ends quietly either way: the refusal itself is checked here.
        await #expect(throws: SqlCipherError.perConnectionPragma(name: "synchronous", sql: "PRAGMA synchronous = NORMAL")) {
            try await pool.execute("PRAGMA synchronous = NORMAL")
        }

        configuration.prepareConnection = { conn in
            let isReader = try conn.query("PRAGMA query_only")[0].get(0, as: Int.self) == 1
            if !isReader {
                try conn.execute("PRAGMA journal_size_limit = 1048576")
            }
        }
        await pool.close()
        let reopened = try DatabasePool(path: path, key: passphrase, configuration: configuration)
        #expect(try await reopened.transaction { conn in
            try conn.query("PRAGMA journal_size_limit")[0].get(0, as: Int.self)
        } == 1_048_576)
        #expect(try await reopened.query("PRAGMA journal_size_limit")[0].get(0, as: Int.self) == -1)
        #expect(try await db.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) == 1)
        let mode = try FileManager.default.attributesOfItem(atPath: otherPath)[.posixPermissions] as? Int
        #expect(mode == 0o640)
        await reopened.close()
        await db.close()
    }
}
