import Foundation
import Testing
@testable import SqlCipherKit

/// Files written by a newer SQLCipher release's own `sqlcipher` shell are read by the package (on
/// whichever library it loaded), and the reverse. The Debian machines have no newer release, so
/// these run only when `SQLCIPHERKIT_NEWER_CLI` names one's shell (and, for the loading tests,
/// `SQLCIPHERKIT_NEWER_LIBRARY` its libsqlcipher), e.g. SQLCipher 4.9.0 built from source
/// (docs/reliability.md, "Newer SQLCipher releases"). Measured: every test passes with 4.9.0's
/// shell and library on 4.6.1 and 3.4.1 (where the format allows).
@Suite struct NewerReleaseInteropTests {
    /// The newer release's shell, or nil.
    static var cli: String? { existing("SQLCIPHERKIT_NEWER_CLI") }
    /// The newer release's libsqlcipher, or nil.
    static var library: String? { existing("SQLCIPHERKIT_NEWER_LIBRARY") }

    private static func existing(_ variable: String) -> String? {
        guard let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty,
              FileManager.default.isExecutableFile(atPath: path) || FileManager.default.fileExists(atPath: path) else { return nil }
        return path
    }

    static let passphrase = "newer release"
    static let salt = Data((0..<16).map { UInt8($0) &* 29 &+ 3 })

    private func newer() throws -> String { try #require(Self.cli) }

    /// What every file holds, written by the shell after its key and settings.
    private static let content = [
        "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)",
        "INSERT INTO t(body) VALUES ('written by the newer shell')",
        "INSERT INTO t(body) SELECT 'filler ' || hex(randomblob(200)) FROM (WITH RECURSIVE n(i) AS "
            + "(SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60) SELECT i FROM n)",
        "PRAGMA user_version = 11",
    ]

    private func expectContent(_ access: some DatabaseAccess, _ label: String) async throws {
        #expect(try await access.query("SELECT body FROM t WHERE id = 1")[0].get(0, as: String.self)
                == "written by the newer shell", "\(label)")
        #expect(try await access.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 61, "\(label)")
        #expect(try await access.query("PRAGMA user_version")[0].get(0, as: Int.self) == 11, "\(label)")
    }

    @Test(.enabled(if: cli != nil, "needs SQLCIPHERKIT_NEWER_CLI"), arguments: ["delete", "wal"])
    func aFileWithTheNewerDefaultsOpensOnSQLCipher4(journal: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("defaults.db")
        _ = try SqlcipherCLI.run(try newer(), path, [SqlcipherCLI.keyPragma(passphrase: Self.passphrase),
                                                     "PRAGMA journal_mode = \(journal)"] + Self.content)
        guard isSQLCipher4() else {
            // SQLCipher 3.4.1 has no SHA-512: the 4.x default format is a wrong key to it.
            #expect {
                try Database(path: path, key: Self.passphrase)
            } throws: { error in
                if case SqlCipherError.keyFailed = error { return true } else { return false }
            }
            return
        }
        let db = try Database(path: path, key: Self.passphrase)
        try await expectContent(db, "Database")
        await db.close()
        if journal == "wal" {
            // A pool needs WAL mode (and refuses a rollback-journal file with its own error).
            let pool = try DatabasePool(path: path, key: Self.passphrase)
            try await expectContent(pool, "DatabasePool")
            await pool.close()
        }
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "not it") }
    }

    @Test(.enabled(if: cli != nil && isSQLCipher4(), "needs SQLCIPHERKIT_NEWER_CLI and SQLCipher 4"))
    func aFileWithAPlaintextHeaderAndItsSaltOpens() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("header.db")
        _ = try SqlcipherCLI.run(try newer(), path, [
            SqlcipherCLI.keyPragma(passphrase: Self.passphrase), "PRAGMA cipher_plaintext_header_size = 32",
            "PRAGMA cipher_salt = \"x'\(hex(Self.salt))'\"", "PRAGMA journal_mode = WAL",
        ] + Self.content)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16) == Data("SQLite format 3\0".utf8))
        let header = CipherSettings(plaintextHeaderSize: 32)
        let db = try Database(path: path, key: .passphrase(Self.passphrase, salt: Self.salt), cipher: header)
        try await expectContent(db, "Database")
        await db.close()
        let pool = try DatabasePool(path: path, key: .passphrase(Self.passphrase, salt: Self.salt), cipher: header)
        try await expectContent(pool, "DatabasePool")
        await pool.close()
    }

    @Test(.enabled(if: cli != nil, "needs SQLCIPHERKIT_NEWER_CLI"))
    func aFileInSQLCipher3FormatOpensOnEitherLibrary() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("compat3.db")
        _ = try SqlcipherCLI.run(try newer(), path, [SqlcipherCLI.keyPragma(passphrase: Self.passphrase),
                                                     "PRAGMA cipher_compatibility = 3", "PRAGMA journal_mode = WAL"]
                                 + Self.content)
        let db = try Database(path: path, key: Self.passphrase, cipher: .sqlcipher3)
        try await expectContent(db, "Database")
        await db.close()
        let pool = try DatabasePool(path: path, key: Self.passphrase, cipher: .sqlcipher3)
        try await expectContent(pool, "DatabasePool")
        await pool.close()
    }

    @Test(.enabled(if: cli != nil && isSQLCipher4(), "needs SQLCIPHERKIT_NEWER_CLI and SQLCipher 4"))
    func aLiveWALOfAKilledShellIsRead() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("live.db")
        try SqlcipherCLI.runAndKill(try newer(), path, [SqlcipherCLI.keyPragma(passphrase: Self.passphrase),
                                                        "PRAGMA journal_mode = WAL"] + Self.content)
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(wal > 0, "the killed shell left no -wal")
        let pool = try DatabasePool(path: path, key: Self.passphrase)
        try await expectContent(pool, "DatabasePool")
        await pool.close()
        let db = try Database(path: path, key: Self.passphrase)
        try await expectContent(db, "Database")
        await db.close()
    }

    @Test(.enabled(if: cli != nil && isSQLCipher4(), "needs SQLCIPHERKIT_NEWER_CLI and SQLCipher 4"))
    func aFileWithOtherPageSizeIterationsAndDigestsOpens() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("custom.db")
        _ = try SqlcipherCLI.run(try newer(), path, [
            SqlcipherCLI.keyPragma(passphrase: Self.passphrase), "PRAGMA cipher_page_size = 8192",
            "PRAGMA kdf_iter = 10000", "PRAGMA cipher_kdf_algorithm = PBKDF2_HMAC_SHA256",
            "PRAGMA cipher_hmac_algorithm = HMAC_SHA256", "PRAGMA journal_mode = WAL",
        ] + Self.content)
        let settings = CipherSettings(pageSize: 8192, kdfIterations: 10000, kdfAlgorithm: .sha256, hmacAlgorithm: .sha256)
        let db = try Database(path: path, key: Self.passphrase, cipher: settings)
        try await expectContent(db, "Database")
        await db.close()
        let pool = try DatabasePool(path: path, key: Self.passphrase, cipher: settings)
        try await expectContent(pool, "DatabasePool")
        await pool.close()
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: Self.passphrase) }
    }

    @Test(.enabled(if: cli != nil && isSQLCipher4(), "needs SQLCIPHERKIT_NEWER_CLI and SQLCipher 4"))
    func fullTextSearchAndJSONWrittenByTheShellAreRead() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("fts.db")
        _ = try SqlcipherCLI.run(try newer(), path, [
            SqlcipherCLI.keyPragma(passphrase: Self.passphrase),
            "CREATE VIRTUAL TABLE notes USING fts5(title, body)",
            "INSERT INTO notes VALUES ('groceries', 'buy encrypted apples'), ('work', 'ship the release')",
            "CREATE TABLE docs(doc TEXT)", "INSERT INTO docs VALUES (json_object('name', 'pear', 'tags', json_array('a', 'b')))",
        ])
        let db = try Database(path: path, key: Self.passphrase)
        #expect(try await db.query("SELECT title FROM notes WHERE notes MATCH ?", "apples")[0].get(0, as: String.self)
                == "groceries")
        #expect(try await db.query("SELECT json_extract(doc, '$.tags[1]') FROM docs")[0].get(0, as: String.self) == "b")
        try await db.execute("INSERT INTO notes VALUES ('package', 'written by SqlCipherKit')")
        await db.close()
        let lines = try SqlcipherCLI.run(try newer(), path, [SqlcipherCLI.keyPragma(passphrase: Self.passphrase),
                                                             "SELECT title FROM notes WHERE notes MATCH 'SqlCipherKit'",
                                                             "PRAGMA cipher_integrity_check"])
        #expect(lines == ["package"])
    }

    /// Every combination of format (4.x defaults, compatibility 3), journal (rollback, WAL) and
    /// plaintext header the newer shell writes: opened by `Database` (and a pool in WAL mode), written
    /// to, and read back by the shell with a clean `cipher_integrity_check`. Where the loaded library
    /// cannot read the format (3.4.1: no SHA-512, no plaintext header) the opening is a typed error
    /// and leaves the file's bytes as they were.
    @Test(.enabled(if: cli != nil, "needs SQLCIPHERKIT_NEWER_CLI"),
          arguments: [3, 4], [("delete", false), ("wal", false), ("delete", true), ("wal", true)])
    func everyFormatTheNewerShellWritesOpens(compatibility: Int, journal: (String, Bool)) async throws {
        let (mode, header) = journal
        let dir = TemporaryDirectory()
        let path = dir.path("c\(compatibility)-\(mode)-\(header).db")
        var pragmas = [SqlcipherCLI.keyPragma(passphrase: Self.passphrase)]
        if compatibility == 3 { pragmas.append("PRAGMA cipher_compatibility = 3") }
        if header {
            pragmas += ["PRAGMA cipher_plaintext_header_size = 32", "PRAGMA cipher_salt = \"x'\(hex(Self.salt))'\""]
        }
        _ = try SqlcipherCLI.run(try newer(), path, pragmas + ["PRAGMA journal_mode = \(mode)"] + Self.content)
        let key: DatabaseKey = header ? .passphrase(Self.passphrase, salt: Self.salt) : .passphrase(Self.passphrase)
        let settings = CipherSettings(compatibility: compatibility == 3 ? 3 : nil, plaintextHeaderSize: header ? 32 : nil)
        let label = "compatibility \(compatibility), \(mode), header \(header)"
        guard isSQLCipher4() || (compatibility == 3 && !header) else {
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(throws: SqlCipherError.self, "\(label)") { try Database(path: path, key: key, cipher: settings) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "\(label)")
            return
        }
        let db = try Database(path: path, key: key, cipher: settings)
        try await expectContent(db, "Database, \(label)")
        try await db.execute("INSERT INTO t(body) VALUES ('written by SqlCipherKit')")
        await db.close()
        if mode == "wal" {
            let pool = try DatabasePool(path: path, key: key, cipher: settings)
            #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 62, "DatabasePool, \(label)")
            await pool.close()
        }
        let lines = try SqlcipherCLI.run(try newer(), path, pragmas
                                         + ["SELECT body FROM t WHERE id = 62", "PRAGMA cipher_integrity_check"])
        #expect(lines == ["written by SqlCipherKit"], "\(label)")
    }

    /// A rollback-journal file whose newer shell was killed inside a transaction: the hot `-journal`
    /// is rolled back by the package's opening, so only what the shell committed is read.
    @Test(.enabled(if: cli != nil, "needs SQLCIPHERKIT_NEWER_CLI"), arguments: [3, 4])
    func aHotJournalOfAKilledShellIsRolledBack(compatibility: Int) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("hot.db")
        var pragmas = [SqlcipherCLI.keyPragma(passphrase: Self.passphrase)]
        if compatibility == 3 { pragmas.append("PRAGMA cipher_compatibility = 3") }
        try SqlcipherCLI.runAndKill(try newer(), path, pragmas + ["PRAGMA journal_mode = delete"] + Self.content
                                    + ["PRAGMA cache_size = 1", "BEGIN", "DELETE FROM t", "UPDATE t SET body = 'x'",
                                       "INSERT INTO t(body) SELECT body FROM t"])
        let journal = (try? FileManager.default.attributesOfItem(atPath: path + "-journal")[.size] as? Int) ?? 0
        #expect(journal > 0, "the killed shell left no -journal")
        let settings = compatibility == 3 ? CipherSettings.sqlcipher3 : .default
        guard isSQLCipher4() || compatibility == 3 else {
            #expect(throws: SqlCipherError.self) { try Database(path: path, key: Self.passphrase, cipher: settings) }
            return
        }
        let db = try Database(path: path, key: Self.passphrase, cipher: settings)
        try await expectContent(db, "Database, compatibility \(compatibility)")
        await db.close()
        #expect(try SqlcipherCLI.run(try newer(), path, pragmas + ["SELECT count(*) FROM t", "PRAGMA cipher_integrity_check"])
                == ["61"])
    }

    /// The reverse: every kind of file the package writes is read by the newer shell.
    @Test(.enabled(if: cli != nil, "needs SQLCIPHERKIT_NEWER_CLI"))
    func filesThePackageWritesOpenInTheNewerShell() async throws {
        let dir = TemporaryDirectory()
        var cases: [(String, DatabaseKey, CipherSettings, JournalMode, [String])] = [
            ("sqlcipher3.db", .passphrase(Self.passphrase), .sqlcipher3, .wal, ["PRAGMA cipher_compatibility = 3"]),
        ]
        if isSQLCipher4() {
            cases += [
                ("defaults-wal.db", .passphrase(Self.passphrase), .default, .wal, []),
                ("defaults-rollback.db", .passphrase(Self.passphrase), .default, .rollback, []),
                ("custom.db", .passphrase(Self.passphrase),
                 CipherSettings(pageSize: 16384, kdfIterations: 5000, kdfAlgorithm: .sha1, hmacAlgorithm: .sha256), .wal,
                 ["PRAGMA cipher_page_size = 16384", "PRAGMA kdf_iter = 5000",
                  "PRAGMA cipher_kdf_algorithm = PBKDF2_HMAC_SHA1", "PRAGMA cipher_hmac_algorithm = HMAC_SHA256"]),
                ("header.db", .passphrase(Self.passphrase, salt: Self.salt), CipherSettings(plaintextHeaderSize: 32), .wal,
                 ["PRAGMA cipher_plaintext_header_size = 32", "PRAGMA cipher_salt = \"x'\(hex(Self.salt))'\""]),
            ]
        }
        for (name, key, settings, mode, pragmas) in cases {
            let path = dir.path(name)
            let db = try Database(path: path, key: key, journalMode: mode, cipher: settings)
            try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)")
            try await db.execute("INSERT INTO t(body) VALUES ('written by SqlCipherKit')")
            await db.close()
            let lines = try SqlcipherCLI.run(try newer(), path, [SqlcipherCLI.keyPragma(passphrase: Self.passphrase)]
                                             + pragmas + ["SELECT body FROM t", "PRAGMA cipher_integrity_check"])
            #expect(lines == ["written by SqlCipherKit"], "\(name)")
        }
        // A raw key too.
        let raw = dir.path("raw.db")
        let db = try Database(path: raw, rawKey: rawKey(5))
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (42)")
        await db.close()
        let pragmas = isSQLCipher4() ? [] : ["PRAGMA cipher_compatibility = 3"]
        #expect(try SqlcipherCLI.run(try newer(), raw, [SqlcipherCLI.keyPragma(rawKey: rawKey(5))] + pragmas
                                     + ["SELECT x FROM t"]) == ["42"])
    }

    /// A source build of a newer release is usually linked without `-z now`: preloaded (or linked
    /// by the program), its PLT slots are still unfilled when the bridge audits them. It used to be
    /// refused as a binding conflict "bound to" the library itself; the slots are now judged by
    /// where the dynamic linker will bind them.
    @Test(.enabled(if: library != nil, "needs SQLCIPHERKIT_NEWER_LIBRARY"))
    func aLazilyBoundLibraryAlreadyInTheProcessIsJudgedByWhereItsSlotsWillBind() throws {
        let newer = try #require(Self.library)
        let real = URL(fileURLWithPath: newer).resolvingSymlinksInPath().path
        // Preloaded first: its own definitions come first in the global scope.
        let first = try runHelper(["load-library", real], environment: ["LD_PRELOAD": real, "LD_BIND_NOW": nil,
                                                                         SqlCipherLibrary.environmentVariable: nil])
        let loaded = try #require(try Linking.jsonLines(first.stdout).first, "\(first.stdout)\n\(first.stderr)")
        #expect(loaded["outcome"] as? String == "loaded", "\(loaded)")
        // libsqlite3 preloaded before it: the first calls would bind into libsqlite3.
        let second = try runHelper(["load-library", real], environment: ["LD_PRELOAD": "\(Linking.libsqlite3) \(real)",
                                                                          "LD_BIND_NOW": nil,
                                                                          SqlCipherLibrary.environmentVariable: nil])
        let refused = try #require(try Linking.jsonLines(second.stdout).first, "\(second.stdout)\n\(second.stderr)")
        #expect(refused["case"] as? String == "bindingConflict", "\(refused)")
        #expect((refused["boundTo"] as? String)?.hasSuffix("libsqlite3.so.0") == true, "\(refused)")
    }
}
