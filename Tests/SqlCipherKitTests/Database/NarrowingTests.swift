import Foundation
import Testing
@testable import SqlCipherKit

/// Lengths that do not fit the C `int` SQLite takes (issue 12, item 5). `Int32(count)` trapped
/// for a blob, text, SQL text or key of more than `Int32.max` bytes; each must now be SQLite's
/// own `SQLITE_TOOBIG` (18) as a typed error, with nothing run.
///
/// The values above `Int32.max` cost little: `Data(count:)` is zero pages the kernel maps
/// lazily, and the one 2 GiB string is written with memset and shared by the text tests.
@Suite(.serialized) struct NarrowingTests {
    static let overLimit = Int(Int32.max) + 1

    /// `count` spaces, built with memset (`String(repeating:count:)` takes a minute for 2 GiB in
    /// a debug build).
    static func spaces(_ count: Int) -> String {
        String(unsafeUninitializedCapacity: count) { buffer in
            _ = memset(buffer.baseAddress!, 0x20, count)
            return count
        }
    }

    /// Whether `error` is SQLITE_TOOBIG.
    static func isTooBig(_ error: any Error) -> Bool {
        if case SqlCipherError.sqlite(18, 18, _, _) = error { return true }
        return false
    }

    // MARK: The checked conversion

    @Test func theConversionAcceptsEveryCountUpToInt32MaxAndRefusesTheNext() throws {
        #expect(try CLength.value(0, kind: "a blob", sql: nil) == 0)
        #expect(try CLength.value(Int(Int32.max), kind: "a blob", sql: "x") == Int32.max)
        #expect(try CLength.sql(Int(Int32.max), sql: "x") == Int32.max)
        for count in [Self.overLimit, Int(UInt32.max), Int.max] {
            #expect(throws: SqlCipherError.self) { try CLength.value(count, kind: "a blob", sql: "SELECT ?") }
            do {
                _ = try CLength.value(count, kind: "a blob", sql: "SELECT ?")
            } catch let SqlCipherError.sqlite(code, extended, message, sql) {
                #expect(code == 18 && extended == 18)
                #expect(message.contains("string or blob too big") && message.contains("\(count) bytes"))
                #expect(sql == "SELECT ?")
            }
        }
    }

    @Test func aTooLongSQLTextIsShownOnlyByItsStart() throws {
        let text = "SELECT 1 -- " + String(repeating: "é", count: 500)
        do {
            _ = try CLength.sql(Self.overLimit, sql: text)
            Issue.record("no error")
        } catch let SqlCipherError.sqlite(code, _, message, sql) {
            #expect(code == 18)
            #expect(message.hasPrefix("statement too long"))
            let shown = try #require(sql)
            #expect(shown.utf8.count < 300 && shown.hasPrefix("SELECT 1 -- ") && shown.hasSuffix("(\(text.utf8.count) bytes)"))
        }
    }

    // MARK: End to end

    @Test func aBlobOverInt32MaxIsTooBigAndTheDatabaseGoesOn() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("blob.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)")
        let huge = Data(count: Self.overLimit)
        await #expect(throws: SqlCipherError.self) { try await db.execute("INSERT INTO t(b) VALUES (?)", huge) }
        do {
            try await db.execute("INSERT INTO t(b) VALUES (?)", huge)
        } catch {
            #expect(Self.isTooBig(error), "\(error)")
            #expect("\(error)".contains("INSERT INTO t(b) VALUES (?)"))
        }
        // Below Int32.max but above SQLite's own limit (1,000,000,000 bytes): the same error, from SQLite.
        do {
            try await db.execute("INSERT INTO t(b) VALUES (?)", Data(count: 1_000_000_001))
            Issue.record("a blob over SQLite's limit was stored")
        } catch {
            #expect(Self.isTooBig(error), "\(error)")
        }
        // The same statement still works, from the cache, with a normal value.
        try await db.execute("INSERT INTO t(b) VALUES (?)", Data([1, 2, 3]))
        #expect(try await db.query("SELECT b FROM t")[0].get(0, as: Data.self) == Data([1, 2, 3]))
        #expect(try await countRows(db) == 1)
    }

    @Test func textAndSQLOverInt32MaxAreTooBig() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("text.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT)")
        let huge = Self.spaces(Self.overLimit)

        // As a bound value.
        do {
            try await db.execute("INSERT INTO t(s) VALUES (?)", huge)
            Issue.record("2 GiB of text was bound")
        } catch {
            #expect(Self.isTooBig(error), "\(error)")
        }
        // As the SQL text itself (spaces are valid SQL text: SQLite would see an empty statement).
        do {
            try await db.execute(huge)
            Issue.record("2 GiB of SQL was prepared")
        } catch {
            #expect(Self.isTooBig(error), "\(error)")
            #expect("\(error)".utf8.count < 2000, "the error must not carry the whole text")
        }
        do {
            _ = try await db.query(huge)
            Issue.record("2 GiB of SQL was prepared")
        } catch {
            #expect(Self.isTooBig(error), "\(error)")
        }
        // As a passphrase.
        do {
            _ = try Database(path: dir.path("key.db"), key: huge)
            Issue.record("a 2 GiB passphrase was used")
        } catch {
            #expect(Self.isTooBig(error), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("key.db")))
        try await db.execute("INSERT INTO t(s) VALUES (?)", "fine")
        #expect(try await countRows(db) == 1)
    }

    @Test func aPassphraseOrNewKeyOverInt32MaxIsTooBig() async throws {
        let dir = TemporaryDirectory()
        let huge = Data(count: Self.overLimit)
        do {
            _ = try Database(path: dir.path("a.db"), key: .passphrase(huge))
            Issue.record("a 2 GiB passphrase was used")
        } catch {
            #expect(Self.isTooBig(error), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("a.db")))

        let db = try Database(path: dir.path("b.db"), key: "old", cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        do {
            try await db.rekey(.passphrase(huge))
            Issue.record("a 2 GiB passphrase was used")
        } catch {
            #expect(Self.isTooBig(error), "\(error)")
        }
        // Nothing happened: the database is open and still has its old key.
        try await db.execute("INSERT INTO t VALUES (1)")
        await db.close()
        let again = try Database(path: dir.path("b.db"), key: "old", cipher: fastCipher)
        #expect(try await countRows(again, table: "t") == 1)
    }

    @Test func anEntityWithAHugeBlobIsTooBig() async throws {
        struct Attachment: Entity {
            static let tableName = TableName("attachments")
            static let primaryKey: WritableKeyPath<Attachment, Int?> & Sendable = \.id
            var id: Int?
            var body: Data
        }
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("e.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE attachments(id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        do {
            _ = try await db.save(Attachment(id: nil, body: Data(count: Self.overLimit)))
            Issue.record("a 2 GiB blob was saved")
        } catch {
            #expect(Self.isTooBig(error), "\(error)")
        }
        #expect(try await db.count(Attachment.self) == 0)
        _ = try await db.save(Attachment(id: nil, body: Data([7])))
        #expect(try await db.count(Attachment.self) == 1)
    }
}
