import Foundation
import Testing
@testable import SqlCipherKit

/// Opening: every initializer, every error case of the issue, defaults and journal modes.
@Suite struct OpeningTests {
    // MARK: Errors

    @Test func emptyPassphraseIsRejected() throws {
        let dir = TemporaryDirectory()
        #expect(throws: SqlCipherError.emptyKey) { try Database(path: dir.path("a.db"), key: "") }
        #expect(throws: SqlCipherError.emptyKey) { try Database(path: dir.path("a.db"), key: .passphrase(Data())) }
        #expect(!FileManager.default.fileExists(atPath: dir.path("a.db")))
        #expect(SqlCipherError.emptyKey.description.contains("unencryptedPath"))
    }

    @Test(arguments: [0, 1, 16, 31, 33, 64])
    func rawKeyOfWrongLengthIsRejected(length: Int) throws {
        let dir = TemporaryDirectory()
        #expect(throws: SqlCipherError.invalidRawKey(byteCount: length)) {
            try Database(path: dir.path("a.db"), rawKey: Data(repeating: 7, count: length))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("a.db")))
    }

    @Test func saltOfWrongLengthIsRejected() throws {
        let dir = TemporaryDirectory()
        #expect(throws: SqlCipherError.self) {
            try Database(path: dir.path("a.db"), key: .rawKey(rawKey(), salt: Data(count: 8)))
        }
    }

    @Test func wrongPassphraseIsKeyFailed() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, key: "right", cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        let error = try #require(throws: SqlCipherError.self) { try Database(path: path, key: "wrong", cipher: fastCipher) }
        guard case .keyFailed(let failedPath, let reason) = error else {
            Issue.record("expected keyFailed, got \(error)")
            return
        }
        #expect(failedPath == path)
        #expect(reason.contains("key is wrong"))
        // A failed open leaves the file as it was.
        let again = try Database(path: path, key: "right", cipher: fastCipher)
        #expect(try await again.query("SELECT name FROM sqlite_master").count == 1)
    }

    @Test func wrongRawKeyIsKeyFailed() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        _ = try Database(path: path, rawKey: rawKey(1))
        #expect {
            try Database(path: path, rawKey: rawKey(2))
        } throws: { error in
            if case SqlCipherError.keyFailed = error { return true }
            return false
        }
        // A raw-key file does not open with a passphrase of the same hex text either.
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: hex(rawKey(1))) }
    }

    @Test func plaintextFileOpenedWithKeyIsKeyFailed() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("plain.db")
        let plain = try Database(unencryptedPath: path)
        try await plain.execute("CREATE TABLE t(x)")
        await plain.close()
        let error = try #require(throws: SqlCipherError.self) { try Database(path: path, key: "secret") }
        guard case .keyFailed(_, let reason) = error else {
            Issue.record("expected keyFailed, got \(error)")
            return
        }
        #expect(reason.contains("plaintext"))
        #expect(reason.contains("Database.encrypt"))
        #expect(throws: SqlCipherError.self) { try Database(path: path, rawKey: rawKey()) }
    }

    @Test func encryptedFileOpenedAsPlaintextIsNotPlaintextDatabase() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("enc.db")
        let db = try Database(path: path, rawKey: rawKey())
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        #expect(throws: SqlCipherError.notPlaintextDatabase(path: path)) { try Database(unencryptedPath: path) }
    }

    @Test func fileThatIsNotADatabase() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("notes.txt")
        try Data("this is a text file, not a database\n".utf8).write(to: URL(fileURLWithPath: path))
        for open in [{ try Database(path: path, key: "k") }, { try Database(path: path, rawKey: rawKey()) },
                     { try Database(unencryptedPath: path) }] as [() throws -> Database] {
            let error = try #require(throws: SqlCipherError.self) { _ = try open() }
            guard case .notADatabase(let failed, let reason) = error else {
                Issue.record("expected notADatabase, got \(error)")
                continue
            }
            #expect(failed == path)
            #expect(reason.contains("page size"))
        }
        // Untouched.
        #expect(FileManager.default.contents(atPath: path) == Data("this is a text file, not a database\n".utf8))
    }

    @Test func randomPagesWithAKeyCannotBeToldFromAWrongKey() throws {
        // 4096 random bytes look exactly like a SQLCipher file: only the key can tell.
        let dir = TemporaryDirectory()
        let path = dir.path("random.bin")
        try Data((0..<4096).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: SqlCipherError.self) { try Database(path: path, key: "k", cipher: fastCipher) }
        guard case .keyFailed(_, let reason) = error else {
            Issue.record("expected keyFailed, got \(error)")
            return
        }
        #expect(reason.contains("not a database"))
        #expect(throws: SqlCipherError.notPlaintextDatabase(path: path)) { try Database(unencryptedPath: path) }
    }

    @Test func directoryIsCannotOpen() throws {
        let dir = TemporaryDirectory()
        let error = try #require(throws: SqlCipherError.self) { try Database(path: dir.url.path, key: "k") }
        guard case .cannotOpen(_, let reason) = error else {
            Issue.record("expected cannotOpen, got \(error)")
            return
        }
        #expect(reason.contains("directory"))
        #expect(throws: SqlCipherError.self) { try Database(unencryptedPath: dir.url.path) }
    }

    @Test func missingFolderIsCannotOpen() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("missing/sub/a.db")
        let error = try #require(throws: SqlCipherError.self) { try Database(path: path, rawKey: rawKey()) }
        guard case .cannotOpen(_, let reason) = error else {
            Issue.record("expected cannotOpen, got \(error)")
            return
        }
        #expect(reason.contains("does not exist"))
        #expect(!FileManager.default.fileExists(atPath: dir.path("missing")))
    }

    /// `Database(path: "~/app.db")`: the shell expands `~`, a program does not. The error said
    /// only "the folder …/~ does not exist; create it first", and doing so would have made a folder
    /// named `~`. Every entry point that checks a folder now says what `~` is and how to expand it.
    @Test func aTildeInAMissingFolderIsExplained() async throws {
        let dir = TemporaryDirectory()
        func expectAdvice(_ what: String, _ body: () async throws -> Void) async {
            do {
                try await body()
                Issue.record("\(what): expected cannotOpen")
            } catch let SqlCipherError.cannotOpen(_, reason) {
                #expect(reason.contains("does not exist") && reason.contains("expandingTildeInPath"), "\(what): \(reason)")
            } catch {
                Issue.record("\(what): unexpected \(error)")
            }
        }
        await expectAdvice("relative") { _ = try Database(path: "~/sqlcipherkit-no-such-folder/app.db", rawKey: rawKey()) }
        await expectAdvice("Database") { _ = try Database(path: dir.path("~/app.db"), key: "k") }
        await expectAdvice("pool") { _ = try DatabasePool(path: dir.path("~user/app.db"), rawKey: rawKey()) }
        let db = try Database(path: dir.path("source.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE t(x)")
        await expectAdvice("export") { try await db.export(to: dir.path("~/copy.db"), key: "k") }
        await expectAdvice("backup") { try await db.backup(to: dir.path("~/backup.db"), key: "k") }
        // Without a "~", the reason is as it was.
        do {
            _ = try Database(path: dir.path("missing/app.db"), rawKey: rawKey())
        } catch let SqlCipherError.cannotOpen(_, reason) {
            #expect(!reason.contains("~"))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("~")))
    }

    @Test func emptyPathIsCannotOpen() throws {
        #expect {
            try Database(path: "", rawKey: rawKey())
        } throws: { error in
            if case SqlCipherError.cannotOpen(_, let reason) = error { return reason.contains(":memory:") }
            return false
        }
    }

    @Test func folderWithoutWritePermissionIsCannotOpen() throws {
        let dir = TemporaryDirectory()
        try makeWorldReadable(dir)   // nobody can enter but not write
        let result = try runHelperUnprivileged(["open-database", dir.path("new.db"), "raw:" + hex(rawKey())])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("error cannotOpen"), "\(result.stdout)")
        #expect(result.stdout.contains("not writable"))
        #expect(!FileManager.default.fileExists(atPath: dir.path("new.db")))
    }

    @Test func fileWithoutReadPermissionIsCannotOpen() async throws {
        let dir = TemporaryDirectory()
        try makeWorldReadable(dir)
        let path = dir.path("secret.db")
        let db = try Database(path: path, rawKey: rawKey())
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let result = try runHelperUnprivileged(["open-database", path, "raw:" + hex(rawKey())])
        #expect(result.stdout.hasPrefix("error cannotOpen"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("not readable"))
    }

    @Test(arguments: [JournalMode.rollback, .wal])
    func readOnlyFileOpensForReadingAndRefusesWrites(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("ro.db")
        let db = try Database(path: path, rawKey: rawKey(), journalMode: mode)
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (1)")
        await db.close()
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        // The folder is writable for nobody only when we make it so: WAL needs its -shm file.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: dir.url.path)
        let read = try runHelperUnprivileged(["open-database", path, "raw:" + hex(rawKey()), "SELECT count(*) FROM t"])
        #expect(read.stdout.contains("opened readOnly=true journal=\(mode.rawValue)"), "\(read.stdout) \(read.stderr)")
        #expect(read.stdout.contains("executed"), "\(read.stdout)")
        let write = try runHelperUnprivileged(["open-database", path, "raw:" + hex(rawKey()), "INSERT INTO t VALUES (2)"])
        if mode == .wal && !isSQLCipher4() {
            // SQLite 3.15 cannot always reopen a read-only WAL file whose -shm another user made.
            #expect(write.stdout.contains("error"), "\(write.stdout) \(write.stderr)")
        } else {
            #expect(write.stdout.contains("error sqlite"), "\(write.stdout) \(write.stderr)")
            #expect(write.stdout.contains("SQLite error 8"), "\(write.stdout)")
        }
    }

    // MARK: Keys

    @Test func passphraseBytesWithNulAndInvalidUTF8() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let key = Data([0x61, 0x00, 0x62, 0xFF, 0xFE, 0x00, 0x80])
        let db = try Database(path: path, key: .passphrase(key), cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        _ = try Database(path: path, key: .passphrase(key), cipher: fastCipher)
        // The bytes are the key, all of them: the prefix before the first NUL is a different key.
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "a", cipher: fastCipher) }
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: .passphrase(key.dropLast()), cipher: fastCipher) }
    }

    @Test func stringPassphraseEqualsItsUTF8Bytes() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let passphrase = "Grüße ☕ 'quoted' \"double\" x'00'"
        let db = try Database(path: path, key: passphrase, cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (42)")
        await db.close()
        let reopened = try Database(path: path, key: .passphrase(Data(passphrase.utf8)), cipher: fastCipher)
        #expect(try await reopened.query("SELECT x FROM t")[0].get(0, as: Int.self) == 42)
        await reopened.close()
        // The bytes are the key: other bytes are another key, which the file refuses. (Not a
        // trailing NUL: PBKDF2's HMAC pads a short key with zeros, so "k" and "k\0" derive the same.)
        #expect(throws: SqlCipherError.self) {
            try Database(path: path, key: .passphrase(Data((passphrase + "!").utf8)), cipher: fastCipher)
        }
    }

    /// A raw key with a salt writes that salt into the file's first 16 bytes; the file then opens
    /// with the same key and salt, and with the raw key alone (SQLCipher reads the stored salt), but
    /// not with the same key and another salt (the salt feeds the HMAC key, so every page fails
    /// its check).
    @Test func rawKeyWithSaltStoresTheSaltAndRefusesAnotherSalt() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let salt = Data("salt-for-a-test!".utf8)
        let db = try Database(path: path, key: .rawKey(rawKey(), salt: salt))
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (42)")
        await db.close()
        let header = try #require(FileManager.default.contents(atPath: path)).prefix(16)
        #expect(Data(header) == salt)
        for reopened in [try Database(path: path, key: .rawKey(rawKey(), salt: salt)), try Database(path: path, rawKey: rawKey())] {
            #expect(try await reopened.query("SELECT x FROM t")[0].get(0, as: Int.self) == 42)
            await reopened.close()
        }
        #expect(throws: SqlCipherError.self) {
            try Database(path: path, key: .rawKey(rawKey(), salt: Data("another-salt-16!".utf8)))
        }
    }

    // MARK: In memory

    @Test func inMemoryWorksForEveryInitializer() async throws {
        let databases = [
            try Database(path: ":memory:", key: "k"),
            try Database(path: ":memory:", key: .passphrase(Data([0, 1, 2]))),
            try Database(path: ":memory:", rawKey: rawKey()),
            try Database(unencryptedPath: ":memory:"),
        ]
        for db in databases {
            try await db.execute("CREATE TABLE t(x)")
            try await db.execute("INSERT INTO t VALUES (?)", 42)
            #expect(try await db.query("SELECT x FROM t")[0].get(0, as: Int.self) == 42)
            #expect(db.journalMode == .rollback)
            #expect(db.path == ":memory:")
        }
        #expect(databases[0].isEncrypted)
        #expect(!databases[3].isEncrypted)
        #expect(!FileManager.default.fileExists(atPath: ":memory:"))
    }

    // MARK: Properties, defaults, close

    @Test func propertiesAndDefaults() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, rawKey: rawKey())
        #expect(db.path == path)
        #expect(db.isEncrypted)
        #expect(!db.isReadOnly)
        #expect(db.journalMode == .wal)
        #expect(db.cipherSettings == .default)
        #expect(db.library.path.contains("libsqlcipher"))
        #expect(try await db.query("PRAGMA busy_timeout")[0].get(0, as: Int.self) == 5000)
        #expect(try await db.query("PRAGMA foreign_keys")[0].get(0, as: Int.self) == 1)
        #expect(try await db.query("PRAGMA temp_store")[0].get(0, as: Int.self) == 2)   // 2 = MEMORY
        #expect(try await db.query("PRAGMA journal_mode")[0].get(0, as: String.self) == "wal")

        let plain = try Database(unencryptedPath: dir.path("p.db"))
        #expect(!plain.isEncrypted)
        #expect(try await plain.query("PRAGMA foreign_keys")[0].get(0, as: Int.self) == 1)
        #expect(try await plain.query("PRAGMA temp_store")[0].get(0, as: Int.self) == 2)
    }

    @Test func foreignKeysAreEnforcedByDefault() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE parent(id INTEGER PRIMARY KEY)")
        try await db.execute("CREATE TABLE child(id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id))")
        await #expect {
            try await db.execute("INSERT INTO child(parent) VALUES (99)")
        } throws: { error in
            if case SqlCipherError.sqlite(let code, _, _, _) = error { return code == 19 }
            return false
        }
    }

    @Test func closeMakesLaterCallsThrowAndReleasesTheFile() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, rawKey: rawKey())
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        await db.close()
        #expect(await db.isClosed)
        await #expect(throws: SqlCipherError.databaseClosed) { try await db.execute("SELECT 1") }
        await #expect(throws: SqlCipherError.databaseClosed) { try await db.query("SELECT 1") }
        await #expect(throws: SqlCipherError.databaseClosed) { try await db.transaction { _ in 1 } }
        // Closing the last connection checkpoints and removes the WAL files.
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
    }

    // MARK: Journal mode

    @Test(arguments: [JournalMode.wal, .rollback])
    func newFileGetsTheRequestedModeAndKeepsIt(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, rawKey: rawKey(), journalMode: mode)
        #expect(db.journalMode == mode)
        try await db.execute("CREATE TABLE t(x)")
        #expect(try await db.query("PRAGMA journal_mode")[0].get(0, as: String.self) == (mode == .wal ? "wal" : "delete"))
        await db.close()
        let other: JournalMode = mode == .wal ? .rollback : .wal
        let again = try Database(path: path, rawKey: rawKey(), journalMode: other)
        #expect(again.journalMode == mode)
        #expect(try await again.query("PRAGMA journal_mode")[0].get(0, as: String.self) == (mode == .wal ? "wal" : "delete"))
        let plain = try Database(unencryptedPath: dir.path("p.db"), journalMode: mode)
        #expect(plain.journalMode == mode)
        try await plain.execute("CREATE TABLE t(x)")   // an empty file is still new
        await plain.close()
        #expect(try Database(unencryptedPath: dir.path("p.db"), journalMode: other).journalMode == mode)
    }

    @Test func existingEmptyFileIsTreatedAsNew() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("empty.db")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let db = try Database(path: path, rawKey: rawKey(), journalMode: .rollback)
        #expect(db.journalMode == .rollback)
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        let header = try #require(FileHeader(path: path))
        #expect(!header.hasPlaintextMagic)
    }

    @Test func failedOpenOfANewFileLeavesNothingBehind() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        // An invalid setting fails before anything is created.
        #expect(throws: SqlCipherError.self) {
            try Database(path: path, rawKey: rawKey(), cipher: CipherSettings(pageSize: 1000))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
    }

    // MARK: SQLCipher's log

    @Test func wrongKeyOpenWritesNothingToStandardError() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, key: "right")
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        let result = try runHelper(["open-database", path, "pass:wrong"])
        #expect(result.stdout.hasPrefix("error keyFailed"), "\(result.stdout)")
        #expect(result.stderr.isEmpty, "SQLCipher wrote to stderr: \(result.stderr)")
    }
}
