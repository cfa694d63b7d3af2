import Foundation
import SqlCipherKit
import Testing

/// Typed prepared statements (issue 13 item 1): prepared once in a body, run with a parameter
/// pack; every guard of raw SQL still applies, and the statement cannot outlive its body.
@Suite struct PreparedStatementTests {
    enum Kind: String, Codable, DatabaseValueConvertible { case small, large }

    func database(_ dir: TemporaryDirectory, readOnly: Bool = false) async throws -> Database {
        let path = dir.path("prepared.db")
        if !FileManager.default.fileExists(atPath: path) {
            let db = try Database(path: path, rawKey: rawKey())
            try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, a, b, c, d, e, f, g, h, i, j)")
            await db.close()
        }
        return try Database(path: path, rawKey: rawKey(), readOnly: readOnly)
    }

    /// What SQLite stored, with the storage classes.
    func stored(_ db: Database) async throws -> [String] {
        let columns = ["id", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
        let typed = columns.map { "typeof(\($0)) || ':' || quote(\($0))" }.joined(separator: " || ' ' || ")
        return try await db.query("SELECT \(typed) FROM t ORDER BY id").map { $0.get(0, as: String.self) ?? "" }
    }

    @Test func typedArgumentsStoreWhatRawSQLStores() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let date = Date(timeIntervalSince1970: 1_700_000_000.5)
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let changes = try await db.transaction { conn in
            let insert = try conn.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            #expect(insert.parameterCount == 11)
            var changes = try insert.execute(1, Int64.min, 2.5, "text 'q'", Data([0, 255]), date, uuid, true,
                                             Int?.none, Kind.large, UInt64.max)
            changes += try insert.execute(2, Int8(-3), Float(0.5), "", Data(), Date(timeIntervalSince1970: 1e300),
                                          String?.some("x"), false, DatabaseValue.null, Kind.small, Double?.none)
            // The same values through raw SQL, for comparison.
            try conn.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", 3, Int64.min, 2.5, "text 'q'",
                             Data([0, 255]), date, uuid, true, nil, Kind.large, UInt64.max)
            try conn.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", 4, Int8(-3), Float(0.5), "",
                             Data(), Date(timeIntervalSince1970: 1e300), "x", false, DatabaseValue.null, Kind.small, nil)
            return changes
        }
        #expect(changes == 2)
        let rows = try await stored(db)
        #expect(rows.count == 4)
        func withoutID(_ row: String) -> String { String(row.drop { $0 != " " }) }
        #expect(withoutID(rows[0]) == withoutID(rows[2]))
        #expect(withoutID(rows[1]) == withoutID(rows[3]))
        #expect(rows[0].hasPrefix("integer:1 integer:-9223372036854775808 real:2.5 text:'text ''q''' blob:X'00FF'"))
    }

    @Test func queriesFetchesAndCursorsWithTypedArguments() async throws {
        struct Item: Decodable, Equatable, Sendable {
            var id: Int
            var a: String
        }
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        try await db.transaction { conn in
            let insert = try conn.prepare("INSERT INTO t(id, a) VALUES (?, ?)")
            for id in 1...50 { try insert.execute(id, "item \(id)") }
        }
        let (rows, items, cursored, counted) = try await db.read { conn in
            let range = try conn.prepare("SELECT id, a FROM t WHERE id BETWEEN ? AND ? ORDER BY id")
            let rows = try range.query(3, 5)
            let items = try range.fetch(Item.self, 10, 12)
            var cursored: [Int] = []
            let cursor = try range.cursor(20, 25)
            while let row = try cursor.next() { cursored.append(row.get("id", as: Int.self) ?? -1) }
            let count = try conn.prepare("SELECT count(*) FROM t").query()[0].get(0, as: Int.self)
            return (rows.map { $0.get(1, as: String.self) ?? "" }, items, cursored, count)
        }
        #expect(rows == ["item 3", "item 4", "item 5"])
        #expect(items == [Item(id: 10, a: "item 10"), Item(id: 11, a: "item 11"), Item(id: 12, a: "item 12")])
        #expect(cursored == Array(20...25))
        #expect(counted == 50)

        // An entity cursor, and the array forms.
        let (decoded, arrayRows, arrayChanges) = try await db.transaction { conn in
            let range = try conn.prepare("SELECT id, a FROM t WHERE id <= ? ORDER BY id")
            var decoded: [Item] = []
            try range.cursor(Item.self, 2).forEach { decoded.append($0) }
            let update = try conn.prepare("UPDATE t SET b = ? WHERE id <= ?")
            let changes = try update.execute(arguments: ["x", 7])
            return (decoded, try range.query(arguments: [3]).count, changes)
        }
        #expect(decoded == [Item(id: 1, a: "item 1"), Item(id: 2, a: "item 2")])
        #expect(arrayRows == 3)
        #expect(arrayChanges == 7)
    }

    @Test func argumentCountsMustMatch() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        try await db.transaction { conn in
            let insert = try conn.prepare("INSERT INTO t(id, a) VALUES (?, ?)")
            let sql = "INSERT INTO t(id, a) VALUES (?, ?)"
            #expect(throws: SqlCipherError.argumentCountMismatch(expected: 2, given: 1, sql: sql)) { try insert.execute(1) }
            #expect(throws: SqlCipherError.argumentCountMismatch(expected: 2, given: 3, sql: sql)) {
                try insert.execute(1, "a", "b")
            }
            #expect(throws: SqlCipherError.argumentCountMismatch(expected: 2, given: 0, sql: sql)) { try insert.execute() }
            #expect(throws: SqlCipherError.argumentCountMismatch(expected: 2, given: 1, sql: sql)) {
                try insert.execute(arguments: [1])
            }
            #expect(throws: SqlCipherError.argumentCountMismatch(expected: 2, given: 3, sql: sql)) { _ = try insert.query(1, 2, 3) }
            // Nothing ran: the statement still works.
            try insert.execute(1, "a")
        }
        #expect(try await db.query("SELECT id, a FROM t").map { $0.values.map { $0 } } == [[.integer(1), .text("a")]])
    }

    @Test func aStatementOutlivingItsBodyThrows() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        // A savepoint body ends while the enclosing transaction goes on; a statement prepared in
        // it and moved out is unusable, whatever is called.
        let errors = try await db.transaction { conn in
            var kept: PreparedStatement?
            var cursorKept: Cursor<Row>?
            try conn.savepoint { inner in
                let statement = try inner.prepare("INSERT INTO t(id) VALUES (?)")
                try statement.execute(1)
                cursorKept = try inner.prepare("SELECT id FROM t").cursor()
                kept = consume statement
            }
            var errors: [String] = []
            guard let statement = kept.take() else { return ["nothing kept"] }
            do { try statement.execute(2) } catch { errors.append("\(error)") }
            do { _ = try statement.query(2) } catch { errors.append("\(error)") }
            do { _ = try statement.cursor(2) } catch { errors.append("\(error)") }
            do { _ = try statement.execute(arguments: [2]) } catch { errors.append("\(error)") }
            do { _ = try cursorKept?.next() } catch { errors.append("\(error)") }
            // The enclosing body's own statements still work.
            try conn.prepare("INSERT INTO t(id) VALUES (?)").execute(3)
            return errors
        }
        #expect(errors == Array(repeating: "\(SqlCipherError.connectionNotUsable)", count: 5))
        #expect(try await db.query("SELECT id FROM t ORDER BY id").map { $0.get(0, as: Int.self) } == [1, 3])
        #expect(SqlCipherError.connectionNotUsable.description.contains("prepared statement"))
    }

    @Test func writesAreRefusedInReadBodiesAndOnReadOnlyDatabases() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        for sql in ["INSERT INTO t(id) VALUES (?)", "UPDATE t SET a = ?", "DELETE FROM t WHERE id = ?",
                    "CREATE TABLE u(x)", "DROP TABLE t", "  insert into t(id) values (?)"] {
            await #expect(throws: SqlCipherError.readOnlyViolation(sql: sql)) {
                try await db.read { conn in _ = try conn.prepare(sql) }
            }
        }
        // A read inside a read body works.
        #expect(try await db.read { conn in try conn.prepare("SELECT count(*) FROM t").query()[0][0] } == .integer(0))
        await db.close()

        let readOnly = try await database(dir, readOnly: true)
        let error = try await #require(throws: SqlCipherError.self) {
            try await readOnly.read { conn in _ = try conn.prepare("INSERT INTO t(id) VALUES (?)") }
        }
        #expect("\(error)".contains("read") , "\(error)")
        await #expect(throws: SqlCipherError.self) {
            try await readOnly.transaction { conn in try conn.prepare("INSERT INTO t(id) VALUES (?)").execute(1) }
        }
        #expect(try await readOnly.query("SELECT count(*) FROM t")[0][0] == .integer(0))
    }

    /// Every refusal of raw SQL happens at prepare, with the error `execute` gives for the same text.
    @Test func theSQLGuardsRefuseAtPrepare() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        var statements = [
            "PRAGMA key = 'other'", "pragma KEY='other'", "PRAGMA main.key = 'other'", "  /* c */ PRAGMA rekey = 'x'",
            "PRAGMA hexkey = '0102'", "PRAGMA cipher_use_hmac = OFF", "PRAGMA kdf_iter = 1000",
            "PRAGMA temp_store = FILE", "PRAGMA temp_store_directory = '/tmp'", "PRAGMA writable_schema = ON",
            "SELECT sqlcipher_export('x')", "SELECT SQLCipher_Export(?)",
            "COMMIT", "BEGIN", "ROLLBACK", "SAVEPOINT s", "RELEASE s", "END",
            "CREATE TABLE x(a DEFAULT (sqlcipher_export('y')))", "SELECT \0 1",
        ]
        if isSQLCipher4() { statements += ["SELECT * FROM pragma_cipher_use_hmac", "PRAGMA cipher_compatibility = 3"] }
        for sql in statements {
            let viaExecute = try await #require(throws: SqlCipherError.self, "\(sql)") {
                try await db.transaction { conn in try conn.execute(sql) }
            }
            let viaPrepare = try await #require(throws: SqlCipherError.self, "\(sql)") {
                try await db.transaction { conn in _ = try conn.prepare(sql) }
            }
            #expect(viaPrepare == viaExecute, "\(sql)")
        }
        // One statement, no more and no less (`execute` runs several as a script).
        for sql in ["SELECT 1; SELECT 2", "SELECT 1; PRAGMA key = 'x'"] {
            let error = try await #require(throws: SqlCipherError.self, "\(sql)") {
                try await db.transaction { conn in _ = try conn.prepare(sql) }
            }
            #expect(error == .multipleStatements(sql: sql) || "\(error)".contains("key"), "\(sql): \(error)")
        }
        // A trailing semicolon or comment is still one statement.
        try await db.transaction { conn in
            try conn.prepare("INSERT INTO t(id) VALUES (?);").execute(9)
            try conn.prepare("DELETE FROM t WHERE id = ? -- done").execute(9)
        }
        for sql in ["", "   -- nothing\n", " /* */ "] {
            await #expect(throws: SqlCipherError.emptyStatement(sql: sql)) {
                try await db.transaction { conn in _ = try conn.prepare(sql) }
            }
        }
        // The key still works and nothing changed.
        #expect(try await db.query("SELECT count(*) FROM t")[0][0] == .integer(0))
        await db.close()
        let reopened = try await database(dir)
        #expect(try await reopened.query("SELECT count(*) FROM t")[0][0] == .integer(0))
    }

    /// A refused ATTACH is refused when it runs (the key it attaches with is known only then), as
    /// through `execute`.
    @Test(.enabled(if: sqliteVersionIsAtLeast(3_021_000), "SQLite 3.21+")) func anAttachOfAPlaintextFileIsRefusedWhenItRuns() async throws {
        // SQLite before 3.21 (SQLCipher 3.4.1) refuses any ATTACH inside a transaction, and every
        // prepared statement runs inside a body's transaction.
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let target = dir.path("plain.db")
        let error = try await #require(throws: SqlCipherError.self) {
            try await db.execute("ATTACH DATABASE ? AS plain KEY ''", target)
        }
        let viaPrepared = try await #require(throws: SqlCipherError.self) {
            try await db.savepoint { conn in try conn.prepare("ATTACH DATABASE ? AS plain KEY ''").execute(target) }
        }
        #expect(viaPrepared == error)
        #expect(try await db.query("PRAGMA database_list").count == 1)
    }

    @Test func liveQueriesSeeWritesOfPreparedStatements() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        try await db.execute("CREATE TABLE other(x)")
        var counts = db.values(of: .query("SELECT count(*) FROM t")).makeAsyncIterator()
        var others = db.values(of: .query("SELECT count(*) FROM other")).makeAsyncIterator()
        #expect(try await counts.next()?.first?.get(0, as: Int.self) == 0)
        #expect(try await others.next()?.first?.get(0, as: Int.self) == 0)
        try await db.transaction { conn in
            let insert = try conn.prepare("INSERT INTO t(id) VALUES (?)")
            for id in 1...10 { try insert.execute(id) }
        }
        #expect(try await counts.next()?.first?.get(0, as: Int.self) == 10)
        try await db.transaction { conn in try conn.prepare("INSERT INTO other VALUES (?)").execute(1) }
        #expect(try await others.next()?.first?.get(0, as: Int.self) == 1)
        // A rolled-back body's writes are undone.
        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await db.transaction { conn in
                try conn.prepare("INSERT INTO t(id) VALUES (?)").execute(99)
                throw Stop()
            }
        }
        #expect(try await db.query("SELECT count(*) FROM t")[0][0] == .integer(10))
    }

    @Test func executingWhileItsCursorIsOpenLeavesTheCursorAlone() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let (ids, again, after) = try await db.transaction { conn in
            let insert = try conn.prepare("INSERT INTO t(id) VALUES (?)")
            for id in 1...5 { try insert.execute(id) }
            let select = try conn.prepare("SELECT id FROM t WHERE id >= ? ORDER BY id")
            let cursor = try select.cursor(1)
            var ids: [Int] = []
            var again: [[Int]] = []
            while let row = try cursor.next() {
                ids.append(row.get(0, as: Int.self)!)
                // The same prepared statement, run while its cursor reads: a copy serves it.
                again.append(try select.query(4).map { $0.get(0, as: Int.self)! })
            }
            // After the cursor ended, the statement's own compile serves again.
            let after = try select.query(5).map { $0.get(0, as: Int.self)! }
            return (ids, again, after)
        }
        #expect(ids == [1, 2, 3, 4, 5])
        #expect(again == Array(repeating: [4, 5], count: 5))
        #expect(after == [5])
    }
}
