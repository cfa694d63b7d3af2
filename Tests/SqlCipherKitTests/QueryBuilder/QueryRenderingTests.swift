import Foundation
import Testing
@testable import SqlCipherKit

/// Exact SQL text of every builder: identifiers quoted, values only as placeholders.
@Suite struct QueryRenderingTests {
    let products = TableName("products")

    @Test func selectAllWithParameter() throws {
        let maxPrice = Param<Double>("maxPrice")
        let fragment = try Select(.all).from(products).where(col("price") < maxPrice).orderBy(col("price")).render()
        #expect(fragment.sql == #"SELECT * FROM "products" WHERE "price" < :p_maxPrice ORDER BY "price""#)
        #expect(fragment.literals == [])
        #expect(fragment.parameterNames == ["maxPrice"])
    }

    @Test func selectEveryClause() throws {
        let p = TableName("products").as("p")
        let c = TableName("categories").as("c")
        let minCount = Param<Int>("minCount")
        let fragment = try Select(c.col("name").as("category"), .count.as("n"), .sum(p.col("price")),
                                  .min(p.col("price")), .max(p.col("price")), .avg(p.col("price")),
                                  .total(p.col("price")), .count(distinct: p.col("maker")))
            .distinct()
            .from(p)
            .join(c, on: p.col("category_id") == c.col("id"))
            .leftJoin(TableName("makers"), on: col("id", of: "makers") == p.col("maker"))
            .where(p.col("price") > 1.5)
            .where(p.col("name").like("w%"))
            .groupBy(c.col("name"))
            .having(.count >= minCount)
            .orderBy(col("n").descending, c.col("name").ascending)
            .limit(10)
            .offset(20)
            .render()
        #expect(fragment.sql == #"SELECT DISTINCT "c"."name" AS "category", count(*) AS "n", sum("p"."price"), "#
            + #"min("p"."price"), max("p"."price"), avg("p"."price"), total("p"."price"), count(DISTINCT "p"."maker") "#
            + #"FROM "products" AS "p" INNER JOIN "categories" AS "c" ON "p"."category_id" = "c"."id" "#
            + #"LEFT JOIN "makers" ON "makers"."id" = "p"."maker" "#
            + #"WHERE "p"."price" > :l1 AND "p"."name" LIKE :l2 GROUP BY "c"."name" HAVING count(*) >= :p_minCount "#
            + #"ORDER BY "n" DESC, "c"."name" ASC LIMIT :l3 OFFSET :l4"#)
        #expect(fragment.literals == [.real(1.5), .text("w%"), .integer(10), .integer(20)])
        #expect(fragment.parameterNames == ["minCount"])
    }

    @Test func expressionOperatorsAndPrecedence() throws {
        let name = Param<String>("name")
        func sql(_ e: SQLExpression) -> String { e.description }
        #expect(sql(col("a") == 1) == #""a" = :l1"#)
        #expect(sql(col("a") != col("b")) == #""a" <> "b""#)
        #expect(sql(col("a") <= name) == #""a" <= :p_name"#)
        #expect(sql(col("a") >= 2) == #""a" >= :l1"#)
        #expect(sql(3 < col("a")) == #":l1 < "a""#)
        #expect(sql(col("a") == nil) == #""a" IS NULL"#)
        #expect(sql(col("a") != nil) == #""a" IS NOT NULL"#)
        let none: Int? = nil
        #expect(sql(col("a") == none) == #""a" IS NULL"#)
        #expect(sql(col("a") != DatabaseValue.null) == #""a" IS NOT NULL"#)
        #expect(sql(col("a").isNull) == #""a" IS NULL"#)
        #expect(sql(col("a").isNotNull) == #""a" IS NOT NULL"#)
        #expect(sql((col("a") > 1 && col("b") < 2) || col("c") == name) == #""a" > :l1 AND "b" < :l2 OR "c" = :p_name"#)
        #expect(sql(col("a") > 1 && (col("b") < 2 || col("c") == 3)) == #""a" > :l1 AND ("b" < :l2 OR "c" = :l3)"#)
        #expect(sql(!(col("a") == 1)) == #"NOT ("a" = :l1)"#)
        #expect(sql(!(col("a") == 1) && col("b") == 2) == #"NOT ("a" = :l1) AND "b" = :l2"#)
        #expect(sql(col("id").in([1, 2, 3])) == #""id" IN (:l1, :l2, :l3)"#)
        #expect(sql(col("id").in([Int]())) == "0")
        #expect(sql(col("id").notIn([Int]())) == "1")
        #expect(sql(col("id").notIn(["x"])) == #""id" NOT IN (:l1)"#)
        #expect(sql(col("id").in([name, col("b")])) == #""id" IN (:p_name, "b")"#)
        #expect(sql(col("n").like("a\\%%", escape: "\\")) == #""n" LIKE :l1 ESCAPE :l2"#)
        #expect(sql(col("n").notLike("a%")) == #""n" NOT LIKE :l1"#)
        #expect(sql(col("n").like(name)) == #""n" LIKE :p_name"#)
        #expect(sql(col("p").between(1, and: 5)) == #""p" BETWEEN :l1 AND :l2"#)
        #expect(sql(col("p").notBetween(1, and: 5)) == #""p" NOT BETWEEN :l1 AND :l2"#)
        #expect(sql(col("p").between(col("lo"), and: Param<Int>("hi"))) == #""p" BETWEEN "lo" AND :p_hi"#)
        #expect(sql((col("a") == 1) == (col("b") == 2)) == #""a" = :l1 = ("b" = :l2)"#)
    }

    @Test func expressionsAreHashableValues() {
        let a = col("price") < 10.0 && col("name") == "x"
        let b = col("price") < 10.0 && col("name") == "x"
        let c = col("price") < 11.0 && col("name") == "x"
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b, c]).count == 2)
        #expect(Select(.all).from(products).where(a) == Select(.all).from(products).where(b))
        #expect(col("a").descending == col("a").descending)
        #expect(col("a").descending != col("a").ascending)
    }

    @Test func offsetWithoutLimitAndParameterLimits() throws {
        #expect(try Select(.all).from(products).offset(5).render().sql == #"SELECT * FROM "products" LIMIT -1 OFFSET :l1"#)
        let n = Param<Int>("n"), skip = Param<Int>("skip")
        let fragment = try Select(col("id")).from(products).limit(n).offset(skip).render()
        #expect(fragment.sql == #"SELECT "id" FROM "products" LIMIT :p_n OFFSET :p_skip"#)
        #expect(fragment.parameterNames == ["n", "skip"])
        #expect(try Select(SQLExpression.value(42).as("answer")).render().sql == #"SELECT :l1 AS "answer""#)
        #expect(try Select(.all(of: TableName("t").as("x")), col("y")).from(TableName("t").as("x")).render().sql
            == #"SELECT "x".*, "y" FROM "t" AS "x""#)
        #expect(try Select(columns: [col("a"), ResultColumn.all]).render().sql == #"SELECT "a", *"#)
    }

    @Test func insertUpdateDelete() throws {
        let name = Param<String>("name")
        let insert = try Insert(into: products).set(col("name"), to: name).set(col("price"), to: 9.99).render()
        #expect(insert.sql == #"INSERT INTO "products" ("name", "price") VALUES (:p_name, :l1)"#)
        #expect(insert.literals == [.real(9.99)])
        #expect(try Insert(into: products, onConflict: .ignore).set(col("id"), to: 1).render().sql
            == #"INSERT OR IGNORE INTO "products" ("id") VALUES (:l1)"#)
        #expect(try Insert(into: products).onConflict(.replace).set(col("id"), to: 1).set(col("id"), to: 2).render()
            == SQLFragment(sql: #"INSERT OR REPLACE INTO "products" ("id") VALUES (:l1)"#, literals: [.integer(2)],
                           parameterNames: []))
        #expect(try Insert(into: products).render().sql == #"INSERT INTO "products" DEFAULT VALUES"#)

        let newPrice = Param<Double>("newPrice"), id = Param<Int>("id")
        let update = try Update(products).set(col("price"), to: newPrice).set(col("note"), to: "x")
            .set(col("copy"), to: col("price")).where(col("id") == id).render()
        #expect(update.sql == #"UPDATE "products" SET "price" = :p_newPrice, "note" = :l1, "copy" = "price" WHERE "id" = :p_id"#)
        #expect(try Update(products).set(col("a"), to: 1).render().sql == #"UPDATE "products" SET "a" = :l1"#)
        #expect(throws: SqlCipherError.invalidQuery(reason: "an Update sets no column; add .set(column, to: value)")) {
            try Update(products).where(col("id") == 1).render()
        }

        #expect(try Delete(products).where(col("id") == 3).render().sql == #"DELETE FROM "products" WHERE "id" = :l1"#)
        #expect(try Delete(products, allRows: true).render().sql == #"DELETE FROM "products""#)
        #expect(throws: SqlCipherError.deleteWithoutWhere(table: "products")) { try Delete(products).render() }
    }

    @Test func hostileIdentifiersAreQuoted() throws {
        let evil = TableName(#"t"; DROP TABLE x; --"#)
        let fragment = try Select(col(#"a"b"#), col("]x[").as("a\"s")).from(evil)
            .where(col("/* c */ y") == "'; DELETE FROM t; --").render()
        #expect(fragment.sql == #"SELECT "a""b", "]x[" AS "a""s" FROM "t""; DROP TABLE x; --" WHERE "/* c */ y" = :l1"#)
        #expect(fragment.literals == [.text("'; DELETE FROM t; --")])
        #expect(try Select(col("ünï🙂")).from(TableName("表")).render().sql == #"SELECT "ünï🙂" FROM "表""#)
    }

    @Test func identifierWithNulIsRejected() {
        #expect(throws: SqlCipherError.self) { try Select(col("a\u{0}b")).render() }
        do {
            _ = try Select(.all).from(TableName("x\u{0}; DROP TABLE y")).render()
            Issue.record("expected an error")
        } catch let SqlCipherError.invalidQuery(reason) {
            #expect(reason.contains(#""x\u{0}; DROP TABLE y""#))
            #expect(reason.contains("NUL"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func parameterNamesMustBeIdentifiers() {
        for bad in ["", "1a", "a-b", "a b", "é", "a;b", "x\u{0}"] {
            #expect(throws: SqlCipherError.self, "\(bad)") {
                try Select(.all).from(products).where(col("a") == Param<Int>(bad)).render()
            }
        }
        for good in ["a", "_", "A_1", "l1", "p_x"] {
            #expect(throws: Never.self) { try Select(.all).from(products).where(col("a") == Param<Int>(good)).render() }
        }
    }

    @Test func literalAndParameterNamesNeverCollide() throws {
        // A user parameter called "l1" renders :p_l1, distinct from the first literal :l1.
        let l1 = Param<Int>("l1")
        let fragment = try Select(.all).from(products).where(col("a") == 5 && col("b") == l1).render()
        #expect(fragment.sql == #"SELECT * FROM "products" WHERE "a" = :l1 AND "b" = :p_l1"#)
        #expect(fragment.parameterNames == ["l1"])
    }

    @Test func invalidSelects() {
        #expect(throws: SqlCipherError.self) { try Select(columns: []).render() }
        #expect(throws: SqlCipherError.self) { try Select(.all).from(products).having(.count > 1).render() }
        #expect(throws: SqlCipherError.self) { try Select(.all).join(products, on: col("a") == col("b")).render() }
    }
}
