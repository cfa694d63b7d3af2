import Foundation
import SqlCipherKit
import Testing

/// How `row.get("name")` finds its column: exact bytes first, then ASCII case folded, the first
/// of repeated names winning, whichever path the lookup takes (the next-column guess, the
/// comparison of packed prefixes, the byte comparison of long names, the dictionary of wide
/// results).
@Suite struct ColumnLookupTests {
    let db: Database

    init() throws {
        db = try Database(path: ":memory:", rawKey: rawKey())
    }

    @Test func readingInOrderAndOutOfOrderFindTheSameColumns() async throws {
        let row = try await db.query("SELECT 1 AS a, 2 AS b, 3 AS c, 4 AS d")[0]
        #expect(["a", "b", "c", "d"].map { row.get($0, as: Int.self) } == [1, 2, 3, 4])
        #expect(["d", "b", "a", "c", "c", "a"].map { row.get($0, as: Int.self) } == [4, 2, 1, 3, 3, 1])
        #expect(row["e"] == nil)
    }

    @Test func aRepeatedNameAlwaysFindsItsFirstColumn() async throws {
        // After `x` (column 0) the guess points at column 1, also named `x`: it must not answer.
        let row = try await db.query("SELECT 1 AS x, 2 AS x, 3 AS y, 4 AS X")[0]
        for _ in 0..<3 {
            #expect(row.get("x", as: Int.self) == 1)
            #expect(row.get("y", as: Int.self) == 3)
            #expect(row.get("X", as: Int.self) == 4)   // an exact match beats an earlier folded one
        }
    }

    @Test func longNamesCompareEveryByte() async throws {
        let row = try await db.query(
            "SELECT 1 AS customer_name, 2 AS customer_note, 3 AS customer, 4 AS customer_name_2")[0]
        #expect(row.get("customer_note", as: Int.self) == 2)
        #expect(row.get("customer_name", as: Int.self) == 1)
        #expect(row.get("customer", as: Int.self) == 3)
        #expect(row.get("customer_name_2", as: Int.self) == 4)
        #expect(row.get("CUSTOMER_NOTE", as: Int.self) == 2)
        #expect(row["customer_nam"] == nil)
        #expect(row["customer_name_"] == nil)
    }

    @Test func onlyASCIILettersFoldCase() async throws {
        let row = try await db.query("SELECT 1 AS \"Été\", 2 AS \"@a\", 3 AS \"_1\"")[0]
        #expect(row.get("Été", as: Int.self) == 1)
        #expect(row["été"] == nil)         // É and é differ outside ASCII
        #expect(row.get("ÉTÉ", as: Int.self) == nil)
        #expect(row["`a"] == nil)           // '@' | 0x20 is '`', which is not a letter
        #expect(row["_1"] == .integer(3))
    }

    @Test func wideResultsFollowTheSameRules() async throws {
        let columns = (0..<40).map { "\($0) AS col\($0)" } + ["98 AS dup", "99 AS dup", "100 AS Dup"]
        let row = try await db.query("SELECT " + columns.joined(separator: ", "))[0]
        #expect(row.count == 43)
        #expect(row.get("col0", as: Int.self) == 0)
        #expect(row.get("col39", as: Int.self) == 39)
        #expect(row.get("COL17", as: Int.self) == 17)
        #expect(row.get("dup", as: Int.self) == 98)
        #expect(row.get("Dup", as: Int.self) == 100)
        #expect(row.get("DUP", as: Int.self) == 98)
        #expect(row["col40"] == nil)
    }

    @Test func rowsOfOneResultShareTheLookupSafelyAcrossTasks() async throws {
        let rows = try await db.query(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) "
                + "SELECT i AS a, i * 2 AS b, i * 3 AS c FROM n")
        let sums = await withTaskGroup(of: Int.self) { group in
            for order in [["a", "b", "c"], ["c", "b", "a"], ["b", "a", "c"], ["a", "a", "c"]] {
                group.addTask {
                    rows.reduce(0) { total, row in
                        total + order.reduce(0) { $0 + (row.get($1, as: Int.self) ?? -1_000_000) }
                    }
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        let n = 200 * 201 / 2
        #expect(sums.sorted() == [n * 5, n * 6, n * 6, n * 6].sorted())
    }
}
