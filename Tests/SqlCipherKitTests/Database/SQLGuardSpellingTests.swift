import Foundation
import SqlCipherKit
import Testing

/// The raw-SQL guards against other spellings of refused SQL: cipher pragma spellings, VACUUM
/// INTO URIs and ATTACH key expressions that would write plaintext, triggers and views, REINDEX.
@Suite("Raw SQL guards: other spellings")
struct SQLGuardSpellingTests: InterruptibleDatabaseFixture {
    /// Held: spellings of the refused cipher pragmas.
    @Test func cipherPragmaSpellings() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        var attempts = [
            "PRAGMA \"cipher_use_hmac\" = OFF", "PRAGMA main.\"cipher_use_hmac\" = OFF", "PRAGMA [main].cipher_use_hmac = 0",
            "PRAGMA /* c */ cipher_use_hmac /* c */ = /* c */ OFF", "pragma CIPHER_USE_HMAC(off)", "PRAGMA `kdf_iter` = 1",
            "PRAGMA \"main\".key = 'b'", "PRAGMA main . rekey = 'b'", "PRAGMA 'cipher_page_size' = 512",
            "PRAGMA temp.key = 'b'", "PRAGMA cipher_default_use_hmac = off",
        ]
        if isSqlCipher4 {
            attempts += ["PRAGMA cipher_plaintext_header_size = 32", "PRAGMA \"cipher_hmac_algorithm\" = HMAC_SHA1",
                         "PRAGMA main.cipher_compatibility = 3", "PRAGMA cipher_salt = \"x'00112233445566778899aabbccddeeff'\""]
        }
        for sql in attempts {
            await #expect(throws: SqlCipherError.self, "\(sql)") { _ = try await db.execute(sql) }
            await #expect(throws: SqlCipherError.self, "\(sql)") { _ = try await db.query(sql) }
        }
        try await db.execute("INSERT INTO t VALUES (2)")
        await db.close()
        let again = try Database(path: directory.path("a.db"), rawKey: rawKey())
        #expect(try await values(again) == [1, 2])
    }

    /// `VACUUM INTO` a URI whose `key=` parameter is empty: SQLCipher attaches the copy with the
    /// URI's key (none) instead of the database's, so the whole database is written in the clear.
    /// `ATTACH` refuses the same URI; `VACUUM INTO` does not check it.
    @Test(.enabled(if: isSQLCipher4(), "SQLite 3.15 (3.4.1) has no VACUUM INTO")) func vacuumIntoUriWithEmptyKeyWritesPlaintext() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("INSERT INTO t VALUES (?)", 777_777)
        try await db.execute("CREATE TABLE secret(s TEXT)")
        try await db.execute("INSERT INTO secret VALUES ('TOP-SECRET-MARKER')")
        let target = directory.path("copy.db")
        for sql in ["VACUUM INTO 'file:\(target)?key='", "VACUUM main INTO 'file:\(target)?key='"] {
            _ = try? await db.execute(sql)
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: target))) ?? Data()
            #expect(bytes.range(of: Data("TOP-SECRET-MARKER".utf8)) == nil, "\(sql) wrote plaintext")
            #expect(bytes.range(of: Data("SQLite format 3".utf8)) == nil, "\(sql) wrote a plaintext SQLite file")
            try? FileManager.default.removeItem(atPath: target)
        }
    }

    /// `VACUUM INTO` a `file:` URI with `textkey=` on a plaintext database: SQLite attaches the
    /// target through the same code as `ATTACH`, which on SQLCipher 4.7+ crashes the process.
    @Test(.enabled(if: isSQLCipher4(), "SQLite 3.15 (3.4.1) has no VACUUM INTO"))
    func vacuumIntoATextkeyURIIsRefused() async throws {
        let directory = TemporaryDirectory()
        let db = try Database(unencryptedPath: directory.path("plain.db"))
        try await db.execute("CREATE TABLE t(x)")
        let target = directory.path("copy.db")
        for (sql, bound) in [("VACUUM INTO 'file:\(target)?textkey=k3y-text'", false), ("VACUUM INTO ?", true),
                             ("VACUUM main INTO 'file:\(target)?%74extkey=k3y-text'", false)] {
            do {
                if bound { try await db.execute(sql, "file:\(target)?textkey=k3y-text") } else { try await db.execute(sql) }
                Issue.record("\(sql) ran")
            } catch let SqlCipherError.invalidQuery(reason) {
                #expect(reason.contains("textkey=") && !reason.contains("k3y-text"), "\(reason)")
            }
            #expect(!FileManager.default.fileExists(atPath: target))
        }
        await db.close()
    }

    /// Held: ATTACH with key expressions that evaluate to empty, and a key= URI.
    @Test func attachWithEmptyKeyExpressions() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let target = directory.path("p.db")
        for sql in ["ATTACH '\(target)' AS p KEY ''", "ATTACH '\(target)' AS p KEY substr('a', 5)",
                    "ATTACH '\(target)' AS p KEY cast(x'' AS TEXT)",
                    "ATTACH 'file:\(target)?key=' AS p", "ATTACH '\(target)' AS \"p q\" KEY ''",
                    "ATTACH (SELECT '\(target)') AS p KEY ''"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") { _ = try await db.execute(sql) }
            _ = try? await db.execute("CREATE TABLE p.leak(x)")
            _ = try? await db.execute("INSERT INTO p.leak VALUES ('TOP-SECRET')")
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: target))) ?? Data()
            #expect(bytes.range(of: Data("TOP-SECRET".utf8)) == nil, "\(sql)")
            _ = try? await db.execute("DETACH p")
            try? FileManager.default.removeItem(atPath: target)
        }
    }

    /// SQLCipher 4.6.1 passes a `file:` URI's `textkey=` to `sqlite3_key_v2` with the length -1,
    /// which it cannot allocate: every such ATTACH failed with a bare "out of memory" (found by the
    /// adversarial review). The error now says so and where the key goes; nothing is attached, and
    /// the same key in the KEY clause works.
    /// SQLCipher passes a `file:` URI's `textkey=` on with the length -1: 4.6.1 failed with a bare
    /// "out of memory", and 4.7 and later crash the process (this test took the whole test process
    /// down with SIGSEGV on 4.9.0 and 4.7.0). Refused before SQLite sees it, in every spelling.
    @Test(.enabled(if: isSQLCipher4(), "SQLite 3.15.2 (3.4.1) is built without URI file names")) func attachWithATextkeyURISaysWhatToDo() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let file = directory.path("t.db")
        for uri in ["file:\(file)?textkey=k3y-text", "file:\(file)?textkey=", "file:\(file)?mode=rwc&textkey=k3y-text",
                    "file:\(file)?%74extkey=k3y-text", "file:\(file)?TEXTKEY=k3y-text#f"] {
            for (sql, bound) in [("ATTACH ? AS t", true), ("ATTACH '\(uri)' AS t", false),
                                 ("ATTACH DATABASE ? AS t KEY 'other'", true)] {
                do {
                    if bound {
                        _ = try await db.execute(sql, uri)
                    } else {
                        _ = try await db.execute(sql)
                    }
                    Issue.record("attached \(uri) with \(sql)")
                } catch let SqlCipherError.invalidQuery(reason) {
                    #expect(reason.contains("textkey=") && reason.contains("KEY clause"), "\(reason)")
                    #expect(!reason.contains("k3y-text"))
                }
            }
            #expect(try await db.query("PRAGMA database_list").allSatisfy { $0.get(1, as: String.self) != "t" })
        }
        _ = try await db.execute("ATTACH ? AS t KEY 'k3y-text'", directory.path("t.db"))
        _ = try await db.execute("DETACH t")
    }

    /// Held: a view or trigger that runs a refused function is refused when it is used (its
    /// creation is allowed, as SqlCipherKit.docc/RawSQLGuards.md says), and pragma table functions of cipher
    /// pragmas do not exist.
    @Test func triggerAndViewCannotCarryRefusedSQL() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("CREATE VIEW v AS SELECT sqlcipher_export('main') AS r")
        await #expect(throws: SqlCipherError.self) { _ = try await db.query("SELECT * FROM v") }
        try await db.execute("CREATE TABLE log(x)")
        try await db.execute(
            "CREATE TRIGGER tr AFTER INSERT ON log BEGIN SELECT sqlcipher_export('main'); END")
        await #expect(throws: SqlCipherError.self) { try await db.execute("INSERT INTO log VALUES (1)") }
        await #expect(throws: (any Error).self) {
            try await db.execute("SELECT * FROM pragma_cipher_use_hmac('OFF')")
        }
    }

    /// REINDEX rewrites index pages: a read { } body must refuse it.
    @Test func readBodyRefusesReindex() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("CREATE INDEX tx ON t(x)")
        for sql in ["REINDEX", "REINDEX tx", "REINDEX t", "REINDEX BINARY"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") {
                try await db.read { conn in _ = try conn.execute(sql) }
            }
        }
    }
}
