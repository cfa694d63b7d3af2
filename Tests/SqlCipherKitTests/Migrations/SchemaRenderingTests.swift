import Foundation
import Testing
@testable import SqlCipherKit

@Suite struct SchemaRenderingTests {
    @Test func createTableWithEveryConstraint() throws {
        let sql = try CreateTable(TableName("orders"), ifNotExists: true)
            .column("id", .integer, .primaryKey, .autoincrement)
            .column("code", .text, .notNull, .unique)
            .column("total", .real, .notNull, .default(0.0))
            .column("photo", .blob)
            .column("customer_id", .integer, .references(TableName("customers"), onDelete: .cascade))
            .column("owner", .text, .references(TableName("users"), column: "name", onDelete: .setNull, onUpdate: .restrict))
            .render().sql
        #expect(sql == #"CREATE TABLE IF NOT EXISTS "orders" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "#
            + #""code" TEXT NOT NULL UNIQUE, "total" REAL NOT NULL DEFAULT 0.0, "photo" BLOB, "#
            + #""customer_id" INTEGER REFERENCES "customers" ON DELETE CASCADE, "#
            + #""owner" TEXT REFERENCES "users" ("name") ON DELETE SET NULL ON UPDATE RESTRICT)"#)
        let composite = try CreateTable(TableName("pairs"))
            .column("a", .integer).column("b", .text)
            .primaryKey("a", "b").unique("b")
            .foreignKey(["a"], references: TableName("x"), columns: ["id"], onDelete: .setDefault, onUpdate: .noAction)
            .render().sql
        #expect(composite == #"CREATE TABLE "pairs" ("a" INTEGER, "b" TEXT, PRIMARY KEY ("a", "b"), UNIQUE ("b"), "#
            + #"FOREIGN KEY ("a") REFERENCES "x" ("id") ON DELETE SET DEFAULT ON UPDATE NO ACTION)"#)
        #expect(try CreateTable(TableName("t")).column("id", .integer, .autoincrement).render().sql
            == #"CREATE TABLE "t" ("id" INTEGER PRIMARY KEY AUTOINCREMENT)"#)
        #expect(throws: SqlCipherError.self) { try CreateTable(TableName("empty")).render().sql }
    }

    @Test func defaultLiterals() throws {
        func rendered(_ value: DatabaseValue) throws -> String { try SQLLiteral.render(value) }
        #expect(try rendered(.null) == "NULL")
        #expect(try rendered(.integer(-42)) == "-42")
        #expect(try rendered(.integer(Int64.max)) == "9223372036854775807")
        #expect(try rendered(.real(0.1)) == "0.1")
        #expect(try rendered(.real(5)) == "5.0")
        #expect(try rendered(.real(1e300)) == "1e+300")
        #expect(try rendered(.real(-.infinity)) == "-1e999")
        #expect(try rendered(.text("it's \"x\"; --")) == #"'it''s "x"; --'"#)
        #expect(try rendered(.blob(Data([0, 0xAB, 0xFF]))) == "X'00ABFF'")
        #expect(try rendered(true.databaseValue) == "1")
        do {
            _ = try rendered(.text("a\u{0}b"))
            Issue.record("expected an error")
        } catch let SqlCipherError.invalidQuery(reason) {
            #expect(reason.contains("NUL"))
        }
        #expect(throws: SqlCipherError.self) {
            try CreateTable(TableName("t")).column("x", .text, .default("nul\u{0}")).render().sql
        }
    }

    @Test func indexesDropsAndAlters() throws {
        #expect(try CreateIndex("by_name", on: TableName("products"), columns: "name", "price", unique: true,
                                ifNotExists: true).render().sql
            == #"CREATE UNIQUE INDEX IF NOT EXISTS "by_name" ON "products" ("name", "price")"#)
        #expect(try CreateIndex("i", on: TableName("t"), columns: "a").render().sql == #"CREATE INDEX "i" ON "t" ("a")"#)
        #expect(throws: SqlCipherError.self) { try CreateIndex("i", on: TableName("t")).render().sql }
        #expect(try DropTable(TableName("products")).render().sql == #"DROP TABLE "products""#)
        #expect(try DropTable(TableName("p\"q"), ifExists: true).render().sql == #"DROP TABLE IF EXISTS "p""q""#)
        #expect(try DropIndex("by_name").render().sql == #"DROP INDEX "by_name""#)
        #expect(try DropIndex("by_name", ifExists: true).render().sql == #"DROP INDEX IF EXISTS "by_name""#)
        let products = TableName("products")
        #expect(try AlterTable(products, renameTo: "items").render().sql == #"ALTER TABLE "products" RENAME TO "items""#)
        #expect(try AlterTable(products, addColumn: "discount", .real, .default(0.0)).render().sql
            == #"ALTER TABLE "products" ADD COLUMN "discount" REAL DEFAULT 0.0"#)
        #expect(try AlterTable(products, renameColumn: "a", to: "b").render().sql
            == #"ALTER TABLE "products" RENAME COLUMN "a" TO "b""#)
        #expect(try AlterTable(products, dropColumn: "a").render().sql == #"ALTER TABLE "products" DROP COLUMN "a""#)
    }

    @Test func rebuildIsChosenByVersion() {
        let rename = AlterTable(TableName("t"), renameColumn: "a", to: "b")
        let drop = AlterTable(TableName("t"), dropColumn: "a")
        #expect(rename.rebuild(onSQLiteVersion: 3_015_002, force: false) == .renameColumn("a", to: "b"))
        #expect(rename.rebuild(onSQLiteVersion: 3_025_000, force: false) == nil)
        #expect(drop.rebuild(onSQLiteVersion: 3_034_001, force: false) == .dropColumn("a"))
        #expect(drop.rebuild(onSQLiteVersion: 3_046_001, force: false) == nil)
        #expect(drop.rebuild(onSQLiteVersion: 3_046_001, force: true) == .dropColumn("a"))
        #expect(AlterTable(TableName("t"), renameTo: "u").rebuild(onSQLiteVersion: 3_015_002, force: true) == nil)
    }

    @Test func tokenizerReadsSQLiteLexicalForms() throws {
        let tokens = try #require(SQLTokenizer.tokenize(
            #"CREATE TABLE "a""b" ([x y], `z`, 'lit''s', x'0A', 1.5e-3, -- c"#
                + "\n/* block */ :p, ?1, a<=b, xenon)"))
        let summary = tokens.map { "\($0.kind):\($0.identifier ?? $0.text)" }
        #expect(summary == [
            "word:CREATE", "word:TABLE", #"quotedIdentifier:a"b"#, "symbol:(", "quotedIdentifier:x y", "symbol:,",
            "quotedIdentifier:z", "symbol:,", "string:lit's", "symbol:,", "blob:x'0A'", "symbol:,", "number:1.5e-3",
            "symbol:,", "variable::p", "symbol:,", "variable:?1", "symbol:,", "word:a", "symbol:<=", "word:b",
            "symbol:,", "word:xenon", "symbol:)",
        ])
        #expect(SQLTokenizer.tokenize("SELECT 'unterminated") == nil)
        #expect(SQLTokenizer.sameIdentifier("Name", "nAME"))
        #expect(!SQLTokenizer.sameIdentifier("É", "é"))
    }
}
