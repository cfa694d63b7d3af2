import Foundation
import Testing
@testable import SqlCipherKit

/// Reading results row by row: cursors inside bodies, streams from outside.
@Suite struct StreamingTests {
    func database(_ directory: TemporaryDirectory, rows: Int = 50) async throws -> Database {
        let db = try Database(path: directory.path("s.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
        try await db.execute("CREATE TABLE log(msg TEXT)")
        try await db.transaction { conn in
            for index in 1...rows { try conn.execute("INSERT INTO items(name, price) VALUES (?, ?)", "item \(index)", Double(index)) }
        }
        return db
    }

    // MARK: Cursors

    @Test func aCursorReadsEveryRowAndThenNil() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let (names, after) = try await db.read { conn in
            let cursor = try conn.cursor("SELECT name FROM items WHERE price > ? ORDER BY id", 40.0)
            var names: [String] = []
            while let row = try cursor.next() { names.append(try row.decode("name", as: String.self)) }
            return (names, try cursor.next() == nil && cursor.next() == nil)
        }
        #expect(names == (41...50).map { "item \($0)" })
        #expect(after)
    }

    @Test func cursorsOfEntitiesOfBuilderQueriesAndOfJoins() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory, rows: 5)
        let maxPrice = Param<Double>("maxPrice")
        let cheap = Select(.all).from(TableName("items")).where(col("price") < maxPrice).orderBy(col("id"))
        struct Priced: Decodable, Sendable, Equatable { var name: String; var doubled: Double }
        let (items, rows, priced) = try await db.read { conn in
            var items: [Item] = []
            try conn.cursor(Item.self, sql: "SELECT * FROM items ORDER BY id").forEach { items.append($0) }
            var rows: [Int] = []
            try conn.cursor(cheap, maxPrice.set(3.0)).forEach { rows.append($0.get("id", as: Int.self) ?? -1) }
            var priced: [Priced] = []
            let joined = try conn.cursor(Priced.self, sql: """
                SELECT a.name, a.price + b.price AS doubled, 'extra' AS ignored
                FROM items a JOIN items b ON a.id = b.id WHERE a.id <= ? ORDER BY a.id
                """, 2)
            while let value = try joined.next() { priced.append(value) }
            var viaBuilder: [Item] = []
            try conn.cursor(Item.self, cheap, maxPrice.set(2.0)).forEach { viaBuilder.append($0) }
            #expect(viaBuilder.map(\.id) == [1])
            return (items, rows, priced)
        }
        #expect(items == (1...5).map { Item(id: $0, name: "item \($0)", price: Double($0)) })
        #expect(rows == [1, 2])
        #expect(priced == [Priced(name: "item 1", doubled: 2), Priced(name: "item 2", doubled: 4)])
    }

    @Test func aCursorLeftEarlyReleasesItsStatement() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let first = try await db.transaction { conn in
            let cursor = try conn.cursor("SELECT name FROM items ORDER BY id")
            return try cursor.next()?.get("name", as: String.self)
        }
        #expect(first == "item 1")
        // An open statement on `items` would make DROP TABLE fail with SQLITE_LOCKED.
        try await db.execute("INSERT INTO log VALUES ('after')")
        try await db.execute("DROP TABLE items")
        // And another connection can write: no lock was left behind.
        let other = try Database(path: directory.path("s.db"), rawKey: rawKey())
        try await other.execute("INSERT INTO log VALUES ('other')")
    }

    @Test func aCursorUsedAfterItsBodyThrows() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        final class Smuggled: @unchecked Sendable { var cursor: Cursor<Row>? }
        let box = Smuggled()
        try await db.read { conn in
            box.cursor = try conn.cursor("SELECT * FROM items")
            _ = try box.cursor?.next()
        }
        try await db.read { _ in
            #expect(throws: SqlCipherError.connectionNotUsable) { _ = try box.cursor?.next() }
        }
        // A cursor of a nested savepoint ends with that savepoint, not with the outer body.
        try await db.transaction { conn in
            try conn.savepoint { inner in
                box.cursor = try inner.cursor("SELECT * FROM items")
            }
            #expect(throws: SqlCipherError.connectionNotUsable) { _ = try box.cursor?.next() }
        }
        box.cursor = nil
    }

    @Test func theSameSQLRunsAgainWhileACursorIsOpen() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory, rows: 3)
        let pairs = try await db.read { conn in
            var pairs: [String] = []
            let outer = try conn.cursor("SELECT id FROM items ORDER BY id")
            while let row = try outer.next() {
                // The same text again: a cached statement reused here would reset the cursor.
                let count = try conn.query("SELECT id FROM items ORDER BY id").count
                pairs.append("\(row.get(0, as: Int.self) ?? 0)/\(count)")
            }
            return pairs
        }
        #expect(pairs == ["1/3", "2/3", "3/3"])
    }

    @Test func aReadBodyRefusesWrites() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory, rows: 1)
        await #expect(throws: SqlCipherError.readOnlyViolation(sql: "INSERT INTO log VALUES ('x')")) {
            try await db.read { conn in try conn.execute("INSERT INTO log VALUES ('x')") }
        }
        await #expect(throws: SqlCipherError.self) {
            try await db.read { conn in try conn.save(Item(id: nil, name: "n", price: 1)) }
        }
        await #expect(throws: SqlCipherError.self) {
            try await db.read { conn in try conn.execute("CREATE TABLE sneaky(x)") }
        }
        #expect(try await db.query("SELECT count(*) FROM log")[0].get(0, as: Int.self) == 0)
        #expect(try await db.query("SELECT count(*) FROM items")[0].get(0, as: Int.self) == 1)
        // After the read, writes work again.
        try await db.execute("INSERT INTO log VALUES ('ok')")
    }

    // MARK: Streams

    @Test func aStreamYieldsEveryRowInBatches() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory, rows: 1000)
        var ids: [Int] = []
        for try await row in db.stream("SELECT id FROM items WHERE price >= ? ORDER BY id", 1.0, batchSize: 7) {
            ids.append(row.get(0, as: Int.self) ?? -1)
        }
        #expect(ids == Array(1...1000))
        var items: [Item] = []
        for try await item in db.stream(Item.self, sql: "SELECT * FROM items WHERE id <= ?", 3) { items.append(item) }
        #expect(items.map(\.name) == ["item 1", "item 2", "item 3"])
        let select = Select(.all).from(TableName("items")).where(col("id") > 998).orderBy(col("id"))
        var viaBuilder: [Item] = []
        for try await item in db.stream(Item.self, select, batchSize: 1) { viaBuilder.append(item) }
        #expect(viaBuilder.map(\.id) == [999, 1000])
        var rows = 0
        for try await _ in db.stream(select, batchSize: 0) { rows += 1 }
        #expect(rows == 2)
        #expect(await db.openStreamCount == 0)
    }

    @Test func aStreamInterleavesWithWritesThatCommit() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory, rows: 100)
        var seen = 0
        for try await _ in db.stream("SELECT * FROM items ORDER BY id", batchSize: 10) {
            seen += 1
            if seen % 25 == 0 {
                // A write between batches runs at once, and is committed: another connection sees it.
                try await db.execute("INSERT INTO log VALUES (?)", "at \(seen)")
                let other = try Database(path: directory.path("s.db"), rawKey: rawKey())
                #expect(try await other.query("SELECT count(*) FROM log")[0].get(0, as: Int.self) == seen / 25)
                await other.close()
            }
        }
        #expect(seen == 100)
    }

    @Test func leavingAStreamEarlyReleasesItsStatement() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory, rows: 100)
        var seen = 0
        for try await _ in db.stream("SELECT * FROM items", batchSize: 10) {
            seen += 1
            break
        }
        #expect(seen == 1)
        try await waitUntil { await db.openStreamCount == 0 }
        #expect(await db.openStreamCount == 0)
        // A statement still open would make DROP TABLE fail with SQLITE_LOCKED.
        try await db.execute("DROP TABLE items")
        #expect(try await db.query("SELECT name FROM sqlite_master WHERE name = 'items'").isEmpty)
    }

    @Test func aStreamRefusesStatementsThatWrite() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory, rows: 3)
        await #expect {
            for try await _ in db.stream("DELETE FROM items") {}
        } throws: { error in
            guard case SqlCipherError.invalidQuery(let reason) = error else { return false }
            return reason.contains("only statements that read")
        }
        #expect(try await db.query("SELECT count(*) FROM items")[0].get(0, as: Int.self) == 3)
        #expect(await db.openStreamCount == 0)
    }

    @Test func streamErrorsArriveAtTheLoop() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory, rows: 3)
        await #expect(throws: SqlCipherError.self) {
            for try await _ in db.stream("SELECT * FROM missing") {}
        }
        await #expect(throws: SqlCipherError.multipleStatements(sql: "SELECT 1; SELECT 2")) {
            for try await _ in db.stream("SELECT 1; SELECT 2") {}
        }
        struct Narrow: Decodable, Sendable { var missing: Int }
        await #expect(throws: SqlCipherError.decodingFailed(entity: "Narrow", column: "missing", stored: "no such column", expected: "Int")) {
            for try await _ in db.stream(Narrow.self, sql: "SELECT id FROM items") {}
        }
        // Closing the database ends an open stream with databaseClosed.
        var iterator = db.stream("SELECT * FROM items", batchSize: 1).makeAsyncIterator()
        _ = try await iterator.next()
        await db.close()
        await #expect(throws: SqlCipherError.databaseClosed) { _ = try await iterator.next() }
        #expect(await db.openStreamCount == 0)
    }

    // MARK: Entities from any query

    @Test func entitiesFromRawSQLBuilderRowsAndFetchOne() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory, rows: 10)
        let viaSQL = try await db.fetch(Item.self, sql: "SELECT *, 42 AS unused FROM items WHERE price > ? ORDER BY id", 8.0)
        #expect(viaSQL.map(\.id) == [9, 10])
        let viaArray = try await db.fetch(Item.self, sql: "SELECT * FROM items WHERE id = ?", arguments: [3])
        #expect(viaArray.first?.name == "item 3")
        let limit = Param<Int>("limit")
        let select = Select(.all).from(TableName("items")).orderBy(col("price").descending).limit(limit)
        #expect(try await db.fetch(Item.self, select, limit.set(2)).map(\.id) == [10, 9])
        let rows = try await db.query("SELECT * FROM items WHERE id = 4")
        #expect(try rows[0].decode(Item.self) == Item(id: 4, name: "item 4", price: 4))
        #expect(try await db.fetchOne(Item.self, where: col("price") > 5.0, orderBy: col("price"))?.id == 6)
        #expect(try await db.fetchOne(Item.self, where: col("price") > 50.0) == nil)
        #expect(try await db.fetch(Item.self, orderBy: col("id"), limit: 3, offset: 4).map(\.id) == [5, 6, 7])
        // The same inside a body.
        let inside = try await db.read { conn in
            (try conn.fetch(Item.self, sql: "SELECT * FROM items WHERE id > ?", 8).count,
             try conn.fetch(Item.self, select, limit.set(1)).first?.id,
             try conn.fetchOne(Item.self, where: col("id") == 2)?.name,
             try conn.fetch(Item.self, orderBy: col("id"), limit: 2, offset: 8).map(\.id))
        }
        #expect(inside.0 == 2 && inside.1 == 10 && inside.2 == "item 2" && inside.3 == [9, 10])
    }

    @Test func aMissingColumnNamesTheColumnAndTheEntity() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory, rows: 1)
        let expected = SqlCipherError.decodingFailed(entity: "Item", column: "price", stored: "no such column", expected: "Double")
        await #expect(throws: expected) { try await db.fetch(Item.self, sql: "SELECT id, name FROM items") }
        let rows = try await db.query("SELECT id, name FROM items")
        #expect(throws: expected) { try rows[0].decode(Item.self) }
        await #expect(throws: expected) {
            try await db.read { conn in try conn.cursor(Item.self, sql: "SELECT id, name FROM items").next() }
        }
    }
}
