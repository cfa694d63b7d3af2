import Foundation
import Testing
@testable import SqlCipherKit

/// encrypt, encryptInPlace, exportDecrypted, export, upgradeFromSqlCipher3.
@Suite struct ConversionTests {
    /// A plaintext database with two tables, an index, a view, a trigger, an AUTOINCREMENT
    /// table, `user_version` and `application_id`.
    func makePlaintext(_ path: String, mode: JournalMode = .rollback, rows: Int = 100) async throws {
        let db = try Database(unencryptedPath: path, journalMode: mode)
        try await db.execute(#"""
            CREATE TABLE items(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, data BLOB);
            CREATE INDEX items_name ON items(name);
            CREATE TABLE "odd ""name"""(x);
            CREATE VIEW item_names AS SELECT name FROM items;
            CREATE TRIGGER items_log AFTER INSERT ON items BEGIN INSERT INTO "odd ""name""" VALUES (new.id); END;
            PRAGMA user_version = 42;
            PRAGMA application_id = 1234;
            """#)
        try await db.transaction { conn in
            for index in 0..<rows {
                try conn.execute("INSERT INTO items(name, data) VALUES (?, ?)", "PLAIN-MARKER item \(index)", Data([UInt8(index % 256)]))
            }
        }
        await db.close()
    }

    func checkContents(_ db: Database, rows: Int = 100) async throws {
        #expect(try await db.query("SELECT count(*) FROM items")[0].get(0, as: Int.self) == rows)
        #expect(try await db.query("SELECT count(*) FROM \"odd \"\"name\"\"\"")[0].get(0, as: Int.self) == rows)
        #expect(try await db.query("SELECT count(*) FROM item_names")[0].get(0, as: Int.self) == rows)
        #expect(try await db.query("PRAGMA user_version")[0].get(0, as: Int.self) == 42)
        #expect(try await db.query("PRAGMA application_id")[0].get(0, as: Int.self) == 1234)
        #expect(try await db.query("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'items_name'").count == 1)
        #expect(try await db.query("SELECT name FROM sqlite_master WHERE type = 'trigger'").count == 1)
        // AUTOINCREMENT's counter came along.
        #expect(try await db.query("SELECT seq FROM sqlite_sequence WHERE name = 'items'")[0].get(0, as: Int.self) == rows)
    }

    // MARK: encrypt

    @Test(arguments: [JournalMode.rollback, .wal])
    func encryptWritesAVerifiedEncryptedCopy(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let source = dir.path("plain.db"), target = dir.path("enc.db")
        try await makePlaintext(source, mode: mode)
        let before = try #require(FileManager.default.contents(atPath: source))
        try Database.encrypt(plaintextAt: source, to: target, key: "secret", cipher: fastCipher)
        // The source is unchanged, the target is ciphertext in the source's journal mode.
        #expect(FileManager.default.contents(atPath: source) == before)
        #expect(filesContain([target, target + "-wal"], "PLAIN-MARKER").isEmpty)
        #expect(try #require(FileHeader(path: target)).hasPlaintextMagic == false)
        let db = try Database(path: target, key: "secret", cipher: fastCipher)
        #expect(db.journalMode == mode)
        try await checkContents(db)
    }

    @Test func encryptWithARawKeyAndSqlcipher3SettingsIsReadByTheCLI() async throws {
        let dir = TemporaryDirectory()
        let source = dir.path("plain.db"), target = dir.path("enc.db")
        try await makePlaintext(source, rows: 10)
        try Database.encrypt(plaintextAt: source, to: target, key: .rawKey(rawKey(4)), cipher: .sqlcipher3)
        let lines = try SqlcipherCLI.run(SqlcipherCLI.version3, target, [
            SqlcipherCLI.keyPragma(rawKey: rawKey(4)), "SELECT count(*) FROM items", "PRAGMA user_version",
        ])
        #expect(lines == ["10", "42"])
    }

    @Test func encryptRefusesAnExistingTargetAndAnEncryptedSource() async throws {
        let dir = TemporaryDirectory()
        let source = dir.path("plain.db"), target = dir.path("enc.db")
        try await makePlaintext(source, rows: 1)
        #expect(FileManager.default.createFile(atPath: target, contents: Data("keep me".utf8)))
        #expect {
            try Database.encrypt(plaintextAt: source, to: target, key: "k")
        } throws: { error in
            if case SqlCipherError.cannotOpen(_, let reason) = error { return reason.contains("already exists") }
            return false
        }
        #expect(FileManager.default.contents(atPath: target) == Data("keep me".utf8))
        let encrypted = dir.path("already.db")
        _ = try Database(path: encrypted, rawKey: rawKey())
        #expect(throws: SqlCipherError.notPlaintextDatabase(path: encrypted)) {
            try Database.encrypt(plaintextAt: encrypted, to: dir.path("x.db"), key: "k")
        }
        #expect(throws: SqlCipherError.self) { try Database.encrypt(plaintextAt: dir.path("none.db"), to: dir.path("y.db"), key: "k") }
        #expect(throws: SqlCipherError.emptyKey) { try Database.encrypt(plaintextAt: source, to: dir.path("z.db"), key: "") }
        #expect(throws: SqlCipherError.self) {
            try Database.encrypt(plaintextAt: source, to: dir.path("missing/z.db"), key: "k")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("x.db")))
        #expect(!FileManager.default.fileExists(atPath: dir.path("z.db")))
    }

    @Test(.enabled(if: !isSQLCipher4(), "SQLCipher 3 only")) func unsupportedTargetSettingFailsWithoutLeavingAFile() async throws {
        let dir = TemporaryDirectory()
        let source = dir.path("plain.db"), target = dir.path("enc.db")
        try await makePlaintext(source, rows: 1)
        #expect {
            try Database.encrypt(plaintextAt: source, to: target, key: "k", cipher: .sqlcipher4)
        } throws: { error in
            if case SqlCipherError.unsupported = error { return true }
            return false
        }
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    /// A plaintext file whose schema names a collation its maker registers (an index `COLLATE
    /// weird`): `encrypt(plaintextAt:to:key:)` and `encryptInPlace` failed saying "register it on
    /// this database first", but those static calls have no database to register it on. The
    /// error now names the way that works, and that way is followed here to an encrypted copy.
    @Test func aStaticConversionOfASchemaWithACollationNamesAWayThatWorks() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("collated.db")
        let weird = DatabaseCollation("weird") { $0.count == $1.count ? .orderedSame : ($0.count < $1.count ? .orderedAscending : .orderedDescending) }
        let maker = try Database(unencryptedPath: path, journalMode: .rollback)
        try await maker.add(collation: weird)
        try await maker.execute("CREATE TABLE t(name TEXT); CREATE INDEX t_name ON t(name COLLATE weird); INSERT INTO t VALUES ('a'), ('bb')")
        await maker.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let conversions: [(String, () throws -> Void)] = [
            ("encrypt", { try Database.encrypt(plaintextAt: path, to: dir.path("copy.db"), key: .rawKey(rawKey())) }),
            ("encryptInPlace", { _ = try Database.encryptInPlace(path: path, key: .rawKey(rawKey())) }),
        ]
        for (name, convert) in conversions {
            let error = #expect(throws: SqlCipherError.self, "\(name)") { try convert() }
            guard case .conversionFailed(_, _, let reason)? = error else {
                Issue.record("\(name): expected conversionFailed, got \(String(describing: error))")
                continue
            }
            #expect(reason.contains("no such collation sequence: weird"), "\(name): \(reason)")
            #expect(reason.contains("Database(unencryptedPath:)") && reason.contains("export(to:key:cipher:)")
                        && !reason.contains("on this database"), "\(name): \(reason)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: dir.path("copy.db")))
        // The way the error names.
        let source = try Database(unencryptedPath: path)
        try await source.add(collation: weird)
        try await source.export(to: dir.path("copy.db"), key: .rawKey(rawKey()))
        await source.close()
        let copy = try Database(path: dir.path("copy.db"), rawKey: rawKey())
        try await copy.add(collation: weird)
        #expect(try await copy.query("SELECT name FROM t ORDER BY name COLLATE weird").compactMap { $0.get(0, as: String.self) } == ["a", "bb"])
        await copy.close()
    }

    /// A schema with a virtual table whose module only the program that made the file provides
    /// (here forged with the CLI): every copy carries the table's schema row without running it,
    /// so the copy succeeds and the program that has the module reads the copy as it read the file.
    @Test func copiesKeepAVirtualTableOfAModuleThisProcessLacks() async throws {
        let dir = TemporaryDirectory()
        let plain = dir.path("plain.db"), encrypted = dir.path("encrypted.db")
        let key = rawKey(61)
        let cli = isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3
        func forge(_ path: String, _ first: [String]) throws {
            let lines = first + [isSQLCipher4() ? ".dbconfig defensive off" : "", "CREATE TABLE t(x);", "INSERT INTO t VALUES (1);",
                                 "PRAGMA writable_schema = ON;",
                                 "INSERT INTO sqlite_master VALUES('table', 'v', 'v', 0, 'CREATE VIRTUAL TABLE v USING nosuchmodule(a)');"]
            let result = try runChild(cli, ["-batch", "-bail", path], input: Data(lines.joined(separator: "\n").utf8))
            try #require(result.status == 0, "\(result.stderr)")
        }
        try forge(plain, [])
        try forge(encrypted, [SqlcipherCLI.keyPragma(rawKey: key) + ";"])
        let plainSource = try Database(unencryptedPath: plain)
        try Database.encrypt(plaintextAt: plain, to: dir.path("a.db"), key: .rawKey(key))
        try await plainSource.export(to: dir.path("b.db"), key: .rawKey(key))
        await plainSource.close()
        let source = try Database(path: encrypted, rawKey: key)
        try await source.exportDecrypted(to: dir.path("c.db"))
        try await source.export(to: dir.path("d.db"), key: .rawKey(key))
        await source.close()
        for name in ["a.db", "b.db", "c.db", "d.db"] {
            let copy = name == "c.db" ? try Database(unencryptedPath: dir.path(name)) : try Database(path: dir.path(name), rawKey: key)
            #expect(try await copy.query("SELECT x FROM t")[0].get(0, as: Int.self) == 1, "\(name)")
            let schema = try await copy.query("SELECT sql FROM sqlite_master WHERE name = 'v'").first?.get(0, as: String.self)
            #expect(schema?.contains("nosuchmodule") == true, "\(name): \(String(describing: schema))")
            await copy.close()
        }
    }

    /// The advice for a copy that failed on a virtual table's module named `backup(to:key:)`
    /// whatever the copy; a backup refuses a plaintext source and writes the source's encryption,
    /// so it is named only where it works, an encrypted copy of an encrypted database.
    @Test func theMissingModuleAdviceNamesBackupOnlyWhereItWorks() {
        let failure = SqlCipherError.sqlite(code: 1, extendedCode: 1, message: "no such module: nosuchmodule", sql: nil)
        for possible in [false, true] {
            let hint = Exporter.missingExtensionHint(failure, pageCopyPossible: possible) ?? ""
            #expect(hint.contains("Drop that table first"), "\(hint)")
            #expect(hint.contains("backup(to:key:)") == possible, "\(hint)")
        }
    }

    @Test func encryptCopiesTablesWhoseChildComesBeforeTheParent() async throws {
        // The child table is created (and so exported) first; foreign keys are on by default.
        let dir = TemporaryDirectory()
        let source = dir.path("plain.db"), target = dir.path("enc.db")
        let db = try Database(unencryptedPath: source)
        try await db.execute("""
            CREATE TABLE a_child(id INTEGER PRIMARY KEY, parent INTEGER NOT NULL REFERENCES z_parent(id));
            CREATE TABLE z_parent(id INTEGER PRIMARY KEY);
            CREATE TABLE tree(id INTEGER PRIMARY KEY, up INTEGER REFERENCES tree(id));
            """)
        try await db.transaction { conn in
            try conn.execute("INSERT INTO z_parent VALUES (1), (2)")
            try conn.execute("INSERT INTO a_child(parent) VALUES (1), (2), (2)")
            try conn.execute("INSERT INTO tree VALUES (1, NULL), (2, 3), (3, 1)")
        }
        try await db.export(to: target, key: "k", cipher: fastCipher)
        let copy = try Database(path: target, key: "k", cipher: fastCipher)
        #expect(try await copy.query("SELECT count(*) FROM a_child")[0].get(0, as: Int.self) == 3)
        #expect(try await copy.query("PRAGMA foreign_key_check").isEmpty)
        #expect(try await db.query("PRAGMA foreign_keys")[0].get(0, as: Int.self) == 1)   // restored
    }

    // MARK: encryptInPlace

    /// `encryptInPlace` on a disk without room for the encrypted copy said "SQLite error 1: database
    /// or disk is full in `SELECT sqlcipher_export(...)`" with no advice (`sqlcipher_export` reports
    /// the copy's error as SQLITE_ERROR). It now says what filled and to free space; the original
    /// is unchanged and no partial copy is left beside it.
    @Test(.enabled(if: SmallFilesystem.isAvailable, "needs root to mount a small tmpfs"))
    func encryptInPlaceOnAFullDiskSaysWhatToDo() async throws {
        let disk = try #require(SmallFilesystem(kilobytes: 700))
        let path = disk.path("plain.db")
        let plain = try Database(unencryptedPath: path, journalMode: .rollback)
        try await plain.execute("CREATE TABLE p(b BLOB)")
        try await plain.transaction { conn in for _ in 0..<60 { try conn.execute("INSERT INTO p VALUES (randomblob(4000))") } }
        await plain.close()
        // The disk filled to the last block: the encrypted copy's pages fail in sqlcipher_export,
        // which reports them as SQLITE_ERROR (with room left, they fail with SQLITE_FULL instead).
        #expect(FileManager.default.createFile(atPath: disk.path("filler"), contents: nil))
        let filler = try #require(FileHandle(forWritingAtPath: disk.path("filler")))
        while (try? filler.write(contentsOf: Data(count: 4096))) != nil {}
        try filler.close()
        #expect {
            try Database.encryptInPlace(path: path, key: "k", cipher: CipherSettings(kdfIterations: 1000))
        } throws: { error in
            guard case .conversionFailed(_, _, let reason)? = error as? SqlCipherError else { return false }
            return reason.contains("no space left") && reason.contains("Free space")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.folder.url.path).sorted() == ["filler", "plain.db"])
        let reopened = try Database(unencryptedPath: path, readOnly: true)
        #expect(try await reopened.query("SELECT count(*) FROM p")[0].get(0, as: Int.self) == 60)
        await reopened.close()
    }

    @Test(arguments: [JournalMode.rollback, .wal])
    func encryptInPlaceReplacesThePlaintext(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("notes.db")
        try await makePlaintext(path, mode: mode)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let backup = try Database.encryptInPlace(path: path, key: "secret", cipher: fastCipher)
        #expect(backup == nil)
        #expect(filesContain([path], "PLAIN-MARKER").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["notes.db"])
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(throws: SqlCipherError.notPlaintextDatabase(path: path)) { try Database(unencryptedPath: path) }
        let db = try Database(path: path, key: "secret", cipher: fastCipher)
        #expect(db.journalMode == mode)
        try await checkContents(db)
        await db.close()
        // Running it again on the now encrypted file is refused, and changes nothing.
        #expect(throws: SqlCipherError.notPlaintextDatabase(path: path)) {
            try Database.encryptInPlace(path: path, key: "secret", cipher: fastCipher)
        }
    }

    @Test func encryptInPlaceKeepsABackupWhenAsked() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("notes.db")
        try await makePlaintext(path)
        let original = try #require(FileManager.default.contents(atPath: path))
        let backup = try #require(try Database.encryptInPlace(path: path, key: .rawKey(rawKey()), keepBackup: true))
        #expect(backup == path + ".plaintext-backup")
        #expect(FileManager.default.contents(atPath: backup) == original)
        _ = try Database(path: path, rawKey: rawKey())
        // A second backup would overwrite the first: refused.
        let other = dir.path("other.db")
        try await makePlaintext(other, rows: 1)
        #expect(FileManager.default.createFile(atPath: other + ".plaintext-backup", contents: Data("old".utf8)))
        #expect(throws: SqlCipherError.self) { try Database.encryptInPlace(path: other, key: "k", keepBackup: true) }
        #expect(FileManager.default.contents(atPath: other + ".plaintext-backup") == Data("old".utf8))
        _ = try Database(unencryptedPath: other)
    }

    @Test func encryptInPlaceRefusesAFileInUse() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("busy.db")
        try await makePlaintext(path, mode: .wal)
        let holder = try Database(unencryptedPath: path)
        try await holder.execute("BEGIN")
        _ = try await holder.query("SELECT count(*) FROM items")
        #expect(throws: SqlCipherError.self) { try Database.encryptInPlace(path: path, key: "k", cipher: fastCipher) }
        try await holder.execute("COMMIT")
        // An idle connection on a WAL file is found too: SQLite will not leave WAL mode under it.
        #expect(throws: SqlCipherError.self) { try Database.encryptInPlace(path: path, key: "k", cipher: fastCipher) }
        await holder.close()
        // Nothing changed: still plaintext, no leftovers.
        let db = try Database(unencryptedPath: path)
        try await checkContents(db)
        #expect(!FileManager.default.fileExists(atPath: path + ".sqlcipherkit-encrypting"))
    }

    /// Opening a file the process already has open leaves the first connection's POSIX locks
    /// alone: otherwise another process can take the file from under it (here, switch it out of
    /// WAL mode and delete its `-wal`), as SQLite's "How to corrupt" (2.2.1) describes.
    ///
    /// The package reads a file's header (and the inspector and the conversions read the file)
    /// through descriptors of its own, and closing one dropped every lock the process held on the
    /// file, its SQLite connections' included: all three cases below failed. Those descriptors
    /// now go through `OpenFiles`, which keeps them open while a connection has the file open.
    @Test(arguments: ["open", "inspect", "encryptInPlace"])
    func anotherOpeningLeavesTheFirstConnectionsLocks(_ how: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("held.db")
        try await makePlaintext(path, mode: .wal)
        let holder = try Database(unencryptedPath: path)
        _ = try await holder.query("SELECT count(*) FROM items")
        // Another process cannot leave WAL mode while the holder is open, to begin with (the CLI
        // answers "database is locked").
        #expect((try? SqlcipherCLI.run(SqlcipherCLI.version4, path, ["PRAGMA journal_mode = DELETE"])) != ["delete"])
        switch how {
        case "open":
            let second = try Database(unencryptedPath: path)
            _ = try await second.query("SELECT count(*) FROM items")
            await second.close()
        case "inspect":
            _ = DatabaseFileInspector.inspect(path)
        default:
            #expect(throws: SqlCipherError.self) { try Database.encryptInPlace(path: path, key: "k", cipher: fastCipher) }
            #expect(!FileManager.default.fileExists(atPath: path + ".sqlcipherkit-converting"))
        }
        let answer = try? SqlcipherCLI.run(SqlcipherCLI.version4, path, ["PRAGMA journal_mode = DELETE"])
        #expect(answer != ["delete"], "another process took the file from an open connection (\(how))")
        try await holder.execute("INSERT INTO items(name) VALUES ('after')")
        await holder.close()
    }

    /// A file whose name leaves no room for the files a conversion writes beside it (with
    /// `.sqlcipherkit-converting` added, the name passes the file system's 255-byte limit) was told
    /// that the name of the lock file "is taken (File name too long); remove what is there", with
    /// nothing there to remove. It is now told that its name is too long, and what to do.
    @Test func aFileNameTooLongForTheConversionsFilesIsToldSo() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path(String(repeating: "n", count: 240) + ".db")
        try await makePlaintext(path, rows: 3)
        let error = try #require(throws: SqlCipherError.self) {
            try Database.encryptInPlace(path: path, key: "k", cipher: fastCipher)
        }
        guard case .conversionFailed(_, _, let reason) = error else {
            Issue.record("expected conversionFailed, got \(error)")
            return
        }
        #expect(reason.contains("name is too long") && !reason.contains("remove what is there"), "\(reason)")
        let original = try Database(unencryptedPath: path)
        #expect(try await original.query("SELECT count(*) FROM items")[0].get(0, as: Int.self) == 3)
        await original.close()
    }

    /// An idle connection in rollback mode holds no lock, so a conversion cannot see it; once the
    /// file is replaced, its writes fail (nothing goes to the old file) with a message that says
    /// what happened and what to do, not SQLite's bare "attempt to write a readonly database".
    @Test func aConnectionLeftOpenAcrossAConversionIsToldTheFileMoved() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("moved.db")
        try await makePlaintext(path, rows: 3)
        let stale = try Database(unencryptedPath: path, journalMode: .rollback)
        _ = try await stale.query("SELECT count(*) FROM items")
        try Database.encryptInPlace(path: path, key: "k", cipher: fastCipher)
        do {
            try await stale.execute("INSERT INTO items(name) VALUES ('lost?')")
            Issue.record("a write to the replaced file succeeded")
        } catch let error as SqlCipherError {
            #expect(error.description.contains("replaced or moved since this connection opened it"), "\(error)")
        }
        await stale.close()
        try await checkContents(try Database(path: path, key: "k", cipher: fastCipher), rows: 3)
    }

    @Test func encryptInPlaceRemovesAStaleTemporaryFile() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("notes.db")
        try await makePlaintext(path, rows: 3)
        #expect(FileManager.default.createFile(atPath: path + ".sqlcipherkit-encrypting", contents: Data("half-written".utf8)))
        try Database.encryptInPlace(path: path, key: "k", cipher: fastCipher)
        #expect(!FileManager.default.fileExists(atPath: path + ".sqlcipherkit-encrypting"))
        try await checkContents(try Database(path: path, key: "k", cipher: fastCipher), rows: 3)
    }

    // MARK: exports of an open database

    @Test func exportDecryptedWritesPlaintextAndLeavesTheSourceAlone() async throws {
        let dir = TemporaryDirectory()
        let plain = dir.path("plain.db"), encrypted = dir.path("enc.db"), out = dir.path("out.db")
        try await makePlaintext(plain)
        try Database.encrypt(plaintextAt: plain, to: encrypted, key: "k", cipher: fastCipher)
        let db = try Database(path: encrypted, key: "k", cipher: fastCipher)
        try await db.exportDecrypted(to: out)
        #expect(try #require(FileHeader(path: out)).looksPlaintextSQLite)
        #expect(!filesContain([out], "PLAIN-MARKER").isEmpty)
        try await checkContents(try Database(unencryptedPath: out))
        // The plain sqlite3 tool reads it.
        let lines = try runChild("/usr/bin/sqlite3", [out, "SELECT count(*) FROM items"]).stdout
        #expect(lines == "100\n")
        // The source still works, and is still encrypted.
        try await checkContents(db)
        await #expect(throws: SqlCipherError.self) { try await db.exportDecrypted(to: out) }
    }

    @Test func exportFromSqlcipher3ToVersion4Settings() async throws {
        let dir = TemporaryDirectory()
        let plain = dir.path("plain.db"), old = dir.path("v3.db"), new = dir.path("v4.db")
        try await makePlaintext(plain, rows: 20)
        try Database.encrypt(plaintextAt: plain, to: old, key: "three", cipher: .sqlcipher3)
        let db = try Database(path: old, key: "three", cipher: .sqlcipher3)
        guard isSQLCipher4() else {
            await #expect(throws: SqlCipherError.self) { try await db.export(to: new, key: "four", cipher: .sqlcipher4) }
            #expect(!FileManager.default.fileExists(atPath: new))
            return
        }
        try await db.export(to: new, key: .rawKey(rawKey(8)), cipher: .default)
        let upgraded = try Database(path: new, rawKey: rawKey(8))
        try await checkContents(upgraded, rows: 20)
        #expect(try SqlcipherCLI.run(SqlcipherCLI.version4, new, [SqlcipherCLI.keyPragma(rawKey: rawKey(8)), "SELECT count(*) FROM items"]) == ["20"])
        // And the other way: a 4.x database exported to a file SQLCipher 3.4.1 reads.
        let back = dir.path("back3.db")
        try await upgraded.export(to: back, key: "for 3.4.1", cipher: .sqlcipher3)
        #expect(try SqlcipherCLI.run(SqlcipherCLI.version3, back, [SqlcipherCLI.keyPragma(passphrase: "for 3.4.1"), "SELECT count(*) FROM items"]) == ["20"])
    }

    @Test func exportWithCustomPageSizeAndPlaintextHeader() async throws {
        let dir = TemporaryDirectory()
        let plain = dir.path("plain.db")
        try await makePlaintext(plain, rows: 5)
        let source = try Database(unencryptedPath: plain)
        let custom = dir.path("custom.db")
        try await source.export(to: custom, key: "k", cipher: CipherSettings(pageSize: 2048, kdfIterations: 3))
        try await checkContents(try Database(path: custom, key: "k", cipher: CipherSettings(pageSize: 2048, kdfIterations: 3)), rows: 5)
        let header = dir.path("header.db")
        let settings = CipherSettings(plaintextHeaderSize: 32)
        let salt = Data("fedcba9876543210".utf8)
        guard isSQLCipher4() else {
            await #expect(throws: SqlCipherError.self) {
                try await source.export(to: header, key: .rawKey(rawKey(), salt: salt), cipher: settings)
            }
            return
        }
        try await source.export(to: header, key: .rawKey(rawKey(), salt: salt), cipher: settings)
        #expect(try #require(FileHeader(path: header)).looksPlaintextHeaderSQLCipher)
        try await checkContents(try Database(path: header, key: .rawKey(rawKey(), salt: salt), cipher: settings), rows: 5)
    }

    @Test func exportFromMemory() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await fill(db, rows: 7)
        try await db.export(to: dir.path("copy.db"), key: "k", cipher: fastCipher)
        let copy = try Database(path: dir.path("copy.db"), key: "k", cipher: fastCipher)
        #expect(try await countRows(copy) == 7)
        #expect(copy.journalMode == .wal)
    }

    // MARK: SQLCipher 3 upgrade

    @Test(arguments: [JournalMode.rollback, .wal])
    func upgradeFromSqlcipher3(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("old.db")
        let old = try Database(path: path, key: "legacy", journalMode: mode, cipher: .sqlcipher3)
        try await fill(old, rows: 30)
        try await old.execute("PRAGMA user_version = 5")
        await old.close()
        guard isSQLCipher4() else {
            let error = try #require(throws: SqlCipherError.self) { try Database.upgradeFromSqlCipher3(path: path, key: "legacy") }
            guard case .unsupported(let feature, let requires, _) = error else {
                Issue.record("expected unsupported, got \(error)")
                return
            }
            #expect(feature.contains("cipher_migrate"))
            #expect(requires.contains("SQLCipher 4"))
            _ = try Database(path: path, key: "legacy", cipher: .sqlcipher3)
            return
        }
        try Database.upgradeFromSqlCipher3(path: path, key: "legacy")
        #expect(!FileManager.default.fileExists(atPath: path + ".sqlcipherkit-upgrading"))
        let db = try Database(path: path, key: "legacy")
        #expect(try await countRows(db) == 30)
        #expect(try await db.query("PRAGMA user_version")[0].get(0, as: Int.self) == 5)
        await db.close()
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "legacy", cipher: .sqlcipher3) }
    }

    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func upgradeWithTheWrongKeyChangesNothing() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("old.db")
        let old = try Database(path: path, key: "legacy", cipher: .sqlcipher3)
        try await fill(old, rows: 3)
        await old.close()
        let before = try #require(FileManager.default.contents(atPath: path))
        #expect(throws: SqlCipherError.self) { try Database.upgradeFromSqlCipher3(path: path, key: "wrong") }
        #expect(FileManager.default.contents(atPath: path) == before)
    }

    /// A wrong key leaves the folder as it was. The upgrade also tries SQLCipher 1's format, whose
    /// pages have no HMAC: a wrong key decrypts page 1 into random bytes, and when byte 19 of
    /// them is 2 (one key in 256) SQLite takes the file for a WAL database and made a `-wal` and a
    /// `-shm` beside it, left after the refusal (found as a rare failure of the test above).
    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func upgradeWithWrongKeysLeavesTheFolderAsItWas() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("old.db")
        let db = try Database(path: path, rawKey: rawKey(3), journalMode: .rollback, cipher: .sqlcipher3)
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('old')")
        await db.close()
        let before = try dir.snapshot()
        var random = SystemRandomNumberGenerator()
        for attempt in 1...1500 {
            let wrong = Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
            #expect(throws: SqlCipherError.self) { try Database.upgradeFromSqlCipher3(path: path, key: .rawKey(wrong)) }
            let after = try dir.snapshot()
            guard after.keys.sorted() == before.keys.sorted() else {
                Issue.record("attempt \(attempt) left \(after.keys.sorted()) where \(before.keys.sorted()) were")
                break
            }
        }
        #expect(try dir.snapshot().allSatisfy { before[$0.key]?.0 == $0.value.0 })
    }

    /// Files the upgrade cannot migrate were reported as a wrong key whose hint
    /// (`CipherSettings.sqlcipher3`) the upgrade already follows: a file already in SQLCipher 4's
    /// format (an upgrade run at every launch) is named as such, and a SQLCipher 3 file with
    /// another page size (written by the real 3.4.1 CLI) gets the settings-and-export way out,
    /// which works. Nothing is changed.
    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func upgradeNamesFilesItCannotMigrate() async throws {
        let dir = TemporaryDirectory()
        let current = dir.path("current.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, current, [
            SqlcipherCLI.keyPragma(passphrase: "legacy"), "CREATE TABLE t(x)", "INSERT INTO t VALUES (1)",
        ])
        let tuned = dir.path("tuned.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version3, tuned, [
            SqlcipherCLI.keyPragma(passphrase: "legacy"), "PRAGMA cipher_page_size = 4096",
            "CREATE TABLE t(x)", "INSERT INTO t VALUES ('tuned')",
        ])
        let before = try dir.snapshot()
        #expect {
            try Database.upgradeFromSqlCipher3(path: current, key: "legacy")
        } throws: { error in
            guard case let SqlCipherError.keyFailed(_, reason) = error else { return false }
            return reason.contains("already in SQLCipher 4's format") && !reason.contains("legacy")
        }
        #expect {
            try Database.upgradeFromSqlCipher3(path: tuned, key: "legacy")
        } throws: { error in
            guard case let SqlCipherError.keyFailed(_, reason) = error else { return false }
            return reason.contains("CipherSettings(compatibility: 3, pageSize:") && reason.contains("export(to:key:cipher:)")
                && !reason.contains("already")
        }
        let after = try dir.snapshot()
        #expect(after.keys.sorted() == before.keys.sorted())
        #expect(after.allSatisfy { before[$0.key]?.0 == $0.value.0 })
        // The way out the error names.
        let old = try Database(path: tuned, key: "legacy", cipher: CipherSettings(compatibility: 3, pageSize: 4096))
        try await old.export(to: dir.path("upgraded.db"), key: "legacy")
        await old.close()
        let upgraded = try Database(path: dir.path("upgraded.db"), key: "legacy")
        #expect(try await upgraded.query("SELECT x FROM t")[0].get(0, as: String.self) == "tuned")
    }

    /// The upgrade is documented for SQLCipher 1.x-3.x files with their version's defaults, and
    /// `cipher_migrate` migrates them all, but the source was opened with SQLCipher 3's defaults
    /// only: files in the 2.x and 1.x formats (written here by the real CLI with
    /// `cipher_compatibility`) were refused as a wrong key.
    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only"), arguments: [1, 2])
    func upgradeMigratesSqlCipher2And1Files(version: Int) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("v\(version).db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [
            SqlcipherCLI.keyPragma(passphrase: "old format"), "PRAGMA cipher_compatibility = \(version)",
            "CREATE TABLE t(x)", "INSERT INTO t VALUES ('from SQLCipher \(version)')", "PRAGMA user_version = 4",
        ])
        #expect(throws: SqlCipherError.self) { try Database.upgradeFromSqlCipher3(path: path, key: "wrong") }
        try Database.upgradeFromSqlCipher3(path: path, key: "old format")
        let db = try Database(path: path, key: "old format")
        #expect(try await db.query("SELECT x FROM t")[0].get(0, as: String.self) == "from SQLCipher \(version)")
        #expect(try await db.query("PRAGMA user_version")[0].get(0, as: Int.self) == 4)
        await db.close()
        #expect(try SqlcipherCLI.run(SqlcipherCLI.version4, path, [
            SqlcipherCLI.keyPragma(passphrase: "old format"), "SELECT count(*) FROM t",
        ]) == ["1"])
    }

    /// An upgrade of a missing path (a typo) opened it as a new database: it created an empty
    /// file there, "upgraded" it and reported success. A missing or empty file is refused, and
    /// nothing is created.
    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func upgradeOfAMissingOrEmptyFileIsRefused() throws {
        let dir = TemporaryDirectory()
        let missing = dir.path("missing.db")
        #expect {
            try Database.upgradeFromSqlCipher3(path: missing, key: "legacy")
        } throws: { error in
            guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
            return reason.contains("no database file there") && reason.contains("SQLCipher 3 database")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
        let empty = dir.path("empty.db")
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        #expect {
            try Database.upgradeFromSqlCipher3(path: empty, key: "legacy")
        } throws: { error in
            guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
            return reason.contains("empty")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["empty.db"])
    }
}
