import Foundation
import Testing
@testable import SqlCipherKit

/// `DatabaseKey.passphrase(_:salt:)`: SQLCipher's shared-container setup, where a file has a
/// plaintext header and its key-derivation salt is kept by the program (`PRAGMA key`,
/// `PRAGMA cipher_plaintext_header_size`, `PRAGMA cipher_salt`). Every file here is also read or
/// written by the real `sqlcipher` CLI with exactly those pragmas.
@Suite struct PassphraseWithSaltTests {
    let passphrase = "shared container passphrase"
    let salt = Data((0..<16).map { UInt8($0) &* 13 &+ 5 })
    let header = CipherSettings(plaintextHeaderSize: 32)

    /// The CLI's statements that key a connection the way the shared-container setup does.
    func cliKey(_ passphrase: String, salt: Data) -> [String] {
        [SqlcipherCLI.keyPragma(passphrase: passphrase), "PRAGMA cipher_plaintext_header_size = 32",
         "PRAGMA cipher_salt = \"x'\(hex(salt))'\""]
    }

    @Test(.enabled(if: isSQLCipher4(), "plaintext headers are SQLCipher 4's"))
    func aFileTheCLIWroteOpensWithThePassphraseAndItsSalt() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, cliKey(passphrase, salt: salt) + [
            "PRAGMA journal_mode = WAL", "CREATE TABLE notes(body TEXT)", "INSERT INTO notes VALUES ('CLI-WROTE-THIS')",
        ])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.prefix(16) == Data("SQLite format 3\0".utf8))
        #expect(filesContain([path], "CLI-WROTE-THIS").isEmpty)

        let db = try Database(path: path, key: .passphrase(passphrase, salt: salt), cipher: header)
        #expect(try await db.query("SELECT body FROM notes")[0].get(0, as: String.self) == "CLI-WROTE-THIS")
        try await db.execute("INSERT INTO notes VALUES (?)", arguments: ["PACKAGE-WROTE-THIS"])
        await db.close()

        let pool = try DatabasePool(path: path, key: .passphrase(passphrase, salt: salt), cipher: header)
        #expect(try await pool.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) == 2)
        await pool.close()

        let lines = try SqlcipherCLI.run(SqlcipherCLI.version4, path,
                                         cliKey(passphrase, salt: salt) + ["SELECT body FROM notes ORDER BY rowid"])
        #expect(lines == ["CLI-WROTE-THIS", "PACKAGE-WROTE-THIS"])
    }

    @Test(.enabled(if: isSQLCipher4(), "plaintext headers are SQLCipher 4's"))
    func aFileThePackageCreatesOpensInTheCLIWithThePassphraseAndSalt() async throws {
        let dir = TemporaryDirectory()
        for (name, journalMode) in [("wal.db", JournalMode.wal), ("rollback.db", .rollback)] {
            let path = dir.path(name)
            let db = try Database(path: path, key: .passphrase(passphrase, salt: salt), journalMode: journalMode,
                                  cipher: header)
            try await db.execute("CREATE TABLE notes(body TEXT)")
            try await db.execute("INSERT INTO notes VALUES ('PACKAGE-CREATED')")
            await db.close()
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes.prefix(16) == Data("SQLite format 3\0".utf8))
            #expect(bytes.range(of: salt) == nil, "the salt is not stored in the file")
            #expect(filesContain([path], "PACKAGE-CREATED").isEmpty)
            let lines = try SqlcipherCLI.run(SqlcipherCLI.version4, path,
                                             cliKey(passphrase, salt: salt) + ["SELECT body FROM notes"])
            #expect(lines == ["PACKAGE-CREATED"])
        }
    }

    /// Without the salt, with another salt or with another passphrase the file is refused as a
    /// wrong key (by a `Database` and a pool alike), and its bytes stay as they were.
    @Test(.enabled(if: isSQLCipher4(), "plaintext headers are SQLCipher 4's"))
    func withoutItsSaltOrWithAnotherTheFileIsRefusedAndUntouched() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path,
                                 cliKey(passphrase, salt: salt) + ["PRAGMA journal_mode = WAL", "CREATE TABLE t(x)"])
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let other = Data(repeating: 0x42, count: 16)
        for key in [DatabaseKey.passphrase(passphrase), .passphrase(passphrase, salt: other),
                    .passphrase("another passphrase", salt: salt)] {
            let error = #expect(throws: SqlCipherError.self) { try Database(path: path, key: key, cipher: header) }
            guard case .keyFailed? = error else {
                Issue.record("expected keyFailed, got \(String(describing: error))")
                continue
            }
        }
        let poolError = await #expect(throws: SqlCipherError.self) {
            let pool = try DatabasePool(path: path, key: .passphrase(passphrase, salt: other), cipher: header)
            _ = try await pool.query("SELECT count(*) FROM t")
        }
        guard case .keyFailed? = poolError else {
            Issue.record("expected keyFailed, got \(String(describing: poolError))")
            return
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        // The right salt still opens it afterwards.
        let db = try Database(path: path, key: .passphrase(passphrase, salt: salt), cipher: header)
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 0)
        await db.close()
    }

    /// Without a plaintext header the file stores its salt: a passphrase with a salt creates the
    /// file with that salt as its first 16 bytes, and the passphrase alone opens it afterwards
    /// (in the package and in the CLI), as SQLCipher reads the salt from the file.
    @Test func withoutAPlaintextHeaderTheSaltBecomesTheFilesSalt() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("salted.db")
        let db = try Database(path: path, key: .passphrase(passphrase, salt: salt), journalMode: .rollback)
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (7)")
        await db.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16) == salt)
        let again = try Database(path: path, key: .passphrase(passphrase))
        #expect(try await again.query("SELECT x FROM t")[0].get(0, as: Int.self) == 7)
        await again.close()
        let cli = isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3
        #expect(try SqlcipherCLI.run(cli, path, [SqlcipherCLI.keyPragma(passphrase: passphrase), "SELECT x FROM t"]) == ["7"])
        // Another salt names another file's key.
        #expect(throws: SqlCipherError.self) {
            try Database(path: path, key: .passphrase(passphrase, salt: Data(repeating: 1, count: 16)))
        }
    }

    /// Copies and key changes take the same key: an export and a backup to a plaintext-header
    /// target, a plaintext file encrypted to one, and a rekey that keeps the salt; each read back
    /// by the CLI with the passphrase and salt.
    @Test(.enabled(if: isSQLCipher4(), "plaintext headers are SQLCipher 4's"))
    func copiesAndRekeysTakeAPassphraseWithItsSalt() async throws {
        let dir = TemporaryDirectory()
        let source = try Database(path: dir.path("source.db"), key: "source key")
        try await source.execute("CREATE TABLE t(x TEXT)")
        try await source.execute("INSERT INTO t VALUES ('COPIED')")
        let exported = dir.path("exported.db")
        try await source.export(to: exported, key: .passphrase(passphrase, salt: salt), cipher: header)
        let backedUp = dir.path("backup.db")
        let headed = try Database(path: dir.path("headed.db"), key: .passphrase(passphrase, salt: salt), cipher: header)
        try await headed.execute("CREATE TABLE t(x TEXT)")
        try await headed.execute("INSERT INTO t VALUES ('COPIED')")
        try await headed.backup(to: backedUp, key: .passphrase(passphrase, salt: salt))
        let plain = dir.path("plain.db")
        let plaintext = try Database(unencryptedPath: plain, journalMode: .rollback)
        try await plaintext.execute("CREATE TABLE t(x TEXT)")
        try await plaintext.execute("INSERT INTO t VALUES ('COPIED')")
        await plaintext.close()
        let encrypted = dir.path("encrypted.db")
        try Database.encrypt(plaintextAt: plain, to: encrypted, key: .passphrase(passphrase, salt: salt), cipher: header)
        for path in [exported, backedUp, encrypted] {
            #expect(FileHeader(path: path)?.hasPlaintextMagic == true, "\(path)")
            let lines = try SqlcipherCLI.run(SqlcipherCLI.version4, path, cliKey(passphrase, salt: salt) + ["SELECT x FROM t"])
            #expect(lines == ["COPIED"], "\(path)")
        }

        // A rekey keeps the file's salt: a new passphrase with the same salt; another salt is refused.
        let refused = await #expect(throws: SqlCipherError.self) {
            try await headed.rekey(.passphrase("new passphrase", salt: Data(repeating: 9, count: 16)))
        }
        guard case .rekeyFailed? = refused else { Issue.record("expected rekeyFailed, got \(String(describing: refused))"); return }
        try await headed.rekey(.passphrase("new passphrase", salt: salt))
        #expect(try await headed.query("SELECT x FROM t")[0].get(0, as: String.self) == "COPIED")
        await headed.close()
        let lines = try SqlcipherCLI.run(SqlcipherCLI.version4, dir.path("headed.db"),
                                         cliKey("new passphrase", salt: salt) + ["SELECT x FROM t"])
        #expect(lines == ["COPIED"])

        // A pool's rekey, the same way.
        let pool = try DatabasePool(path: backedUp, key: .passphrase(passphrase, salt: salt), cipher: header)
        try await pool.rekey(.passphrase("pool passphrase", salt: salt))
        #expect(try await pool.query("SELECT x FROM t")[0].get(0, as: String.self) == "COPIED")
        await pool.close()
        #expect(try SqlcipherCLI.run(SqlcipherCLI.version4, backedUp,
                                     cliKey("pool passphrase", salt: salt) + ["SELECT x FROM t"]) == ["COPIED"])
    }

    /// Bad input gets a typed error before any file is created.
    @Test func badSaltsAndCallsThatCannotTakeASaltAreRefused() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("new.db")
        for count in [0, 15, 17, 32] {
            let error = #expect(throws: SqlCipherError.self) {
                try Database(path: path, key: .passphrase(passphrase, salt: Data(count: count)))
            }
            guard case .invalidQuery(let reason)? = error else {
                Issue.record("expected invalidQuery, got \(String(describing: error))")
                continue
            }
            #expect(reason.contains("16 bytes"), "\(reason)")
        }
        #expect(throws: SqlCipherError.emptyKey) { try Database(path: path, key: .passphrase("", salt: salt)) }
        #expect(throws: SqlCipherError.passphraseLooksLikeRawKey) {
            try Database(path: path, key: .passphrase("x'" + String(repeating: "ab", count: 32) + "'", salt: salt))
        }
        // A SQLCipher 3 file stores its salt: the upgrade takes the passphrase alone.
        let upgrade = #expect(throws: SqlCipherError.self) {
            try Database.upgradeFromSqlCipher3(path: path, key: .passphrase(passphrase, salt: salt))
        }
        if isSQLCipher4() {
            guard case .invalidQuery(let reason)? = upgrade else {
                Issue.record("expected invalidQuery, got \(String(describing: upgrade))")
                return
            }
            #expect(reason.contains("without the salt"), "\(reason)")
        }
        // SQLCipher 3 has no plaintext header: the setting is refused as such.
        if !isSQLCipher4() {
            let error = #expect(throws: SqlCipherError.self) {
                try Database(path: path, key: .passphrase(passphrase, salt: salt), cipher: header)
            }
            guard case .unsupported(let feature, _, _)? = error else {
                Issue.record("expected unsupported, got \(String(describing: error))")
                return
            }
            #expect(feature.contains("plaintext header"), "\(feature)")
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        // The salt is key material: the key's description shows neither it nor the passphrase.
        let shown = "\(DatabaseKey.passphrase(passphrase, salt: salt))" + String(reflecting: DatabaseKey.passphrase(passphrase, salt: salt))
        #expect(!shown.contains(passphrase) && !shown.contains(hex(salt)))
    }
}
