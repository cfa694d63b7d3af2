import Foundation
import Testing
@testable import SqlCipherKit

/// Runs the examples of the DocC articles "Query builder" (QueryBuilder.md), "Entities"
/// (WorkingWithEntities.md) and "Migrations" (SchemaMigrations.md). Each test body is the article's
/// example, with the setup it assumes; keep them in step (the query-builder article's blocks are
/// checked by ``everyBlockOfTheQueryBuilderArticleIsInThisFile()``).
@Suite struct BuilderGuideExamplesTests {
    // MARK: Query builder

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

    // MARK: Entities

    enum Guide {
        struct Product: Entity, Equatable {
            static let tableName = TableName("products")
            static let primaryKey: WritableKeyPath<Product, Int?> & Sendable = \.id

            var id: Int?
            var name: String
            var price: Double
        }

        struct Order: Entity {
            static let tableName = TableName("orders")
            static let primaryKey: WritableKeyPath<Order, Int?> & Sendable = \.id
            var id: Int?
            var customer: String
        }

        struct LineItem: Entity {
            static let tableName = TableName("line_items")
            static let primaryKey: WritableKeyPath<LineItem, Int?> & Sendable = \.id
            var id: Int?
            var orderID: Int
            var sku: String
        }

        struct Contact: Entity, Equatable {
            enum Kind: String, Codable, Sendable { case person, company }
            struct Address: Codable, Equatable, Sendable {
                var city: String
                var zip: String
            }

            static let tableName = TableName("contacts")
            static let primaryKey: WritableKeyPath<Contact, UUID?> & Sendable = \.id

            var id: UUID?
            var kind: Kind
            var name: String
            var birthday: Date?
            var vip: Bool
            var address: Address
            var tags: [String]
        }

        struct CreateProductsTable: Migration {
            let id = "001-create-products"

            func up(_ ctx: MigrationContext) throws {
                try ctx.execute(
                    CreateTable(TableName("products"))
                        .column("id", .integer, .primaryKey)
                        .column("name", .text, .notNull)
                        .column("price", .real, .notNull)
                )
            }

            func down(_ ctx: MigrationContext) throws {
                try ctx.execute(DropTable(TableName("products")))
            }
        }

        struct AddDiscountColumn: Migration {
            let id = "002-add-discount"
            let foreignKeyChecks = ForeignKeyChecks.deferred  // Its down drops a column: a table rebuild before SQLite 3.35.

            func up(_ ctx: MigrationContext) throws {
                try ctx.execute(
                    AlterTable(TableName("products"), addColumn: "discount", .real, .default(0.0))
                )
            }

            func down(_ ctx: MigrationContext) throws {
                try ctx.execute(
                    AlterTable(TableName("products"), dropColumn: "discount")
                )
            }
        }

        struct RenameNameToTitle: Migration {
            let id = "003-rename-name"
            let foreignKeyChecks = ForeignKeyChecks.deferred  // Renaming a column is a table rebuild before SQLite 3.25.

            func up(_ ctx: MigrationContext) throws {
                try ctx.execute(AlterTable(TableName("products"), renameColumn: "name", to: "title"))
                try ctx.execute(CreateIndex("products_by_title", on: TableName("products"), columns: "title"))
                try ctx.execute("UPDATE products SET discount = 0.1 WHERE price > ?", 100.0)
            }

            func down(_ ctx: MigrationContext) throws {
                try ctx.execute(DropIndex("products_by_title"))
                try ctx.execute(AlterTable(TableName("products"), renameColumn: "title", to: "name"))
            }
        }
    }

    @Test func entityBasics() async throws {
        typealias Product = Guide.Product
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
        var printed: [String] = []
        func print(_ text: String) { printed.append(text) }

        var product = Product(id: nil, name: "Widget", price: 9.99)
        product = try await db.save(product)          // product.id == 1, assigned by SQLite

        product.price = 7.49
        try await db.save(product)                    // updates row 1 in place

        let all = try await db.fetch(Product.self)
        let affordable = try await db.fetch(Product.self, where: col("price") <= 10.0,
                                            orderBy: col("price").descending, col("name"), limit: 20)
        if let found = try await db.fetchOne(Product.self, id: 1) {
            print(found.name)
        }
        let howMany = try await db.count(Product.self, where: col("price") < 5.0)

        let deleted = try await db.delete(Product.self, id: 1)                          // 1
        let expensive = try await db.delete(Product.self, where: col("price") > 100.0)  // 0

        #expect(product.id == 1)
        #expect(all == [product])
        #expect(affordable == [product])
        #expect(printed == ["Widget"])
        #expect(howMany == 0)
        #expect(deleted == 1)
        #expect(expensive == 0)
    }

    @Test func entityTransaction() async throws {
        typealias Order = Guide.Order
        typealias LineItem = Guide.LineItem
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute("""
            CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT NOT NULL);
            CREATE TABLE line_items(id INTEGER PRIMARY KEY, orderID INTEGER NOT NULL REFERENCES orders(id), sku TEXT NOT NULL);
            CREATE TABLE customers(name TEXT PRIMARY KEY, orders INTEGER NOT NULL DEFAULT 0);
            INSERT INTO customers(name) VALUES ('Alice');
            """)
        let skus = ["A-1", "B-2"]

        let order = try await db.transaction { conn in
            let order = try conn.save(Order(id: nil, customer: "Alice"))
            try conn.save(skus.map { LineItem(id: nil, orderID: order.id!, sku: $0) })
            try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
            return order
        }

        #expect(order.id == 1)
        #expect(try await db.count(LineItem.self, where: col("orderID") == 1) == 2)
        #expect(try await db.query("SELECT orders FROM customers")[0]["orders"] == .integer(1))
    }

    @Test func entityMapping() async throws {
        typealias Contact = Guide.Contact
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute("""
            CREATE TABLE contacts(id TEXT PRIMARY KEY NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
                                  birthday TEXT, vip INTEGER NOT NULL, address TEXT NOT NULL, tags TEXT NOT NULL)
            """)

        let contact = Contact(id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"), kind: .company,
                              name: "Acme", birthday: nil, vip: true,
                              address: Contact.Address(city: "Paris", zip: "75001"), tags: ["b2b", "eu"])
        try await db.save(contact)
        let row = try await db.query("SELECT * FROM contacts")[0]
        // id       text    'E621E1F8-C36C-495A-93FC-0C247A3E6E5F'
        // kind     text    'company'
        // birthday NULL
        // vip      integer 1
        // address  text    '{"city":"Paris","zip":"75001"}'
        // tags     text    '["b2b","eu"]'

        #expect(row["id"] == .text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(row["kind"] == .text("company"))
        #expect(row["birthday"] == .null)
        #expect(row["vip"] == .integer(1))
        #expect(row["address"] == .text(#"{"city":"Paris","zip":"75001"}"#))
        #expect(row["tags"] == .text(#"["b2b","eu"]"#))
        #expect(try await db.fetchOne(Contact.self, id: contact.id!) == contact)

        try await db.execute("UPDATE contacts SET kind = 'robot'")
        do {
            _ = try await db.fetch(Contact.self)
        } catch let error as SqlCipherError {
            // Cannot decode Contact: column "kind" holds text 'robot', expected Kind.
            #expect(error.description == "Cannot decode Contact: column \"kind\" holds text 'robot', expected Kind.")
        }
    }

    // MARK: Migrations

    @Test func migrationsExample() async throws {
        typealias CreateProductsTable = Guide.CreateProductsTable
        typealias AddDiscountColumn = Guide.AddDiscountColumn
        typealias RenameNameToTitle = Guide.RenameNameToTitle
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)

        let migrations: [any Migration] = [
            CreateProductsTable(),
            AddDiscountColumn(),
            RenameNameToTitle(),
        ]

        try await db.migrate(migrations)
        try await db.migrate(migrations)     // already applied: nothing happens
        // try await db.appliedMigrations() == ["001-create-products", "002-add-discount", "003-rename-name"]

        // Undo AddDiscountColumn and everything applied after it.
        try await db.rollback(to: "002-add-discount", using: migrations)
        // try await db.appliedMigrations() == ["001-create-products"]

        #expect(try await db.appliedMigrations() == ["001-create-products"])
        #expect(try await db.builderColumns("products") == ["id", "name", "price"])
        try await db.migrate(migrations)
        #expect(try await db.appliedMigrations() == ["001-create-products", "002-add-discount", "003-rename-name"])
        #expect(try await db.builderColumns("products") == ["id", "title", "price", "discount"])
        #expect(try await db.builderSchemaNames("index") == ["products_by_title"])
    }

    /// Every Swift block of the query-builder article, found in this file as it stands there
    /// (indentation and blank lines aside), so that an example edited there is compiled again.
    @Test func everyBlockOfTheQueryBuilderArticleIsInThisFile() throws {
        try DocumentationBlocks.expectEveryBlock(ofArticles: ["QueryBuilder"], count: 4, isIn: #filePath)
    }
}
