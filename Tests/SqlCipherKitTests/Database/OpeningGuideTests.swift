import Foundation   // Data
import SqlCipherKit
import Testing

/// A progress bar of the reader's app, for the conversion example.
final class GuideProgressBar: Sendable {
    func update(_ fraction: Double) {}
}

/// The examples of the DocC articles "Opening a database" and "Rekey and conversions", each copied
/// as it stands in its article (checked by `ArticleCodeBlockTests`). Blocks whose paths are the
/// reader's own (`/data/...`, `/media/...`) are compiled, not run; the others run against a
/// temporary folder.
@Suite struct OpeningGuideTests {
    // MARK: Compiled only: the reader's own paths

    /// OpeningADatabase.md, block 1.
    func openingKinds(keyBytes: Data) throws {
        // A passphrase: SQLCipher derives the key with PBKDF2 (about 200 ms on SQLCipher 4, by design).
        let db = try Database(path: "/data/store.db", key: "my-passphrase")

        // The same passphrase as bytes: any bytes, NUL and invalid UTF-8 included. Every key is a
        // DatabaseKey (.passphrase, .rawKey, or a string literal); the String and rawKey: forms make one.
        let same = try Database(path: "/data/store.db", key: .passphrase(Data("my-passphrase".utf8)))

        // A raw 32-byte key (from a key store): no key derivation, opens at once.
        let fast = try Database(path: "/data/fast.db", rawKey: keyBytes)

        // A plaintext SQLite file, readable by any SQLite tool.
        let plain = try Database(unencryptedPath: "/data/public.db")

        // Each of them works in memory too.
        let scratch = try Database(path: ":memory:", rawKey: keyBytes)
        _ = (db, same, fast, plain, scratch)
    }

    /// OpeningADatabase.md, blocks 3 and 5.
    func readOnlyAndRollbackJournal(keyBytes: Data) async throws {
        let archive = try Database(path: "/media/backup/store.db", rawKey: keyBytes, readOnly: true)
        let rows = try await archive.query("SELECT * FROM orders")   // reads work
        try await archive.execute("DELETE FROM orders")               // throws sqlite(code: 8, …)
        _ = rows

        let single = try Database(path: "/media/card/notes.db", key: "k", journalMode: .rollback)
        _ = single
    }

    /// RekeyAndConversions.md, blocks 2 to 4.
    func conversions(db: Database, old: Database, keyBytes: Data, bar: GuideProgressBar) async throws {
        // A plaintext file to a new encrypted one.
        try Database.encrypt(plaintextAt: "/data/public.db", to: "/data/secret.db", key: "passphrase")

        // The same, in place: export beside it, verify, fsync, rename over it.
        try Database.encryptInPlace(path: "/data/notes.db", key: .rawKey(keyBytes))
        let backup = try Database.encryptInPlace(path: "/data/other.db", key: "passphrase", keepBackup: true)
        // backup == "/data/other.db.plaintext-backup"

        // Copies of an open database.
        try await db.exportDecrypted(to: "/tmp/inspect.db")                      // plaintext
        try await old.export(to: "/data/v4.db", key: "passphrase", cipher: .default)  // e.g. 3.x format to 4.x

        // A SQLCipher 3 file (default settings) to SQLCipher 4's format, in place (SQLCipher 4 only).
        try Database.upgradeFromSqlCipher3(path: "/data/legacy.db", key: "passphrase")
        _ = backup

        let job = Task {
            try Database.encryptInPlace(path: "/data/notes.db", key: "passphrase") { progress in
                bar.update(progress.fraction)   // e.g. 0.0 … 0.42 … 1.0; keep it quick
            }
        }
        job.cancel()   // throws CancellationError; /data/notes.db is left as it was

        try await db.importPlaintext(from: "/tmp/legacy.sqlite") { conn in
            try conn.execute("INSERT INTO main.notes(title, body) SELECT title, body FROM plain.notes")
        }
    }

    /// OpeningADatabase.md, block 6. `p1` to `p4` are paths; run by ``cipherSettingsOfEachKind()``.
    func cipherSettingsOfEachKind(p1: String, p2: String, p3: String, p4: String,
                                  keyBytes: Data, saltBytes: Data) throws -> [Database] {
        // The loaded library's own defaults (SQLCipher 4 format on 4.x, SQLCipher 3 format on 3.4.1).
        let a = try Database(path: p1, key: "k", cipher: .default)

        // Files that SQLCipher 3.4.1 reads (PRAGMA cipher_compatibility = 3 on 4.x; the defaults on 3.4.1).
        let b = try Database(path: p2, key: "k", cipher: .sqlcipher3)

        // Explicit page size and PBKDF2 iterations.
        let c = try Database(path: p3, key: "k", cipher: CipherSettings(pageSize: 8192, kdfIterations: 100_000))

        // A plaintext 32-byte header (SQLCipher 4 only). The file then does not hold its salt: keep the
        // 16-byte salt with the key and pass both.
        let d = try Database(path: p4, key: .rawKey(keyBytes, salt: saltBytes),
                             cipher: CipherSettings(plaintextHeaderSize: 32))
        return [a, b, c, d]
    }

    /// OpeningADatabase.md, block 7; run by ``aSharedContainerFileOpensWithItsPassphraseAndSalt()``.
    func sharedContainerFile(p5: String, passphrase: String, saltBytes: Data) throws -> Database {
        let shared = try Database(path: p5, key: .passphrase(passphrase, salt: saltBytes),
                                  cipher: CipherSettings(plaintextHeaderSize: 32))
        return shared
    }

    // MARK: Run

    /// Block 1's kinds of opening, on paths of a temporary folder: the passphrase as a string and
    /// as bytes opens the same file.
    @Test func openingKindsRun() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("store.db"), key: "my-passphrase")
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        let same = try Database(path: dir.path("store.db"), key: .passphrase(Data("my-passphrase".utf8)))
        #expect(try await same.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 0)
        let fast = try Database(path: dir.path("fast.db"), rawKey: rawKey(4))
        let plain = try Database(unencryptedPath: dir.path("public.db"))
        let scratch = try Database(path: ":memory:", rawKey: rawKey(4))
        #expect(fast.isEncrypted && !plain.isEncrypted && scratch.journalMode == .rollback)
        let single = try Database(path: dir.path("notes.db"), key: "k", journalMode: .rollback, cipher: fastCipher)
        #expect(single.journalMode == .rollback)
    }

    /// Block 7 on a file the real SQLCipher 4 CLI made with the three pragmas of the text.
    @Test(.enabled(if: isSQLCipher4(), "plaintext headers are SQLCipher 4's"))
    func aSharedContainerFileOpensWithItsPassphraseAndSalt() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        let salt = Data(repeating: 0x3C, count: 16)
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [
            SqlcipherCLI.keyPragma(passphrase: "container"), "PRAGMA cipher_plaintext_header_size = 32",
            "PRAGMA cipher_salt = \"x'\(hex(salt))'\"", "CREATE TABLE t(x)", "INSERT INTO t VALUES (42)",
        ])
        let shared = try sharedContainerFile(p5: path, passphrase: "container", saltBytes: salt)
        #expect(try await shared.query("SELECT x FROM t")[0].get(0, as: Int.self) == 42)
        await shared.close()
    }

    /// Block 6; SQLCipher 3.4.1 has no plaintext header, so the fourth opening is refused there.
    @Test func cipherSettingsOfEachKind() async throws {
        let dir = TemporaryDirectory()
        let open = {
            try cipherSettingsOfEachKind(
                p1: dir.path("a.db"), p2: dir.path("b.db"), p3: dir.path("c.db"), p4: dir.path("d.db"),
                keyBytes: rawKey(4), saltBytes: Data(repeating: 0x5A, count: 16))
        }
        guard isSQLCipher4() else {
            #expect(throws: SqlCipherError.self) { try open() }
            // The first three settings work on 3.4.1: each file opens again and is written.
            let settings = [CipherSettings.default, .sqlcipher3, CipherSettings(pageSize: 8192, kdfIterations: 100_000)]
            for (name, cipher) in zip(["a.db", "b.db", "c.db"], settings) {
                let db = try Database(path: dir.path(name), key: "k", cipher: cipher)
                try await db.execute("CREATE TABLE t(x)")
                #expect(db.isEncrypted)
            }
            return
        }
        let opened = try open()
        #expect(opened.count == 4 && opened.allSatisfy { $0.isEncrypted })
        for db in opened { try await db.execute("CREATE TABLE t(x)") }
    }

    @Test func requiringALibrary() throws {
        do {
            let library = try SqlCipherLibrary.shared
            print(library.capabilities.missing)                         // [] on Debian's 4.6.1
            try library.require(minimumCipherVersion: "4.0", .json)      // SqlCipherError.libraryTooOld on 3.4.1
            #expect(isSQLCipher4())
        } catch SqlCipherError.libraryTooOld {
            #expect(!isSQLCipher4())
        }
    }

    @Test func rekeyBetweenKeyKinds() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("rekey.db")
        let db = try Database(path: path, key: "old", cipher: CipherSettings(kdfIterations: 2000))
        try await db.execute("CREATE TABLE t(x)")
        let newKeyBytes = rawKey(9)
        let typedPassphrase = "typed by a person"
        try await db.rekey("a new passphrase")
        try await db.rekey(.passphrase(typedPassphrase))   // a passphrase held in a String
        try await db.rekey(rawKey: newKeyBytes)      // a passphrase database can move to a raw key and back
        try await db.rekey(.passphrase(Data([0x00, 0xFF])))   // passphrase bytes
        await db.close()
        let reopened = try Database(path: path, key: .passphrase(Data([0x00, 0xFF])), cipher: CipherSettings(kdfIterations: 2000))
        #expect(try await reopened.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 0)
    }

    /// OpeningADatabase.md, block 4 (a fragment: one property per line), checked line by line.
    @Test func propertiesOfAnOpenDatabase() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("properties.db")
        let db = try Database(path: path, rawKey: rawKey(4))
        #expect(db.path == path)
        #expect(db.isEncrypted)
        #expect(try Database(unencryptedPath: dir.path("plain.db")).isEncrypted == false)
        #expect(db.journalMode == .wal)
        #expect(db.library.path == (try loadedLibrary()).path)
        #expect(db.library.cipherVersion.isEmpty == false)
        await db.close()
        await #expect(throws: SqlCipherError.databaseClosed) { try await db.query("SELECT 1") }
    }

    /// RekeyAndConversions.md, block 5 (a fragment: one field per line), checked line by line.
    @Test func integrityReportFields() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("integrity.db"), rawKey: rawKey(4))
        try await db.execute("CREATE TABLE t(x)")
        let report = try await db.verifyIntegrity()
        #expect(report.isOK)
        #expect(report.problems.isEmpty)
        if isSQLCipher4() {
            #expect(report.checksRun == [.cipherHMAC, .sqliteIntegrity])
            #expect(report.skipped.isEmpty)
            #expect(report.hmacVerified)
        } else {
            #expect(report.checksRun == [.sqliteIntegrity])
            #expect(report.skipped.map(\.check) == [.cipherHMAC])
            #expect(!report.hmacVerified)
        }
    }

    /// Blocks 2 and 3 of RekeyAndConversions.md on files of a temporary folder (the article's
    /// paths are the reader's own, so ``conversions(db:old:keyBytes:bar:)`` is compiled only).
    @Test func conversionsRunOnRealFiles() async throws {
        let dir = TemporaryDirectory()
        let keyBytes = rawKey(42)
        for name in ["public.db", "notes.db", "other.db"] {
            let db = try Database(unencryptedPath: dir.path(name))
            try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            await db.close()
        }
        try Database.encrypt(plaintextAt: dir.path("public.db"), to: dir.path("secret.db"), key: "passphrase")
        try Database.encryptInPlace(path: dir.path("notes.db"), key: .rawKey(keyBytes))
        let backup = try Database.encryptInPlace(path: dir.path("other.db"), key: "passphrase", keepBackup: true)
        #expect(backup == dir.path("other.db") + ".plaintext-backup")

        let db = try Database(path: dir.path("secret.db"), key: "passphrase")
        try await db.exportDecrypted(to: dir.path("inspect.db"))
        #expect(try await countRows(try Database(unencryptedPath: dir.path("inspect.db"))) == 1)
        let old = try Database(path: dir.path("notes.db"), rawKey: keyBytes)
        try await old.export(to: dir.path("v4.db"), key: "passphrase", cipher: .default)
        #expect(try await countRows(try Database(path: dir.path("v4.db"), key: "passphrase")) == 1)

        let legacy = dir.path("legacy.db")
        let v3 = try Database(path: legacy, key: "passphrase", cipher: .sqlcipher3)
        try await v3.execute("CREATE TABLE t(x)")
        await v3.close()
        if isSQLCipher4() {
            try Database.upgradeFromSqlCipher3(path: legacy, key: "passphrase")
            #expect(try await countRows(try Database(path: legacy, key: "passphrase")) == 0)
        } else {
            #expect(throws: SqlCipherError.self) { try Database.upgradeFromSqlCipher3(path: legacy, key: "passphrase") }
        }
    }
}
