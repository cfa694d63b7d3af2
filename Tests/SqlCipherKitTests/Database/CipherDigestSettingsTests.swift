import Foundation
import SqlCipherKit
import Testing

/// `CipherSettings.kdfAlgorithm` and `hmacAlgorithm`: files that another SQLCipher 4 program wrote
/// with other digests (DB Browser for SQLCipher's custom settings, `PRAGMA cipher_kdf_algorithm`,
/// `PRAGMA cipher_hmac_algorithm`) open with the same choice, and files written with a choice open
/// in the real `sqlcipher` CLI given the same pragmas.
@Suite struct CipherDigestSettingsTests {
    static let combinations: [(CipherSettings.Digest, CipherSettings.Digest)] = [
        (.sha256, .sha256), (.sha1, .sha512), (.sha512, .sha1), (.sha1, .sha1),
    ]

    static func cliPragmas(kdf: CipherSettings.Digest, hmac: CipherSettings.Digest) -> [String] {
        let names: [CipherSettings.Digest: String] = [.sha1: "SHA1", .sha256: "SHA256", .sha512: "SHA512"]
        return ["PRAGMA cipher_kdf_algorithm = PBKDF2_HMAC_\(names[kdf]!)", "PRAGMA cipher_hmac_algorithm = HMAC_\(names[hmac]!)"]
    }

    @Test(.enabled(if: isSQLCipher4(), "the digests are SQLCipher 4 settings"),
          arguments: 0..<combinations.count)
    func aFileTheCLIWroteWithOtherDigestsOpensWithTheSameSettings(_ index: Int) async throws {
        let (kdf, hmac) = Self.combinations[index]
        let settings = CipherSettings(kdfAlgorithm: kdf, hmacAlgorithm: hmac)
        let dir = TemporaryDirectory()
        let path = dir.path("custom.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [SqlcipherCLI.keyPragma(passphrase: "digests")]
            + Self.cliPragmas(kdf: kdf, hmac: hmac)
            + ["PRAGMA journal_mode = WAL", "CREATE TABLE t(x TEXT)", "INSERT INTO t VALUES ('DIGEST-MARKER')"])
        #expect(filesContain([path], "DIGEST-MARKER").isEmpty)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        // The defaults do not open it, and nothing is written.
        let refused = #expect(throws: SqlCipherError.self) { try Database(path: path, key: "digests") }
        guard case .keyFailed? = refused else { Issue.record("expected keyFailed, got \(String(describing: refused))"); return }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        let db = try Database(path: path, key: "digests", cipher: settings)
        #expect(try await db.query("SELECT x FROM t")[0].get(0, as: String.self) == "DIGEST-MARKER")
        #expect(db.cipherSettings == settings)
        try await db.execute("INSERT INTO t VALUES ('PACKAGE')")
        await db.close()
        // A pool derives the key once, with the digest the settings name.
        let pool = try DatabasePool(path: path, key: "digests", cipher: settings)
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 2)
        await pool.close()
        let lines = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [SqlcipherCLI.keyPragma(passphrase: "digests")]
            + Self.cliPragmas(kdf: kdf, hmac: hmac) + ["SELECT x FROM t ORDER BY rowid"])
        #expect(lines == ["DIGEST-MARKER", "PACKAGE"])
    }

    /// What the package writes with other digests: a new file, an export and a raw-key file; the
    /// CLI reads each only with the same pragmas.
    @Test(.enabled(if: isSQLCipher4(), "the digests are SQLCipher 4 settings"))
    func filesWrittenWithOtherDigestsOpenInTheCLIWithTheSamePragmas() async throws {
        let dir = TemporaryDirectory()
        let settings = CipherSettings(kdfAlgorithm: .sha256, hmacAlgorithm: .sha256)
        let created = dir.path("created.db")
        let db = try Database(path: created, key: "digests", journalMode: .rollback, cipher: settings)
        try await db.execute("CREATE TABLE t(x TEXT)")
        try await db.execute("INSERT INTO t VALUES ('WRITTEN')")
        let exported = dir.path("exported.db")
        let source = try Database(path: dir.path("source.db"), key: "source")
        try await source.execute("CREATE TABLE t(x TEXT)")
        try await source.execute("INSERT INTO t VALUES ('WRITTEN')")
        try await source.export(to: exported, key: "digests", cipher: settings)
        await source.close()
        await db.close()
        let raw = dir.path("raw.db")
        let rawDB = try Database(path: raw, rawKey: rawKey(), journalMode: .rollback,
                                 cipher: CipherSettings(hmacAlgorithm: .sha1))
        try await rawDB.execute("CREATE TABLE t(x TEXT)")
        try await rawDB.execute("INSERT INTO t VALUES ('WRITTEN')")
        await rawDB.close()

        for path in [created, exported] {
            #expect(filesContain([path], "WRITTEN").isEmpty, "\(path)")
            let lines = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [SqlcipherCLI.keyPragma(passphrase: "digests")]
                + Self.cliPragmas(kdf: .sha256, hmac: .sha256) + ["SELECT x FROM t"])
            #expect(lines == ["WRITTEN"], "\(path)")
            #expect(throws: SqlcipherCLI.CLIError.self) {
                try SqlcipherCLI.run(SqlcipherCLI.version4, path, [SqlcipherCLI.keyPragma(passphrase: "digests"), "SELECT x FROM t"])
            }
        }
        let rawLines = try SqlcipherCLI.run(SqlcipherCLI.version4, raw, [
            SqlcipherCLI.keyPragma(rawKey: rawKey()), "PRAGMA cipher_hmac_algorithm = HMAC_SHA1", "SELECT x FROM t",
        ])
        #expect(rawLines == ["WRITTEN"])
        // The same key with the default HMAC does not read it.
        #expect(throws: SqlCipherError.self) { try Database(path: raw, rawKey: rawKey()) }
    }

    /// SQLCipher 3 has one KDF and one HMAC: a digest setting is refused as unsupported, naming the
    /// setting and the version it needs, before any file is created.
    @Test(.enabled(if: !isSQLCipher4(), "SQLCipher 4 honours the setting"))
    func sqlcipher3RefusesADigestSetting() throws {
        let dir = TemporaryDirectory()
        for settings in [CipherSettings(kdfAlgorithm: .sha1), CipherSettings(hmacAlgorithm: .sha1)] {
            let path = dir.path("new.db")
            let error = #expect(throws: SqlCipherError.self) { try Database(path: path, key: "k", cipher: settings) }
            guard case .unsupported(let feature, let requires, _)? = error else {
                Issue.record("expected unsupported, got \(String(describing: error))")
                continue
            }
            #expect(feature.contains("digest"), "\(feature)")
            #expect(requires.contains("SQLCipher 4"), "\(requires)")
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }
}
