import Foundation
import Testing
@testable import SqlCipherKit

/// `execute`/`query`: arguments, several statements, errors, and the statement cache.
@Suite struct RawSQLTests {
    func memory() throws -> Database { try Database(path: ":memory:", rawKey: rawKey()) }

    @Test func executeReturnsChangedRowsAndQueryReturnsRows() async throws {
        let db = try memory()
        #expect(try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)") == 0)
        #expect(try await db.execute("INSERT INTO t(name) VALUES (?), (?), (?)", "a", "b", "c") == 3)
        #expect(try await db.execute("UPDATE t SET name = upper(name) WHERE id > ?", 1) == 2)
        #expect(try await db.execute("SELECT * FROM t") == 0)
        let rows = try await db.query("SELECT name FROM t WHERE id >= ? ORDER BY id", 2)
        #expect(rows.map { $0.get("name", as: String.self) } == ["B", "C"])
        #expect(try await db.query("SELECT * FROM t WHERE id = ?", 99).isEmpty)
        // The array forms.
        #expect(try await db.execute("DELETE FROM t WHERE id IN (?, ?)", arguments: [1, 2]) == 2)
        #expect(try await db.query("SELECT count(*) FROM t WHERE name = ?", arguments: ["C"])[0].get(0, as: Int.self) == 1)
    }

    /// A query of several statements is refused, and the message says why without claiming that
    /// arguments were given (it blamed binding, with none passed).
    @Test func aQueryOfSeveralStatementsSaysAQueryRunsOne() async throws {
        let db = try memory()
        do {
            _ = try await db.query("SELECT 1; SELECT 2")
            Issue.record("a query of two statements ran")
        } catch let error as SqlCipherError {
            guard case .multipleStatements(let sql) = error else { throw error }
            #expect(sql == "SELECT 1; SELECT 2")
            #expect(error.description.contains("a query returns the rows of one statement"))
            #expect(error.description.contains("one by one"))
        }
    }

    /// A description shows at most a thousand characters of SQL, whatever the statement: an error
    /// about a statement of 40,000 parameters was a line of several hundred kilobytes. The error's
    /// `sql` keeps the whole (redacted) text.
    @Test func aDescriptionCutsLongSQL() async throws {
        let db = try memory()
        try await db.execute("CREATE TABLE t(x)")
        let sql = "SELECT x FROM t WHERE x IN (" + Array(repeating: "?", count: 40_000).joined(separator: ", ") + ")"
        do {
            _ = try await db.query(sql, 1)
            Issue.record("40,000 parameters with one argument ran")
        } catch let error as SqlCipherError {
            #expect(error.description.count < 2_000, "\(error.description.count) characters")
            #expect(error.description.contains("more characters)"))
            if case .argumentCountMismatch(_, _, let kept) = error {
                #expect(kept.count == sql.count)
            } else if case .sqlite(_, _, _, let kept?) = error {
                #expect(kept.count > SqlCipherError.descriptionSQLLimit)
            }
        }
        let short = SqlCipherError.emptyStatement(sql: String(repeating: "-", count: 1_000))
        #expect(!short.description.contains("more characters"))
    }

    @Test func emptyResultStillKnowsItsColumns() async throws {
        let db = try memory()
        try await db.execute("CREATE TABLE t(a, b)")
        #expect(try await db.query("SELECT a, b FROM t").isEmpty)
    }

    @Test func wrongArgumentCountIsAnError() async throws {
        let db = try memory()
        try await db.execute("CREATE TABLE t(a, b)")
        await #expect(throws: SqlCipherError.argumentCountMismatch(expected: 2, given: 1, sql: "INSERT INTO t VALUES (?, ?)")) {
            try await db.execute("INSERT INTO t VALUES (?, ?)", 1)
        }
        await #expect(throws: SqlCipherError.argumentCountMismatch(expected: 2, given: 3, sql: "INSERT INTO t VALUES (?, ?)")) {
            try await db.execute("INSERT INTO t VALUES (?, ?)", 1, 2, 3)
        }
        await #expect(throws: SqlCipherError.argumentCountMismatch(expected: 1, given: 0, sql: "SELECT * FROM t WHERE a = ?")) {
            try await db.query("SELECT * FROM t WHERE a = ?")
        }
        await #expect(throws: SqlCipherError.argumentCountMismatch(expected: 0, given: 1, sql: "SELECT 1")) {
            try await db.query("SELECT 1", 5)
        }
        // Nothing was inserted, and the cached statement is usable again afterwards.
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 0)
        try await db.execute("INSERT INTO t VALUES (?, ?)", 1, 2)
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        #expect(SqlCipherError.argumentCountMismatch(expected: 2, given: 1, sql: "x").description.contains("one argument per"))
    }

    @Test func severalStatementsRunWhenThereAreNoArguments() async throws {
        let db = try memory()
        let changed = try await db.execute("""
            CREATE TABLE t(x);
            INSERT INTO t VALUES (1);
            INSERT INTO t VALUES (2), (3);
            -- a comment at the end
            """)
        #expect(changed == 3)
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 3)
        // Trailing semicolons and comments are not an extra statement.
        #expect(try await db.query("SELECT count(*) FROM t; -- done ;")[0].get(0, as: Int.self) == 3)
    }

    @Test func severalStatementsWithArgumentsAreRefused() async throws {
        let db = try memory()
        try await db.execute("CREATE TABLE t(x)")
        let sql = "INSERT INTO t VALUES (?); INSERT INTO t VALUES (?)"
        await #expect(throws: SqlCipherError.multipleStatements(sql: sql)) { try await db.execute(sql, 1, 2) }
        await #expect(throws: SqlCipherError.multipleStatements(sql: "SELECT 1; SELECT 2")) {
            try await db.query("SELECT 1; SELECT 2")
        }
        // A parameter in a script without arguments is a count error, naming the statement.
        await #expect(throws: SqlCipherError.argumentCountMismatch(expected: 1, given: 0, sql: "INSERT INTO t VALUES (?);")) {
            try await db.execute("INSERT INTO t VALUES (1); INSERT INTO t VALUES (?);")
        }
        // Statements before the failing one stay applied, as with sqlite3_exec.
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
    }

    @Test func emptySQLAndSyntaxErrors() async throws {
        let db = try memory()
        await #expect(throws: SqlCipherError.emptyStatement(sql: "  -- nothing\n")) { try await db.execute("  -- nothing\n") }
        await #expect {
            try await db.execute("SELEC 1")
        } throws: { error in
            guard case SqlCipherError.sqlite(let code, _, let message, let sql) = error else { return false }
            return code == 1 && message.contains("syntax error") && sql == "SELEC 1"
        }
        await #expect {
            try await db.query("SELECT * FROM missing")
        } throws: { error in
            guard case SqlCipherError.sqlite(_, _, let message, _) = error else { return false }
            return message.contains("no such table")
        }
    }

    @Test func constraintErrorsCarryExtendedCodes() async throws {
        let db = try memory()
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
        try await db.execute("INSERT INTO t(name) VALUES ('a')")
        await #expect {
            try await db.execute("INSERT INTO t(name) VALUES ('a')")
        } throws: { error in
            guard case SqlCipherError.sqlite(let code, let extended, _, _) = error else { return false }
            return code == 19 && extended == 2067   // SQLITE_CONSTRAINT_UNIQUE
        }
        await #expect {
            try await db.execute("INSERT INTO t(name) VALUES (NULL)")
        } throws: { error in
            guard case SqlCipherError.sqlite(let code, let extended, _, _) = error else { return false }
            return code == 19 && extended == 1299   // SQLITE_CONSTRAINT_NOTNULL
        }
    }

    @Test func cachedSelectStarSeesANewColumn() async throws {
        let db = try memory()
        try await db.execute("CREATE TABLE t(a)")
        try await db.execute("INSERT INTO t VALUES (1)")
        #expect(try await db.query("SELECT * FROM t")[0].columnNames == ["a"])
        try await db.execute("ALTER TABLE t ADD COLUMN b DEFAULT 'new'")
        let row = try await db.query("SELECT * FROM t")[0]
        #expect(row.columnNames == ["a", "b"])
        #expect(row.get("b", as: String.self) == "new")
        // And with no rows at all.
        try await db.execute("DELETE FROM t")
        try await db.execute("ALTER TABLE t ADD COLUMN c")
        try await db.execute("INSERT INTO t VALUES (1, 2, 3)")
        #expect(try await db.query("SELECT * FROM t")[0].columnNames == ["a", "b", "c"])
    }

    @Test func cachedStatementSurvivesDropAndRecreate() async throws {
        let db = try memory()
        try await db.execute("CREATE TABLE t(a INTEGER)")
        try await db.execute("INSERT INTO t VALUES (?)", 1)
        try await db.execute("DROP TABLE t")
        await #expect(throws: SqlCipherError.self) { try await db.execute("INSERT INTO t VALUES (?)", 2) }
        try await db.execute("CREATE TABLE t(z TEXT, a INTEGER)")
        try await db.execute("INSERT INTO t(a) VALUES (?)", 3)
        #expect(try await db.query("SELECT * FROM t")[0].columnNames == ["z", "a"])
    }

    @Test func statementCacheIsBoundedAndLeastRecentlyUsedGoesFirst() throws {
        _ = try loadedLibrary()   // a bare connection needs the library loaded first
        let connection = try SQLiteConnection(path: ":memory:")
        defer { connection.close() }
        #expect(connection.cache.capacity == 64)
        for index in 0..<100 {
            _ = try connection.query("SELECT \(index)")
        }
        #expect(connection.cache.count == 64)
        // 36..99 are cached; touch 36 so that 37 is now the oldest.
        let hits = connection.cache.hits
        _ = try connection.query("SELECT 36")
        #expect(connection.cache.hits == hits + 1)
        _ = try connection.query("SELECT 1000")
        #expect(connection.cache.count == 64)
        let misses = connection.cache.misses
        _ = try connection.query("SELECT 36")
        #expect(connection.cache.misses == misses)       // still cached
        _ = try connection.query("SELECT 37")
        #expect(connection.cache.misses == misses + 1)   // was evicted
    }

    /// Text that carries a key is prepared for each run and finalized after it, never cached: the
    /// cache would keep the key (and SQLite its copy of the text) for the connection's life, where
    /// `dump(db)` showed it. Text without a key is cached as before.
    @Test func statementsWhoseTextCarriesAKeyAreNotCached() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("db.db"), rawKey: rawKey(), cipher: fastCipher)
        let attach = "ATTACH '\(dir.path("other.db"))' AS other KEY 'attach secret'"
        let attachURI = "ATTACH 'file:\(dir.path("uri.db"))?key=uri%20secret' AS uri"
        let bound = "ATTACH ? AS bound KEY ?"
        try await db.execute(attach)
        try await db.execute("DETACH other")
        _ = try? await db.execute(attachURI)
        try await db.execute(bound, dir.path("bound.db"), "bound secret")
        try await db.execute("DETACH bound")
        let cached = try await db.cachedTexts([attach, attachURI, bound, "DETACH other"])
        // Whatever follows KEY counts as key material, a placeholder included (the redaction masks
        // it): an ATTACH with a KEY clause is never cached, which costs one prepare per ATTACH.
        #expect(cached == [false, false, false, true], "\(cached)")
        await db.close()
    }

    @Test func canonicallyEquivalentSQLIsNotTheSameStatement() async throws {
        // Swift's == says these texts are equal (canonical equivalence); SQLite compares bytes and
        // sees two tables. The cache must not hand one table's statement to the other's SQL.
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(precomposed == decomposed)
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE \"\(precomposed)\"(x); CREATE TABLE \"\(decomposed)\"(x)")
        for _ in 0..<2 {   // the second round finds both statements in the cache
            try await db.execute("INSERT INTO \"\(precomposed)\" VALUES (?)", 1)
            try await db.execute("INSERT INTO \"\(decomposed)\" VALUES (?)", 2)
        }
        let first = try await db.query("SELECT group_concat(x) AS xs FROM \"\(precomposed)\"")[0]
        let second = try await db.query("SELECT group_concat(x) AS xs FROM \"\(decomposed)\"")[0]
        #expect(first.get("xs", as: String.self) == "1,1")
        #expect(second.get("xs", as: String.self) == "2,2")
    }

    @Test func statementCacheUnitLRU() throws {
        _ = try loadedLibrary()   // a bare connection needs the library loaded first
        let connection = try SQLiteConnection(path: ":memory:")
        defer { connection.close() }
        var cache = StatementCache(capacity: 2)
        let a = try connection.uncachedStatement("SELECT 'a'")
        let b = try connection.uncachedStatement("SELECT 'b'")
        let c = try connection.uncachedStatement("SELECT 'c'")
        cache.insert(a)
        cache.insert(b)
        #expect(cache.statement(for: "SELECT 'a'") === a)   // a is now newer than b
        cache.insert(c)
        #expect(cache.count == 2)
        #expect(cache.statement(for: "SELECT 'b'") == nil)
        #expect(cache.statement(for: "SELECT 'a'") === a)
        #expect(cache.statement(for: "SELECT 'c'") === c)
    }

    @Test func scriptsAreNotCached() throws {
        _ = try loadedLibrary()   // a bare connection needs the library loaded first
        let connection = try SQLiteConnection(path: ":memory:")
        defer { connection.close() }
        try connection.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        #expect(connection.cache.count == 0)
        try connection.execute("INSERT INTO t VALUES (?)", [.integer(2)])
        #expect(connection.cache.count == 1)
    }
}

extension Database {
    /// Whether each text has a statement in the cache.
    fileprivate func cachedTexts(_ texts: [String]) throws -> [Bool] {
        let connection = try liveConnection()
        return texts.map { connection.cache.statement(for: $0) != nil }
    }
}
