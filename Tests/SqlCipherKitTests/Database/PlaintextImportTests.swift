import Foundation
import Testing
@testable import SqlCipherKit

/// `importPlaintext(from:)`: plaintext rows come into an encrypted database, and nothing goes
/// the other way.
@Suite struct PlaintextImportTests {
    /// A plaintext file with `notes(title, body)` holding two rows; returns its path. Journal mode
    /// rollback (DELETE), so that the file alone is the database and its bytes can be compared.
    func makePlaintext(_ dir: TemporaryDirectory) async throws -> String {
        let path = dir.path("legacy.sqlite")
        let plain = try Database(unencryptedPath: path, journalMode: .rollback)
        try await plain.execute("""
            CREATE TABLE notes(title TEXT, body TEXT);
            INSERT INTO notes VALUES ('one', 'first'), ('two', 'second');
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

    @Test func onlyAnExistingPlaintextFileIsAttached() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeEncrypted(dir)
        let missing = dir.path("missing.sqlite")
        await #expect(throws: SqlCipherError.cannotOpen(path: missing, reason: "the file does not exist or cannot be read")) {
            try await db.importPlaintext(from: missing) { _ in }
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
}
