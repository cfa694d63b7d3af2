import Foundation
import Testing
@testable import SqlCipherKit

@Suite struct QueryExecutionTests {
    let products = TableName("products")

    func makeProducts(_ dir: TemporaryDirectory) async throws -> Database {
        let db = try builderTestDatabase(dir)
        try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
        for (name, price) in [("apple", 1.5), ("bread", 3.0), ("cheese", 12.0), ("dates", 7.25)] {
            try await db.execute(Insert(into: products).set(col("name"), to: name).set(col("price"), to: price))
        }
        return db
    }

    @Test func seedExampleRunsAndReusesTheStatement() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeProducts(dir)
        let maxPrice = Param<Double>("maxPrice")
        let cheap = Select(.all).from(products).where(col("price") < maxPrice).orderBy(col("price"))

        let first = try await db.query(cheap, maxPrice.set(5.0))
        #expect(first.map { $0.get("name", as: String.self) } == ["apple", "bread"])
        let before = try await db.builderCacheCounters()
        for limit in [8.0, 100.0, 0.5] {
            _ = try await db.query(cheap, maxPrice.set(limit))
        }
        let after = try await db.builderCacheCounters()
        // Three more runs with other values: three hits, no new preparation.
        #expect(after.hits - before.hits == 3)
        #expect(after.misses == before.misses)
        // Literal values are bound too, so a template with a different literal reuses the statement.
        _ = try await db.query(Select(.all).from(products).where(col("price") > 1.0))
        let mid = try await db.builderCacheCounters()
        _ = try await db.query(Select(.all).from(products).where(col("price") > 9.0))
        let end = try await db.builderCacheCounters()
        #expect(end.hits - mid.hits == 1)
        #expect(end.misses == mid.misses)

        let newPrice = Param<Double>("newPrice"), targetId = Param<Int>("id")
        let updatePrice = Update(products).set(col("price"), to: newPrice).where(col("id") == targetId)
        #expect(try await db.execute(updatePrice, newPrice.set(39.99), targetId.set(3)) == 1)
        #expect(try await db.execute(updatePrice, newPrice.set(1), targetId.set(999)) == 0)
        let row = try #require(try await db.query(Select(col("price")).from(products).where(col("id") == 3)).first)
        #expect(row.get("price", as: Double.self) == 39.99)
    }

    @Test func aggregatesGroupingAndJoins() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeProducts(dir)
        try await db.execute("CREATE TABLE tags(product_id INTEGER, tag TEXT)")
        try await db.execute("INSERT INTO tags VALUES (1, 'fruit'), (4, 'fruit'), (2, 'bakery')")
        let totals = try #require(try await db.query(
            Select(.count.as("n"), .sum(col("price")).as("s"), .min(col("price")).as("lo"), .max(col("price")).as("hi"),
                   .avg(col("price")).as("a"), .total(col("price")).as("t")).from(products)).first)
        #expect(totals.get("n", as: Int.self) == 4)
        #expect(totals.get("s", as: Double.self) == 23.75)
        #expect(totals.get("lo", as: Double.self) == 1.5)
        #expect(totals.get("hi", as: Double.self) == 12.0)
        #expect(totals.get("t", as: Double.self) == 23.75)
        let empty = try #require(try await db.query(
            Select(.sum(col("price")).as("s"), .total(col("price")).as("t")).from(products).where(col("price") > 1000)).first)
        #expect(empty["s"] == .null)
        #expect(empty["t"] == .real(0))

        let p = products.as("p"), t = TableName("tags").as("t")
        let byTag = try await db.query(
            Select(t.col("tag"), .count.as("n")).from(p).join(t, on: t.col("product_id") == p.col("id"))
                .groupBy(t.col("tag")).having(.count > 1).orderBy(t.col("tag")))
        #expect(byTag.map { $0.get("tag", as: String.self) } == ["fruit"])
        let left = try await db.query(
            Select(p.col("name"), t.col("tag")).from(p).leftJoin(t, on: t.col("product_id") == p.col("id"))
                .orderBy(p.col("id")))
        #expect(left.map { $0["tag"] } == [.text("fruit"), .text("bakery"), .null, .text("fruit")])
        let distinct = try await db.query(Select(col("tag")).distinct().from(TableName("tags")))
        #expect(distinct.count == 2)
        let paged = try await db.query(Select(col("name")).from(products).orderBy(col("id")).limit(2).offset(1))
        #expect(paged.map { $0.get("name", as: String.self) } == ["bread", "cheese"])
        let inList = try await db.query(Select(col("name")).from(products).where(col("id").in([1, 3])).orderBy(col("id")))
        #expect(inList.count == 2)
        #expect(try await db.query(Select(col("name")).from(products).where(col("id").in([Int]()))).isEmpty)
        #expect(try await db.query(Select(col("name")).from(products).where(col("id").notIn([Int]()))).count == 4)
        #expect(try await db.query(Select(col("name")).from(products).where(col("price").between(3, and: 8))).count == 2)
        #expect(try await db.query(Select(col("name")).from(products).where(col("name").like("%EE%"))).count == 1)
    }

    /// SQLite's bare "too many SQL variables" said neither the limit nor what to do; an `in([...])`
    /// of 1,000 values meets it on SQLCipher 3.4.1 (SQLite 3.15.2, limit 999). The message now
    /// names the limit, the loaded SQLite and the ways to bind fewer, in the builder's error and in
    /// raw SQL's alike.
    @Test func tooManyValuesSaysHowToBindFewer() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeProducts(dir)
        let count = 40_000
        let values = (0..<count).map { SQLExpression.value($0) }
        let placeholders = Array(repeating: "?", count: count).joined(separator: ",")
        let failures: [(any Error)?] = [
            await #expect(throws: SqlCipherError.self) {
                try await db.query(Select(.all).from(products).where(col("id").in(values)))
            },
            await #expect(throws: SqlCipherError.self) {
                try await db.query("SELECT 1 WHERE 1 IN (\(placeholders))", arguments: StatementArguments(Array(repeating: 1, count: count)))
            },
        ]
        for failure in failures {
            guard case .sqlite(1, _, let message, _)? = failure as? SqlCipherError else {
                Issue.record("\(String(describing: failure))")
                continue
            }
            #expect(message.hasPrefix("too many SQL variables: "))
            #expect(message.contains("split a long IN list"))
            #expect(message.contains(try SqlCipherLibrary.shared.sqliteVersion))
        }
    }

    @Test func unboundUnknownAndDuplicateParameters() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeProducts(dir)
        let maxPrice = Param<Double>("maxPrice")
        let cheap = Select(.all).from(products).where(col("price") < maxPrice)
        await #expect(throws: SqlCipherError.unboundParameter(name: "maxPrice")) { try await db.query(cheap) }
        await #expect(throws: SqlCipherError.unknownParameter(name: "other")) {
            try await db.query(cheap, maxPrice.set(1), Param<Int>("other").set(2))
        }
        await #expect(throws: SqlCipherError.self) { try await db.query(cheap, maxPrice.set(1), maxPrice.set(2)) }
        await #expect(throws: SqlCipherError.deleteWithoutWhere(table: "products")) { try await db.execute(Delete(products)) }
        // After the errors the template still works and nothing was deleted.
        #expect(try await db.query(cheap, maxPrice.set(100)).count == 4)
        #expect(try await db.execute(Delete(products).where(col("price") > 10.0)) == 1)
        #expect(try await db.execute(Delete(products, allRows: true)) == 3)
    }

    @Test func hostileValuesRoundTripAsData() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT, raw BLOB)")
        try await db.execute("CREATE TABLE canary(x)")
        let hostile = [
            "'; DROP TABLE canary; --", "\"); DELETE FROM notes; --", "/* comment */ x", "-- line comment",
            "nul\u{0}inside", "]bracket[", "ünïcødé 🙂 表", "'", "\"", ";", ":p_x", "?1", "$x @y",
        ]
        let body = Param<String>("body")
        let insert = Insert(into: TableName("notes")).set(col("body"), to: body).set(col("raw"), to: Data([0, 39, 34, 59]))
        for text in hostile {
            #expect(try await db.execute(insert, body.set(text)) == 1)
        }
        let rows = try await db.query(Select(col("body"), col("raw")).from(TableName("notes")).orderBy(col("id")))
        #expect(rows.map { $0.get("body", as: String.self) } == hostile)
        #expect(rows.allSatisfy { $0.get("raw", as: Data.self) == Data([0, 39, 34, 59]) })
        for text in hostile {
            let found = try await db.query(Select(col("id")).from(TableName("notes")).where(col("body") == text))
            #expect(found.count == 1, "\(text)")
        }
        #expect(try await db.query("SELECT name FROM sqlite_master WHERE name = 'canary'").count == 1)
    }

    @Test func hostileIdentifiersNameRealTablesAndColumns() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute("CREATE TABLE canary(x)")
        let names = [#"t"; DROP TABLE canary; --"#, "a]b[c", "ünï 🙂", "/* c */", "'q'", "se;mi"]
        for name in names {
            let quoted = try SQLRenderer.quoteIdentifier(name)
            try await db.execute("CREATE TABLE \(quoted) (\(try SQLRenderer.quoteIdentifier(name + "col")) TEXT)")
            let table = TableName(name)
            let column = col(name + "col")
            #expect(try await db.execute(Insert(into: table).set(column, to: name)) == 1)
            let rows = try await db.query(Select(column.as(name)).from(table).where(column == name))
            #expect(rows.first?.get(name, as: String.self) == name)
            #expect(try await db.execute(Update(table).set(column, to: "v").where(column == name)) == 1)
            #expect(try await db.execute(Delete(table).where(column == "v")) == 1)
        }
        #expect(try await db.query("SELECT name FROM sqlite_master WHERE name = 'canary'").count == 1)
    }

    @Test func connectionRunsTheSameBuilders() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeProducts(dir)
        let id = Param<Int>("id")
        let n = try await db.transaction { conn in
            try conn.execute(Insert(into: products).set(col("name"), to: "eggs").set(col("price"), to: 2.0))
            try conn.execute(Update(products).set(col("price"), to: 2.5).where(col("id") == id), id.set(5))
            try conn.execute(Delete(products).where(col("id") == id), arguments: StatementArguments([id.set(1)]))
            return try conn.query(Select(.count.as("n")).from(products))[0].get("n", as: Int.self)
        }
        #expect(n == 4)
        let price = try await db.query(Select(col("price")).from(products).where(col("name") == "eggs"))
        #expect(price.first?.get("price", as: Double.self) == 2.5)
    }

    @Test func insertOrIgnoreAndReplace() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeProducts(dir)
        let insert = Insert(into: products, onConflict: .ignore).set(col("id"), to: 1).set(col("name"), to: "x")
            .set(col("price"), to: 0.0)
        #expect(try await db.execute(insert) == 0)
        #expect(try await db.execute(insert.onConflict(.replace)) == 1)
        #expect(try await db.query(Select(col("name")).from(products).where(col("id") == 1)).first?["name"] == .text("x"))
    }
}
