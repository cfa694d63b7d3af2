import Foundation
import SqlCipherKit
import Testing

/// `importPlaintext(from:)`: plaintext rows come into an encrypted database, and nothing goes
/// the other way.
@Suite struct PlaintextImportTests {
    /// A plaintext file with `notes(title, body)` holding two rows and an empty `inbox`; returns its path. Journal mode
    /// rollback (DELETE), so that the file alone is the database and its bytes can be compared.
    func makePlaintext(_ dir: TemporaryDirectory) async throws -> String {
        let path = dir.path("legacy.sqlite")
        let plain = try Database(unencryptedPath: path, journalMode: .rollback)
        try await plain.execute("""
            CREATE TABLE notes(title TEXT, body TEXT);
            INSERT INTO notes VALUES ('one', 'first'), ('two', 'second');
            CREATE TABLE inbox(title TEXT, body TEXT);
            """)
        await plain.close()
        return path
    }

    func makeEncrypted(_ dir: TemporaryDirectory) async throws -> Database {
        let db = try Database(path: dir.path("vault.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT)")
        return db
    }

    @Test func theGuideExampleCopiesRowsIn() async throws {
        let dir = TemporaryDirectory()
        let plainPath = try await makePlaintext(dir)
        let before = try Data(contentsOf: URL(fileURLWithPath: plainPath))
        let db = try await makeEncrypted(dir)
        let copied = try await db.importPlaintext(from: plainPath) { conn in
            try conn.execute("INSERT INTO main.notes(title, body) SELECT title, body FROM plain.notes")
        }
        #expect(copied == 2)
        let titles = try await db.query("SELECT title FROM notes ORDER BY id").compactMap { $0.get(0, as: String.self) }
        #expect(titles == ["one", "two"])
        // Detached again: the schema is gone, and the plaintext file is byte for byte as it was.
        await #expect(throws: SqlCipherError.self) { try await db.query("SELECT * FROM plain.notes") }
        #expect(try Data(contentsOf: URL(fileURLWithPath: plainPath)) == before)
        await db.close()
    }

    @Test func everyWriteToThePlaintextFileIsRefused() async throws {
        let dir = TemporaryDirectory()
        let plainPath = try await makePlaintext(dir)
        let before = try Data(contentsOf: URL(fileURLWithPath: plainPath))
        let db = try await makeEncrypted(dir)
        try await db.execute("INSERT INTO notes(title, body) VALUES ('secret', 'do not leak')")
        let writes = [
            "INSERT INTO plain.notes SELECT title, body FROM main.notes",
            "UPDATE plain.notes SET body = 'x'",
            "DELETE FROM plain.notes",
            "CREATE TABLE plain.leak AS SELECT * FROM main.notes",
            "DROP TABLE plain.notes",
            "ALTER TABLE plain.notes ADD COLUMN leak TEXT",
            "CREATE INDEX plain.leak_index ON notes(body)",
            "PRAGMA plain.user_version = 7",
        ]
        let refusals = try await db.importPlaintext(from: plainPath) { conn in
            var refusals: [String] = []
            for sql in writes {
                do {
                    try conn.execute(sql)
                } catch let SqlCipherError.plaintextAttachmentWrite(schema, refused) where schema == "plain" {
                    refusals.append(refused)
                }
            }
            return refusals
        }
        #expect(refusals == writes)
        #expect(try Data(contentsOf: URL(fileURLWithPath: plainPath)) == before)
        let message = SqlCipherError.plaintextAttachmentWrite(schema: "plain", sql: writes[0]).description
        #expect(message.contains("INSERT INTO main.t SELECT ... FROM plain.t"))
        await db.close()
    }

    /// A temporary trigger is compiled when it fires, so the refusal reaches the writes it makes.
    /// (SQLite allows no schema name in a trigger's INSERT, so it writes to `inbox`, a table only
    /// the plaintext file has.)
    @Test func aTriggerCannotWriteToThePlaintextFileEither() async throws {
        let dir = TemporaryDirectory()
        let plainPath = try await makePlaintext(dir)
        let before = try Data(contentsOf: URL(fileURLWithPath: plainPath))
        let db = try await makeEncrypted(dir)
        let error = try await #require(throws: SqlCipherError.self) {
            try await db.importPlaintext(from: plainPath) { conn in
                try conn.execute("""
                    CREATE TEMP TRIGGER leak AFTER INSERT ON main.notes
                    BEGIN INSERT INTO inbox VALUES (new.title, new.body); END
                    """)
                try conn.execute("INSERT INTO main.notes(title, body) VALUES ('secret', 'do not leak')")
            }
        }
        guard case .plaintextAttachmentWrite(let schema, _) = error else {
            Issue.record("expected plaintextAttachmentWrite, got \(error)")
            return
        }
        #expect(schema == "plain")
        #expect(try Data(contentsOf: URL(fileURLWithPath: plainPath)) == before)
        #expect(try await db.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) == 0)
        await db.close()
    }

    @Test func aPoolImportsThroughItsWriter() async throws {
        let dir = TemporaryDirectory()
        let plainPath = try await makePlaintext(dir)
        let pool = try DatabasePool(path: dir.path("pool.db"), rawKey: rawKey())
        try await pool.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT)")
        try await pool.importPlaintext(from: plainPath, as: "legacy") { conn in
            try conn.execute("INSERT INTO main.notes(title, body) SELECT title, body FROM legacy.notes")
        }
        #expect(try await pool.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) == 2)
        await pool.close()
    }

    @Test func onlyAnExistingPlaintextFileIsAttached() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeEncrypted(dir)
        let missing = dir.path("missing.sqlite")
        await #expect(throws: SqlCipherError.cannotOpen(path: missing, reason: "there is no database file there (No such file or directory); give the path of a plaintext SQLite database")) {
            try await db.importPlaintext(from: missing) { _ in }
        }
        // A pipe, a device or a directory is named as what it is (it was "does not exist", or
        // "not a plaintext database" for a device), as the conversions name it.
        let pipe = dir.path("pipe.sqlite")
        #expect(mkfifo(pipe, 0o600) == 0)
        try FileManager.default.createDirectory(atPath: dir.path("folder"), withIntermediateDirectories: false)
        for (path, kind) in [(pipe, "a named pipe (FIFO)"), ("/dev/zero", "a device"), (dir.path("folder"), "a directory")] {
            await #expect(throws: SqlCipherError.cannotOpen(
                path: path, reason: "it is \(kind), not a database file; give the path of a plaintext SQLite database")) {
                try await db.importPlaintext(from: path) { _ in }
            }
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
        let other = try Database(path: dir.path("other.db"), rawKey: rawKey(2))
        try await other.execute("CREATE TABLE t(x)")
        await other.close()
        await #expect(throws: SqlCipherError.notPlaintextDatabase(path: dir.path("other.db"))) {
            try await db.importPlaintext(from: dir.path("other.db")) { _ in }
        }
        let plainPath = try await makePlaintext(dir)
        await #expect(throws: SqlCipherError.self) {
            try await db.importPlaintext(from: plainPath, as: "main") { _ in }
        }
        await db.close()
    }

    /// The file's companions get the checks of every opening: a `-journal`, `-wal` or `-shm` that
    /// is a symbolic link, a named pipe or a directory is refused, naming it, and left where it
    /// is, beside the path given and beside the file a link leads to. On SQLCipher 4.6.1 the
    /// import of a file beside a pipe `-journal` waited forever (SQLite's hot-journal check opens
    /// it for reading); elsewhere the ATTACH read through a linked `-wal` and then removed the
    /// link, removed a pipe `-wal`, and failed on a pipe `-shm` or a directory `-journal` with a
    /// bare "disk I/O error" that blamed the file itself. The pipes are tried in a child process
    /// under `timeout`, so that a wait fails the test rather than stalling the run.
    @Test(arguments: ["-journal", "-wal", "-shm"])
    func aCompanionThatIsALinkPipeOrFolderIsRefusedAndLeft(suffix: String) async throws {
        let dir = TemporaryDirectory()
        let plainPath = try await makePlaintext(dir)
        let before = try Data(contentsOf: URL(fileURLWithPath: plainPath))
        let vault = dir.path("vault.db")
        let db = try await makeEncrypted(dir)
        let victim = dir.path("victim")
        try Data("victim".utf8).write(to: URL(fileURLWithPath: victim))
        let link = dir.path("link.sqlite")
        #expect(symlink(plainPath, link) == 0)
        let companion = plainPath + suffix
        func left(_ words: String) {
            var info = stat()
            #expect(lstat(companion, &info) == 0, "\(words): the companion was removed")
        }
        for (words, make) in [("is a symbolic link", { symlink(victim, $0) }), ("is a directory", { mkdir($0, 0o700) })]
            as [(String, (String) -> Int32)] {
            #expect(make(companion) == 0)
            for given in [plainPath, link] {
                await #expect("\(words) \(given)", performing: {
                    try await db.importPlaintext(from: given) { _ in }
                }, throws: { error in
                    guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
                    return reason.contains("\(companion) \(words)")
                })
                left(words)
            }
            #expect(remove(companion) == 0)
        }
        await db.close()
        #expect(mkfifo(companion, 0o600) == 0)
        for given in [plainPath, link] {
            let result = try runChild("/usr/bin/timeout", ["-s", "KILL", "30", productPath("sqlcipherkit-test-helper"),
                                                           "import-plaintext", vault, "raw:" + rawKey().map { String(format: "%02x", $0) }.joined(),
                                                           given, "notes"])
            #expect(!result.signaled && result.status == 0, "the import hung or crashed: \(result.stderr)")
            #expect(result.stdout.contains("error cannotOpen") && result.stdout.contains("\(companion) is a named pipe"),
                    "\(result.stdout)")
            left("a pipe")
        }
        #expect(remove(companion) == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: victim)) == Data("victim".utf8))
        #expect(try Data(contentsOf: URL(fileURLWithPath: plainPath)) == before)
        // Without them, the import works, through the link too.
        let result = try runChild(productPath("sqlcipherkit-test-helper"), [
            "import-plaintext", vault, "raw:" + rawKey().map { String(format: "%02x", $0) }.joined(), link, "notes"])
        #expect(result.stdout.contains("imported 2"), "\(result.stdout) \(result.stderr)")
    }

    /// The refusal of a hand-written `ATTACH … KEY ''` points to the safe way.
    @Test func theEmptyKeyAttachRefusalPointsToImportPlaintext() async throws {
        let dir = TemporaryDirectory()
        let plainPath = try await makePlaintext(dir)
        let db = try await makeEncrypted(dir)
        let error = try await #require(throws: SqlCipherError.self) {
            try await db.execute("ATTACH DATABASE ? AS p KEY ''", plainPath)
        }
        guard case .unsafeAttach = error else {
            Issue.record("expected unsafeAttach, got \(error)")
            return
        }
        #expect(error.description.contains("db.importPlaintext(from:)"))
        await db.close()
    }

    @Test func anAttachWithoutAKeyOfAPlaintextFilePointsToImportPlaintext() async throws {
        let dir = TemporaryDirectory()
        let plainPath = try await makePlaintext(dir)
        let db = try await makeEncrypted(dir)
        let error = try await #require(throws: SqlCipherError.self) {
            try await db.execute("ATTACH DATABASE ? AS p", plainPath)
        }
        guard case .sqlite(26, _, let message, _) = error else {
            Issue.record("expected SQLite error 26, got \(error)")
            return
        }
        #expect(message.contains("db.importPlaintext(from:as:_:)"), "\(message)")
        // The database goes on, with nothing attached.
        #expect(try await db.query("PRAGMA database_list").count == 1)
        await db.close()
    }

    /// A `DETACH` of the import's own schema in the body fails (the body runs in a transaction), and
    /// the message says why and that the call detaches it; SQLite's own text, "database plain is
    /// locked", reads as a busy file. The import then completes, and the schema is detached.
    @Test func aDetachInTheBodySaysTheImportDetachesItself() async throws {
        let dir = TemporaryDirectory()
        let plainPath = try await makePlaintext(dir)
        let db = try await makeEncrypted(dir)
        let message = try await db.importPlaintext(from: plainPath) { conn -> String in
            let error = try #require(throws: SqlCipherError.self) { try conn.execute("DETACH DATABASE plain") }
            try conn.execute("INSERT INTO main.notes(title, body) SELECT title, body FROM plain.notes")
            return String(describing: error)
        }
        #expect(message.contains("cannot detach a database while this connection has a transaction open"), "\(message)")
        #expect(message.contains("importPlaintext's body (which detaches its file itself"), "\(message)")
        #expect(try await db.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) == 2)
        #expect(try await db.query("PRAGMA database_list").count == 1)
        await db.close()
    }

    /// A plaintext file that stores its text as UTF-16 (another program's choice, here the real
    /// `sqlcipher` tool's, without a key) cannot be attached to a UTF-8 database: SQLite refused it
    /// with "attached databases must use the same text encoding as main database" and no way out.
    /// The error now names the ways out, for `importPlaintext` and a raw `ATTACH`, and the way it
    /// names works: `encrypt(plaintextAt:to:key:)` copies the file, encoding and all.
    @Test func aUTF16FileIsRefusedWithTheWaysOut() async throws {
        let dir = TemporaryDirectory()
        let plainPath = dir.path("utf16.sqlite")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, plainPath, [
            "PRAGMA encoding = 'UTF-16le'", "CREATE TABLE notes(title TEXT, body TEXT)", "INSERT INTO notes VALUES ('één', 'ü')",
        ])
        let before = try Data(contentsOf: URL(fileURLWithPath: plainPath))
        let db = try await makeEncrypted(dir)
        for attempt in ["importPlaintext", "ATTACH"] {
            let error = try await #require(throws: SqlCipherError.self) {
                if attempt == "ATTACH" {
                    try await db.execute("ATTACH DATABASE ? AS p KEY ''", plainPath)
                } else {
                    try await db.importPlaintext(from: plainPath) { _ = try $0.query("SELECT * FROM plain.notes") }
                }
            }
            guard case .sqlite(1, _, let message, _) = error else {
                Issue.record("\(attempt): expected SQLite error 1, got \(error)")
                continue
            }
            #expect(message.contains("UTF-16") && message.contains("Database.encrypt(plaintextAt:to:key:)"), "\(attempt): \(message)")
        }
        #expect(try await db.query("PRAGMA database_list").count == 1)
        await db.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: plainPath)) == before)
        let copy = dir.path("utf16-encrypted.db")
        try Database.encrypt(plaintextAt: plainPath, to: copy, key: .rawKey(rawKey(2)))
        let encrypted = try Database(path: copy, rawKey: rawKey(2))
        #expect(try await encrypted.query("SELECT title FROM notes").first?.get(0, as: String.self) == "één")
        await encrypted.close()
    }

    /// A plaintext file whose schema a newer SQLite wrote (a `STRICT` table, by the real 4.6.1
    /// tool's SQLite 3.46): SQLCipher 4 imports it; on SQLCipher 3.4.1, whose SQLite 3.15 cannot
    /// parse it, the ATTACH failed with a bare "malformed database schema" (its token masked),
    /// which read like damage. It now says what opening the file says: intact, needs a newer library.
    @Test func aSchemaANewerSQLiteWroteIsSaidToNeedANewerLibrary() async throws {
        let dir = TemporaryDirectory()
        let plainPath = dir.path("strict.sqlite")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, plainPath, [
            "CREATE TABLE notes(title TEXT, body TEXT) STRICT", "INSERT INTO notes VALUES ('one', 'first')",
        ])
        let before = try Data(contentsOf: URL(fileURLWithPath: plainPath))
        let db = try await makeEncrypted(dir)
        if sqliteVersionIsAtLeast(3_037_000) {
            let copied = try await db.importPlaintext(from: plainPath) { conn in
                try conn.execute("INSERT INTO main.notes(title, body) SELECT title, body FROM plain.notes")
            }
            #expect(copied == 1)
        } else {
            let error = try await #require(throws: SqlCipherError.self) {
                try await db.importPlaintext(from: plainPath) { _ = try $0.query("SELECT * FROM plain.notes") }
            }
            guard case .cannotOpen(_, let reason) = error else {
                Issue.record("expected cannotOpen, got \(error)")
                return
            }
            #expect(reason.contains("newer SQLite") && reason.contains("libsqlcipher.so.1"), "\(reason)")
            // A raw ATTACH of it says the same.
            let attach = try await #require(throws: SqlCipherError.self) {
                try await db.execute("ATTACH DATABASE ? AS p KEY ''", plainPath)
            }
            guard case .sqlite(11, _, let message, _) = attach else {
                Issue.record("expected SQLite error 11, got \(attach)")
                return
            }
            #expect(message.contains("newer SQLite") && message.contains("libsqlcipher.so.1"), "\(message)")
        }
        #expect(try await db.query("PRAGMA database_list").count == 1)
        await db.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: plainPath)) == before)
    }
}
