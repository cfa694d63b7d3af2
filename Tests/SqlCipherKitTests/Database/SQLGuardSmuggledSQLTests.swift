import Foundation
import SqlCipherKit
import Testing

/// Refused SQL smuggled past the guards: through temp schemas, extensions, wrapped
/// sqlcipher_export, column defaults, triggers, migrations, live requests, scripts, attaching the
/// own file, writable_schema.
@Suite("Raw SQL guards: refused SQL smuggled in")
struct SQLGuardSmuggledSQLTests: OneRowDatabaseFixture {
    /// Held: temp_store and temp_store_directory through every schema prefix.
    @Test func tempStoreThroughSchemaPrefixes() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        for sql in ["PRAGMA main.temp_store = 1", "PRAGMA temp.temp_store = FILE", "PRAGMA \"temp\".temp_store = 0",
                    "PRAGMA temp.temp_store_directory = '/tmp'", "PRAGMA main.temp_store_directory = ''",
                    "PRAGMA temp_store = 'file'", "PRAGMA temp_store = -1", "PRAGMA temp_store(DEFAULT)",
                    "PRAGMA temp_store = 3"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") { _ = try await db.execute(sql) }
        }
        #expect(try await db.query("PRAGMA temp_store")[0].get(0, as: Int.self) == 2)
        // SQLite 3.15.2 (under 3.4.1) has no table-valued pragma functions.
        if isSQLCipher4() {
            #expect(try await db.query("SELECT * FROM pragma_temp_store")[0].get(0, as: Int.self) == 2)
        }
    }

    /// Held: extensions cannot be loaded from SQL.
    @Test func loadExtensionFromSQLFails() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        for sql in ["SELECT load_extension('/usr/lib/x86_64-linux-gnu/libsqlite3.so.0')",
                    "SELECT load_extension('libc.so.6', 'puts')",
                    "WITH e(r) AS (SELECT load_extension('libm.so.6')) SELECT r FROM e"] {
            await #expect(throws: (any Error).self, "\(sql)") { _ = try await db.query(sql) }
        }
        #expect(try await values(db) == [1])
    }

    /// Held: sqlcipher_export wrapped in a CTE, a subquery, another case, a DEFAULT expression,
    /// between two encrypted files.
    @Test func wrappedSqlcipherExport() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("ATTACH '\(directory.path("b.db"))' AS b KEY 'other'")
        for sql in ["WITH x(r) AS (SELECT sqlcipher_export('b')) SELECT r FROM x",
                    "SELECT (SELECT SQLCIPHER_EXPORT('b'))", "SELECT SqlCipher_Export('b', 'main')",
                    "SELECT coalesce(NULL, sqlcipher_export('b'))",
                    "SELECT * FROM t WHERE x = 1 OR sqlcipher_export('b') IS NULL"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") { _ = try await db.query(sql) }
        }
        #expect(try await db.query("SELECT count(*) FROM b.sqlite_master")[0].get(0, as: Int.self) == 0)
        // Generated columns and CHECK constraints need deterministic functions: SQLite refuses.
        _ = try? await db.execute("CREATE TABLE chk(a CHECK (sqlcipher_export('b') IS NULL OR 1))")
        _ = try? await db.execute("INSERT INTO chk VALUES (1)")
        #expect(try await db.query("SELECT count(*) FROM b.sqlite_master")[0].get(0, as: Int.self) == 0)
    }

    /// DEFECT: a column DEFAULT expression calls `sqlcipher_export` when an INSERT omits the
    /// column. SQLite never resolves a DEFAULT through the authorizer (neither at CREATE TABLE
    /// nor when the INSERT is compiled), so the SQLITE_FUNCTION rule never sees it: the function
    /// runs from raw SQL and copies the whole database into the attached file.
    @Test func sqlcipherExportInAColumnDefaultIsRefused() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("ATTACH '\(directory.path("b.db"))' AS b KEY 'other'")
        _ = try? await db.execute("CREATE TABLE dflt(a, b DEFAULT (sqlcipher_export('b')))")
        await #expect(throws: SqlCipherError.self) { _ = try await db.execute("INSERT INTO dflt(a) VALUES (1)") }
        let copied = try await db.query("SELECT name FROM b.sqlite_master").compactMap { $0.get(0, as: String.self) }
        #expect(copied.isEmpty, "sqlcipher_export ran from raw SQL and copied \(copied) into b")
    }

    /// Held: a user trigger on the package's own `_migrations` table fires inside `migrate`; its
    /// refused function must stay refused there (the package writes that table itself).
    @Test func triggerOnTheMigrationsTableCannotRunRefusedFunctions() async throws {
        struct First: Migration {
            let id = "first"
            func up(_ ctx: MigrationContext) throws { _ = try ctx.execute("CREATE TABLE m1(x)") }
        }
        struct Second: Migration {
            let id = "second"
            func up(_ ctx: MigrationContext) throws { _ = try ctx.execute("CREATE TABLE m2(x)") }
        }
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.migrate([First()])
        try await db.execute("ATTACH '\(directory.path("b.db"))' AS b KEY 'other'")
        try await db.execute(
            "CREATE TRIGGER tm AFTER INSERT ON _migrations BEGIN SELECT sqlcipher_export('b'); END")
        await #expect(throws: SqlCipherError.self) { try await db.migrate([First(), Second()]) }
        #expect(try await db.query("SELECT count(*) FROM b.sqlite_master")[0].get(0, as: Int.self) == 0)
    }

    /// Held: `ON DELETE SET DEFAULT` evaluates the child column's DEFAULT when a parent row is
    /// deleted; SQLite codes that action as a trigger, which is resolved through the authorizer,
    /// so the DELETE is refused and `sqlcipher_export` does not run.
    @Test func sqlcipherExportThroughOnDeleteSetDefaultIsRefused() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("PRAGMA foreign_keys = ON")
        try await db.execute("ATTACH '\(directory.path("b.db"))' AS b KEY 'other'")
        try await db.execute("CREATE TABLE parent(id INTEGER PRIMARY KEY)")
        _ = try? await db.execute("""
            CREATE TABLE child(id INTEGER PRIMARY KEY, p INTEGER DEFAULT (sqlcipher_export('b')) \
            REFERENCES parent(id) ON DELETE SET DEFAULT)
            """)
        try await db.execute("INSERT INTO parent VALUES (1)")
        _ = try? await db.execute("INSERT INTO child(id, p) VALUES (1, 1)")
        _ = try? await db.execute("DELETE FROM parent WHERE id = 1")
        let copied = try await db.query("SELECT name FROM b.sqlite_master").compactMap { $0.get(0, as: String.self) }
        #expect(copied.isEmpty, "sqlcipher_export ran from a DELETE and copied \(copied) into b")
    }

    /// DEFECT, same class as `impossibleCalendarTextIsNotADate`, through an entity: a stored
    /// '2024-02-30' decodes as 1 March instead of failing.
    struct Event: Entity {
        static let tableName = TableName("events")
        static let primaryKey: WritableKeyPath<Event, Int?> & Sendable = \.id
        var id: Int?
        var at: Date
    }

    @Test func impossibleDateInAnEntityColumnFailsToDecode() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("CREATE TABLE events(id INTEGER PRIMARY KEY, at TEXT)")
        try await db.execute("INSERT INTO events VALUES (1, '2024-02-30 10:00:00')")
        let fetched = try? await db.fetch(Event.self)
        #expect(fetched == nil, "decoded as \(String(describing: fetched?.first?.at))")
    }

    /// Held: `PRAGMA key` (and rekey) from a migration's SQL and from a live request's closure.
    @Test func keyPragmaFromAMigrationAndALiveRequest() async throws {
        struct Keyed: Migration {
            let sql: String
            var id: String { "keyed-\(sql)" }
            func up(_ ctx: MigrationContext) throws { _ = try ctx.execute(sql) }
        }
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        for sql in ["PRAGMA key = 'B'", "PRAGMA main.rekey = 'B'", "PRAGMA hexkey = '0011'",
                    "INSERT INTO t VALUES (5); PRAGMA key = 'B'"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") { try await db.migrate([Keyed(sql: sql)]) }
            let request = LiveRequest(placeholder: 0) { conn in try conn.execute(sql) }
            await #expect(throws: (any Error).self, "\(sql)") {
                for try await _ in db.values(of: request) { break }
            }
        }
        try await db.execute("INSERT INTO t VALUES (2)")
        await db.close()
        let again = try Database(path: directory.path("a.db"), rawKey: rawKey())
        #expect(try await values(again) == [1, 2])
    }

    /// A refused pragma in the middle of a multi-statement script: the statements before it stay
    /// applied (documented: "statements before a failing one stay applied"), none after it runs,
    /// and nothing of the pragma took effect.
    @Test func refusedPragmaInsideAScript() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        await #expect(throws: SqlCipherError.self) {
            _ = try await db.execute("INSERT INTO t VALUES (5); PRAGMA cipher_use_hmac = OFF; INSERT INTO t VALUES (6)")
        }
        #expect(try await values(db) == [1, 5])
        await #expect(throws: SqlCipherError.self) {
            _ = try await db.execute("INSERT INTO t VALUES (7); PRAGMA temp_store = FILE; INSERT INTO t VALUES (8)")
        }
        #expect(try await values(db) == [1, 5, 7])
        #expect(try await db.query("PRAGMA temp_store")[0].get(0, as: Int.self) == 2)
        await db.close()
        let again = try Database(path: directory.path("a.db"), rawKey: rawKey())
        #expect(try await values(again) == [1, 5, 7])
        #expect(try await again.verifyIntegrity().isOK)
    }

    /// Held: attaching the database's own file under another name, with its key or with another
    /// key, then writing through both names, cannot leave two keys or a broken file.
    @Test func attachingTheOwnFileUnderAnotherName() async throws {
        for mode in [JournalMode.wal, .rollback] {
            let directory = TemporaryDirectory()
            let db = try await database(directory, journalMode: mode)
            let own = directory.path("a.db")
            try await db.execute("ATTACH '\(own)' AS twin")
            _ = try? await db.transaction { conn in
                _ = try conn.execute("INSERT INTO main.t VALUES (2)")
                _ = try conn.execute("INSERT INTO twin.t VALUES (3)")
            }
            _ = try? await db.execute("INSERT INTO twin.t VALUES (4)")
            try await db.execute("DETACH twin")
            _ = try? await db.execute("ATTACH '\(own)' AS other KEY 'B'")
            _ = try? await db.execute("CREATE TABLE other.planted(x)")
            _ = try? await db.execute("INSERT INTO other.t VALUES (99)")
            _ = try? await db.execute("DETACH other")
            await #expect(throws: (any Error).self) { _ = try await db.execute("DETACH main") }
            await #expect(throws: (any Error).self) { _ = try await db.execute("DETACH temp") }
            try await db.execute("INSERT INTO t VALUES (10)")
            await db.close()
            let again = try Database(path: own, rawKey: rawKey(), journalMode: mode)
            let found = try await values(again)
            #expect(found.contains(1) && found.contains(10) && !found.contains(99), "\(mode): \(found)")
            #expect(try await again.verifyIntegrity().isOK, "\(mode)")
            await again.close()
            #expect(throws: (any Error).self) { _ = try Database(path: own, key: "B", journalMode: mode) }
        }
    }

    /// FINDING (data loss, not encryption): `PRAGMA writable_schema` lets raw SQL rewrite `sqlite_master`: one UPDATE makes the file
    /// unopenable (every open fails with "malformed database schema"), losing every row.
    @Test func writableSchemaCannotMakeTheFileUnopenable() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        _ = try? await db.execute("PRAGMA writable_schema = ON")
        _ = try? await db.execute("UPDATE sqlite_master SET sql = 'CREATE TABLE t(x INTEGER' WHERE name = 't'")
        _ = try? await db.execute("PRAGMA writable_schema = OFF")
        await db.close()
        let again = try Database(path: directory.path("a.db"), rawKey: rawKey())
        #expect(try await values(again) == [1])
    }
}
