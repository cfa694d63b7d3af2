import Foundation
import Testing
@testable import SqlCipherKit

/// Runs the examples of the DocC article "Query builder" (QueryBuilder.md). Each test body is the
/// article's example, with the setup it assumes (checked by `ArticleCodeBlockTests`).
@Suite struct BuilderGuideExamplesTests {
    func productsDatabase(_ dir: TemporaryDirectory) async throws -> Database {
        let db = try builderTestDatabase(dir)
        try await db.execute("""
            CREATE TABLE categories(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL,
                                  category_id INTEGER REFERENCES categories(id));
            INSERT INTO categories VALUES (1, 'fruit'), (2, 'tools');
            INSERT INTO products VALUES (1, 'apple', 1.5, 1), (2, 'banana', 2.0, 1), (3, 'saw', 25.0, 2),
                                        (7, 'hammer', 45.0, 2), (8, 'anvil', 120.0, 2);
            """)
        return db
    }

    @Test func queryBuilderTemplates() async throws {
        let dir = TemporaryDirectory()
        let db = try await productsDatabase(dir)
        var printed: [String] = []
        func print(_ text: String) { printed.append(text) }

        let products = TableName("products")
        let maxPrice = Param<Double>("maxPrice")

        let cheapProducts = Select(.all)
            .from(products)
            .where(col("price") < maxPrice)
            .orderBy(col("price"))

        let rows = try await db.query(cheapProducts, maxPrice.set(50.0))
        for row in rows {
            print(row.get("name", as: String.self) ?? "-")
        }

        let newPrice = Param<Double>("newPrice")
        let targetId = Param<Int>("id")
        let updatePrice = Update(products)
            .set(col("price"), to: newPrice)
            .where(col("id") == targetId)
        let changed = try await db.execute(updatePrice, newPrice.set(39.99), targetId.set(7))

        #expect(printed == ["apple", "banana", "saw", "hammer"])
        #expect(changed == 1)
        #expect(try cheapProducts.render().sql == #"SELECT * FROM "products" WHERE "price" < :p_maxPrice ORDER BY "price""#)
    }

    @Test func queryBuilderReport() async throws {
        let dir = TemporaryDirectory()
        let db = try await productsDatabase(dir)

        let p = TableName("products").as("p")
        let c = TableName("categories").as("c")
        let report = Select(c.col("name").as("category"), .count.as("n"), .avg(p.col("price")).as("average"))
            .from(p)
            .join(c, on: p.col("category_id") == c.col("id"))
            .where(p.col("price").between(1.0, and: 100.0) && p.col("name").like("%a%"))
            .groupBy(c.col("name"))
            .having(.count >= 2)
            .orderBy(col("n").descending, c.col("name"))
            .limit(10)
        let lines = try await db.query(report)

        #expect(lines.count == 2)
        #expect(lines.map { $0.get("category", as: String.self) } == ["fruit", "tools"])
        #expect(lines[1].get("average", as: Double.self) == 35.0)
        #expect(try report.render().sql == #"SELECT "c"."name" AS "category", count(*) AS "n", avg("p"."price") AS "average" "#
            + #"FROM "products" AS "p" INNER JOIN "categories" AS "c" ON "p"."category_id" = "c"."id" "#
            + #"WHERE "p"."price" BETWEEN :l1 AND :l2 AND "p"."name" LIKE :l3 GROUP BY "c"."name" "#
            + #"HAVING count(*) >= :l4 ORDER BY "n" DESC, "c"."name" LIMIT :l5"#)
    }

    @Test func queryBuilderRendering() throws {
        let products = TableName("products")
        let maxPrice = Param<Double>("maxPrice")

        let fragment = try Select(col("name"))
            .from(products)
            .where(col("price") < maxPrice && col("name") != "")
            .render()
        // fragment.sql            SELECT "name" FROM "products" WHERE "price" < :p_maxPrice AND "name" <> :l1
        // fragment.literals       [.text("")]
        // fragment.parameterNames ["maxPrice"]

        #expect(fragment.sql == #"SELECT "name" FROM "products" WHERE "price" < :p_maxPrice AND "name" <> :l1"#)
        #expect(fragment.literals == [.text("")])
        #expect(fragment.parameterNames == ["maxPrice"])
    }

    @Test func queryBuilderWrites() async throws {
        let dir = TemporaryDirectory()
        let db = try await productsDatabase(dir)
        let products = TableName("products")

        let name = Param<String>("name")
        let insert = Insert(into: products)
            .set(col("name"), to: name)
            .set(col("price"), to: 9.99)
        try await db.execute(insert, name.set("Widget"))
        try await db.execute(insert, name.set("Gadget"))

        let ignored = try await db.execute(
            Insert(into: products, onConflict: .ignore)
                .set(col("id"), to: 7).set(col("name"), to: "Duplicate").set(col("price"), to: 1.0))
        // ignored == 0: a row with id 7 exists

        let removed = try await db.execute(Delete(products).where(col("price") > 100.0))
        // removed == 1
        // try await db.execute(Delete(products)) throws SqlCipherError.deleteWithoutWhere

        let total = try await db.transaction { conn in
            try conn.execute(Update(products).set(col("price"), to: 0.5).where(col("name").in(["apple", "banana"])))
            return try conn.query(Select(.total(col("price")).as("sum")).from(products))[0].get("sum", as: Double.self)
        }

        #expect(ignored == 0)
        #expect(removed == 1)
        await #expect(throws: SqlCipherError.deleteWithoutWhere(table: "products")) { try await db.execute(Delete(products)) }
        #expect(abs((total ?? 0) - 90.98) < 1e-9)
    }
}
