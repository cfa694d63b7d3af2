import Foundation
import SqlCipherKit
import Testing

/// The example of the DocC article "Schema migrations", copied as it stands in the article
/// (checked by `ArticleCodeBlockTests`) and run against a temporary database.
@Suite struct MigrationsGuideTests {
    @Test func migrateAndRollBack() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("migrations.db"), rawKey: rawKey(2))
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
        #expect(try await db.columns(in: "products").map(\.name) == ["id", "name", "price"])
        #expect(try await db.query("SELECT name FROM products").isEmpty)
        try await db.migrate(migrations)
        #expect(try await db.appliedMigrations() == ["001-create-products", "002-add-discount", "003-rename-name"])
        #expect(try await db.columns(in: "products").map(\.name) == ["id", "title", "price", "discount"])
        #expect(try await db.builderSchemaNames("index") == ["products_by_title"])
    }

    @Test func aMigrationThatRebuildsATableDeclaresDeferredForeignKeyChecks() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("legacy.db"), rawKey: rawKey(5))
        try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT, legacy TEXT)")
        try await db.execute("CREATE TABLE parts(id INTEGER PRIMARY KEY, product INTEGER REFERENCES products(id))")
        try await db.execute("INSERT INTO products VALUES (1, 'widget', 'old'); INSERT INTO parts VALUES (1, 1)")

        struct DropLegacyColumn: Migration {
            let id = "004-drop-legacy"
            let foreignKeyChecks = ForeignKeyChecks.deferred

            func up(_ ctx: MigrationContext) throws {
                try ctx.execute(AlterTable(TableName("products"), dropColumn: "legacy"))
            }
        }

        try await db.migrate([DropLegacyColumn()])
        let columns = try await db.columns(in: "products").map(\.name)
        #expect(columns == ["id", "name"])
        #expect(try await db.query("SELECT count(*) FROM parts")[0].get(0, as: Int.self) == 1)
        await db.close()
    }
}
