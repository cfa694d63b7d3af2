import Foundation
import SqlCipherKit
import Testing

/// The extension points under hostile use (tracing, custom functions, typed prepared statements,
/// row coding), through the public API only: every guard still applies.
@Suite("Extension points keep every guard")
struct ExtensionPointGuardTests {
    /// `VACUUM INTO ?` on a plaintext database, with the destination bound as an argument: the
    /// destination can be a `file:` URI whose `key=` encrypts the copy, so a tracer that asked for
    /// arguments must not receive it (the literal form is redacted already).
    @Test(.enabled(if: sqliteVersionIsAtLeast(3_027_000), "VACUUM INTO")) func aBoundVacuumIntoDestinationNeverReachesATracer() async throws {
        let directory = TemporaryDirectory()
        let db = try Database(unencryptedPath: directory.path("plain.db"))
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (1)")
        let recorder = TraceRecorder()
        try await recorder.attach(to: db, options: TraceOptions(includeArguments: true))
        let secret = "vacuum-into-passphrase-4711"
        let copy = directory.path("copy.db")
        try await db.execute("VACUUM INTO ?", "file:\(copy)?key=\(secret)")
        try await db.execute("vacuum main into ?", "file:\(copy)-2?hexkey=00ff")
        #expect(FileManager.default.fileExists(atPath: copy))
        #expect(keyLeaks(in: recorder.events, passphrases: [secret, "00ff"], rawKeys: []).isEmpty)
        #expect(recorder.userEvents.count == 2)
        #expect(recorder.userEvents.allSatisfy { $0.arguments == nil })
    }

    /// A prepared statement goes through every raw-SQL guard, in every body, on a pool reader too.
    @Test func preparedStatementsKeepEveryGuard() async throws {
        let directory = TemporaryDirectory()
        let db = try Database(path: directory.path("guards.db"), rawKey: rawKey(5))
        try await db.execute("CREATE TABLE t(x)")
        let refusedEverywhere = [
            "PRAGMA key = 'x'", "PRAGMA main.rekey = 'x'", "pragma MAIN.\"hexkey\"('00')",
            "PRAGMA cipher_page_size = 1024", "COMMIT", "BEGIN", "SAVEPOINT s",
            "SELECT sqlcipher_export('x')", "INSERT INTO t VALUES (1); DELETE FROM t",
        ]
        for sql in refusedEverywhere {
            await #expect(throws: SqlCipherError.self, "\(sql)") {
                try await db.transaction { conn in _ = try conn.prepare(sql) }
            }
        }
        await #expect(throws: SqlCipherError.readOnlyViolation(sql: "INSERT INTO t VALUES (?)")) {
            try await db.read { conn in _ = try conn.prepare("INSERT INTO t VALUES (?)") }
        }
        let pool = try DatabasePool(path: directory.path("pool.db"), rawKey: rawKey(6))
        try await pool.execute("CREATE TABLE t(x)")
        await #expect(throws: SqlCipherError.self) {
            try await pool.read { conn in try conn.prepare("INSERT INTO t VALUES (?)").execute(1) }
        }
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 0)
    }

    /// Running a prepared query while its own cursor is open, with wrong argument counts between.
    @Test func aPreparedStatementRunsReentrantlyUnderItsOwnCursor() async throws {
        let directory = TemporaryDirectory()
        let db = try Database(path: directory.path("reentrant.db"), rawKey: rawKey(7))
        try await db.execute("CREATE TABLE t(x INTEGER)")
        try await db.transaction { conn in
            for value in 1...5 { try conn.execute("INSERT INTO t VALUES (?)", value) }
        }
        let seen = try await db.read { conn in
            let select = try conn.prepare("SELECT x FROM t WHERE x >= ? ORDER BY x")
            let cursor = try select.cursor(1)
            var seen: [Int] = []
            while let row = try cursor.next() {
                seen.append(row.get(0, as: Int.self) ?? -1)
                #expect(throws: SqlCipherError.self) { try select.query(1, 2) }
                #expect(try select.query(4).count == 2)
            }
            return seen
        }
        #expect(seen == [1, 2, 3, 4, 5])
    }

    struct Strict: RowDecodable, Decodable {
        var x: Int
        init(row: Row) throws { x = try row.decode("x") }
    }

    /// NULL, a wrong type and a missing column into a non-optional property are typed errors.
    @Test func rowDecodableRefusesNullWrongTypeAndMissingColumns() async throws {
        let directory = TemporaryDirectory()
        let db = try Database(path: directory.path("decode.db"), rawKey: rawKey(8))
        for sql in ["SELECT NULL AS x", "SELECT 'text' AS x", "SELECT 1 AS y", "SELECT 1e300 AS x"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") {
                _ = try await db.read { conn in try conn.prepare(sql).fetch(Strict.self) }
            }
        }
    }

    /// Names of built-ins and of SQLCipher, in any case, are refused; a throwing aggregate undoes
    /// its statement.
    @Test func functionNamesAndThrowingAggregates() async throws {
        let directory = TemporaryDirectory()
        let db = try Database(path: directory.path("functions.db"), rawKey: rawKey(9))
        for name in ["LIKE", "glob", "Sqlcipher_Export", "sqlCIPHER", "typeof", "iif_not_really_but", "printf"] {
            let function = DatabaseFunction(name) { (value: DatabaseValue) in value }
            if name == "iif_not_really_but" {
                try await db.add(function: function)
            } else {
                await #expect(throws: SqlCipherError.self, "\(name)") { try await db.add(function: function) }
            }
        }
        #expect(try await db.query("SELECT 'abc' LIKE 'A%'")[0].get(0, as: Int.self) == 1)
        try await db.add(function: DatabaseFunction("adv_median", argumentCount: 1, aggregate: Median.self))
        try await db.execute("CREATE TABLE src(v); CREATE TABLE dst(m)")
        try await db.execute("INSERT INTO src VALUES (1), ('not a number')")
        await #expect(throws: SqlCipherError.self) {
            try await db.execute("INSERT INTO dst SELECT adv_median(v) FROM src")
        }
        #expect(try await db.query("SELECT count(*) FROM dst")[0].get(0, as: Int.self) == 0)
    }

    /// Hostile results, a removed function under a cached statement, an inconsistent collation, and
    /// a function added to a pool used on its readers.
    @Test func hostileFunctionResultsRemovalCollationAndPool() async throws {
        let directory = TemporaryDirectory()
        let db = try Database(path: directory.path("hostile.db"), rawKey: rawKey(10))
        let nan = DatabaseFunction("adv_nan") { (_: Int) in Double.nan }
        let bytes = DatabaseFunction("adv_bytes") { (_: Int) in DatabaseValue.blob(Data([0xFF, 0xFE, 0x00, 0x41])) }
        try await db.add(function: nan)
        try await db.add(function: bytes)
        let row = try await db.query("SELECT adv_nan(1), adv_bytes(1), CAST(adv_bytes(1) AS TEXT)")[0]
        #expect(row[0] == .null || row.get(0, as: Double.self)?.isNaN == true)
        #expect(row[1] == .blob(Data([0xFF, 0xFE, 0x00, 0x41])))
        _ = try await db.query("SELECT adv_nan(1)")  // cached
        try await db.remove(function: nan)
        await #expect(throws: SqlCipherError.self) { _ = try await db.query("SELECT adv_nan(1)") }
        try await db.add(collation: DatabaseCollation("adv_liar") { _, _ in .orderedAscending })
        try await db.execute("CREATE TABLE words(w TEXT)")
        try await db.execute("INSERT INTO words VALUES ('b'), ('a'), ('c'), ('a')")
        #expect(try await db.query("SELECT w FROM words ORDER BY w COLLATE adv_liar").count == 4)
        let pool = try DatabasePool(path: directory.path("pool.db"), rawKey: rawKey(11))
        try await pool.add(function: DatabaseFunction("adv_twice", deterministic: true) { (x: Int) in x * 2 })
        let doubled = try await pool.read { conn in try conn.query("SELECT adv_twice(21)")[0].get(0, as: Int.self) }
        #expect(doubled == 42)
    }
}
