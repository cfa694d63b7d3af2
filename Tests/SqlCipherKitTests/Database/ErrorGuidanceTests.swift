import Dispatch
import Foundation
import SqlCipherKit
import Testing

/// Error messages that tell the user the way that exists: the API they name is real, the hint
/// fits the loaded library, and a reason that ends a sentence does not end the message twice.
@Suite struct ErrorGuidanceTests {
    /// What SQLite echoes of a statement that may hold a key (`VACUUM`, `ATTACH`, key pragmas) is
    /// masked in its error, and the package's advice after SQLite's words was masked with it: a
    /// `VACUUM` that met another process's lock said only "database is locked: ***", and one
    /// after another process's rekey "file is not a database: ***". The advice now stays.
    @Test(arguments: ["lock", "rekey"])
    func aVacuumThatMeetsAnotherProcessKeepsTheAdvice(_ other: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        let key = rawKey(72)
        var configuration = DatabaseConfiguration()
        configuration.busyTimeout = .milliseconds(100)
        let db = try Database(path: path, rawKey: key, journalMode: .rollback, configuration: configuration)
        try await db.execute("CREATE TABLE t(v)")
        var holder: KillableChild?
        if other == "lock" {
            let child = try KillableChild(helperArguments: ["hold-lock", path, "raw:" + hex(key), "read"])
            holder = child
            try #require(child.waitForLine(startingWith: "held") != nil, "\(child.lines) \(child.standardError)")
        } else {
            let result = try runChild(productPath("sqlcipherkit-test-helper"),
                                      ["rekey-loop", path, "raw:" + hex(key), "raw:" + hex(rawKey(73)), "1"])
            try #require(result.status == 0, "\(result.stdout) \(result.stderr)")
        }
        let error = try await #require(throws: SqlCipherError.self) { try await db.execute("VACUUM") }
        let advice = other == "lock" ? "DatabaseConfiguration.busyTimeout" : "changed the key (rekey)"
        #expect(error.description.contains(advice), "\(error)")
        #expect(!error.description.contains("***"), "\(error)")
        holder?.killAndCollect()
        await db.close()
    }

    /// A virtual table whose module the loaded SQLite lacks (FTS5 on SQLCipher 3.4.1, a table of a
    /// file SQLCipher 4 made; a module of another program's build) failed with SQLite's bare "no
    /// such module: fts5" (found by the review of files other programs write). The error now says
    /// the library lacks it, that the other tables read, and which build has FTS5.
    @Test func aVirtualTableWhoseModuleIsMissingSaysWhatToDo() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("m.db"), key: "k", cipher: fastCipher)
        try await db.execute("CREATE TABLE kept(x); INSERT INTO kept VALUES (1)")
        var statements = ["CREATE VIRTUAL TABLE v USING no_such_module_here(x)"]
        if !isSQLCipher4() { statements.append("CREATE VIRTUAL TABLE f USING fts5(body)") }
        for sql in statements {
            let error = try await #require(throws: SqlCipherError.self) { try await db.execute(sql) }
            #expect(error.description.contains("was built without this virtual-table module"), "\(error)")
            #expect(error.description.contains(SqlCipherLibrary.environmentVariable), "\(error)")
        }
        #expect(try await db.query("SELECT count(*) FROM kept")[0].get(0, as: Int.self) == 1)
        await db.close()
    }

    /// An opening that waited out its busy timeout for another process's exclusive lock said
    /// "This statement did not take effect … raise busyTimeout in `SELECT count(*) FROM
    /// sqlite_master WHERE type = 'table' AND rootpage = 0`": a statement the caller never wrote.
    /// It now says that the database was not opened, and names no statement; the code stays
    /// SQLite's `SQLITE_BUSY`. (Rollback mode: in WAL mode a writer's lock does not stop a read.)
    @Test func anOpeningThatMeetsALockNamesTheOpening() async throws {
        let mode = JournalMode.rollback
        let dir = TemporaryDirectory()
        let path = dir.path("held.db")
        let key = rawKey(74)
        let db = try Database(path: path, rawKey: key, journalMode: mode)
        try await db.execute("CREATE TABLE t(v)")
        await db.close()
        let holder = try KillableChild(helperArguments: ["hold-lock", path, "raw:" + hex(key), "exclusive"])
        try #require(holder.waitForLine(startingWith: "held") != nil, "\(holder.lines) \(holder.standardError)")
        var configuration = DatabaseConfiguration()
        configuration.busyTimeout = .milliseconds(100)
        let error = try #require(throws: SqlCipherError.self) {
            try Database(path: path, rawKey: key, journalMode: mode, configuration: configuration)
        }
        guard case .sqlite(let code, _, _, let sql) = error else {
            Issue.record("not SQLite's busy error: \(error)")
            return
        }
        #expect(code & 0xFF == 5, "\(error)")
        #expect(sql == nil, "\(error)")
        #expect(error.description.contains("The database was not opened"), "\(error)")
        #expect(error.description.contains("DatabaseConfiguration.busyTimeout"), "\(error)")
        #expect(!error.description.contains("sqlite_master") && !error.description.contains("statement"), "\(error)")
        holder.killAndCollect()
        // Nothing of the file changed: it opens and reads once the lock is gone.
        let reopened = try Database(path: path, rawKey: key, journalMode: mode)
        #expect(try await reopened.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 0)
        await reopened.close()
    }

    /// A write in a transaction that began without the write lock (a hand-written `BEGIN` or
    /// `SAVEPOINT`) and has read fails at once when another connection
    /// writes or has committed since: SQLite does not wait then, whatever the busy timeout
    /// (waiting could deadlock). The message said to raise the busy timeout, which changes
    /// nothing; it now says to run the transaction again or to use `transaction { }`. A write in
    /// autocommit mode that waited out its busy timeout keeps the advice about the timeout.
    @Test(arguments: [JournalMode.wal, .rollback])
    func aDeferredTransactionThatMeetsAWriterIsToldToRetryOrBeginImmediately(_ mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        var patient = DatabaseConfiguration()
        patient.busyTimeout = .seconds(60)
        let db = try Database(path: path, rawKey: rawKey(74), journalMode: mode, configuration: patient)
        try await db.execute("CREATE TABLE t(v)")
        var quick = DatabaseConfiguration()
        quick.busyTimeout = .milliseconds(50)
        let other = try Database(path: path, rawKey: rawKey(74), configuration: quick)
        let deferredAdvice = "use transaction { }, which begins with BEGIN IMMEDIATE"
        func expectDeferredAdvice(_ error: SqlCipherError) {
            #expect(error.description.contains(deferredAdvice), "\(error)")
            #expect(!error.description.contains("raise busyTimeout"), "\(error)")
        }
        // Runs `body` while `holder` holds the write lock in a transaction of its own.
        func whileHolding(_ holder: Database, _ body: () async throws -> Void) async throws {
            let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            let writer = Task {
                try await holder.transaction { conn in
                    try conn.execute("INSERT INTO t VALUES ('held')")
                    holding.signal()
                    release.wait()
                }
            }
            #expect(await signalled(holding))
            do { try await body() } catch { release.signal(); throw error }
            release.signal()
            try await writer.value
        }
        try await whileHolding(other) {
            try await db.execute("SAVEPOINT by_hand")
            _ = try await db.query("SELECT count(*) FROM t")
            expectDeferredAdvice(try await #require(throws: SqlCipherError.self) {
                try await db.execute("INSERT INTO t VALUES ('lost')")
            })
            try await db.execute("ROLLBACK")
            try await db.execute("BEGIN")
            _ = try await db.query("SELECT count(*) FROM t")
            expectDeferredAdvice(try await #require(throws: SqlCipherError.self) {
                try await db.execute("INSERT INTO t VALUES ('lost')")
            })
            try await db.execute("ROLLBACK")
        }
        if mode == .wal {
            // Another connection committed after this transaction's first read: SQLITE_BUSY_SNAPSHOT.
            try await db.execute("BEGIN")
            _ = try await db.query("SELECT count(*) FROM t")
            try await other.execute("INSERT INTO t VALUES ('committed')")
            expectDeferredAdvice(try await #require(throws: SqlCipherError.self) {
                try await db.execute("INSERT INTO t VALUES ('lost')")
            })
            try await db.execute("ROLLBACK")
        }
        // A write in autocommit mode waits out its busy timeout: the advice about the timeout stays.
        try await whileHolding(db) {
            let error = try await #require(throws: SqlCipherError.self) { try await other.execute("INSERT INTO t VALUES ('lost')") }
            #expect(error.description.contains("DatabaseConfiguration.busyTimeout"), "\(error)")
            #expect(!error.description.contains(deferredAdvice), "\(error)")
        }
        #expect(try await db.query("SELECT count(*) FROM t WHERE v = 'lost'")[0].get(0, as: Int.self) == 0)
        await other.close()
        await db.close()
    }

    /// `load_extension()` failed with SQLite's bare "not authorized", which names neither the cause
    /// (the package never enables extension loading) nor what to use instead; called directly, from
    /// a view, from a trigger, on an encrypted and a plaintext database (found by the fuzzing pass).
    /// `PRAGMA journal_mode = DELETE` (or any mode but WAL) on a WAL file that another connection
    /// has open, here another process's `DatabasePool` (the helper's `pool-read`), fails at once:
    /// SQLite leaves WAL mode only while no other connection has the file open, and does not wait.
    /// The message said that a lock was held longer than the busy timeout and to raise it, which
    /// changes nothing; it now says what stands in the way. The other process's reads go on
    /// untouched. In rollback mode, where nothing of this holds, a busy file keeps the usual advice.
    @Test(arguments: [JournalMode.wal, .rollback])
    func leavingWALBesideAnotherProcesssConnectionSaysWhatStandsInTheWay(_ mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db"), stop = dir.path("stop")
        let key = rawKey(75)
        var configuration = DatabaseConfiguration()
        configuration.busyTimeout = .milliseconds(100)
        let db = try Database(path: path, rawKey: key, journalMode: mode, configuration: configuration)
        try await db.execute("CREATE TABLE t(body)")
        try await db.execute("INSERT INTO t VALUES ('abc')")
        let other = mode == .wal
            ? try KillableChild(helperArguments: ["pool-read", path, "raw:" + hex(key), stop])
            : try KillableChild(helperArguments: ["hold-lock", path, "raw:" + hex(key), "exclusive"])
        try #require(other.waitForLine(startingWith: mode == .wal ? "reading" : "held") != nil,
                     "\(other.lines) \(other.standardError)")
        for sql in ["PRAGMA journal_mode = DELETE", "PRAGMA main.journal_mode = 'memory'", "PRAGMA journal_mode(OFF)"] {
            do {
                let answer = try await db.query(sql)
                #expect(mode == .rollback, "\(sql) left WAL beside another process's pool: \(answer)")
            } catch let error as SqlCipherError {
                guard case .sqlite(5, _, _, _) = error else {
                    Issue.record("\(sql): \(error)")
                    continue
                }
                let leavingWAL = error.description.contains("takes a file out of it only while no other connection")
                #expect(leavingWAL == (mode == .wal), "\(sql): \(error)")
                #expect(error.description.contains("raise busyTimeout") == (mode == .rollback), "\(sql): \(error)")
            }
        }
        if mode == .wal {
            _ = FileManager.default.createFile(atPath: stop, contents: nil)
            #expect(other.waitForExit() == 0 && other.lines.last?.contains("errors 0") == true, "\(other.lines)")
            #expect(try await db.query("PRAGMA journal_mode")[0].get(0, as: String.self) == "wal")
        } else {
            other.killAndCollect()
        }
        await db.close()
    }

    @Test func aRefusedLoadExtensionSaysWhyAndWhatToUse() async throws {
        let dir = TemporaryDirectory()
        for db in [try Database(path: dir.path("a.db"), rawKey: rawKey(), cipher: fastCipher),
                   try Database(unencryptedPath: dir.path("plain.db"))] {
            try await db.execute("CREATE TABLE t(v); CREATE TABLE log(v)")
            try await db.execute("CREATE VIEW ext AS SELECT load_extension('/usr/lib/x86_64-linux-gnu/libm.so.6') AS v")
            try await db.execute("CREATE TRIGGER load AFTER INSERT ON t BEGIN INSERT INTO log SELECT load_extension('x'); END")
            for sql in ["SELECT load_extension('/usr/lib/x86_64-linux-gnu/libm.so.6')", "SELECT * FROM ext",
                        "INSERT INTO t VALUES (1)"] {
                let error = try await #require(throws: SqlCipherError.self) { try await db.execute(sql) }
                #expect(error.description.contains("SqlCipherKit never enables extension loading"), "\(error)")
                #expect(error.description.contains("add(function:)"), "\(error)")
            }
            #expect(try await db.query("SELECT count(*) FROM t UNION ALL SELECT count(*) FROM log").map { $0.get(0, as: Int.self) } == [0, 0])
            await db.close()
        }
    }

    @Test func readOnlyViolationNamesTheRealWriteAPI() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("r.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE t(x)")
        let error = try await #require(throws: SqlCipherError.self) {
            try await db.read { conn in try conn.execute("INSERT INTO t(x) VALUES (1)") }
        }
        guard case .readOnlyViolation = error else {
            Issue.record("expected readOnlyViolation, got \(error)")
            return
        }
        #expect(!error.description.contains("db.write"))
        #expect(error.description.contains("db.transaction { ... } or db.savepoint { ... }"))
        await db.close()
    }

    /// SQLCipher 3 cannot read a 4.x file whatever the settings: the hint must say the file needs
    /// SQLCipher 4, not suggest `CipherSettings.sqlcipher3` (which 3.4.1 refuses anyway).
    @Test(.enabled(if: !isSQLCipher4(), "SQLCipher 3 only")) func aVersion4FileOnSQLCipher3NeedsSQLCipher4() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("v4.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [
            SqlcipherCLI.keyPragma(passphrase: "secret"), "CREATE TABLE t(x)", "INSERT INTO t VALUES (1)",
        ])
        let error = try #require(throws: SqlCipherError.self) { try Database(path: path, key: "secret") }
        guard case .keyFailed(_, let reason) = error else {
            Issue.record("expected keyFailed, got \(error)")
            return
        }
        #expect(reason.contains("a SQLCipher 4 file needs SQLCipher 4"))
        #expect(reason.contains("the loaded library is SQLCipher 3.4"))
        #expect(!reason.contains("CipherSettings.sqlcipher3"))
    }

    /// On SQLCipher 4 a file it cannot open may be a 3.x file, which the setting opens.
    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func aWrongKeyOnSQLCipher4PointsAtTheVersion3Setting() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("k.db")
        let db = try Database(path: path, key: "secret")
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        let error = try #require(throws: SqlCipherError.self) { try Database(path: path, key: "other") }
        #expect(error.description.contains("a SQLCipher 3 file needs CipherSettings.sqlcipher3 on SQLCipher 4"))
    }

    /// Files written by the real 4.6.1 CLI with other settings (another HMAC or KDF digest, no
    /// HMAC) or in an older format (SQLCipher 2) are refused as `keyFailed` whose reason names each
    /// way out: the digest settings, the upgrade for older formats, `usesHMAC: false` for no HMAC.
    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only"),
          arguments: ["cipher_hmac_algorithm = HMAC_SHA256", "cipher_kdf_algorithm = PBKDF2_HMAC_SHA256",
                      "cipher_use_hmac = OFF", "cipher_compatibility = 2"])
    func filesWithOtherSettingsNameTheWaysOut(pragma: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("other.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [
            SqlcipherCLI.keyPragma(passphrase: "secret"), "PRAGMA " + pragma, "CREATE TABLE t(x)", "INSERT INTO t VALUES (1)",
        ])
        let before = try dir.snapshot()
        let error = try #require(throws: SqlCipherError.self) { try Database(path: path, key: "secret") }
        guard case let .keyFailed(_, reason) = error else {
            Issue.record("expected keyFailed, got \(error)")
            return
        }
        #expect(reason.contains("upgradeFromSqlCipher3") && reason.contains("CipherSettings(kdfAlgorithm:hmacAlgorithm:)")
            && reason.contains("cipher_use_hmac = OFF") && reason.contains("CipherSettings(usesHMAC: false)")
            && !reason.contains("secret"))
        #expect(try dir.snapshot().mapValues(\.0) == before.mapValues(\.0))
    }

    /// The reason of a failed migration is another error's description, a full sentence.
    @Test func aFailedMigrationsMessageEndsInOnePeriod() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("m.db"), rawKey: rawKey())
        let broken = StepMigration("001-broken", up: { ctx in try ctx.execute("INSERT INTO no_such_table VALUES (1)") })
        let error = try await #require(throws: SqlCipherError.self) { try await db.migrate([broken]) }
        guard case .migrationFailed(_, let reason) = error else {
            Issue.record("expected migrationFailed, got \(error)")
            return
        }
        #expect(reason.hasSuffix("."))
        #expect(error.description.hasSuffix("`INSERT INTO no_such_table VALUES (1)`."))
        #expect(!error.description.contains(".."))
        await db.close()
    }

    @Test func everyReasonIsEndedOnce() {
        let errors: [SqlCipherError] = [
            .keyFailed(path: "/a.db", reason: "a reason."),
            .cannotOpen(path: "/a.db", reason: "a reason.  "),
            .invalidQuery(reason: "a reason."),
            .encodingFailed(entity: "E", reason: "a reason."),
            .migrationFailed(id: "1", reason: "a reason."),
            .rekeyFailed(path: "/a.db", reason: "a reason."),
            .conversionFailed(source: "/a.db", target: "/b.db", reason: "a reason."),
            .sqlite(code: 1, extendedCode: 1, message: "a message.", sql: nil),
        ]
        for error in errors {
            #expect(!error.description.contains(".."), "\(error.description)")
            #expect(error.description.contains("a reason") || error.description.contains("a message"))
        }
    }

    @Test func integrityChecksReadAsChecks() async throws {
        #expect("\(IntegrityReport.Check.cipherHMAC)" == "SQLCipher's page HMAC check (PRAGMA cipher_integrity_check)")
        #expect("\(IntegrityReport.Check.sqliteIntegrity)" == "SQLite's structural check (PRAGMA integrity_check)")
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("i.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE t(x)")
        let report = try await db.verifyIntegrity()
        #expect("\(report.checksRun)".contains("SQLite's structural check (PRAGMA integrity_check)"))
        if !isSQLCipher4() {
            #expect("\(report.skipped)".contains(
                "SQLCipher's page HMAC check (PRAGMA cipher_integrity_check) did not run: SQLCipher 3.4"))
        }
        await db.close()
    }

    /// SQLite's bare "database disk image is malformed" named neither the cause nor what to do. A
    /// file cut short (at a page boundary, or inside a page) now says so, with its size and the
    /// pages its header counts; a page damaged in place gets the causes and the remedy, whether the
    /// damage shows at the opening or at a later read.
    /// A plaintext file's advice named an HMAC, which its pages do not have.
    @Test(arguments: ["cut at a page", "cut inside a page", "damaged page", "cut plaintext", "damaged plaintext page"])
    func aDamagedFileSaysWhatItsSizeShows(_ damage: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("damaged.db")
        let encrypted = !damage.contains("plaintext")
        let key = rawKey(74)
        do {
            let db = encrypted ? try Database(path: path, rawKey: key, journalMode: .rollback)
                : try Database(unencryptedPath: path, journalMode: .rollback)
            try await db.execute("CREATE TABLE filler(body BLOB)")
            try await db.transaction { conn in
                for _ in 0..<400 { try conn.execute("INSERT INTO filler VALUES (randomblob(300))") }
            }
            await db.close()
        }
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let size = Int(try handle.seekToEnd())
        let pageSize = encrypted && !isSQLCipher4() ? 1024 : 4096
        let pages = size / pageSize
        try #require(size % pageSize == 0 && pages > 20, "unexpected layout: \(size) bytes")
        switch damage {
        case "cut inside a page":
            try handle.truncate(atOffset: UInt64((pages / 2) * pageSize + 100))
        case "damaged page":
            try handle.seek(toOffset: UInt64((pages / 2) * pageSize + 200))
            handle.write(Data(repeating: 0x5A, count: 64))
        case "damaged plaintext page":
            // The b-tree page header and cell pointers: no HMAC, SQLite's own checks find it.
            try handle.seek(toOffset: UInt64((pages / 2) * pageSize))
            handle.write(Data(repeating: 0x5A, count: 64))
        default:
            try handle.truncate(atOffset: UInt64((pages / 2) * pageSize))
        }
        try handle.close()

        let error = await #expect(throws: SqlCipherError.self) {
            let db = encrypted ? try Database(path: path, rawKey: key) : try Database(unencryptedPath: path)
            defer { Task { await db.close() } }
            _ = try await db.query("SELECT count(*), sum(length(body)) FROM filler")
        }
        if damage == "cut inside a page" {
            // Refused before the key is tried (every SQLCipher file is whole pages), saying both
            // what it may be and what to do for each.
            guard case let .notADatabase(_, reason)? = error else {
                Issue.record("expected notADatabase, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("a database cut short") && reason.contains("restore it from a backup"), "\(reason)")
            return
        }
        guard case let .sqlite(code, _, message, _)? = error else {
            Issue.record("expected SQLite's damage error, got \(String(describing: error))")
            return
        }
        #expect(code == 11, "\(message)")
        #expect(message.hasPrefix("database disk image is malformed: "), "\(message)")
        #expect(message.contains("verifyIntegrity()") && message.contains("restore the file from a backup"), "\(message)")
        switch damage {
        case "damaged page":
            #expect(message.contains("a page failed its checks (its HMAC") && !message.contains("cut short"), "\(message)")
        case "damaged plaintext page":
            #expect(message.contains("a page failed its checks (SQLite's own)") && !message.contains("HMAC"), "\(message)")
        case "cut plaintext":
            #expect(message.contains("cut short: it holds \((pages / 2) * pageSize) bytes (\(pages / 2) pages of "
                + "\(pageSize) bytes), and its header counts \(pages) pages"), "\(message)")
        default:
            #expect(message.contains("cut short: it holds \((pages / 2) * pageSize) bytes (\(pages / 2) pages of "
                + "\(pageSize) bytes), fewer than its header counts"), "\(message)")
        }
        #expect(!"\(error!)".contains(hex(key)))
    }

    /// A full disk (here the same `SQLITE_FULL` from a page limit, which a test can reach without
    /// filling a filesystem) said only "database or disk is full", after the package's own SQL when
    /// a backup's proof met it. It now says what filled, that nothing of the statement took
    /// effect, and to free space; the rows committed before are all there, and the database goes
    /// on working once there is room.
    @Test(arguments: [JournalMode.wal, .rollback])
    func aFullDiskSaysWhatToDo(_ mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("full.db"), rawKey: rawKey(5), journalMode: mode)
        try await db.execute("CREATE TABLE t(b BLOB)")
        let pages = try await db.query("PRAGMA page_count")[0].get(0, as: Int.self) ?? 0
        try await db.execute("PRAGMA max_page_count = \(pages + 8)")
        var committed = 0
        var failure: (any Error)?
        while failure == nil && committed < 1000 {
            do {
                try await db.transaction { conn in try conn.execute("INSERT INTO t VALUES (randomblob(3000))") }
                committed += 1
            } catch { failure = error }
        }
        guard case .sqlite(let code, _, let message, _)? = failure as? SqlCipherError else {
            Issue.record("no typed error: \(String(describing: failure))")
            return
        }
        #expect(code == 13)
        #expect(message.contains("no space left") && message.contains("did not take effect")
                    && message.contains("Free space"), "\(message)")
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == committed)
        try await db.execute("PRAGMA max_page_count = 1000000")
        try await db.execute("INSERT INTO t VALUES (randomblob(3000))")
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == committed + 1)
        await db.close()
    }

    /// A real full disk (a small tmpfs, filled through the database): the write, a backup and an
    /// export onto it each say what filled and to free space (the backup's error named only the
    /// package's own proof SQL); none leaves a file behind, and the database keeps every row it
    /// committed.
    @Test(.enabled(if: SmallFilesystem.isAvailable, "needs root to mount a small tmpfs"))
    func aRealFullDiskSaysWhatToDo() async throws {
        let disk = try #require(SmallFilesystem(kilobytes: 600))
        let db = try Database(path: disk.path("full.db"), rawKey: rawKey(6))
        try await db.execute("CREATE TABLE t(b BLOB)")
        var committed = 0
        var failure: (any Error)?
        while failure == nil && committed < 10_000 {
            do {
                try await db.execute("INSERT INTO t VALUES (randomblob(4000))")
                committed += 1
            } catch { failure = error }
        }
        #expect("\(String(describing: failure))".contains("no space left"), "\(String(describing: failure))")
        do {
            try await db.backup(to: disk.path("backup.db"), key: .rawKey(rawKey(7)))
            Issue.record("the backup onto a full disk succeeded")
        } catch {
            #expect("\(error)".contains("no space left") && "\(error)".contains("Free space"), "\(error)")
        }
        do {
            try await db.export(to: disk.path("export.db"), key: .rawKey(rawKey(8)))
            Issue.record("the export onto a full disk succeeded")
        } catch {
            #expect("\(error)".contains("no space left") && "\(error)".contains("Free space"), "\(error)")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: disk.folder.url.path)
        #expect(left.allSatisfy { $0.hasPrefix("full.db") }, "\(left)")
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == committed)
        await db.close()
    }

    /// A connection that still holds the old key after another connection's rekey is told why on
    /// every later statement. 3.4.1 and 4.6.1 answer each with SQLITE_NOTADB (the key-changed
    /// advice). SQLCipher 4.7 and later keep the connection's codec in error after the first page
    /// that failed to decrypt and answer every later statement with SQLITE_NOMEM: that used to
    /// reach the user as a bare "out of memory"; it now names the sticky error, the rekey and
    /// reopening (run the suite with SQLCIPHERKIT_LIBRARY naming a 4.7+ build to see that branch).
    @Test func aConnectionLeftBehindByARekeyIsToldWhyOnEveryLaterStatement() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("left-behind.db")
        let db = try Database(path: path, rawKey: rawKey(1))
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (1)")
        let other = try Database(path: path, rawKey: rawKey(1))
        try await other.rekey(rawKey: rawKey(2))
        await other.close()
        let sticks = (try loadedLibrary()).cipherVersionIsAtLeast(4, 7)
        for attempt in 1...3 {
            do {
                _ = try await db.query("SELECT count(*) FROM t")
                Issue.record("attempt \(attempt): the old key still read the rekeyed file")
            } catch let SqlCipherError.sqlite(code, _, message, _) {
                #expect(message.contains("changed the key (rekey)"), "attempt \(attempt): \(message)")
                #expect(code == 26 || (sticks && code == 7), "attempt \(attempt): code \(code)")
                if code == 7 {
                    #expect(message.contains("keeps a connection in error for good"), "\(message)")
                    #expect(message.contains("open the file again"), "\(message)")
                }
            }
        }
        await db.close()
        let again = try Database(path: path, rawKey: rawKey(2))
        #expect(try await again.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await again.close()
    }
}
