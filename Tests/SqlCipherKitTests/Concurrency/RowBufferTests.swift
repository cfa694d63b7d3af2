import Foundation
import Testing
@testable import SqlCipherKit

/// Rows without objects (issue 13 item 2): a cursor reads every row into one buffer while the
/// caller lets each row go, and a row that is kept keeps its values; `[Row]` results share one
/// buffer and start small.
@Suite struct RowBufferTests {
    func database(_ directory: TemporaryDirectory) async throws -> Database {
        let db = try Database(path: directory.path("rows.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER, r REAL, s TEXT, b BLOB)")
        try await db.transaction { conn in
            for id in 1...200 {
                try conn.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", id, id * 3, Double(id) / 4,
                                 id % 3 == 0 ? nil : "text \(id)", id % 5 == 0 ? Data([UInt8(id % 256), 1]) : nil)
            }
        }
        return db
    }

    /// The expected values of row `id`.
    static func expected(_ id: Int) -> [DatabaseValue] {
        [.integer(Int64(id)), .integer(Int64(id * 3)), .real(Double(id) / 4),
         id % 3 == 0 ? .null : .text("text \(id)"), id % 5 == 0 ? .blob(Data([UInt8(id % 256), 1])) : .null]
    }

    @Test func aCursorReusesOneBufferWhileNoRowIsKept() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let (buffers, count) = try await db.read { conn in
            let cursor = try conn.cursor("SELECT id, n, r, s, b FROM t ORDER BY id")
            var buffers = Set<ObjectIdentifier>()
            var count = 0
            while let row = try cursor.next() {
                count += 1
                #expect(Array(row.values) == Self.expected(count))
                buffers.insert(ObjectIdentifier(row.storage))
            }
            return (buffers.count, count)
        }
        #expect(count == 200)
        #expect(buffers == 1, "a cursor whose rows are let go allocates one row buffer, not one per row")

        // forEach lets each row go as well.
        let forEachBuffers = try await db.read { conn in
            var buffers = Set<ObjectIdentifier>()
            try conn.cursor("SELECT * FROM t").forEach { row in buffers.insert(ObjectIdentifier(row.storage)) }
            return buffers.count
        }
        #expect(forEachBuffers == 1)
    }

    @Test func rowsKeptFromACursorKeepTheirValues() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        // Every row kept: each needs a buffer of its own, and none changes when the cursor moves on.
        let kept = try await db.read { conn in
            let cursor = try conn.cursor("SELECT id, n, r, s, b FROM t ORDER BY id")
            var rows: [Row] = []
            while let row = try cursor.next() { rows.append(row) }
            return rows
        }
        #expect(kept.count == 200)
        for (index, row) in kept.enumerated() {
            #expect(Array(row.values) == Self.expected(index + 1))
            #expect(row.get("s", as: String.self) == (((index + 1) % 3 == 0) ? nil : "text \(index + 1)"))
        }
        #expect(Set(kept.map { ObjectIdentifier($0.storage) }).count == 200)

        // Every other row kept, and values read from the others: a kept row is never overwritten.
        let (some, buffers) = try await db.read { conn in
            let cursor = try conn.cursor("SELECT id, n, r, s, b FROM t ORDER BY id")
            var rows: [Row] = []
            var buffers = Set<ObjectIdentifier>()
            while let row = try cursor.next() {
                buffers.insert(ObjectIdentifier(row.storage))
                if row.get(0, as: Int.self)! % 2 == 0 { rows.append(row) }
            }
            return (rows, buffers.count)
        }
        #expect(some.map { $0.get(0, as: Int.self) } == Array(stride(from: 2, through: 200, by: 2)))
        for row in some { #expect(Array(row.values) == Self.expected(row.get(0, as: Int.self)!)) }
        #expect(buffers <= 101, "a buffer is reused after each row that was let go (\(buffers))")
    }

    @Test func aRowSentToAnotherTaskKeepsItsValues() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let (stream, continuation) = AsyncStream<Row>.makeStream()
        let consumer = Task {
            var seen: [[DatabaseValue]] = []
            for await row in stream { seen.append(Array(row.values)) }
            return seen
        }
        try await db.read { conn in
            let cursor = try conn.cursor("SELECT id, n, r, s, b FROM t ORDER BY id")
            while let row = try cursor.next() { continuation.yield(row) }
            continuation.finish()
        }
        let seen = await consumer.value
        #expect(seen == (1...200).map(Self.expected))
    }

    @Test func queryResultsShareOneBufferAndStartSmall() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let rows = try await db.query("SELECT id, n, r, s, b FROM t ORDER BY id")
        #expect(rows.count == 200)
        #expect(Set(rows.map { ObjectIdentifier($0.storage) }).count == 1)
        for (index, row) in rows.enumerated() { #expect(Array(row.values) == Self.expected(index + 1)) }
        // An empty result, a one-row result, and a result without columns.
        #expect(try await db.query("SELECT * FROM t WHERE id < 0").isEmpty)
        let one = try await db.query("SELECT n FROM t WHERE id = 7")
        #expect(one.count == 1 && one[0][0] == .integer(21))
        #expect(try await db.query("UPDATE t SET n = n WHERE id = 1").isEmpty)
    }

    /// Column lookups by name: the identity test answers only with an exact match, and reading a
    /// row from its first column again after its last finds the first column.
    @Test func lookupsByNameAfterTheLastColumnAndWithLookalikes() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        // A table cannot have both Tag and tag; a result can.
        let sql = "SELECT 1 AS \"é\", 2 AS \"e\u{301}\", 3 AS \"Tag\", 4 AS \"tag\""
        let composed = "é", decomposed = "e\u{301}"
        for row in try await db.query(sql) + (try await db.read { conn in
            var rows: [Row] = []
            try conn.cursor(sql).forEach { rows.append($0) }
            return rows
        }) {
            for _ in 0..<3 {
                #expect(row.get(composed, as: Int.self) == 1)
                #expect(row.get(decomposed, as: Int.self) == 2)
                #expect(row.get("Tag", as: Int.self) == 3)
                #expect(row.get("tag", as: Int.self) == 4)
                #expect(row.get("TAG", as: Int.self) == 3)
                #expect(row.get("missing", as: Int.self) == nil)
            }
        }
        let count = try await db.read { conn in
            var count = 0
            try conn.cursor("SELECT id, n FROM t ORDER BY id").forEach { row in
                count += 1
                #expect(row.get("id", as: Int.self) == count)
                #expect(row.get("n", as: Int.self) == count * 3)
            }
            return count
        }
        #expect(count == 200)
    }
}
