import Foundation
import SqlCipherKit
import Synchronization
import Testing

/// SQL functions and aggregates written in Swift: in a WHERE, an index expression and a trigger
/// (with a live query that sees the trigger's write), errors and bad input, registration failures,
/// the schema rule, and the release of what SQLite holds.
@Suite struct CustomFunctionTests {
    func database(_ directory: TemporaryDirectory) async throws -> Database {
        let db = try Database(path: directory.path("functions.db"), rawKey: rawKey(4))
        try await db.execute("""
            CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, price REAL);
            INSERT INTO items(name, price) VALUES ('apple', 1.5), ('bread', 3.0), ('cheese', 12.0), ('dates', 7.25);
            """)
        return db
    }

    static let half = DatabaseFunction("half", deterministic: true, allowedInSchema: true) { (x: Double) in x / 2 }

    @Test func aFunctionInAWhereClause() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.add(function: Self.half)
        let rows = try await db.query("SELECT name FROM items WHERE half(price) < ? ORDER BY id", 2)
        #expect(rows.compactMap { $0.get(0, as: String.self) } == ["apple", "bread"])
        #expect(try await db.query("SELECT HALF(9)")[0].get(0, as: Double.self) == 4.5)  // any case
    }

    @Test func aDeterministicFunctionInAnIndexExpression() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.add(function: Self.half)
        try await db.execute("CREATE INDEX items_half ON items(half(price))")
        let plan = try await db.query("EXPLAIN QUERY PLAN SELECT name FROM items WHERE half(price) = 6")
            .compactMap { $0.get("detail", as: String.self) }.joined(separator: "; ")
        #expect(plan.contains("items_half"), "\(plan)")
        #expect(try await db.query("SELECT name FROM items WHERE half(price) = 6")[0].get(0, as: String.self) == "cheese")
        try await db.execute("INSERT INTO items(name, price) VALUES ('eggs', 12.0)")
        #expect(try await db.query("SELECT count(*) FROM items WHERE half(price) = 6")[0].get(0, as: Int.self) == 2)
        #expect(try await db.query("PRAGMA integrity_check")[0].get(0, as: String.self) == "ok")
        // SQLite itself refuses a function that is not deterministic in an index.
        try await db.add(function: DatabaseFunction("jitter", allowedInSchema: true) { (x: Double) in x })
        await #expect {
            try await db.execute("CREATE INDEX items_jitter ON items(jitter(price))")
        } throws: { error in
            guard case SqlCipherError.sqlite(1, _, let message, _) = error else { return false }
            return message.contains("non-deterministic")
        }
    }

    @Test func aFunctionInATriggerAndALiveQueryThatSeesItsWrite() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.add(function: DatabaseFunction("label", deterministic: true, allowedInSchema: true) {
            (name: String, price: Double) in "\(name.uppercased()) @ \(price)"
        })
        try await db.execute("""
            CREATE TABLE labels(text TEXT);
            CREATE TRIGGER items_label AFTER INSERT ON items BEGIN
                INSERT INTO labels(text) VALUES (label(new.name, new.price));
            END;
            """)
        let reader = LiveReader(db.values(of: .query("SELECT text FROM labels ORDER BY rowid")))
        #expect(try await reader.next()?.isEmpty == true)
        try await db.execute("INSERT INTO items(name, price) VALUES ('figs', 4.0)")
        let labels = try await reader.next()?.compactMap { $0.get(0, as: String.self) }
        #expect(labels == ["FIGS @ 4.0"])
        // An UPDATE whose WHERE calls a function is seen too.
        try await db.add(function: Self.half)
        let prices = LiveReader(db.values(of: .query("SELECT price FROM items WHERE name = 'cheese'")))
        #expect(try await prices.next()?.first?.get(0, as: Double.self) == 12.0)
        try await db.execute("UPDATE items SET price = price + 1 WHERE half(price) = 6")
        #expect(try await prices.next()?.first?.get(0, as: Double.self) == 13.0)
    }

    @Test func anAggregate() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.add(function: DatabaseFunction("median", argumentCount: 1, deterministic: true, aggregate: Median.self))
        #expect(try await db.query("SELECT median(price) FROM items")[0].get(0, as: Double.self) == 5.125)
        try await db.execute("INSERT INTO items(name, price) VALUES ('apple', 2.5), ('apple', NULL)")
        let grouped = try await db.query("SELECT name, median(price) FROM items GROUP BY name HAVING count(*) > 1")
        #expect(grouped.count == 1 && grouped[0].get(1, as: Double.self) == 2.0)
        // An empty group: no step ran, the result is the empty aggregate's.
        #expect(try await db.query("SELECT median(price) FROM items WHERE 0")[0][0] == .null)
        // A step that throws fails the statement, with the aggregate's message.
        await #expect(throws: SqlCipherError.functionFailed(
            name: "median", message: "median() takes numbers, not 'apple'", sql: "SELECT median(name) FROM items")) {
            try await db.query("SELECT median(name) FROM items")
        }
        #expect(try await db.query("SELECT median(price) FROM items")[0].get(0, as: Double.self) == 3.0)
    }

    @Test func anErrorThrownInsideBecomesATypedErrorAndTheStatementIsUndone() async throws {
        struct Refusal: Error, CustomStringConvertible {
            var description: String { "no discounts on cheese" }
        }
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.add(function: DatabaseFunction("discount") { (name: String, price: Double) throws -> Double in
            if name == "cheese" { throw Refusal() }
            return price * 0.9
        })
        let sql = "UPDATE items SET price = discount(name, price)"
        await #expect(throws: SqlCipherError.functionFailed(name: "discount", message: "no discounts on cheese", sql: sql)) {
            try await db.execute(sql)
        }
        // Rows before the failing one were changed, then undone with the statement.
        #expect(try await db.query("SELECT price FROM items WHERE name = 'apple'")[0].get(0, as: Double.self) == 1.5)
        do {
            try await db.execute(sql)
        } catch {
            #expect(String(describing: error).contains("no discounts on cheese"))
        }
    }

    @Test func argumentsThatDoNotConvertNullsAndWrongCounts() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.add(function: Self.half)
        try await db.add(function: DatabaseFunction("initial") { (name: String?) in name?.first.map(String.init) })
        await #expect(throws: SqlCipherError.functionFailed(
            name: "half", message: "argument 1 of half() is text 'abc', which cannot be read as Double",
            sql: "SELECT half('abc')")) {
            try await db.query("SELECT half('abc')")
        }
        await #expect {
            try await db.query("SELECT half(NULL)")
        } throws: { error in
            guard case SqlCipherError.functionFailed("half", let message, _) = error else { return false }
            return message.contains("NULL") && message.contains("optional")
        }
        #expect(try await db.query("SELECT initial(NULL), initial('zed')")[0].values == [.null, .text("z")])
        // SQLite checks the count of a function of fixed arity.
        await #expect {
            try await db.query("SELECT half(1, 2)")
        } throws: { error in
            guard case SqlCipherError.sqlite(1, _, let message, _) = error else { return false }
            return message.contains("wrong number of arguments")
        }
    }

    @Test func bigValuesTextThatIsNotUTF8AndEmptyValues() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.add(function: DatabaseFunction("echo", argumentCount: 1) { values in values[0] })
        try await db.add(function: DatabaseFunction("kind", argumentCount: nil) { values in
            values.map(\.storageClass).joined(separator: ",")
        })
        let big = Data((0..<12_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        #expect(try await db.query("SELECT echo(?)", big)[0].get(0, as: Data.self) == big)
        #expect(try await db.query("SELECT length(echo(zeroblob(20000000)))")[0].get(0, as: Int.self) == 20_000_000)
        // Text whose bytes are not UTF-8 arrives as a blob of exactly those bytes.
        #expect(try await db.query("SELECT kind(CAST(x'80ff41' AS TEXT))")[0].get(0, as: String.self) == "blob")
        #expect(try await db.query("SELECT echo(CAST(x'80ff41' AS TEXT))")[0].get(0, as: Data.self) == Data([0x80, 0xFF, 0x41]))
        // Empty text and blobs stay empty, not NULL.
        #expect(try await db.query("SELECT typeof(echo('')), typeof(echo(x'')), kind(), kind(1, 2.5, 'a', x'00', NULL)")[0].values
            == [.text("text"), .text("blob"), .text(""), .text("integer,real,text,blob,null")])
    }

    @Test func registrationFailuresAreTyped() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let refused: [DatabaseFunction] = [
            DatabaseFunction("lower") { (x: String) in x },
            DatabaseFunction("COUNT", argumentCount: 1) { _ in 0 },
            DatabaseFunction("max", argumentCount: 3) { _ in 0 },
            DatabaseFunction("sqlcipher_export") { (x: String) in x },
            DatabaseFunction("SQLCipher_Anything") { 1 },
            DatabaseFunction("") { 1 },
            DatabaseFunction(String(repeating: "f", count: 256)) { 1 },
            DatabaseFunction("nul\u{0}name") { 1 },
            DatabaseFunction("many", argumentCount: 128) { _ in 1 },
            DatabaseFunction("negative", argumentCount: -1) { _ in 1 },
        ]
        for function in refused {
            await #expect {
                try await db.add(function: function)
            } throws: { error in
                guard case SqlCipherError.registrationFailed(let name, let reason) = error else { return false }
                return name == function.name && !reason.isEmpty && String(describing: error).contains("Nothing changed")
            }
        }
        // The built-ins still work, and sqlcipher_export is still refused to SQL.
        #expect(try await db.query("SELECT lower('A'), count(*) FROM items")[0].values == [.text("a"), .integer(4)])
        await #expect(throws: SqlCipherError.self) { try await db.query("SELECT sqlcipher_export('main')") }
        // A name of a later SQLite is free on an older one, and taken where SQLite has it.
        let json = DatabaseFunction("json_extract", argumentCount: 2) { _ in 0 }
        if isSQLCipher4() {
            await #expect(throws: SqlCipherError.self) { try await db.add(function: json) }
        } else {
            try await db.add(function: json)
        }
        // A function of our own may be replaced, with another arity too.
        try await db.add(function: Self.half)
        try await db.add(function: DatabaseFunction("half", deterministic: true) { (x: Double) in x / 2 + 100 })
        try await db.add(function: DatabaseFunction("half", argumentCount: 2) { values in values.count })
        #expect(try await db.query("SELECT half(2), half(1, 2)")[0].values == [.real(101), .integer(2)])
        try await db.remove(function: DatabaseFunction("half", argumentCount: 2) { _ in 0 })
        try await db.remove(function: DatabaseFunction("never-added") { 0 })
        await #expect(throws: SqlCipherError.self) { try await db.query("SELECT half(1, 2)") }
    }

    @Test func aFunctionThatAnOpenStreamRunsIsReplacedOnlyOnceTheStreamEnds() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.add(function: Self.half)
        let many = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 100000) SELECT half(i) FROM c"
        var iterator = db.stream(many).makeAsyncIterator()
        #expect(try await iterator.next() != nil)
        await #expect {
            try await db.add(function: DatabaseFunction("half") { (x: Double) in x })
        } throws: { error in
            guard case SqlCipherError.registrationFailed("half", let reason) = error else { return false }
            return reason.contains("error 5") && reason.contains("streams")
        }
        while try await iterator.next() != nil {}
        try await db.add(function: DatabaseFunction("half") { (x: Double) in x })
        #expect(try await db.query("SELECT half(3)")[0].get(0, as: Double.self) == 3)
    }

    @Test func theSchemaCannotCallAFunctionNotAllowedInIt() async throws {
        // The file's schema names `audit`; the program adds `audit` without allowedInSchema, as it
        // would for a function with side effects. Opening a file made by someone else, none of the
        // schema's uses may call it.
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let inSchema = DatabaseFunction("audit", deterministic: true, allowedInSchema: true) { (x: Double) in x }
        try await db.add(function: inSchema)
        try await db.execute("""
            CREATE TABLE log(value);
            CREATE TRIGGER items_audit AFTER UPDATE ON items BEGIN INSERT INTO log VALUES (audit(new.price)); END;
            CREATE VIEW audited AS SELECT audit(price) AS a FROM items;
            CREATE TABLE defaults(x, y DEFAULT (audit(1)));
            CREATE TABLE checked(x CHECK (audit(x) > 0));
            CREATE TABLE indexed(x);
            CREATE INDEX indexed_audit ON indexed(audit(x));
            """)
        let calls = LifetimeCounter()
        try await db.add(function: DatabaseFunction("audit", deterministic: true) { (x: Double) in
            calls.increment()
            return x
        })
        let uses = [
            "UPDATE items SET price = 2 WHERE id = 1",
            "SELECT * FROM audited",
            "INSERT INTO defaults(x) VALUES (1)",
            "INSERT INTO checked(x) VALUES (1)",
            "INSERT INTO indexed(x) VALUES (1)",
        ]
        for sql in uses {
            await #expect {
                try await db.execute(sql)
            } throws: { error in
                guard case SqlCipherError.functionNotAllowedInSchema(let name, let failed) = error else { return false }
                return name.lowercased() == "audit" && failed == sql
                    && String(describing: error).contains("allowedInSchema: true")
            }
        }
        #expect(calls.value == 0)
        #expect(try await db.query("SELECT count(*) FROM log")[0].get(0, as: Int.self) == 0)
        // The program's own SQL may call it, also on a table whose index uses it.
        #expect(try await db.query("SELECT audit(2.5)")[0].get(0, as: Double.self) == 2.5)
        #expect(calls.value == 1)
    }

    /// A function added without `allowedInSchema` is the program's own SQL when its statement's
    /// `WITH` clause calls it: allowed where SQLite enforces `SQLITE_DIRECTONLY` itself (3.30 and
    /// later). Before 3.30 the package's authorizer decides, and it cannot tell a common table
    /// expression from a view, so the call is refused there (documented in FunctionsAndCollations).
    @Test func aFunctionCalledInTheStatementsOwnWithClause() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.add(function: DatabaseFunction("twice", deterministic: true) { (x: Int) in x * 2 })
        let sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) "
            + "SELECT sum(v) FROM (WITH d(v) AS (SELECT twice(x) FROM c) SELECT v FROM d)"
        if db.library.sqliteVersionNumber >= 3_030_000 {
            #expect(try await db.query(sql)[0].get(0, as: Int.self) == 12)
        } else {
            await #expect {
                _ = try await db.query(sql)
            } throws: { error in
                guard case SqlCipherError.functionNotAllowedInSchema(let name, _) = error else { return false }
                return name == "twice"
            }
        }
        // A view that calls it is refused on every version.
        try await db.execute("CREATE VIEW doubled AS SELECT twice(id) AS v FROM items")
        await #expect(throws: SqlCipherError.self) { _ = try await db.query("SELECT * FROM doubled") }
    }

    @Test func functionsAreReleasedWhenReplacedRemovedOrClosed() async throws {
        let directory = TemporaryDirectory()
        let before = LifetimeProbe.alive.load(ordering: .relaxed)
        do {
            let db = try await database(directory)
            for index in 0..<3 {
                let probe = LifetimeProbe()
                try await db.add(function: DatabaseFunction("probe\(index % 2)") { () -> Int in
                    _ = probe
                    return index
                })
            }
            let sumProbe = LifetimeProbe()
            try await db.add(function: DatabaseFunction("probed", argumentCount: 1, aggregate: Median.self))
            try await db.add(collation: DatabaseCollation("probed") { _ = sumProbe; return $0 < $1 ? .orderedAscending : ($0 == $1 ? .orderedSame : .orderedDescending) })
            #expect(try await db.query("SELECT probe0(), probe1()")[0].values == [.integer(2), .integer(1)])
            #expect(LifetimeProbe.alive.load(ordering: .relaxed) >= before + 3)
            try await db.remove(function: DatabaseFunction("probe1") { 0 })
            await db.close()
        }
        // The registry of the closed database still holds its definitions until it goes away.
        try await waitUntil { LifetimeProbe.alive.load(ordering: .relaxed) <= before }
    }

    @Test func functionsBelongToTheirDatabase() async throws {
        let directory = TemporaryDirectory()
        let first = try await database(directory)
        let second = try Database(path: directory.path("other.db"), rawKey: rawKey(5))
        try await first.add(function: Self.half)
        await #expect(throws: SqlCipherError.self) { try await second.query("SELECT half(2)") }
    }
}

/// Counts calls from a @Sendable closure.
final class LifetimeCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.wrappingAdd(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
