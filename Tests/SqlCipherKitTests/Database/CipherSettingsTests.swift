import Foundation
import Testing
@testable import SqlCipherKit

/// Cipher settings: defaults per version, SQLCipher 3 compatibility proven with the real 3.4.1 CLI,
/// page size, KDF iterations, plaintext header, and `unsupported` where the version cannot honour one.
@Suite struct CipherSettingsTests {
    /// A cipher pragma's value; SQLCipher answers these as text.
    func pragmaNumber(_ db: Database, _ name: String) async throws -> Int? {
        let value = try await db.query("PRAGMA \(name)").first?[0]
        switch value {
        case .integer(let int)?: return Int(int)
        case .text(let text)?: return Int(text)
        default: return nil
        }
    }

    @Test func defaultFollowsTheLoadedLibrary() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"), rawKey: rawKey())
        let pageSize = try await pragmaNumber(db, "cipher_page_size")
        #expect(pageSize == (isSQLCipher4() ? 4096 : 1024))
    }

    @Test func sqlcipher3FileIsReadByTheRealSqlCipher341CLI() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("v3.db")
        let db = try Database(path: path, key: "pass'word", journalMode: .rollback, cipher: .sqlcipher3)
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
        try await db.execute("INSERT INTO t(name) VALUES (?), (?)", "one", "Grüße")
        await db.close()
        let lines = try SqlcipherCLI.run(SqlcipherCLI.version3, path, [
            SqlcipherCLI.keyPragma(passphrase: "pass'word"),
            "SELECT name FROM t ORDER BY id",
            "PRAGMA cipher_page_size",
        ])
        #expect(lines == ["one", "Grüße", "1024"])
        // And the package opens what 3.4.1 wrote back, with .sqlcipher3.
        _ = try SqlcipherCLI.run(SqlcipherCLI.version3, path, [
            SqlcipherCLI.keyPragma(passphrase: "pass'word"), "INSERT INTO t(name) VALUES ('from 3.4.1')",
        ])
        let again = try Database(path: path, key: "pass'word", cipher: .sqlcipher3)
        #expect(try await again.query("SELECT name FROM t WHERE id = 3")[0].get(0, as: String.self) == "from 3.4.1")
    }

    @Test func sqlcipher3RawKeyFileIsReadByTheRealSqlCipher341CLI() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("v3raw.db")
        let db = try Database(path: path, rawKey: rawKey(9), journalMode: .wal, cipher: .sqlcipher3)
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (42)")
        await db.close()
        let lines = try SqlcipherCLI.run(SqlcipherCLI.version3, path, [
            SqlcipherCLI.keyPragma(rawKey: rawKey(9)), "SELECT x FROM t", "PRAGMA journal_mode",
        ])
        #expect(lines == ["42", "wal"])
    }

    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func version4DefaultFileIsNotReadableByTheSqlCipher341CLI() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("v4.db")
        let db = try Database(path: path, key: "secret")
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        #expect(throws: SqlcipherCLI.CLIError.self) {
            try SqlcipherCLI.run(SqlcipherCLI.version3, path, [SqlcipherCLI.keyPragma(passphrase: "secret"), "SELECT * FROM t"])
        }
    }

    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func sqlcipher3FileNeedsTheSettingOnVersion4() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("v3.db")
        let db = try Database(path: path, key: "secret", cipher: .sqlcipher3)
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        let error = try #require(throws: SqlCipherError.self) { try Database(path: path, key: "secret") }
        guard case .keyFailed(_, let reason) = error else {
            Issue.record("expected keyFailed, got \(error)")
            return
        }
        #expect(reason.contains("sqlcipher3"))
    }

    @Test(.enabled(if: !isSQLCipher4(), "SQLCipher 3 only")) func sqlcipher4SettingIsUnsupportedOnVersion3() throws {
        let dir = TemporaryDirectory()
        let error = try #require(throws: SqlCipherError.self) {
            try Database(path: dir.path("a.db"), rawKey: rawKey(), cipher: .sqlcipher4)
        }
        guard case .unsupported(let feature, let requires, let loaded) = error else {
            Issue.record("expected unsupported, got \(error)")
            return
        }
        #expect(feature.contains("SQLCipher 4"))
        #expect(requires.contains("4."))
        #expect(loaded.hasPrefix("3.4"))
    }

    @Test func pageSizeAndKdfIterationsAreApplied() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let settings = CipherSettings(pageSize: 8192, kdfIterations: 1234)
        let db = try Database(path: path, key: "secret", journalMode: .rollback, cipher: settings)
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (zeroblob(20000))")
        #expect(try await pragmaNumber(db, "cipher_page_size") == 8192)
        #expect(try await pragmaNumber(db, "kdf_iter") == 1234)
        await db.close()
        let size = try #require(FileHeader(path: path)).fileSize
        #expect(size % 8192 == 0)
        // The same settings are needed again; without them the key does not fit.
        _ = try Database(path: path, key: "secret", cipher: settings)
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "secret") }
        // The real CLI of the same version agrees.
        let cli = isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3
        let lines = try SqlcipherCLI.run(cli, path, [
            SqlcipherCLI.keyPragma(passphrase: "secret"), "PRAGMA cipher_page_size = 8192", "PRAGMA kdf_iter = 1234",
            "SELECT length(x) FROM t",
        ])
        #expect(lines.last == "20000")
    }

    @Test(arguments: [0, 100, 1000, 131072])
    func invalidPageSizeIsRejected(size: Int) throws {
        let dir = TemporaryDirectory()
        #expect {
            try Database(path: dir.path("a.db"), rawKey: rawKey(), cipher: CipherSettings(pageSize: size))
        } throws: { error in
            if case SqlCipherError.invalidQuery(let reason) = error { return reason.contains("power of two") }
            return false
        }
    }

    @Test func invalidKdfIterationsAndCompatibilityAreRejected() throws {
        let dir = TemporaryDirectory()
        #expect(throws: SqlCipherError.self) {
            try Database(path: dir.path("a.db"), key: "k", cipher: CipherSettings(kdfIterations: 0))
        }
        // A SQLCipher 1 or 2 file's settings are refused with the way to open such a file.
        for version in [1, 2] {
            let error = #expect(throws: SqlCipherError.self) {
                try Database(path: dir.path("a.db"), key: "k", cipher: CipherSettings(compatibility: version))
            }
            #expect(error.map { "\($0)" }?.contains("upgradeFromSqlCipher3") == true, "\(String(describing: error))")
        }
        #expect(throws: SqlCipherError.self) {
            try Database(path: dir.path("a.db"), key: "k", cipher: CipherSettings(compatibility: 5))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("a.db")))
    }

    @Test func plaintextHeaderWithRawKeyAndSalt() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("ph.db")
        let salt = Data("0123456789abcdef".utf8)
        let settings = CipherSettings(plaintextHeaderSize: 32)
        guard isSQLCipher4() else {
            let error = try #require(throws: SqlCipherError.self) {
                try Database(path: path, key: .rawKey(rawKey(), salt: salt), cipher: settings)
            }
            guard case .unsupported(let feature, let requires, _) = error else {
                Issue.record("expected unsupported, got \(error)")
                return
            }
            #expect(feature.contains("plaintext header"))
            #expect(requires.contains("SQLCipher 4"))
            #expect(!FileManager.default.fileExists(atPath: path))
            return
        }
        let db = try Database(path: path, key: .rawKey(rawKey(), salt: salt), journalMode: .rollback, cipher: settings)
        try await db.execute("CREATE TABLE t(secret TEXT)")
        try await db.execute("INSERT INTO t VALUES ('PLAINTEXT-HEADER-MARKER')")
        await db.close()
        let header = try #require(FileHeader(path: path))
        #expect(header.hasPlaintextMagic)
        #expect(header.looksPlaintextHeaderSQLCipher)
        #expect(filesContain([path], "PLAINTEXT-HEADER-MARKER").isEmpty)
        // Reopens with key and salt; without the setting, or as plaintext, it is refused.
        let again = try Database(path: path, key: .rawKey(rawKey(), salt: salt), cipher: settings)
        #expect(try await again.query("SELECT secret FROM t")[0].get(0, as: String.self) == "PLAINTEXT-HEADER-MARKER")
        await again.close()
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: .rawKey(rawKey(), salt: salt)) }
        #expect(throws: SqlCipherError.notPlaintextDatabase(path: path)) { try Database(unencryptedPath: path) }
        // The real CLI reads it with the same key, salt and setting.
        let lines = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [
            "PRAGMA key = \"x'\(hex(rawKey()))\(hex(salt))'\"", "PRAGMA cipher_plaintext_header_size = 32", "SELECT secret FROM t",
        ])
        #expect(lines == ["PLAINTEXT-HEADER-MARKER"])
    }

    /// A plaintext header keeps the salt out of the file, so only a raw key given with its salt can
    /// open such a file again. A passphrase (or a raw key without salt) used to create the file,
    /// take writes, and leave it unopenable with the same key and settings; now every keyed
    /// entry refuses it before anything is created, and an existing file is left as it was.
    @Test func aPlaintextHeaderNeedsARawKeyWithItsSalt() async throws {
        let dir = TemporaryDirectory()
        let settings = CipherSettings(plaintextHeaderSize: 32)
        let new = dir.path("new.db")
        func refused(_ path: String, _ open: () throws -> Void) {
            let error = #expect(throws: SqlCipherError.self) { try open() }
            if isSQLCipher4() {
                guard case .keyFailed(_, let reason)? = error else {
                    Issue.record("expected keyFailed, got \(String(describing: error))")
                    return
                }
                #expect(reason.contains("key: .passphrase(passphrase, salt: salt) or .rawKey(key, salt: salt)"), "\(reason)")
            }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
        refused(new) { _ = try Database(path: new, key: "a passphrase", cipher: settings) }
        refused(new) { _ = try Database(path: new, key: .passphrase(Data("a passphrase".utf8)), cipher: settings) }
        refused(new) { _ = try Database(path: new, rawKey: rawKey(), cipher: settings) }

        // The conversions' targets: an encrypted copy, an encrypted copy of a plaintext file, in place.
        let source = try Database(path: dir.path("source.db"), rawKey: rawKey())
        try await source.execute("CREATE TABLE t(x)")
        let copy = dir.path("copy.db")
        let error = await #expect(throws: SqlCipherError.self) {
            try await source.export(to: copy, key: "a passphrase", cipher: settings)
        }
        if isSQLCipher4() {
            guard case .keyFailed? = error else { Issue.record("expected keyFailed, got \(String(describing: error))"); return }
        }
        #expect(!FileManager.default.fileExists(atPath: copy))
        let plain = dir.path("plain.db")
        let plaintext = try Database(unencryptedPath: plain, journalMode: .rollback)
        try await plaintext.execute("CREATE TABLE t(x)")
        await plaintext.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: plain))
        refused(copy) { try Database.encrypt(plaintextAt: plain, to: copy, key: "a passphrase", cipher: settings) }
        #expect(throws: SqlCipherError.self) {
            try Database.encryptInPlace(path: plain, key: .rawKey(rawKey()), cipher: settings)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: plain)) == before)

        // An existing file with a plaintext header: a passphrase is told what opens it, and the
        // file is not touched.
        guard isSQLCipher4() else { return }
        let existing = dir.path("existing.db")
        let salt = Data("0123456789abcdef".utf8)
        let made = try Database(path: existing, key: .rawKey(rawKey(), salt: salt), journalMode: .rollback, cipher: settings)
        try await made.execute("CREATE TABLE t(x)")
        await made.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: existing))
        let wrong = #expect(throws: SqlCipherError.self) { try Database(path: existing, key: "a passphrase", cipher: settings) }
        guard case .keyFailed(_, let reason)? = wrong else { Issue.record("expected keyFailed, got \(String(describing: wrong))"); return }
        #expect(reason.contains("salt kept when it was created"), "\(reason)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: existing)) == bytes)
        _ = try Database(path: existing, key: .rawKey(rawKey(), salt: salt), cipher: settings)
    }

    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func plaintextHeaderIsRejectedForUnencryptedDatabases() throws {
        #expect(throws: SqlCipherError.self) {
            _ = try DatabaseOpener.open(path: ":memory:", key: nil, journalMode: .wal,
                                        cipher: CipherSettings(plaintextHeaderSize: 32))
        }
    }

    @Test func fixtureFromTheSqlCipher3CLIOpensWithSqlcipher3Settings() async throws {
        // Fixtures/sqlcipher3-default.db was written by the real 3.4.1 CLI.
        let dir = TemporaryDirectory()
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/sqlcipher3-default.db")
        let path = dir.path("copy.db")
        try FileManager.default.copyItem(atPath: fixture.path, toPath: path)
        let db = try Database(path: path, key: "fixture-passphrase-3", cipher: .sqlcipher3)
        #expect(try await db.query("SELECT count(*) FROM items")[0].get(0, as: Int.self) == 20)
        #expect(try await db.query("PRAGMA user_version")[0].get(0, as: Int.self) == 7)
        #expect(try await db.query("SELECT name FROM items WHERE id = 18")[0].get(0, as: String.self) == "FIXTURE-MARKER-Q7Z3K9")
    }
}

/// A file the real `sqlcipher` tool made with another page size than the settings an opening
/// gives. A key that does not open page 1 fails the same way whatever setting differs, and the
/// error listed every setting; the page size is the one setting a file gives away without its key
/// (its size is whole pages; a `-wal`'s header records it), so the error now names it.
@Suite struct PageSizeMismatchTests {
    /// The CLI of the loaded library's major version, so that both libraries read what it wrote.
    static var cli: String { isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3 }

    static let key = SqlcipherCLI.keyPragma(passphrase: "secret")

    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    static func expectPageSizeNamed(_ pageSize: Int, opening path: String, cipher: CipherSettings) throws {
        let files = [path, path + "-wal"].map { FileManager.default.contents(atPath: $0) }
        let error = #expect(throws: SqlCipherError.self) { try Database(path: path, key: "secret", cipher: cipher) }
        guard case .keyFailed(_, let reason)? = error else {
            Issue.record("expected keyFailed, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("CipherSettings(pageSize: \(pageSize))"), "\(reason)")
        #expect(!reason.contains("secret"))
        #expect([path, path + "-wal"].map { FileManager.default.contents(atPath: $0) } == files, "a refused opening changed a file")
    }

    @Test func aFileOfSmallerPagesIsToldByItsSize() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("small-pages.db")
        let settings = [Self.key, "PRAGMA cipher_page_size = 1024", "PRAGMA kdf_iter = 2"]
        _ = try SqlcipherCLI.run(Self.cli, path, settings + ["CREATE TABLE t(x)", "INSERT INTO t VALUES ('made by the CLI')"])
        // One more table, one more page, until the file is an odd number of pages: its size then
        // says its pages are 1024 bytes (an even number could be of 2048 too).
        if Self.size(path) / 1024 % 2 == 0 { _ = try SqlcipherCLI.run(Self.cli, path, settings + ["CREATE TABLE u(x)"]) }
        #expect(Self.size(path) / 1024 % 2 == 1)
        try Self.expectPageSizeNamed(1024, opening: path, cipher: CipherSettings(pageSize: 4096, kdfIterations: 2))
        let db = try Database(path: path, key: "secret", cipher: CipherSettings(pageSize: 1024, kdfIterations: 2))
        #expect(try await db.query("SELECT x FROM t").map { $0.get("x", as: String.self) } == ["made by the CLI"])
        await db.close()
    }

    @Test func aFileWhoseWALRecordsAnotherPageSizeIsToldByIt() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("wal-pages.db")
        // Killed with its commits in the -wal, as a crashed program leaves them.
        try SqlcipherCLI.runAndKill(Self.cli, path, [Self.key, "PRAGMA cipher_page_size = 8192", "PRAGMA kdf_iter = 2",
                                                     "PRAGMA journal_mode = WAL", "CREATE TABLE t(x)",
                                                     "INSERT INTO t VALUES ('in the wal')"])
        #expect(Self.size(path + "-wal") > 32)
        try Self.expectPageSizeNamed(8192, opening: path, cipher: CipherSettings(kdfIterations: 2))
        let db = try Database(path: path, key: "secret", cipher: CipherSettings(pageSize: 8192, kdfIterations: 2))
        #expect(try await db.query("SELECT x FROM t").map { $0.get("x", as: String.self) } == ["in the wal"])
        await db.close()
    }
}
