import Foundation
import SqlCipherKit
import Synchronization
import Testing

/// `rekey`: every key kind, both journal modes, verification, and failures that keep the old key.
@Suite struct RekeyTests {
    @Test(arguments: [JournalMode.wal, .rollback])
    func passphraseToPassphrase(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, key: "old", journalMode: mode, cipher: fastCipher)
        try await fill(db, rows: 200)
        try await db.rekey("new")
        // The same connection goes on working.
        #expect(try await countRows(db) == 200)
        try await db.execute("INSERT INTO t(body) VALUES ('after')")
        await db.close()
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "old", cipher: fastCipher) }
        let again = try Database(path: path, key: "new", cipher: fastCipher)
        #expect(try await countRows(again) == 201)
        #expect(again.journalMode == mode)
        #expect(try await again.verifyIntegrity().isOK)
    }

    @Test func passphraseToRawKeyAndBack() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, key: "words", cipher: fastCipher)
        try await fill(db, rows: 50)
        try await db.rekey(rawKey: rawKey(5))
        await db.close()
        let raw = try Database(path: path, rawKey: rawKey(5), cipher: fastCipher)
        #expect(try await countRows(raw) == 50)
        try await raw.rekey(.passphrase(Data([0, 1, 2, 0xFF])))
        await raw.close()
        #expect(throws: SqlCipherError.self) { try Database(path: path, rawKey: rawKey(5), cipher: fastCipher) }
        let bytes = try Database(path: path, key: .passphrase(Data([0, 1, 2, 0xFF])), cipher: fastCipher)
        #expect(try await countRows(bytes) == 50)
    }

    @Test func rekeyedFileOpensInTheCLI() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, key: "before")
        try await fill(db, rows: 10)
        try await db.rekey("after")
        await db.close()
        let cli = isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3
        #expect(try SqlcipherCLI.run(cli, path, [SqlcipherCLI.keyPragma(passphrase: "after"), "SELECT count(*) FROM t"]) == ["10"])
    }

    @Test func unencryptedDatabaseThrowsNotEncrypted() async throws {
        let db = try Database(unencryptedPath: ":memory:")
        await #expect(throws: SqlCipherError.notEncrypted) { try await db.rekey("x") }
        await #expect(throws: SqlCipherError.notEncrypted) { try await db.rekey(rawKey: rawKey()) }
        #expect(SqlCipherError.notEncrypted.description.contains("Database.encrypt"))
    }

    @Test func invalidNewKeysAreRejectedBeforeAnythingChanges() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, rawKey: rawKey())
        try await fill(db, rows: 3)
        await #expect(throws: SqlCipherError.emptyKey) { try await db.rekey("") }
        await #expect(throws: SqlCipherError.emptyKey) { try await db.rekey(.passphrase(Data())) }
        await #expect(throws: SqlCipherError.invalidRawKey(byteCount: 5)) { try await db.rekey(rawKey: Data(count: 5)) }
        #expect(try await countRows(db) == 3)
    }

    @Test func rekeyInsideATransactionIsRefused() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, rawKey: rawKey())
        try await fill(db, rows: 3)
        try await db.execute("BEGIN")
        await #expect {
            try await db.rekey(rawKey: rawKey(2))
        } throws: { error in
            if case SqlCipherError.rekeyFailed(_, let reason) = error { return reason.contains("transaction") }
            return false
        }
        try await db.execute("COMMIT")
        #expect(try await countRows(db) == 3)
        await db.close()
        _ = try Database(path: path, rawKey: rawKey())
    }

    @Test func busyFileFailsAndStillOpensWithTheOldKey() async throws {
        // Rollback journal: a reader holding a read transaction keeps the rekey from taking the
        // exclusive lock.
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, rawKey: rawKey(1), journalMode: .rollback)
        try await fill(db, rows: 20)
        try await db.execute("PRAGMA busy_timeout = 100")
        let reader = try Database(path: path, rawKey: rawKey(1))
        try await reader.execute("BEGIN")
        #expect(try await countRows(reader) == 20)   // holds a SHARED lock until COMMIT
        await #expect {
            try await db.rekey(rawKey: rawKey(2))
        } throws: { error in
            if case SqlCipherError.rekeyFailed(_, let reason) = error { return reason.contains("busy") }
            return false
        }
        try await reader.execute("COMMIT")
        // The failed rekey changed nothing: this connection still works, and so does the old key.
        #expect(try await countRows(db) == 20)
        try await db.execute("INSERT INTO t(body) VALUES ('still writable')")
        await db.close()
        await reader.close()
        let again = try Database(path: path, rawKey: rawKey(1))
        #expect(try await countRows(again) == 21)
        #expect(throws: SqlCipherError.self) { try Database(path: path, rawKey: rawKey(2)) }
    }

    @Test func readOnlyFileFailsAndStillOpensWithTheOldKey() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, rawKey: rawKey(1), journalMode: .rollback)
        try await fill(db, rows: 5)
        await db.close()
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: dir.url.path)
        // As an unprivileged user the file opens read-only; the rekey is refused.
        let result = try runHelperUnprivileged(["rekey-loop", path, "raw:" + hex(rawKey(1)), "raw:" + hex(rawKey(2)), "1"])
        #expect(result.stdout.contains("opened"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("Changing the key"), "\(result.stdout)")
        #expect(result.stdout.contains("read-only"), "\(result.stdout)")
        let again = try Database(path: path, rawKey: rawKey(1))
        #expect(try await countRows(again) == 5)
    }

    @Test func readerOnAWALFileDoesNotBlockTheRekey() async throws {
        // In WAL mode a reader does not block the writer: the rekey goes through and is verified
        // through the WAL, which the reader keeps from being checkpointed.
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, rawKey: rawKey(1))
        try await fill(db, rows: 20)
        let reader = try Database(path: path, rawKey: rawKey(1))
        try await reader.execute("BEGIN")
        #expect(try await countRows(reader) == 20)
        try await db.rekey(rawKey: rawKey(2))
        try await reader.execute("COMMIT")
        await reader.close()
        try await db.execute("INSERT INTO t(body) VALUES ('after')")
        await db.close()
        let again = try Database(path: path, rawKey: rawKey(2))
        #expect(try await countRows(again) == 21)
    }

    /// A rekey whose rewrite committed but whose proof on a fresh connection could not be made
    /// (here no file descriptor was left for it, in a process of its own) said "This call did not
    /// change the file's key: it still opens with the key it had before the call", and that the
    /// file should be opened "again with the old key", which no longer opened it. It now says the
    /// rewrite was committed and to open the file with the new key, which does.
    @Test func aProofThatFailsAfterTheCommitSendsTheCallerToTheNewKey() async throws {
        let dir = TemporaryDirectory()
        let result = try runHelper(["rekey-without-descriptors", dir.url.path])
        #expect(result.status == 0 && !result.signaled, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("rekey error rekeyFailed"), "\(result.stdout)")
        #expect(result.stdout.contains("the file now has the new key") && result.stdout.contains("open the file with the new key"),
                "\(result.stdout)")
        #expect(!result.stdout.contains("did not change the file's key") && !result.stdout.contains("old key"), "\(result.stdout)")
        let cipher = CipherSettings(kdfIterations: 1000)
        let db = try Database(path: dir.path("db.db"), key: "new", cipher: cipher)
        #expect(try await countRows(db) == 1)
        await db.close()
        #expect(throws: SqlCipherError.self) { _ = try Database(path: dir.path("db.db"), key: "old", cipher: cipher) }
    }

    /// A rekey on a full disk (a small tmpfs, filled through the database) said only that "the
    /// rewrite could not be committed": the user could not tell a full disk from a lock. It now
    /// carries SQLite's error and its advice, and the file still opens with the old key, whole.
    @Test(.enabled(if: SmallFilesystem.isAvailable, "needs root to mount a small tmpfs"), arguments: [JournalMode.wal, .rollback])
    func aRekeyOnAFullDiskSaysWhy(_ mode: JournalMode) async throws {
        let disk = try #require(SmallFilesystem(kilobytes: 600))
        let cipher = CipherSettings(kdfIterations: 1000)
        let db = try Database(path: disk.path("full.db"), key: "old", journalMode: mode, cipher: cipher)
        try await db.execute("CREATE TABLE t(b BLOB)")
        var committed = 0
        while committed < 10_000 {
            do {
                try await db.execute("INSERT INTO t VALUES (randomblob(4000))")
                committed += 1
            } catch { break }
        }
        await #expect {
            try await db.rekey("new")
        } throws: { error in
            guard case .rekeyFailed(_, let reason)? = error as? SqlCipherError else { return false }
            // In WAL mode the COMMIT fails with SQLITE_FULL; in rollback mode SQLCipher's rekey
            // rolls its rewrite back and reports success, and the package's proof finds the file
            // still on the old key (it said "the file now has the new key", which did not open it).
            return (reason.contains("no space left") || reason.contains("the disk is full"))
                && reason.contains("open the file again with the old key") && !reason.contains("has the new key")
                // A pool whose writer this is closes with it: the words name both.
                && reason.contains("This Database (or the DatabasePool it writes for) was closed")
        }
        await db.close()
        let reopened = try Database(path: disk.path("full.db"), key: "old", cipher: cipher)
        #expect(try await reopened.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == committed)
        await reopened.close()
    }

    @Test func sqlcipher3FileKeepsItsSettingsWhenRekeyed() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("v3.db")
        let db = try Database(path: path, key: "old", cipher: .sqlcipher3)
        try await fill(db, rows: 5)
        try await db.rekey("new")
        await db.close()
        #expect(try SqlcipherCLI.run(SqlcipherCLI.version3, path, [SqlcipherCLI.keyPragma(passphrase: "new"), "SELECT count(*) FROM t"]) == ["5"])
    }

    /// A file with a plaintext header keeps its salt outside itself; a rekey to a key without a
    /// salt keeps the one the file has, so the new key opens it with that salt.
    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func plaintextHeaderDatabaseRekeysKeepingItsSalt() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("ph.db")
        let salt = Data("0123456789abcdef".utf8)
        let settings = CipherSettings(plaintextHeaderSize: 32)
        let db = try Database(path: path, key: .rawKey(rawKey(1), salt: salt), cipher: settings)
        try await fill(db, rows: 5)
        try await db.rekey("a passphrase")
        await db.close()
        let byPassphrase = try Database(path: path, key: .passphrase("a passphrase", salt: salt), cipher: settings)
        #expect(try await countRows(byPassphrase) == 5)
        try await byPassphrase.rekey(rawKey: rawKey(2))
        await byPassphrase.close()
        let again = try Database(path: path, key: .rawKey(rawKey(2), salt: salt), cipher: settings)
        #expect(try await countRows(again) == 5)
    }

    /// A rekey keeps the file's salt, so a new key that names a salt is taken only when it names
    /// that one: any other would describe a file that does not exist, and the reopening that
    /// follows would fail with a key that looked right.
    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func aNewKeyWithAnotherSaltIsRefusedBeforeAnythingChanges() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("salted.db")
        let salt = Data("0123456789abcdef".utf8)
        let settings = CipherSettings(plaintextHeaderSize: 32)
        let db = try Database(path: path, key: .rawKey(rawKey(1), salt: salt), cipher: settings)
        try await fill(db, rows: 5)
        await #expect {
            try await db.rekey(.rawKey(rawKey(2), salt: Data("fedcba9876543210".utf8)))
        } throws: { error in
            guard case let SqlCipherError.rekeyFailed(_, reason) = error else { return false }
            return reason.contains("keeps the file's salt")
        }
        // Refused before the rewrite: this Database is open and the old key still reads the file.
        #expect(try await countRows(db) == 5)
        try await db.rekey(.rawKey(rawKey(2), salt: salt))
        await db.close()
        let again = try Database(path: path, key: .rawKey(rawKey(2), salt: salt), cipher: settings)
        #expect(try await countRows(again) == 5)
    }
}

/// A connection left open while another process changes the file's key: its next read fails
/// (SQLCipher's page-1 check), nothing is written, and the error says what happened and what to
/// do, not only SQLite's bare "file is not a database".
@Suite struct RekeyByAnotherProcessTests {
    @Test(arguments: [JournalMode.wal, .rollback])
    func aConnectionOpenAcrossAnotherProcesssRekeyIsToldSo(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        let keyA = rawKey(61), keyB = rawKey(62)
        let db = try Database(path: path, rawKey: keyA, journalMode: mode)
        try await Self.addTheRow(db)
        let result = try runChild(productPath("sqlcipherkit-test-helper"),
                                  ["rekey-loop", path, "raw:" + hex(keyA), "raw:" + hex(keyB), "1"])
        try #require(result.status == 0, "\(result.stdout) \(result.stderr)")
        do {
            try await db.execute("INSERT INTO t VALUES (2)")
            Issue.record("a write with the old key succeeded after the rekey")
        } catch let error as SqlCipherError {
            #expect(error.description.contains("changed the key (rekey)"), "\(error)")
        }
        await db.close()
        let reopened = try Database(path: path, rawKey: keyB)
        #expect(try await reopened.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        #expect(try await reopened.verifyIntegrity().isOK)
        await reopened.close()
    }

    /// The loser of two rekeys in two processes: the other process's rekey commits first, and this
    /// connection's own rekey then meets a first page it cannot decrypt when it takes the lock.
    /// It used to be reported as "the database is busy or locked (... file is not a database)"
    /// followed by "The database still opens with the old key", which sent the user to retry with
    /// a key that no longer opens the file. Nothing is written, the winner's key stays. A pool
    /// (its writer's rekey) stays open: nothing was rewritten.
    @Test(arguments: [("database", JournalMode.wal), ("database", .rollback), ("pool", .wal)])
    func aRekeyAfterAnotherProcesssRekeyIsToldTheKeyChanged(kind: String, mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        let keyA = rawKey(63), keyB = rawKey(64), keyC = rawKey(65)
        let access: any DatabaseAccess = kind == "pool"
            ? try DatabasePool(path: path, rawKey: keyA) : try Database(path: path, rawKey: keyA, journalMode: mode)
        try await Self.addTheRow(access)
        let result = try runChild(productPath("sqlcipherkit-test-helper"),
                                  ["rekey-loop", path, "raw:" + hex(keyA), "raw:" + hex(keyB), "1"])
        try #require(result.status == 0, "\(result.stdout) \(result.stderr)")
        await Self.expectKeyChangedElsewhere {
            if let db = access as? Database { try await db.rekey(rawKey: keyC) }
            if let pool = access as? DatabasePool { try await pool.rekey(rawKey: keyC) }
        }
        if let db = access as? Database { await db.close() }
        if let pool = access as? DatabasePool { await pool.close() }
        try await Self.expectOnlyKey(keyB, of: [keyA, keyB, keyC], opens: path)
    }

    /// Two processes rekey one file from the same key to two others at once: one wins, the other
    /// fails (at its opening, at the lock, or told that the key changed) and the file opens with
    /// exactly one of the three keys, whole. No handshake decides the winner; either outcome must hold.
    @Test func twoProcessesRekeyingAtOnceLeaveOneKey() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        let keys = [rawKey(69), rawKey(70), rawKey(71)]
        let db = try Database(path: path, rawKey: keys[0])
        try await KeyChangeCrashTests.fill(db)
        await db.close()
        let children = try [1, 2].map { index in
            try KillableChild(helperArguments: ["rekey-loop", path, "raw:" + hex(keys[0]), "raw:" + hex(keys[index]), "1"])
        }
        let statuses = children.map { $0.waitForExit() }
        let winners = children.indices.filter { statuses[$0] == 0 }
        #expect(winners.count >= 1, "\(children.map(\.lines)) \(children.map(\.standardError))")
        for loser in children.indices where statuses[loser] != 0 {
            let said = children[loser].standardError + children[loser].lines.joined(separator: "\n")
            #expect(said.contains("changed by another connection") || said.contains("does not open"),
                    "the loser said: \(said)")
            #expect(!said.contains("busy or locked"), "the loser said: \(said)")
        }
        let opening = keys.filter { (try? Database(path: path, rawKey: $0)) != nil }
        try #require(opening.count == 1, "\(opening.count) keys open the file")
        let reopened = try Database(path: path, rawKey: opening[0])
        try await KeyChangeCrashTests.checkContent(reopened)
        await reopened.close()
    }

    /// An opening between another connection's rekey and its checkpoint. The rekey's pages wait in
    /// the `-wal` (a reader in another process keeps the checkpoint from copying them), so the file
    /// decrypts with the old key and its newest pages only with the new one. The old key was told
    /// that the `-wal` is damaged or another database's, with no word of a key change; it is now
    /// told that another connection most likely changed the key, and the new key opens the file.
    /// (Openings that raced the rekey's commit or its checkpoint also reported SQLite's bare "file
    /// is not a database"; `twoProcessesRekeyingAtOnceLeaveOneKey` meets those moments.)
    @Test func anOpeningBeforeARekeysCheckpointIsToldTheKeyMayHaveChanged() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        let keyA = rawKey(78), keyB = rawKey(79)
        var configuration = DatabaseConfiguration()
        // The rekey's checkpoints wait this long for the reader, then leave the pages in the -wal.
        configuration.busyTimeout = .milliseconds(100)
        let db = try Database(path: path, rawKey: keyA, journalMode: .wal, configuration: configuration)
        try await Self.addTheRow(db)
        let reader = try KillableChild(helperArguments: ["hold-lock", path, "raw:" + hex(keyA), "read"])
        try #require(reader.waitForLine(startingWith: "held") != nil, "\(reader.lines) \(reader.standardError)")
        try await db.rekey(rawKey: keyB)
        let walSize = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
        try #require(walSize > 32, "the rekey's pages were checkpointed despite the reader")
        let openings: [(String, () throws -> Void)] = [
            ("Database", { _ = try Database(path: path, rawKey: keyA) }),
            ("read-only Database", { _ = try Database(path: path, rawKey: keyA, readOnly: true) }),
            ("DatabasePool", { _ = try DatabasePool(path: path, rawKey: keyA) }),
        ]
        for (name, open) in openings {
            let error = try #require(throws: SqlCipherError.self, "\(name)") { try open() }
            #expect(error.description.contains("changed by another connection")
                        && error.description.contains("open the file with its new key"), "\(name): \(error)")
        }
        let withNewKey = try Database(path: path, rawKey: keyB)
        #expect(try await withNewKey.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await withNewKey.close()
        reader.killAndCollect()
        await db.close()
        try await Self.expectOnlyKey(keyB, of: [keyA, keyB], opens: path)
    }

    /// An opening whose key opened the file, and that another process's rekey met before the
    /// opening ended (here: inside `prepareConnection`, the opening's last step; on a loaded
    /// machine, a rekey waiting for the opening's first read commits right after it), is tried
    /// again, and the new try finds page 1 no longer decrypting. It was told that the key is
    /// wrong, the settings other, page 1 damaged or the file no database, of a key that was
    /// right a moment before; it is now told that the key was most likely changed meanwhile.
    @Test(arguments: [JournalMode.rollback, .wal])
    func anOpeningThatARekeyMeetsMidwayIsToldTheKeyChanged(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        let keyA = rawKey(80), keyB = rawKey(81)
        let db = try Database(path: path, rawKey: keyA, journalMode: mode)
        try await Self.addTheRow(db)
        await db.close()
        let helper = productPath("sqlcipherkit-test-helper")
        let rekeyed = Mutex(false)
        var configuration = DatabaseConfiguration()
        configuration.prepareConnection = { conn in
            // Once: the rekey runs to its end in the child before the read below (a handshake).
            guard rekeyed.withLock({ done in defer { done = true }; return !done }) else { return }
            let result = try runChild(helper, ["rekey-loop", path, "raw:" + hex(keyA), "raw:" + hex(keyB), "1"])
            guard result.status == 0 else { throw SqlCipherError.invalidQuery(reason: "rekey-loop: \(result.stderr)") }
            _ = try conn.query("SELECT count(*) FROM t")
        }
        let error = try #require(throws: SqlCipherError.self) {
            try Database(path: path, rawKey: keyA, configuration: configuration)
        }
        #expect(rekeyed.withLock { $0 })
        guard case .keyFailed(_, let reason) = error else {
            Issue.record("expected keyFailed, got \(error)")
            return
        }
        #expect(reason.contains("changed the key") && !reason.contains("the key is wrong"), "\(reason)")
        try await Self.expectOnlyKey(keyB, of: [keyA, keyB], opens: path)
    }

    /// The calls whose first statement is the package's own (a pool's or a `transaction`'s
    /// `BEGIN IMMEDIATE`, a migration's bookkeeping table, an export's, a backup's first read,
    /// `importPlaintext`) failed after another process's rekey with SQLite's bare "file is not a
    /// database": the advice was kept for the caller's statements only. They now say the key was
    /// most likely changed, as the caller's own statements do. A pool's read (or backup) that
    /// opens a reader was refused as a wrong key (cipher settings, SQLCipher 3); it now says that
    /// the pool opened the file with that key and the key was most likely changed.
    @Test(arguments: ["database", "pool"])
    func thePackagesOwnStatementsAfterAnotherProcesssRekeyAreToldSo(kind: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db"), plain = dir.path("plain.db")
        let keyA = rawKey(74), keyB = rawKey(75)
        let source = try Database(unencryptedPath: plain)
        try await source.execute("CREATE TABLE p(v)")
        await source.close()
        let access: any DatabaseAccess = kind == "pool"
            ? try DatabasePool(path: path, rawKey: keyA) : try Database(path: path, rawKey: keyA)
        try await Self.addTheRow(access)
        let result = try runChild(productPath("sqlcipherkit-test-helper"),
                                  ["rekey-loop", path, "raw:" + hex(keyA), "raw:" + hex(keyB), "1"])
        try #require(result.status == 0, "\(result.stdout) \(result.stderr)")
        var calls: [(String, () async throws -> Void)] = [
            // First: on a pool, before any reader is open, so that the read opens one.
            ("query", { _ = try await access.query("SELECT count(*) FROM t") }),
            ("transaction", { _ = try await access.transaction { conn -> Int in try conn.execute("INSERT INTO t VALUES (2)"); return 0 } }),
            ("migrate", { try await access.migrate([StepMigration("m1") { try $0.execute("CREATE TABLE m(x)") }]) }),
            ("importPlaintext", {
                _ = try await access.importPlaintext(from: plain) { conn in try conn.execute("INSERT INTO main.t SELECT v FROM plain.p") }
            }),
        ]
        if let db = access as? Database {
            calls.append(("export", { try await db.export(to: dir.path("e.db"), key: .rawKey(keyA)) }))
            calls.append(("exportDecrypted", { try await db.exportDecrypted(to: dir.path("d.db")) }))
            calls.append(("backup", { try await db.backup(to: dir.path("b.db"), key: .rawKey(keyA)) }))
        }
        if let pool = access as? DatabasePool {
            calls.append(("pool backup", { try await pool.backup(to: dir.path("b.db"), key: .rawKey(keyA)) }))
        }
        for (name, call) in calls {
            do {
                try await call()
                Issue.record("\(name) succeeded with a key that no longer opens the file")
            } catch {
                #expect("\(error)".contains("changed the key (rekey)"), "\(name): \(error)")
            }
        }
        if let db = access as? Database { await db.close() }
        if let pool = access as? DatabasePool { await pool.close() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == ["plain.db", "shared.db"])
        try await Self.expectOnlyKey(keyB, of: [keyA, keyB], opens: path)
    }

    /// `verifyIntegrity()` on a connection whose key another process changed reported an HMAC
    /// failure for every page, which reads like damage of the whole file. The report still fails
    /// (nothing could be verified), and a note now says what the failures most likely are.
    @Test(arguments: ["database", "pool"])
    func anIntegrityCheckAfterAnotherProcesssRekeyNamesTheKeyChange(kind: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        let keyA = rawKey(76), keyB = rawKey(77)
        let access: any DatabaseAccess = kind == "pool"
            ? try DatabasePool(path: path, rawKey: keyA) : try Database(path: path, rawKey: keyA)
        try await Self.addTheRow(access)
        let before = try await access.verifyIntegrity()
        #expect(before.isOK && before.notes.allSatisfy { !$0.contains("no longer decrypts") })
        let result = try runChild(productPath("sqlcipherkit-test-helper"),
                                  ["rekey-loop", path, "raw:" + hex(keyA), "raw:" + hex(keyB), "1"])
        try #require(result.status == 0, "\(result.stdout) \(result.stderr)")
        let report = try await access.verifyIntegrity()
        #expect(!report.isOK)
        #expect(report.notes.contains { $0.contains("page 1 no longer decrypts") && $0.contains("changed the key (rekey)") },
                "\(report.notes) \(report.problems)")
        if let db = access as? Database { await db.close() }
        if let pool = access as? DatabasePool { await pool.close() }
        try await Self.expectOnlyKey(keyB, of: [keyA, keyB], opens: path)
    }

    static func expectKeyChangedElsewhere(_ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("a rekey with a key that no longer opens the file succeeded")
        } catch SqlCipherError.rekeyFailed(_, let reason) {
            #expect(reason.contains("changed by another connection"), "\(reason)")
            #expect(!reason.contains("busy or locked"), "\(reason)")
            let description = SqlCipherError.rekeyFailed(path: "x", reason: reason).description
            #expect(!description.contains("opens with the old key"), "\(description)")
        } catch {
            Issue.record("not rekeyFailed: \(error)")
        }
    }

    /// The table every test here ends by reading (``expectOnlyKey(_:of:opens:)``): one row.
    static func addTheRow(_ access: any DatabaseAccess) async throws {
        try await access.execute("CREATE TABLE t(v)")
        try await access.execute("INSERT INTO t VALUES (1)")
    }

    static func expectOnlyKey(_ key: Data, of keys: [Data], opens path: String) async throws {
        for other in keys where other != key {
            #expect((try? Database(path: path, rawKey: other)) == nil, "another key opens the file")
        }
        let reopened = try Database(path: path, rawKey: key)
        #expect(try await reopened.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        #expect(try await reopened.verifyIntegrity().isOK)
        await reopened.close()
    }
}
