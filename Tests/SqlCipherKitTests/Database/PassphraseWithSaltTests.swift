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

    /// The bytes form, `passphrase(_: Data, salt:)`: the CLI's file opens with the passphrase's
    /// UTF-8 bytes and its salt, and bytes that are not UTF-8 (which no `String` holds) key a new
    /// file that opens with exactly those bytes and that salt.
    @Test(.enabled(if: isSQLCipher4(), "plaintext headers are SQLCipher 4's"))
    func aPassphraseGivenAsBytesTakesASaltToo() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, cliKey(passphrase, salt: salt) + [
            "CREATE TABLE notes(body TEXT)", "INSERT INTO notes VALUES ('CLI-WROTE-THIS')",
        ])
        let db = try Database(path: path, key: .passphrase(Data(passphrase.utf8), salt: salt), cipher: header)
        #expect(try await db.query("SELECT body FROM notes")[0].get(0, as: String.self) == "CLI-WROTE-THIS")
        await db.close()

        let bytes = Data([0xFF, 0x00, 0xC3, 0x28, 0x80, 0x41])
        let made = dir.path("bytes.db")
        let created = try Database(path: made, key: .passphrase(bytes, salt: salt), cipher: header)
        try await created.execute("CREATE TABLE t(v); INSERT INTO t VALUES ('BYTES-KEYED')")
        await created.close()
        #expect(filesContain([made], "BYTES-KEYED").isEmpty)
        let reopened = try Database(path: made, key: .passphrase(bytes, salt: salt), cipher: header)
        #expect(try await reopened.query("SELECT v FROM t")[0].get(0, as: String.self) == "BYTES-KEYED")
        await reopened.close()
        var other = bytes
        other[0] = 0xFE
        #expect(throws: SqlCipherError.self) { try Database(path: made, key: .passphrase(other, salt: salt), cipher: header) }
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

    /// A plaintext header larger than a writable file may have (here 128 bytes, which the CLI
    /// writes) is read with `readOnly: true`, with the passphrase and salt as with the raw key and
    /// salt; a rekey of that read-only database is refused as read-only, not for its settings.
    /// The passphrase's derivation asked for writable settings, and both were refused with an
    /// `invalidQuery` saying that such a header is accepted only with `readOnly: true`.
    @Test(.enabled(if: isSQLCipher4(), "plaintext headers are SQLCipher 4's"))
    func aLargerHeaderIsReadReadOnlyWithThePassphraseAndSalt() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("large-header.db")
        let cli = [SqlcipherCLI.keyPragma(passphrase: passphrase), "PRAGMA cipher_plaintext_header_size = 128",
                   "PRAGMA cipher_salt = \"x'\(hex(salt))'\""]
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path,
                                 cli + ["CREATE TABLE notes(body TEXT)", "INSERT INTO notes VALUES ('LARGE-HEADER')"])
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let large = CipherSettings(plaintextHeaderSize: 128)
        let db = try Database(path: path, key: .passphrase(passphrase, salt: salt), cipher: large, readOnly: true)
        #expect(try await db.query("SELECT body FROM notes")[0].get(0, as: String.self) == "LARGE-HEADER")
        let error = await #expect(throws: SqlCipherError.self) {
            try await db.rekey(.passphrase("another passphrase", salt: salt))
        }
        guard case .rekeyFailed(_, let reason)? = error else {
            Issue.record("expected rekeyFailed, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("read-only"), "\(reason)")
        await db.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        // Writable, the header is refused as before, whatever the key.
        #expect(throws: SqlCipherError.self) {
            try Database(path: path, key: .passphrase(passphrase, salt: salt), cipher: large)
        }
        #expect(try SqlcipherCLI.run(SqlcipherCLI.version4, path, cli + ["SELECT body FROM notes"]) == ["LARGE-HEADER"])
    }

    /// A file with a plaintext header opened without the header setting is refused (before any
    /// key is tried, so with either library) with advice that names an initialiser taking both
    /// the key and the settings, for a `Database` and for a pool. It said to use
    /// `CipherSettings(plaintextHeaderSize:)` "and Database(path:key:)", which takes no settings.
    @Test func withoutTheHeaderSettingTheAdviceNamesAnInitialiserThatTakesIt() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, cliKey(passphrase, salt: salt) + ["CREATE TABLE t(x)"])
        for open in [{ _ = try Database(path: path, key: .passphrase(self.passphrase)) },
                     { _ = try Database(path: path, key: .passphrase(self.passphrase, salt: self.salt)) },
                     { _ = try DatabasePool(path: path, key: .passphrase(self.passphrase)) }] as [() throws -> Void] {
            let error = #expect(throws: SqlCipherError.self) { try open() }
            guard case .keyFailed(_, let reason)? = error else {
                Issue.record("expected keyFailed, got \(String(describing: error))")
                continue
            }
            #expect(reason.contains("Database(path:key:cipher:)") && reason.contains("CipherSettings(plaintextHeaderSize:)")
                        && !reason.contains("Database(path:key:) "), "\(reason)")
        }
    }

    /// The derivation follows the settings, as the CLI does with the same pragmas: SQLCipher 3's
    /// format (PBKDF2-HMAC-SHA1) with a plaintext header, another page size and iteration count,
    /// both ways; and without a header, a file SQLCipher 3.4.1's CLI reads with the passphrase
    /// alone (its salt is the one given).
    @Test func otherSettingsDeriveAsTheCLIDoes() async throws {
        let dir = TemporaryDirectory()
        if isSQLCipher4() {
            let settings = CipherSettings(compatibility: 3, pageSize: 8192, kdfIterations: 1234, plaintextHeaderSize: 48)
            let pragmas = [SqlcipherCLI.keyPragma(passphrase: passphrase), "PRAGMA cipher_compatibility = 3",
                           "PRAGMA cipher_page_size = 8192", "PRAGMA kdf_iter = 1234", "PRAGMA cipher_plaintext_header_size = 48",
                           "PRAGMA cipher_salt = \"x'\(hex(salt))'\""]
            let cliMade = dir.path("cli.db")
            _ = try SqlcipherCLI.run(SqlcipherCLI.version4, cliMade, pragmas + ["CREATE TABLE t(x)", "INSERT INTO t VALUES ('CLI')"])
            let db = try Database(path: cliMade, key: .passphrase(passphrase, salt: salt), cipher: settings)
            #expect(try await db.query("SELECT x FROM t")[0].get(0, as: String.self) == "CLI")
            try await db.execute("INSERT INTO t VALUES ('PACKAGE')")
            await db.close()
            #expect(try SqlcipherCLI.run(SqlcipherCLI.version4, cliMade, pragmas + ["SELECT x FROM t ORDER BY rowid"])
                        == ["CLI", "PACKAGE"])
            let plain = dir.path("plain.db")
            let plaintext = try Database(unencryptedPath: plain, journalMode: .rollback)
            try await plaintext.execute("CREATE TABLE t(x)")
            try await plaintext.execute("INSERT INTO t VALUES ('IN PLACE')")
            await plaintext.close()
            _ = try Database.encryptInPlace(path: plain, key: .passphrase(passphrase, salt: salt), cipher: settings)
            #expect(try SqlcipherCLI.run(SqlcipherCLI.version4, plain, pragmas + ["SELECT x FROM t"]) == ["IN PLACE"])
        }
        let path = dir.path("sqlcipher3.db")
        let db = try Database(path: path, key: .passphrase(passphrase, salt: salt), journalMode: .rollback,
                              cipher: CipherSettings(compatibility: 3, kdfIterations: 5000))
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES ('THREE')")
        await db.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16) == salt)
        #expect(try SqlcipherCLI.run(SqlcipherCLI.version3, path, [SqlcipherCLI.keyPragma(passphrase: passphrase),
                                                                  "PRAGMA kdf_iter = 5000", "SELECT x FROM t"]) == ["THREE"])
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

    /// A key with a salt that is not the one a file without a plaintext header stores is refused
    /// as such, by a `Database` and a pool, for a passphrase and a raw key alike: the error names
    /// the salt and says to leave it out. It said "the key is wrong (or, for a plaintext header,
    /// the salt)" to a user whose key was right, of a file that has no plaintext header.
    @Test func aSaltThatIsNotTheFilesIsNamedAsTheCause() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("stored-salt.db")
        let raw = Data((0..<32).map { UInt8($0) &+ 7 })
        let other = Data(repeating: 0x42, count: 16)
        let db = try Database(path: path, key: .passphrase(passphrase), cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        let rawPath = dir.path("stored-salt-raw.db")
        let rawDb = try Database(path: rawPath, key: .rawKey(raw), cipher: fastCipher)
        try await rawDb.execute("CREATE TABLE t(x)")
        await rawDb.close()
        let before = try [path, rawPath].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }

        func expectNamed(_ open: () throws -> Void) {
            let error = #expect(throws: SqlCipherError.self) { try open() }
            guard case .keyFailed(_, let reason)? = error else {
                Issue.record("expected keyFailed, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("the salt given differs") && reason.contains("leave the salt out"), "\(reason)")
        }
        expectNamed { _ = try Database(path: path, key: .passphrase(passphrase, salt: other), cipher: fastCipher) }
        expectNamed { _ = try Database(path: path, key: .passphrase(passphrase, salt: other), cipher: fastCipher, readOnly: true) }
        expectNamed { _ = try DatabasePool(path: path, key: .passphrase(passphrase, salt: other), cipher: fastCipher) }
        expectNamed { _ = try Database(path: rawPath, key: .rawKey(raw, salt: other), cipher: fastCipher) }
        expectNamed { _ = try DatabasePool(path: rawPath, key: .rawKey(raw, salt: other), cipher: fastCipher) }
        // A wrong key with the file's own salt is still a wrong key, not a salt.
        let stored = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16)
        let wrong = #expect(throws: SqlCipherError.self) {
            try Database(path: path, key: .passphrase("another passphrase", salt: Data(stored)), cipher: fastCipher)
        }
        guard case .keyFailed(_, let reason)? = wrong else { Issue.record("expected keyFailed, got \(String(describing: wrong))"); return }
        #expect(!reason.contains("the salt given differs"), "\(reason)")
        #expect(try [path, rawPath].map { try Data(contentsOf: URL(fileURLWithPath: $0)) } == before)
        // The advice works.
        let again = try Database(path: path, key: .passphrase(passphrase), cipher: fastCipher)
        await again.close()
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
        // Without the salt the target is refused before it exists, and the error names the forms
        // that carry one, for the copy too (it named only the raw key's for export and backup).
        let unsalted = await #expect(throws: SqlCipherError.self) {
            try await source.export(to: exported, key: .passphrase(passphrase), cipher: header)
        }
        guard case .keyFailed(_, let reason)? = unsalted else { Issue.record("expected keyFailed, got \(String(describing: unsalted))"); return }
        #expect(reason.contains(".passphrase(passphrase, salt: salt)") && !reason.contains("with DatabaseKey.rawKey"), "\(reason)")
        #expect(!FileManager.default.fileExists(atPath: exported))
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

    /// A rekey to a passphrase with a salt that is not the file's is refused with advice that
    /// fits the file (on SQLCipher 3 too, where the file's first 16 bytes are its salt), and the
    /// advice works: without a plaintext header, the passphrase alone (the file stores its salt);
    /// with one, the salt it was created with. Both said "pass the new raw key without a salt",
    /// which names neither the key given nor, for a plaintext header, a way that works with it.
    @Test func aRekeyWithAnotherSaltSaysWhatToGiveInstead() async throws {
        let dir = TemporaryDirectory()
        let other = Data(repeating: 0x42, count: 16)
        func refusal(_ run: () async throws -> Void) async -> String {
            let error = await #expect(throws: SqlCipherError.self) { try await run() }
            guard case .rekeyFailed(_, let reason)? = error else {
                Issue.record("expected rekeyFailed, got \(String(describing: error))")
                return ""
            }
            return reason
        }

        let path = dir.path("stored-salt.db")
        let db = try Database(path: path, key: .passphrase(passphrase), cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        let reason = await refusal { try await db.rekey(.passphrase("new passphrase", salt: other)) }
        #expect(reason.contains("without a salt") && reason.contains("rekey(.passphrase(passphrase))"), "\(reason)")
        #expect(!reason.contains("raw key without"), "\(reason)")
        try await db.rekey(.passphrase("new passphrase"))
        await db.close()
        let pool = try DatabasePool(path: path, key: .passphrase("new passphrase"), cipher: fastCipher)
        let poolReason = await refusal { try await pool.rekey(.passphrase("third passphrase", salt: other)) }
        #expect(poolReason.contains("rekey(.passphrase(passphrase))"), "\(poolReason)")
        try await pool.rekey(.passphrase("third passphrase"))
        await pool.close()
        let again = try Database(path: path, key: .passphrase("third passphrase"), cipher: fastCipher)
        #expect(try await again.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 0)
        await again.close()

        guard isSQLCipher4() else { return }
        let headed = try Database(path: dir.path("headed.db"), key: .passphrase(passphrase, salt: salt), cipher: header)
        try await headed.execute("CREATE TABLE t(x)")
        let headedReason = await refusal { try await headed.rekey(.passphrase("new passphrase", salt: other)) }
        #expect(headedReason.contains("the salt the file was created with")
                    && headedReason.contains("rekey(.passphrase(passphrase, salt: salt))"), "\(headedReason)")
        #expect(!headedReason.contains("without a salt"), "\(headedReason)")
        try await headed.rekey(.passphrase("new passphrase", salt: salt))
        await headed.close()
        #expect(try SqlcipherCLI.run(SqlcipherCLI.version4, dir.path("headed.db"),
                                     cliKey("new passphrase", salt: salt) + ["SELECT count(*) FROM t"]) == ["0"])
    }

    /// A rekey to a key without a salt keeps the salt of a file with a plaintext header, as
    /// SQLCipher's own `PRAGMA rekey` does: a passphrase (as text and as bytes) and a raw key, by a
    /// `Database` and a pool, each read back by the CLI with the new key and the salt the file
    /// always had. They were refused ("change its key with rekey(.passphrase(passphrase, salt:
    /// salt))"), although the salt is the connection's to give.
    @Test(.enabled(if: isSQLCipher4(), "plaintext headers are SQLCipher 4's"))
    func aRekeyWithoutASaltKeepsTheSaltOfAFileWithAPlaintextHeader() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("headed.db")
        let db = try Database(path: path, key: .passphrase(passphrase, salt: salt), cipher: header)
        try await db.execute("CREATE TABLE t(x TEXT)")
        try await db.execute("INSERT INTO t VALUES ('KEPT')")
        try await db.rekey("second passphrase")
        #expect(try await db.query("SELECT x FROM t")[0].get(0, as: String.self) == "KEPT")
        await db.close()
        #expect(try SqlcipherCLI.run(SqlcipherCLI.version4, path, cliKey("second passphrase", salt: salt)
                                        + ["SELECT x FROM t"]) == ["KEPT"])
        #expect(FileHeader(path: path)?.hasPlaintextMagic == true)

        let bytes = try Database(path: path, key: .passphrase("second passphrase", salt: salt), cipher: header)
        try await bytes.rekey(.passphrase(Data("third passphrase".utf8)))
        await bytes.close()
        let raw = Data((0..<32).map { UInt8($0) &* 7 &+ 1 })
        let rawDB = try Database(path: path, key: .passphrase("third passphrase", salt: salt), cipher: header)
        try await rawDB.rekey(rawKey: raw)
        await rawDB.close()
        let reopened = try Database(path: path, key: .rawKey(raw, salt: salt), cipher: header)
        #expect(try await reopened.query("SELECT x FROM t")[0].get(0, as: String.self) == "KEPT")
        await reopened.close()

        let pool = try DatabasePool(path: path, key: .rawKey(raw, salt: salt), cipher: header)
        try await pool.rekey("pool passphrase")
        #expect(try await pool.query("SELECT x FROM t")[0].get(0, as: String.self) == "KEPT")
        await pool.close()
        #expect(try SqlcipherCLI.run(SqlcipherCLI.version4, path, cliKey("pool passphrase", salt: salt)
                                        + ["SELECT x FROM t"]) == ["KEPT"])
        // The old passphrase no longer opens it.
        #expect(throws: SqlCipherError.self) {
            _ = try Database(path: path, key: .passphrase("second passphrase", salt: salt), cipher: header)
        }
    }

    /// A plaintext header of 0 bytes is the ordinary layout, whose salt is in the file: a rekey to
    /// a passphrase is taken. It was refused as if the file kept its salt outside itself.
    @Test(.enabled(if: isSQLCipher4(), "CipherSettings.plaintextHeaderSize is SQLCipher 4's"))
    func aRekeyOfAFileWithAHeaderOfZeroBytesTakesAPassphrase() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("zero-header.db")
        let zero = CipherSettings(plaintextHeaderSize: 0)
        let db = try Database(path: path, key: "first passphrase", cipher: zero)
        try await db.execute("CREATE TABLE t(x TEXT)")
        try await db.execute("INSERT INTO t VALUES ('KEPT')")
        try await db.rekey("second passphrase")
        await db.close()
        let lines = try SqlcipherCLI.run(SqlcipherCLI.version4, path,
                                         [SqlcipherCLI.keyPragma(passphrase: "second passphrase"), "SELECT x FROM t"])
        #expect(lines == ["KEPT"])
    }

    /// A rekey to a key that names the file's own salt is taken with either library, by a
    /// `Database` and a pool, for a passphrase and a raw key: a rekey keeps the salt, and this one
    /// names it. SQLCipher 3 does not report the salt (`PRAGMA cipher_salt`), and the rekey
    /// refused every salt there, the file's own included.
    @Test func aRekeyToTheFilesOwnSaltIsTakenWithEitherLibrary() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("stored-salt.db")
        let db = try Database(path: path, key: .passphrase(passphrase, salt: salt), cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES ('KEPT')")
        try await db.rekey(.passphrase("second passphrase", salt: salt))
        let raw = Data((0..<32).map { UInt8($0) &* 5 &+ 1 })
        try await db.rekey(.rawKey(raw, salt: salt))
        await db.close()
        let pool = try DatabasePool(path: path, key: .rawKey(raw), cipher: fastCipher)
        try await pool.rekey(.passphrase("third passphrase", salt: salt))
        #expect(try await pool.query("SELECT x FROM t")[0].get(0, as: String.self) == "KEPT")
        await pool.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16) == salt)
        let again = try Database(path: path, key: .passphrase("third passphrase"), cipher: fastCipher)
        #expect(try await again.query("SELECT x FROM t")[0].get(0, as: String.self) == "KEPT")
        await again.close()
        let cli = isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3
        #expect(try SqlcipherCLI.run(cli, path, [SqlcipherCLI.keyPragma(passphrase: "third passphrase"), "PRAGMA kdf_iter = 2",
                                                 "SELECT x FROM t"]) == ["KEPT"])
    }

    /// A pool over a file whose committed rows are only in the `-wal` (the CLI was killed before
    /// any checkpoint): its writer, readers opened later in parallel, and a rekey that keeps the
    /// salt all use the passphrase and salt; the CLI reads the result with the new passphrase.
    @Test(.enabled(if: isSQLCipher4(), "plaintext headers are SQLCipher 4's"))
    func aPoolOverACrashedWALTakesThePassphraseAndSalt() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("crashed.db")
        try SqlcipherCLI.runAndKill(SqlcipherCLI.version4, path, cliKey(passphrase, salt: salt) + [
            "PRAGMA journal_mode = WAL", "PRAGMA wal_autocheckpoint = 0", "CREATE TABLE t(x)", "INSERT INTO t VALUES ('IN-WAL')",
        ])
        let walSize = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
        try #require(walSize > 32, "the -wal holds frames")
        let pool = try DatabasePool(path: path, key: .passphrase(passphrase, salt: salt), cipher: header, maximumReaderCount: 4)
        try await pool.execute("INSERT INTO t VALUES ('POOL')")
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask { try await pool.read { try $0.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) ?? -1 } }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counts == Array(repeating: 2, count: 8))
        try await pool.rekey(.passphrase("rekeyed passphrase", salt: salt))
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 2)
        await pool.close()
        #expect(try SqlcipherCLI.run(SqlcipherCLI.version4, path, cliKey("rekeyed passphrase", salt: salt)
                                     + ["SELECT x FROM t ORDER BY rowid"]) == ["IN-WAL", "POOL"])
    }

    /// A pool over a file with a plaintext header takes a rekey to a passphrase without its salt
    /// as a `Database` does, keeping the salt it was opened with, for each spelling of a
    /// passphrase; the CLI reads the file with the last one and that salt. It threw `keyFailed`,
    /// "the key does not open" the file that the pool had open, and later `rekeyFailed`.
    @Test(.enabled(if: isSQLCipher4(), "plaintext headers are SQLCipher 4's"))
    func aPoolsRekeyWithoutTheSaltKeepsItAsADatabasesDoes() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pool.db")
        let pool = try DatabasePool(path: path, key: .passphrase(passphrase, salt: salt), cipher: header)
        try await pool.execute("CREATE TABLE t(x)")
        for (index, key) in [DatabaseKey.passphrase("first new"), "second new", .passphrase(Data("third new".utf8))].enumerated() {
            try await pool.rekey(key)
            try await pool.execute("INSERT INTO t VALUES (?)", arguments: [index])
            #expect(try await pool.read { try $0.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) } == index + 1)
        }
        await pool.close()
        #expect(try SqlcipherCLI.run(SqlcipherCLI.version4, path,
                                     cliKey("third new", salt: salt) + ["SELECT count(*) FROM t"]) == ["3"])
    }

    /// SQLCipher's proof that a key derived here is its own runs once per process in a private
    /// folder of the temporary folder. A process whose `TMPDIR` cannot be written (here a missing
    /// folder, in a process of its own) gets `cannotOpen` naming that folder and saying what to do,
    /// and nothing is created; with a writable one the same call opens. It was `unsupported`,
    /// telling the user to load another SQLCipher, whose library was never the cause.
    @Test func aTemporaryFolderThatCannotBeWrittenIsNamedNotTheLibrary() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("salted.db")
        let missing = dir.path("no-such-folder")
        let arguments = ["open-database", "--salt", hex(salt), path, "pass:" + passphrase]
        let child = try runHelper(arguments, environment: try Linking.childEnvironment(["TMPDIR": missing]))
        #expect(child.stdout.hasPrefix("error cannotOpen: "), "\(child.stdout) \(child.stderr)")
        #expect(child.stdout.contains(missing) && child.stdout.contains("TMPDIR"), "\(child.stdout)")
        #expect(child.stdout.contains(".rawKey(key, salt: salt)") && !child.stdout.contains("Load a SQLCipher"), "\(child.stdout)")
        #expect(!child.stdout.contains(passphrase) && !child.stdout.contains(hex(salt)))
        #expect(!FileManager.default.fileExists(atPath: path))
        let opened = try runHelper(arguments, environment: try Linking.childEnvironment(["TMPDIR": dir.url.path]))
        #expect(opened.stdout == "opened readOnly=false journal=wal\n", "\(opened.stdout) \(opened.stderr)")
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
        // A literal of key and salt (96 digits) is what DatabaseKey.rawKey(key, salt: salt) takes; the
        // refusal named only the forms without a salt.
        let literal = #expect(throws: SqlCipherError.passphraseLooksLikeRawKey) {
            try Database(path: path, key: .passphrase("x'" + String(repeating: "cd", count: 48) + "'", salt: salt))
        }
        #expect(literal.map { "\($0)" }?.contains("DatabaseKey.rawKey(key, salt: salt)") == true, "\(String(describing: literal))")
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
