import Foundation
import SqlCipherKit
import Testing

/// `CipherSettings.usesHMAC`: files another program wrote with `PRAGMA cipher_use_hmac = OFF`
/// (whose pages reserve room for the IV only) open with `usesHMAC: false`, on SQLCipher 3.4.1 and
/// 4.x, and what the package writes that way opens in the real `sqlcipher` CLI given the same
/// pragma. Without the setting such a file is a rejected key that names it.
@Suite struct CipherHMACSettingTests {
    static let settings = CipherSettings(usesHMAC: false)
    static let passphrase = "without-hmac"

    /// The CLI of the loaded library's major version.
    static var cli: String { isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3 }

    static func cliLines(_ path: String, hmac: Bool, _ statements: [String]) throws -> [String] {
        try SqlcipherCLI.run(cli, path, [SqlcipherCLI.keyPragma(passphrase: passphrase)]
            + (hmac ? [] : ["PRAGMA cipher_use_hmac = OFF"]) + statements)
    }

    @Test(arguments: [JournalMode.wal, .rollback])
    func aFileTheCLIWroteWithoutHMACOpensWithUsesHMACFalse(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("no-hmac.db")
        _ = try Self.cliLines(path, hmac: false, [
            "PRAGMA journal_mode = \(mode == .wal ? "WAL" : "DELETE")", "CREATE TABLE t(x TEXT)",
            "INSERT INTO t VALUES ('NO-HMAC-MARKER')",
        ])
        #expect(filesContain([path], "NO-HMAC-MARKER").isEmpty)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        // The defaults do not open it; the error names the setting that does, and nothing is written.
        let refused = #expect(throws: SqlCipherError.self) { try Database(path: path, key: Self.passphrase) }
        guard case .keyFailed(_, let reason)? = refused else {
            Issue.record("expected keyFailed, got \(String(describing: refused))")
            return
        }
        #expect(reason.contains("usesHMAC: false"), "\(reason)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        // Nor does a wrong key with the right settings.
        let wrong = #expect(throws: SqlCipherError.self) { try Database(path: path, key: "other", cipher: Self.settings) }
        guard case .keyFailed? = wrong else { Issue.record("expected keyFailed, got \(String(describing: wrong))"); return }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        let db = try Database(path: path, key: Self.passphrase, cipher: Self.settings)
        #expect(db.cipherSettings == Self.settings)
        #expect(db.journalMode == mode)
        #expect(try await db.query("SELECT x FROM t")[0].get(0, as: String.self) == "NO-HMAC-MARKER")
        // 4.x answers with an integer, 3.4.1 with text.
        #expect(try await db.query("PRAGMA cipher_use_hmac")[0].get(0, as: String.self) == "0")
        try await db.execute("INSERT INTO t VALUES ('PACKAGE')")
        await db.close()
        if mode == .wal {
            // A pool derives the key once and opens every connection without HMAC.
            let pool = try DatabasePool(path: path, key: Self.passphrase, cipher: Self.settings)
            #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 2)
            try await pool.execute("INSERT INTO t VALUES ('POOL')")
            await pool.close()
        }
        let expected = mode == .wal ? ["NO-HMAC-MARKER", "PACKAGE", "POOL"] : ["NO-HMAC-MARKER", "PACKAGE"]
        #expect(try Self.cliLines(path, hmac: false, ["SELECT x FROM t ORDER BY rowid"]) == expected)
        #expect(filesContain([path], "PACKAGE").isEmpty)
    }

    /// A new file, and a rekeyed one, written without HMAC: ciphertext on disk, read by the CLI only
    /// with the same pragma. An export to the default settings gives each page its HMAC back.
    @Test func filesWrittenWithoutHMACOpenInTheCLIOnlyWithTheSamePragma() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("created.db")
        let db = try Database(path: path, key: Self.passphrase, journalMode: .rollback, cipher: Self.settings)
        try await db.execute("CREATE TABLE t(x TEXT)")
        try await db.execute("INSERT INTO t VALUES ('WRITTEN')")
        #expect(filesContain([path], "WRITTEN").isEmpty && filesContain([path], "SQLite format 3").isEmpty)

        let exported = dir.path("exported.db")
        try await db.export(to: exported, key: .passphrase(Self.passphrase), cipher: .default)
        let report = try await db.verifyIntegrity()
        await db.close()
        #expect(report.isOK, "\(report)")
        #expect(!report.checksRun.contains(.cipherHMAC))
        #expect(report.skipped.contains { $0.check == .cipherHMAC && $0.reason.contains("usesHMAC: false") }, "\(report)")

        #expect(try Self.cliLines(path, hmac: false, ["SELECT x FROM t"]) == ["WRITTEN"])
        #expect(throws: SqlcipherCLI.CLIError.self) { try Self.cliLines(path, hmac: true, ["SELECT x FROM t"]) }

        // A rekey keeps the file's format: the new key opens it with the same setting only.
        let rekeyed = try Database(path: path, key: Self.passphrase, cipher: Self.settings)
        try await rekeyed.rekey(.passphrase("rekeyed"))
        await rekeyed.close()
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "rekeyed") }
        let reopened = try Database(path: path, key: "rekeyed", cipher: Self.settings)
        #expect(try await reopened.query("SELECT x FROM t")[0].get(0, as: String.self) == "WRITTEN")
        await reopened.close()

        // The export has its HMAC: the CLI's defaults read it, and the setting without HMAC does not.
        #expect(filesContain([exported], "WRITTEN").isEmpty)
        #expect(try Self.cliLines(exported, hmac: true, ["SELECT x FROM t"]) == ["WRITTEN"])
        #expect(throws: SqlcipherCLI.CLIError.self) { try Self.cliLines(exported, hmac: false, ["SELECT x FROM t"]) }
        let copy = try Database(path: exported, key: Self.passphrase)
        if isSQLCipher4() {
            #expect(try await copy.verifyIntegrity().hmacVerified)
        }
        await copy.close()
    }

    /// An export may also drop the HMAC, for a program that reads only such files: the target's
    /// setting applies to the target alone.
    @Test func anExportWithoutHMACIsReadWithTheSameSetting() async throws {
        let dir = TemporaryDirectory()
        let source = try Database(path: dir.path("source.db"), rawKey: rawKey(5))
        try await source.execute("CREATE TABLE t(x TEXT)")
        try await source.execute("INSERT INTO t VALUES ('EXPORTED')")
        let target = dir.path("target.db")
        try await source.export(to: target, key: .passphrase(Self.passphrase), cipher: Self.settings)
        #expect(try await source.verifyIntegrity().isOK)
        await source.close()
        #expect(filesContain([target], "EXPORTED").isEmpty)
        #expect(try Self.cliLines(target, hmac: false, ["SELECT x FROM t"]) == ["EXPORTED"])
        #expect(throws: SqlcipherCLI.CLIError.self) { try Self.cliLines(target, hmac: true, ["SELECT x FROM t"]) }
    }

    /// The setting is part of the connection's format, so raw SQL cannot switch it on an open
    /// connection (``SqlCipherError/unsafePragma(name:value:sql:)``), and the refusal names the
    /// setting to use instead.
    @Test func rawSQLCannotSwitchTheHMACOfAnOpenConnection() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("guarded.db"), key: Self.passphrase, cipher: Self.settings)
        let error = await #expect(throws: SqlCipherError.self) { try await db.execute("PRAGMA cipher_use_hmac = ON") }
        guard case .unsafePragma(let name, _, _)? = error else {
            Issue.record("expected unsafePragma, got \(String(describing: error))")
            await db.close()
            return
        }
        #expect(name == "cipher_use_hmac")
        #expect(error?.description.contains("usesHMAC: false") == true, "\(String(describing: error))")
        await db.close()
    }

    static let salt = Data((0..<16).map { UInt8($0) &+ 40 })

    static func bytes(_ path: String) -> Data? { try? Data(contentsOf: URL(fileURLWithPath: path)) }

    /// With a plaintext header and no HMAC, nothing zeroes a page 1 that does not decrypt, and its
    /// header is in the clear: a wrong key or salt read some schema cookie other than 0, which
    /// `KeyProof` took for a page 1 that decrypts, so the opening reported SQLite's "unsupported
    /// file format" (error 1) as if the right key had met damage. It is `keyFailed`, read-only or
    /// not, and the file is unchanged.
    @Test(.enabled(if: isSQLCipher4(), "3.4.1 has no plaintext header"), arguments: [JournalMode.wal, .rollback])
    func aWrongKeyOrSaltThroughAPlaintextHeaderWithoutHMACIsKeyFailed(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("headed.db")
        let cipher = CipherSettings(plaintextHeaderSize: 32, usesHMAC: false)
        let db = try Database(path: path, key: .passphrase(Self.passphrase, salt: Self.salt), journalMode: mode,
                              cipher: cipher)
        try await db.execute("CREATE TABLE t(x TEXT)")
        try await db.execute("INSERT INTO t VALUES ('HEADED')")
        // Open meanwhile: in WAL mode its commits are frames in the -wal, and a wrong key must not
        // be told that it opens the database file but not the -wal.
        try await db.execute("INSERT INTO t VALUES ('IN-WAL')")
        let before = Self.bytes(path)
        let otherSalt = Data((0..<16).map { UInt8($0) &+ 90 })
        let wrongKeys: [(String, DatabaseKey)] = [
            ("wrong passphrase", .passphrase("another", salt: Self.salt)),
            ("wrong salt", .passphrase(Self.passphrase, salt: otherSalt)),
            ("wrong raw key", .rawKey(rawKey(9), salt: Self.salt)),
        ]
        for (name, key) in wrongKeys {
            for readOnly in [false, true] {
                let error = #expect(throws: SqlCipherError.self, "\(name), readOnly \(readOnly)") {
                    try Database(path: path, key: key, journalMode: mode, cipher: cipher, readOnly: readOnly)
                }
                guard case .keyFailed? = error else {
                    Issue.record("\(name), readOnly \(readOnly): expected keyFailed, got \(String(describing: error))")
                    continue
                }
                #expect(Self.bytes(path) == before, "\(name), readOnly \(readOnly)")
            }
        }
        await db.close()
        let reopened = try Database(path: path, key: .passphrase(Self.passphrase, salt: Self.salt), journalMode: mode,
                                    cipher: cipher)
        #expect(try await reopened.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 2)
        await reopened.close()
    }

    /// A file written with page HMACs and a plaintext header, opened with the right key but
    /// `usesHMAC: false`: each page's IV is then taken from its HMAC, so only its first 16-byte block
    /// decrypts to other bytes; on page 1 that is bytes 32-47, which SQLite checks by one byte
    /// alone. About one file in fifty read its schema and opened, and its first write rewrote page 1
    /// without the HMAC: the file no longer opened with its own settings. Such a file is searched
    /// for with the real CLI (whose IVs are random), then refused with `keyFailed`, read-only or
    /// not, unchanged, and the doctor rejects the key with `--no-hmac` too.
    @Test(.enabled(if: isSQLCipher4(), "3.4.1 has no plaintext header"))
    func aFileWithPageHMACsAndAPlaintextHeaderIsRefusedWithoutHMAC() async throws {
        let dir = TemporaryDirectory()
        let key = rawKey(3)
        let cliKey = SqlcipherCLI.keyPragma(rawKey: key + Self.salt)
        let header = "PRAGMA cipher_plaintext_header_size = 32"
        var found: String?
        // Each try reads its schema without HMAC with probability 5/256: 1,500 tries all fail
        // with probability below 1e-12.
        for attempt in 0..<1500 where found == nil {
            let path = dir.path("with-hmac-\(attempt).db")
            _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [
                cliKey, header, "CREATE TABLE t(x TEXT)", "INSERT INTO t VALUES ('WITH-HMAC')",
            ])
            let misread = try? SqlcipherCLI.run(SqlcipherCLI.version4, path, [
                cliKey, header, "PRAGMA cipher_use_hmac = OFF", "SELECT count(*) FROM sqlite_master",
            ])
            if misread != nil { found = path }
        }
        let path = try #require(found)
        let before = Self.bytes(path)
        let doctor = try runChild(productPath("sqlcipher-doctor"), [
            "verify", "--raw-key-env", "K", "--no-hmac", "--salt", Self.salt.map { String(format: "%02x", $0) }.joined(),
            "--", path,
        ], environment: try Linking.childEnvironment(["K": key.map { String(format: "%02x", $0) }.joined()]))
        #expect(doctor.status == 1 && doctor.stdout.contains("KEY-REJECTED"), "\(doctor.stdout)")
        for readOnly in [true, false] {
            do {
                let db = try Database(path: path, key: .rawKey(key, salt: Self.salt), journalMode: .rollback,
                                      cipher: CipherSettings(plaintextHeaderSize: 32, usesHMAC: false), readOnly: readOnly)
                Issue.record("readOnly \(readOnly): opened")
                // What a caller does next: this write rewrote page 1 without its HMAC.
                if !readOnly { _ = try? await db.execute("PRAGMA user_version = 9") }
                await db.close()
            } catch SqlCipherError.keyFailed(_, let reason) {
                #expect(reason.contains("usesHMAC: false"), "\(reason)")
            }
        }
        #expect(Self.bytes(path) == before)
        #expect(try SqlcipherCLI.run(SqlcipherCLI.version4, path, [cliKey, header, "SELECT x FROM t"]) == ["WITH-HMAC"])
    }

    /// `hmacAlgorithm` with `usesHMAC: false` names the digest of an HMAC the pages do not carry:
    /// SQLCipher ignores it, and so did the package. Nothing is silently ignored (a caller who gave
    /// both misread one of them), so it is `invalidQuery`, and no file is created.
    @Test(.enabled(if: isSQLCipher4(), "3.4.1 has no choice of HMAC digest (unsupported)"))
    func anHMACDigestWithoutHMACIsRefused() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("digest.db")
        let error = #expect(throws: SqlCipherError.self) {
            try Database(path: path, key: Self.passphrase, cipher: CipherSettings(hmacAlgorithm: .sha1, usesHMAC: false))
        }
        guard case .invalidQuery(let reason)? = error else {
            Issue.record("expected invalidQuery, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("hmacAlgorithm") && reason.contains("usesHMAC"), "\(reason)")
        #expect(!FileManager.default.fileExists(atPath: path))
        // Either alone is accepted.
        for cipher in [CipherSettings(hmacAlgorithm: .sha256), CipherSettings(usesHMAC: false)] {
            let db = try Database(path: dir.path("\(cipher.hashValue).db"), key: Self.passphrase, cipher: cipher)
            await db.close()
        }
    }

    /// A SQLCipher 3 file written without HMAC cannot go through `upgradeFromSqlCipher3`, which
    /// takes no settings: its `keyFailed` names the way that works, and that way works.
    @Test(.enabled(if: isSQLCipher4(), "the upgrade needs SQLCipher 4"))
    func aSqlCipher3FileWithoutHMACIsUpgradedByTheExportItsRefusalNames() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("v3-no-hmac.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version3, path, [
            SqlcipherCLI.keyPragma(passphrase: Self.passphrase), "PRAGMA cipher_use_hmac = OFF",
            "CREATE TABLE t(x TEXT)", "INSERT INTO t VALUES ('OLD')",
        ])
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let refused = #expect(throws: SqlCipherError.self) {
            try Database.upgradeFromSqlCipher3(path: path, key: .passphrase(Self.passphrase))
        }
        guard case .keyFailed(_, let reason)? = refused else {
            Issue.record("expected keyFailed, got \(String(describing: refused))")
            return
        }
        // One CipherSettings that names both: SQLCipher 3's format and no HMAC.
        #expect(reason.contains(/CipherSettings\(compatibility: 3[^)]*usesHMAC: false\)/)
            && reason.contains("export(to:key:cipher:)"), "\(reason)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        let old = try Database(path: path, key: Self.passphrase, cipher: CipherSettings(compatibility: 3, usesHMAC: false))
        let upgraded = dir.path("v4.db")
        try await old.export(to: upgraded, key: .passphrase(Self.passphrase), cipher: .default)
        await old.close()
        let db = try Database(path: upgraded, key: Self.passphrase)
        #expect(try await db.query("SELECT x FROM t")[0].get(0, as: String.self) == "OLD")
        #expect(try await db.verifyIntegrity().hmacVerified)
        await db.close()
    }
}
