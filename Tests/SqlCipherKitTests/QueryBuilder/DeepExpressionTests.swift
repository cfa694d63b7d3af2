import Foundation
import Testing
@testable import SqlCipherKit

/// Builder expressions nested deeper than SQLite accepts (issue 12, item 6). Rendering recursed
/// once per level and a few thousand levels overflowed the stack (SIGSEGV); comparing, hashing and
/// releasing such a tree recursed as well. Now an expression deeper than SQLite's limit (1000,
/// SQLITE_MAX_EXPR_DEPTH) keeps no tree and rendering it throws `invalidQuery`; anything up to
/// the limit renders without recursion and runs.
@Suite struct DeepExpressionTests {
    static let hostileDepth = 100_000

    /// Every way of nesting the builder offers, each exactly `depth` levels deep: every step adds
    /// one level.
    static func shapes(depth: Int) -> [(String, SQLExpression)] {
        let steps: [(String, (SQLExpression, Int) -> SQLExpression)] = [
            ("left-deep AND", { e, level in e && col("a") == level }),
            ("right-deep OR", { e, level in col("a") == level || e }),
            ("NOT chain", { e, _ in !e }),
            ("IS NOT NULL chain", { e, _ in e.isNotNull }),
            ("IN chain", { e, level in col("a").in([e, SQLExpression.value(level)]) }),
            ("BETWEEN chain", { e, _ in col("a").between(e, and: col("b")) }),
            ("aggregate chain", { e, _ in .count(e) }),
            ("mixed", { e, level in
                switch level % 4 {
                case 0: return e && col("b") != level
                case 1: return !e
                case 2: return e || col("c").isNull
                default: return e.isNotNull
                }
            }),
        ]
        return steps.map { name, step in
            var expression = col("a") == 0
            for level in 0..<(depth - 2) { expression = step(expression, level) }
            return (name, expression)
        }
    }

    static func expectTooDeep(_ body: () throws -> Void, _ comment: Comment) {
        do {
            try body()
            Issue.record("rendered: \(comment)")
        } catch let SqlCipherError.invalidQuery(reason) {
            #expect(reason.contains("levels deep") && reason.contains("1000"), comment)
        } catch {
            Issue.record("\(comment): \(error)")
        }
    }

    @Test func aHundredThousandLevelsThrowInvalidQueryEverywhereAndNothingCrashes() throws {
        let products = TableName("products")
        for (shape, deep) in Self.shapes(depth: Self.hostileDepth) {
            #expect(deep.depth == Self.hostileDepth, "\(shape)")
            #expect(deep.description == "<invalid expression>", "\(shape)")
            // Comparing, hashing and copying a deep expression must not recurse through it.
            let copy = deep
            #expect(copy == deep, "\(shape)")
            #expect(copy.hashValue == deep.hashValue, "\(shape)")
            var set: Set<SQLExpression> = [deep, copy]
            set.insert(col("a") == 1)
            #expect(set.count == 2, "\(shape)")

            Self.expectTooDeep({ _ = try Select(.all).from(products).where(deep).render() }, "where, \(shape)")
            Self.expectTooDeep({ _ = try Select(deep.as("x")).render() }, "result column, \(shape)")
            Self.expectTooDeep({ _ = try Select(.all).from(products).orderBy(deep.descending).render() }, "order by, \(shape)")
            Self.expectTooDeep({ _ = try Select(.count(deep)).from(products).render() }, "aggregate, \(shape)")
            Self.expectTooDeep({
                _ = try Select(col("a"), .count).from(products).groupBy(col("a")).having(deep).render()
            }, "having, \(shape)")
            Self.expectTooDeep({
                _ = try Select(.all).from(products).join(TableName("other"), on: deep).render()
            }, "join, \(shape)")
            Self.expectTooDeep({ _ = try Update(products).set(col("a"), to: 1).where(deep).render() }, "update where, \(shape)")
            Self.expectTooDeep({ _ = try Update(products).set(col("a"), to: deep).render() }, "update value, \(shape)")
            Self.expectTooDeep({ _ = try Insert(into: products).set(col("a"), to: deep).render() }, "insert value, \(shape)")
            Self.expectTooDeep({ _ = try Delete(products).where(deep).render() }, "delete, \(shape)")
            Self.expectTooDeep({ _ = try Select(.all).from(products).where(col("a").in([deep])).render() }, "in list, \(shape)")
            Self.expectTooDeep({ _ = try Select(.all).from(products).where(col("a").between(deep, and: col("b"))).render() }, "between, \(shape)")
        }
    }

    @Test func wherePiledUpAHundredThousandTimesIsRefused() throws {
        var select = Select(.all).from(TableName("products"))
        var delete = Delete(TableName("products"))
        for level in 0..<Self.hostileDepth {
            select = select.where(col("a") != level)
            delete = delete.where(col("a") != level)
        }
        Self.expectTooDeep({ _ = try select.render() }, "select")
        Self.expectTooDeep({ _ = try delete.render() }, "delete")
        // Templates holding such expressions compare and hash without recursion too.
        #expect(select == select)
        _ = select.hashValue
    }

    @Test func theLimitIsSQLitesOwn() throws {
        let thousand = Self.shapes(depth: 1000)
        for (shape, expression) in thousand {
            #expect(expression.depth == 1000, "\(shape)")
            let fragment = try Select(.all).from(TableName("t")).where(expression).render()
            #expect(fragment.sql.hasPrefix(#"SELECT * FROM "t" WHERE "#), "\(shape)")
            #expect(expression.description != "<invalid expression>", "\(shape)")
        }
        for (shape, expression) in Self.shapes(depth: 1001) {
            #expect(expression.depth == 1001, "\(shape)")
            Self.expectTooDeep({ _ = try Select(.all).from(TableName("t")).where(expression).render() }, "\(shape)")
        }
    }

    /// The deepest trees an expression keeps are compared, hashed, rendered and released on a
    /// thread with a small stack (macOS gives secondary threads 512 KiB): what is left recursive
    /// (the synthesized `==` and `hash(into:)`, and releasing) stays within it.
    @Test func theDeepestKeptTreesFitASmallStack() throws {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failures: [String] = []
        let thread = Thread {
            for (shape, expression) in Self.shapes(depth: SQLExpression.maximumDepth) {
                let twin = Self.shapes(depth: SQLExpression.maximumDepth).first { $0.0 == shape }!.1
                if expression != twin { failures.append("\(shape): equal trees compare unequal") }
                if expression.hashValue != twin.hashValue { failures.append("\(shape): equal trees hash differently") }
                if (try? Select(.all).from(TableName("t")).where(expression).render()) == nil {
                    failures.append("\(shape): did not render")
                }
            }
            done.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        done.wait()
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func theIterativeRendererWritesWhatTheRecursiveOneDid() throws {
        let name = Param<String>("name")
        let others: [any SQLExpressible] = [SQLExpression.value(7), col("i")]
        let expression = !(col("a") == 1 || col("b").between(2, and: 3)) && col("c").in([4, 5])
            && col("d").like("x%", escape: "\\") && (col("e") != name || col("f").isNull)
            && SQLExpression.value(6) <= col("g") && col("h").notIn(others)
        let fragment = try Select(.sum(col("a")), col("b").as("bee")).from(TableName("t")).where(expression)
            .orderBy(col("c").descending).limit(8).render()
        #expect(fragment.sql == #"""
            SELECT sum("a"), "b" AS "bee" FROM "t" WHERE NOT ("a" = :l1 OR "b" BETWEEN :l2 AND :l3) \#
            AND "c" IN (:l4, :l5) AND "d" LIKE :l6 ESCAPE :l7 AND ("e" <> :p_name OR "f" IS NULL) \#
            AND :l8 <= "g" AND "h" NOT IN (:l9, "i") ORDER BY "c" DESC LIMIT :l10
            """#)
        #expect(fragment.literals == [.integer(1), .integer(2), .integer(3), .integer(4), .integer(5),
                                      .text("x%"), .text("\\"), .integer(6), .integer(7), .integer(8)])
        #expect(fragment.parameterNames == ["name"])
    }

    @Test func nineHundredLevelsRunEndToEnd() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER)")
        try await db.transaction { conn in
            for id in 0..<2000 { try conn.execute("INSERT INTO t(id, a) VALUES (?, ?)", id, id % 1000) }
        }
        // 900 conditions, as a program that adds a filter per excluded value would build them.
        var select = Select(col("a")).from(TableName("t")).orderBy(col("id"))
        for excluded in 0..<900 { select = select.where(col("a") != excluded) }
        let rows = try await db.query(select)
        #expect(rows.count == 200)
        #expect(rows.allSatisfy { ($0.get(0, as: Int.self) ?? 0) >= 900 })

        var anyOf = col("a") == -1
        for value in 0..<899 { anyOf = anyOf || col("a") == value }
        #expect(try await db.query(Select(.count).from(TableName("t")).where(anyOf))[0].get(0, as: Int.self) == 1798)
        #expect(try await db.execute(Delete(TableName("t")).where(anyOf)) == 1798)
        #expect(try await countRows(db) == 202)
    }

    @Test func nanLiteralsAreRefusedAndNilStillMeansIsNull() throws {
        let table = TableName("t")
        let nanComparisons: [(String, SQLExpression)] = [
            ("==", col("x") == Double.nan), ("!=", col("x") != Double.nan), ("<", col("x") < Float.nan),
            ("literal first", Double.nan == col("x")), ("optional", col("x") == Optional(Double.nan)),
            ("in", col("x").in([1.0, .nan])), ("between", col("x").between(0.0, and: .nan)),
            ("value", col("x") == SQLExpression.value(Double.nan)),
        ]
        for (label, expression) in nanComparisons {
            do {
                _ = try Select(.all).from(table).where(expression).render()
                Issue.record("\(label): a NaN comparison rendered")
            } catch let SqlCipherError.invalidQuery(reason) {
                #expect(reason.contains("NaN"), "\(label)")
            }
        }
        let isNull = try Select(.all).from(table).where(col("x") == Optional<Double>.none).render()
        #expect(isNull.sql == #"SELECT * FROM "t" WHERE "x" IS NULL"#)
        let finite = try Select(.all).from(table).where(col("x") < Double.infinity).render()
        #expect(finite.literals == [.real(.infinity)])
    }
}
