import Foundation
import SqlCipherKit
import Testing

/// `exists(_:where:)` and `deleteAll(_:)` on Database, DatabasePool and Connection.
@Suite struct EntityExistsAndDeleteAllTests {
    static let schema = """
        CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL);
        CREATE TABLE deleted(name TEXT);
        CREATE TRIGGER items_deleted AFTER DELETE ON items BEGIN INSERT INTO deleted VALUES (old.name); END;
        """

    func check(_ db: some DatabaseAccess) async throws {
        try await db.execute(Self.schema)
        #expect(try await !db.exists(Item.self))
        #expect(try await !db.exists(Item.self, where: col("price") > 1.0))
        try await db.save([Item(id: nil, name: "pen", price: 1.5), Item(id: nil, name: "cup", price: 0.5)])
        #expect(try await db.exists(Item.self))
        #expect(try await db.exists(Item.self, where: col("price") > 1.0))
        #expect(try await !db.exists(Item.self, where: col("name") == "it's; DROP TABLE items"))

        // The raw builder still refuses a delete without where: deleteAll is the explicit way.
        await #expect(throws: SqlCipherError.deleteWithoutWhere(table: "items")) {
            try await db.execute(Delete(Item.tableName))
        }
        #expect(try await db.count(Item.self) == 2)
        #expect(try await db.deleteAll(Item.self) == 2)
        #expect(try await db.count(Item.self) == 0)
        #expect(try await !db.exists(Item.self))
        // A real DELETE: the delete trigger ran for each row.
        #expect(try await db.query("SELECT name FROM deleted ORDER BY name").map { $0.get(0, as: String.self) } == ["cup", "pen"])
        #expect(try await db.deleteAll(Item.self) == 0)
    }

    @Test func onADatabase() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("e.db"), rawKey: rawKey())
        try await check(db)
        await db.close()
    }

    @Test func onADatabasePool() async throws {
        let dir = TemporaryDirectory()
        let pool = try DatabasePool(path: dir.path("e.db"), rawKey: rawKey())
        try await check(pool)
        await pool.close()
    }

    /// On the connection of a body: a deleteAll undone with its transaction, exists inside `read`.
    @Test func onAConnection() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("e.db"), rawKey: rawKey())
        try await db.execute(Self.schema)
        try await db.save(Item(id: nil, name: "pen", price: 1.5))
        await #expect(throws: CancellationError.self) {
            try await db.transaction { conn in
                #expect(try conn.deleteAll(Item.self) == 1)
                #expect(try !conn.exists(Item.self))
                throw CancellationError()
            }
        }
        #expect(try await db.read { conn in try conn.exists(Item.self, where: col("name") == "pen") })
        #expect(try await db.transaction { conn in try conn.deleteAll(Item.self) } == 1)
        #expect(try await db.read { conn in try conn.exists(Item.self) } == false)
        // deleteAll writes: a read body refuses it.
        await #expect(throws: SqlCipherError.self) { try await db.read { conn in try conn.deleteAll(Item.self) } }
        await db.close()
    }
}
