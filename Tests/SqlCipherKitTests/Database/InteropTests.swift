import Foundation
import Testing
@testable import SqlCipherKit

/// Files written by the package are read by the real `sqlcipher` CLI and the reverse, and nothing
/// readable reaches the disk.
@Suite struct InteropTests {
    /// The CLI of the loaded library's major version.
    var sameVersionCLI: String { isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3 }

    @Test(arguments: [JournalMode.wal, .rollback])
    func packageFileOpensInTheCLIWithTheSamePassphrase(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pkg.db")
        let db = try Database(path: path, key: "correct horse", journalMode: mode)
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, data BLOB)")
        try await db.execute("INSERT INTO t(name, data) VALUES (?, ?)", "O'Brien ☕", Data([0, 1, 2, 255]))
        try await db.execute("PRAGMA user_version = 3")
        await db.close()
        let lines = try SqlcipherCLI.run(sameVersionCLI, path, [
            SqlcipherCLI.keyPragma(passphrase: "correct horse"),
            "SELECT name, hex(data) FROM t", "PRAGMA user_version",
        ])
        #expect(lines == ["O'Brien ☕|000102FF", "3"])
        #expect(throws: SqlcipherCLI.CLIError.self) {
            try SqlcipherCLI.run(sameVersionCLI, path, [SqlcipherCLI.keyPragma(passphrase: "wrong"), "SELECT * FROM t"])
        }
    }

    @Test func packageRawKeyFileOpensInTheCLI() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pkg.db")
        let db = try Database(path: path, rawKey: rawKey(3))
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (7)")
        await db.close()
        let lines = try SqlcipherCLI.run(sameVersionCLI, path, [SqlcipherCLI.keyPragma(rawKey: rawKey(3)), "SELECT x FROM t"])
        #expect(lines == ["7"])
    }

    @Test func cliFileOpensInThePackage() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("cli.db")
        _ = try SqlcipherCLI.run(sameVersionCLI, path, [
            SqlcipherCLI.keyPragma(passphrase: "from the cli"),
            "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)",
            "INSERT INTO t(name) VALUES ('written by sqlcipher')",
            "PRAGMA user_version = 9",
        ])
        let db = try Database(path: path, key: "from the cli")
        #expect(try await db.query("SELECT name FROM t")[0].get("name", as: String.self) == "written by sqlcipher")
        #expect(try await db.query("PRAGMA user_version")[0].get(0, as: Int.self) == 9)
        #expect(db.journalMode == .rollback)
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "not it") }
    }

    /// A file in SQLCipher 3's format whose schema holds SQL that SQLite 3.15 (SQLCipher 3.4.1's)
    /// cannot parse, written by the 4.6.1 CLI: a newer library reads it; the older one says that
    /// the key opens it and that its schema needs a newer SQLite (it was SQLite's bare "malformed"
    /// code 11, which read like damage), on a `Database`, a read-only opening and a pool.
    @Test func aSchemaFromANewerSQLiteIsNamedAsSuchNotAsDamage() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("newer.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [
            SqlcipherCLI.keyPragma(passphrase: "newer"), "PRAGMA cipher_compatibility = 3", "PRAGMA journal_mode = WAL",
            "CREATE TABLE s(a INTEGER, b TEXT) STRICT",
            "CREATE TABLE g(a INT, b INT GENERATED ALWAYS AS (a * 2) STORED)", "INSERT INTO g(a) VALUES (21)",
        ])
        guard try await !opensWithANewerSQLite(path) else { return }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        func check(_ open: () throws -> Void) {
            do {
                try open()
                Issue.record("a schema this SQLite cannot parse opened")
            } catch let SqlCipherError.cannotOpen(_, reason) {
                #expect(reason.contains("the key opens it"))
                #expect(reason.contains("newer SQLite"))
                #expect(reason.contains("SQLite \((try? loadedLibrary())?.sqliteVersion ?? "?")"))
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
        check { _ = try Database(path: path, key: "newer", cipher: .sqlcipher3) }
        check { _ = try Database(path: path, key: "newer", cipher: .sqlcipher3, readOnly: true) }
        check { _ = try DatabasePool(path: path, key: "newer", cipher: .sqlcipher3) }
        // A wrong key is still a wrong key, and nothing was written.
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "not it", cipher: .sqlcipher3) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        // The same for a plaintext file.
        let plain = dir.path("plain.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, plain, ["CREATE TABLE s(a INTEGER) STRICT"])
        do {
            _ = try Database(unencryptedPath: plain)
            Issue.record("a plaintext schema this SQLite cannot parse opened")
        } catch let SqlCipherError.cannotOpen(_, reason) {
            #expect(reason.contains("readable SQLite file") && reason.contains("newer SQLite"))
        }
    }

    /// The same when the table SQLite 3.15 cannot parse has an index or a trigger, as most tables
    /// do: SQLite goes on reading the schema and reports the last failure, "no such table" for the
    /// index or trigger, which came out as the bare `sqlite` code 11 with the opening's own query,
    /// from every opening, `encrypt(plaintextAt:)`, `importPlaintext` and an `ATTACH`.
    @Test func aNewerTableWithAnIndexOrTriggerIsNamedAsSuchToo() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("newer.db"), plain = dir.path("plain.db")
        let schema = [
            "CREATE TABLE g(a INT, b INT GENERATED ALWAYS AS (a * 2) STORED)", "CREATE INDEX g_a ON g(a)",
            "CREATE TABLE l(x)", "CREATE TRIGGER g_log AFTER INSERT ON g BEGIN INSERT INTO l VALUES (new.a); END",
            "INSERT INTO g(a) VALUES (21)",
        ]
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [
            SqlcipherCLI.keyPragma(passphrase: "newer"), "PRAGMA cipher_compatibility = 3"] + schema)
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, plain, schema)
        guard try await !opensWithANewerSQLite(path) else { return }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let host = try Database(path: dir.path("host.db"), rawKey: rawKey())
        let openings: [(String, Bool, () async throws -> Void)] = [
            ("Database", true, { _ = try Database(path: path, key: "newer", cipher: .sqlcipher3) }),
            ("read-only", true, { _ = try Database(path: path, key: "newer", cipher: .sqlcipher3, readOnly: true) }),
            ("DatabasePool", true, { _ = try DatabasePool(path: path, key: "newer", cipher: .sqlcipher3) }),
            ("unencrypted", false, { _ = try Database(unencryptedPath: plain) }),
            ("encrypt(plaintextAt:)", false, {
                try Database.encrypt(plaintextAt: plain, to: dir.path("copy.db"), key: .rawKey(rawKey()))
            }),
            ("importPlaintext", false, { try await host.importPlaintext(from: plain) { _ = try $0.query("SELECT 1") } }),
        ]
        for (label, encrypted, open) in openings {
            do {
                try await open()
                Issue.record("\(label): a schema this SQLite cannot parse opened")
            } catch let SqlCipherError.cannotOpen(_, reason) {
                #expect(reason.contains(encrypted ? "the key opens it" : "readable SQLite file"), "\(label): \(reason)")
                #expect(reason.contains("newer SQLite") && reason.contains("names a table SQLite could not parse"),
                        "\(label): \(reason)")
            } catch {
                Issue.record("\(label): \(error)")
            }
        }
        do {
            try await host.execute("ATTACH DATABASE ? AS p KEY ''", plain)
            Issue.record("ATTACH: a schema this SQLite cannot parse attached")
        } catch let SqlCipherError.sqlite(_, _, message, _) {
            #expect(message.contains("newer SQLite") && message.contains("names a table SQLite could not parse"), "\(message)")
        }
        await host.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: dir.path("copy.db")))
    }

    @Test func sqlcipher341CLIFileOpensThroughSqlcipher3Settings() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("v3cli.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version3, path, [
            SqlcipherCLI.keyPragma(passphrase: "three"),
            "PRAGMA journal_mode = WAL",
            "CREATE TABLE t(x)", "INSERT INTO t VALUES ('made by 3.4.1')",
        ])
        let db = try Database(path: path, key: "three", cipher: .sqlcipher3)
        #expect(try await db.query("SELECT x FROM t")[0].get(0, as: String.self) == "made by 3.4.1")
        #expect(db.journalMode == .wal)
        try await db.execute("INSERT INTO t VALUES ('added by the package')")
        await db.close()
        let lines = try SqlcipherCLI.run(SqlcipherCLI.version3, path, [
            SqlcipherCLI.keyPragma(passphrase: "three"), "SELECT count(*) FROM t",
        ])
        #expect(lines == ["2"])
    }

    @Test(arguments: [JournalMode.wal, .rollback])
    func noPlaintextMarkerOnDiskAfterWrites(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("scan.db")
        let marker = "PLAINTEXT-MARKER-\(UUID().uuidString)"
        let db = try Database(path: path, rawKey: rawKey(), journalMode: mode)
        try await db.execute("CREATE TABLE \"\(marker)-table\"(body TEXT)")
        for round in 0..<20 {
            try await db.execute("INSERT INTO \"\(marker)-table\" VALUES (?)", marker + String(repeating: "z", count: 500) + "\(round)")
        }
        let companions = [path, path + "-wal", path + "-shm", path + "-journal"]
        // While open (WAL and its index exist) ...
        if mode == .wal { #expect(FileManager.default.fileExists(atPath: path + "-wal")) }
        #expect(filesContain(companions, marker).isEmpty)
        // ... in the middle of a transaction (the rollback journal exists) ...
        try await db.execute("BEGIN")
        try await db.execute("UPDATE \"\(marker)-table\" SET body = body || ?", marker)
        if mode == .rollback { #expect(FileManager.default.fileExists(atPath: path + "-journal")) }
        #expect(filesContain(companions, marker).isEmpty)
        try await db.execute("COMMIT")
        // ... and after close.
        await db.close()
        #expect(filesContain(companions, marker).isEmpty)
        let header = try #require(FileManager.default.contents(atPath: path))
        #expect(header.prefix(16) != Data("SQLite format 3\0".utf8))
        // The same writes in a plaintext database do show the marker: the scan can see it.
        let plainPath = dir.path("plain.db")
        let plain = try Database(unencryptedPath: plainPath, journalMode: mode)
        try await plain.execute("CREATE TABLE t(body TEXT)")
        try await plain.execute("INSERT INTO t VALUES (?)", marker)
        await plain.close()
        #expect(!filesContain([plainPath], marker).isEmpty)
    }

    /// A CLI killed inside a write transaction leaves a hot `-journal` and a half-written file.
    /// Opening it with settings of another page size is refused before SQLite reads anything:
    /// SQLCipher 3.4.1 crashed the process (SIGSEGV, its own CLI too) rolling back a journal of
    /// smaller pages than its cipher page size, and 4.6.1 rolled the file back during an opening
    /// that then failed. The right settings roll the interrupted write back.
    @Test func aHotJournalLeftByAKilledCLIIsRolledBackAndOtherSettingsAreRefusedFirst() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("killed.db")
        let key = SqlcipherCLI.keyPragma(passphrase: "journal")
        _ = try SqlcipherCLI.run(sameVersionCLI, path, [key, "CREATE TABLE t(x)", "INSERT INTO t VALUES ('committed')"])
        // A 2-page cache makes SQLite spill the transaction's pages into the file before commit.
        try SqlcipherCLI.runAndKill(sameVersionCLI, path, [
            key, "PRAGMA cache_size = 2", "BEGIN",
            "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000) "
                + "INSERT INTO t SELECT printf('%0500d', i) FROM c",
        ])
        let journal = try #require(FileManager.default.contents(atPath: path + "-journal"))
        #expect(journal.prefix(8) == Data([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]))
        let before = try dir.snapshot()
        let pageSize = isSQLCipher4() ? 4096 : 1024
        for other in [1024, 8192, 65536] where other != pageSize {
            #expect {
                _ = try Database(path: path, key: "journal", cipher: CipherSettings(pageSize: other))
            } throws: { error in
                guard case let SqlCipherError.keyFailed(_, reason) = error else { return false }
                return reason.contains("\(pageSize)-byte pages") && reason.contains("CipherSettings")
                    && !reason.contains("journal'")
            }
            #expect(throws: SqlCipherError.self) {
                _ = try DatabasePool(path: path, key: "journal", cipher: CipherSettings(pageSize: other))
            }
            let after = try dir.snapshot()
            #expect(after.keys.sorted() == before.keys.sorted())
            #expect(after.allSatisfy { before[$0.key]?.0 == $0.value.0 }, "a refused opening changed a file")
        }
        let db = try Database(path: path, key: "journal")
        #expect(try await db.query("SELECT x FROM t").map { $0.get(0, as: String.self) } == ["committed"])
        #expect(try await db.verifyIntegrity().problems.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: path + "-journal"))
        await db.close()
        #expect(try SqlcipherCLI.run(sameVersionCLI, path, [key, "SELECT count(*) FROM t"]) == ["1"])
    }

    /// A plaintext file of 512-byte pages at `path` whose writer (the CLI) was killed inside a
    /// transaction: a hot `-journal` of pages smaller than any cipher page.
    func makePlaintextFileWithHotJournal(at path: String) throws {
        _ = try SqlcipherCLI.run(sameVersionCLI, path, [
            "PRAGMA page_size = 512", "PRAGMA journal_mode = DELETE", "CREATE TABLE t(x)", "INSERT INTO t VALUES ('committed')",
        ])
        try SqlcipherCLI.runAndKill(sameVersionCLI, path, [
            "PRAGMA cache_size = 2", "BEGIN",
            "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300) "
                + "INSERT INTO t SELECT printf('%0500d', i) FROM c",
        ])
        try #require(FileManager.default.fileExists(atPath: path + "-journal"))
    }

    /// The same hot journal reached through a raw `ATTACH` with a `KEY`: a plaintext file of
    /// 512-byte pages left mid-write by a killed program. SQLCipher 3.4.1 crashed the process
    /// (SIGSEGV) rolling that journal back under its 1024-byte cipher pages while attaching; the
    /// ATTACH is now refused before it runs, with the file bound as a parameter, written as a
    /// literal or as a `file:` URI, and nothing is changed. Attached without encryption (`KEY ''`,
    /// the form for plaintext files) SQLite rolls the write back as it should.
    @Test func anAttachOverAHotJournalOfSmallerPagesIsRefusedBeforeItRuns() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("plain512.db")
        try makePlaintextFileWithHotJournal(at: path)
        let before = try dir.snapshot()
        let db = try Database(path: dir.path("main.db"), key: "main key", journalMode: .rollback)
        let literal = path.replacingOccurrences(of: "'", with: "''")
        let attempts: [(String, @Sendable (Database) async throws -> Void)] = [
            ("bound", { try await $0.execute("ATTACH DATABASE ? AS other KEY ?", path, "a key") }),
            ("literal", { try await $0.execute("ATTACH '\(literal)' AS other KEY 'a key'") }),
            ("uri", { try await $0.execute("ATTACH ? AS \"other\" KEY ?", "file:\(path)?mode=rw", "a key") }),
            ("main key", { try await $0.execute("/* no KEY */ attach database ? as other", path) }),
            // SQLite takes a name in identifier form as the file's name.
            ("quoted identifier", { try await $0.execute("ATTACH \"\(path)\" AS other KEY 'a key'") }),
            ("bracketed identifier", { try await $0.execute("ATTACH DATABASE [\(path)] AS other KEY ?", "a key") }),
        ]
        for (name, attach) in attempts {
            let error = await #expect(throws: SqlCipherError.self, "\(name)") { try await attach(db) }
            guard case .cannotOpen(let file, let reason)? = error else {
                Issue.record("\(name): expected cannotOpen, got \(String(describing: error))")
                continue
            }
            #expect(file == path, "\(name)")
            #expect(reason.contains("512-byte pages") && reason.contains("KEY ''"), "\(name): \(reason)")
            #expect(!reason.contains("a key"), "\(name): the key is not echoed")
            let after = try dir.snapshot()
            #expect(after.keys.filter { $0 != "main.db" }.sorted() == before.keys.sorted(), "\(name)")
            #expect(before.allSatisfy { after[$0.key]?.0 == $0.value.0 }, "\(name): a refused ATTACH changed a file")
        }
        // A file named by an expression cannot be checked before SQLite opens it: an ATTACH of
        // one, encrypting or not, is refused, saying to bind the name, and nothing is read or changed.
        let dirName = dir.path("").replacingOccurrences(of: "'", with: "''")
        for sql in ["ATTACH '\(dirName)' || 'plain512.db' AS other KEY 'a key'", "ATTACH (SELECT ?) AS other KEY 'a key'",
                    "ATTACH lower(?) AS other", "ATTACH DATABASE trim(?) AS other KEY ?", "ATTACH upper(?) AS other KEY ''"] {
            let error = await #expect(throws: SqlCipherError.self, "\(sql)") {
                try await db.execute(sql, arguments: sql.contains("KEY ?") ? [path, "a key"] : sql.contains("?") ? [path] : [])
            }
            guard case .invalidQuery(let reason)? = error else {
                Issue.record("\(sql): expected invalidQuery, got \(String(describing: error))")
                continue
            }
            #expect(reason.contains("ATTACH DATABASE ? AS name KEY ?") && !reason.contains("a key"), "\(sql): \(reason)")
            let after = try dir.snapshot()
            #expect(before.allSatisfy { after[$0.key]?.0 == $0.value.0 }, "\(sql): a refused ATTACH changed a file")
        }
        // The database is still usable, and the file opens as plaintext, rolled back.
        #expect(try await db.query("SELECT count(*) FROM sqlite_master")[0].get(0, as: Int.self) == 0)
        await db.close()
        let plain = try Database(unencryptedPath: dir.path("plainmain.db"), journalMode: .rollback)
        try await plain.execute("ATTACH ? AS other KEY ''", path)
        #expect(try await plain.query("SELECT x FROM other.t").map { $0.get(0, as: String.self) } == ["committed"])
        await plain.close()
        #expect(!FileManager.default.fileExists(atPath: path + "-journal"))
    }

    /// A `file:` name is a URI to SQLite only where URIs are on (Debian's 4.6.1; on 3.4.1 only for
    /// connections opened with `SQLITE_OPEN_URI`); elsewhere it is a file of that very name in the
    /// working folder. The checks before an `ATTACH` read every `file:` name as a URI, so on 3.4.1
    /// the file SQLite opened went unchecked, and a hot journal of smaller pages beside it crashed
    /// the process as above. Both readings are checked now, on every library.
    @Test func anAttachOfAFileNameSQLiteTakesLiterallyIsCheckedToo() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("file:plain512.db")
        try makePlaintextFileWithHotJournal(at: path)
        let before = try dir.snapshot()
        let result = try runHelper(["attach-literal-name", dir.url.path, "file:plain512.db"])
        #expect(result.status == 0 && !result.signaled, "\(result.stdout) \(result.stderr)")
        let line = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(line.hasPrefix("attach error cannotOpen file:plain512.db: ") && line.contains("512-byte pages"), "\(line)")
        #expect(!line.contains("a key"), "the key is not echoed: \(line)")
        let after = try dir.snapshot()
        #expect(before.allSatisfy { after[$0.key]?.0 == $0.value.0 }, "a refused ATTACH changed a file")
    }

    /// A `-wal` of another database beside a file (one restored or copied without its own -wal,
    /// next to a stale one, here left by a killed CLI) is named as such, not reported as a wrong
    /// key (3.4.1) or as a bare "file is not a database" (4.x): the key opens the file itself.
    /// Nothing is changed; without the foreign -wal the file opens as of its last checkpoint.
    @Test func aForeignWALIsNamedNotTakenForAWrongKey() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("mine.db"), other = dir.path("other.db")
        let key = SqlcipherCLI.keyPragma(passphrase: "wal owner")
        _ = try SqlcipherCLI.run(sameVersionCLI, path, [
            key, "PRAGMA journal_mode = WAL", "CREATE TABLE t(x)", "INSERT INTO t VALUES ('checkpointed')",
        ])
        try SqlcipherCLI.runAndKill(sameVersionCLI, path, [key, "INSERT INTO t VALUES ('only in the wal')"])
        try SqlcipherCLI.runAndKill(sameVersionCLI, other, [
            key, "PRAGMA journal_mode = WAL", "CREATE TABLE elsewhere(y)", "INSERT INTO elsewhere VALUES (1)",
        ])
        // The killed writer's own -wal is read: its committed row is seen.
        let saved = try #require(FileManager.default.contents(atPath: path + "-wal"))
        let own = try Database(path: path, key: "wal owner", readOnly: true)
        #expect(try await own.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 2)
        await own.close()
        // Another file's -wal in its place (no -shm: SQLite rebuilds it from the -wal).
        try FileManager.default.removeItem(atPath: path + "-wal")
        try FileManager.default.removeItem(atPath: path + "-shm")
        try FileManager.default.copyItem(atPath: other + "-wal", toPath: path + "-wal")
        let before = try dir.snapshot()
        func isForeignWAL(_ error: any Error) -> Bool {
            guard case let SqlCipherError.cannotOpen(_, reason) = error else { return false }
            return reason.contains("mine.db-wal") && reason.contains("another database") && !reason.contains("wal owner")
        }
        #expect { _ = try Database(path: path, key: "wal owner") } throws: { isForeignWAL($0) }
        #expect { _ = try DatabasePool(path: path, key: "wal owner") } throws: { isForeignWAL($0) }
        // A wrong key is still a wrong key.
        #expect {
            _ = try Database(path: path, key: "not the owner")
        } throws: { error in
            if case SqlCipherError.keyFailed = error { return true } else { return false }
        }
        // The database and every -wal as they were (SQLite may create the missing -shm, an index
        // it rebuilds from the -wal). On 3.4.1 a failed opening used to checkpoint the foreign
        // frames into mine.db on close, and its table was gone.
        let after = try dir.snapshot().filter { !$0.key.hasSuffix("-shm") }
        #expect(after.keys.sorted() == before.keys.filter { !$0.hasSuffix("-shm") }.sorted())
        #expect(after.allSatisfy { before[$0.key]?.0 == $0.value.0 }, "a refused opening changed a file")
        // Moved away, as the error says: the file opens as of its last checkpoint.
        try FileManager.default.removeItem(atPath: path + "-wal")
        try? FileManager.default.removeItem(atPath: path + "-shm")
        let db = try Database(path: path, key: "wal owner")
        #expect(try await db.query("SELECT x FROM t").map { $0.get(0, as: String.self) } == ["checkpointed"])
        await db.close()
        #expect(saved.count > 32)
    }

    @Test func everyEncryptedFileStartsWithCiphertextAfterTheFirstWrite() async throws {
        // The open sequence writes and checks once; here the file is checked from outside too.
        let dir = TemporaryDirectory()
        for (index, mode) in [JournalMode.wal, .rollback].enumerated() {
            let path = dir.path("fresh\(index).db")
            let db = try Database(path: path, key: "k", journalMode: mode, cipher: fastCipher)
            let header = try #require(FileHeader(path: path))
            #expect(header.fileSize > 0)
            #expect(!header.hasPlaintextMagic)
            #expect(try await db.query("SELECT count(*) FROM sqlite_master")[0].get(0, as: Int.self) == 0)
        }
    }

    /// Whether the loaded SQLite reads generated columns (3.31) and STRICT tables (3.37): then the
    /// file at `path` (made with the passphrase "newer" and SQLCipher 3's settings) opens, and its
    /// generated column reads 42; else the test goes on to check the refusal.
    private func opensWithANewerSQLite(_ path: String) async throws -> Bool {
        guard try loadedLibrary().sqliteVersionNumber >= 3_037_000 else { return false }
        let db = try Database(path: path, key: "newer", cipher: .sqlcipher3)
        #expect(try await db.query("SELECT b FROM g")[0].get(0, as: Int.self) == 42)
        await db.close()
        return true
    }
}
