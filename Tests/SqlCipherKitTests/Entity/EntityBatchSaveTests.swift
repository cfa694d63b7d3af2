import Foundation
import Testing
@testable import SqlCipherKit

/// The batch path of `save([T])`: one writer, statements prepared once per column layout, values
/// bound by position, all inside one savepoint.
@Suite struct EntityBatchSaveTests {
    /// Encodes `note` only when it is set, so entities of one batch can have different columns.
    struct Sparse: Entity, Equatable {
        static let tableName = TableName("sparse")
        static let primaryKey: WritableKeyPath<Sparse, Int?> & Sendable = \.id
        var id: Int?
        var name: String
        var note: String?

        enum CodingKeys: String, CodingKey { case id, name, note }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            if let note { try container.encode(note, forKey: .note) }
            try container.encode(name, forKey: .name)
            // A repeated key: the last value wins, as with a single save.
            if name == "twice" { try container.encode("twice, renamed", forKey: .name) }
        }
    }

    /// Its key column holds another property, which only some entities make disagree with the key.
    struct KeyMismatch: Entity {
        static let tableName = TableName("swapped")
        static let primaryKey: WritableKeyPath<KeyMismatch, Int?> & Sendable = \.id
        var id: Int?
        var other: Int?
        var name: String

        enum CodingKeys: String, CodingKey { case id = "other", other = "id", name }
    }

    /// Every strategy the loaded SQLite can run.
    static var strategies: [EntitySaveStrategy] {
        [.automatic, .updateThenInsert] + (isSQLCipher4() ? [.upsert] : [])
    }

    func makeDatabase(_ dir: TemporaryDirectory) async throws -> Database {
        let db = try builderTestDatabase(dir)
        try await db.execute("""
            CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, price REAL NOT NULL);
            CREATE TABLE key_only(id INTEGER PRIMARY KEY);
            CREATE TABLE swapped(id INTEGER PRIMARY KEY, other INTEGER, name TEXT NOT NULL);
            CREATE TABLE sparse(id INTEGER PRIMARY KEY, name TEXT NOT NULL, note TEXT DEFAULT 'default note');
            """)
        return db
    }

    @Test(arguments: strategies)
    func mixedNewAndExistingKeys(strategy: EntitySaveStrategy) async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        let first = try await db.save([Product(id: nil, name: "a", price: 1), Product(id: nil, name: "b", price: 2)],
                                      strategy: strategy)
        #expect(first.map(\.id) == [1, 2])

        let saved = try await db.save([
            Product(id: nil, name: "c", price: 3),          // new: SQLite assigns 3
            Product(id: 1, name: "a", price: 10),           // existing: updated in place
            Product(id: 50, name: "fifty", price: 50),      // a key that does not exist: inserted
            Product(id: nil, name: "d", price: 4),          // new again: SQLite assigns 51
            Product(id: 2, name: "b2", price: 20),          // existing
        ], strategy: strategy)
        #expect(saved.map(\.id) == [3, 1, 50, 51, 2])
        #expect(try await db.fetch(Product.self, orderBy: col("id")) == [
            Product(id: 1, name: "a", price: 10), Product(id: 2, name: "b2", price: 20),
            Product(id: 3, name: "c", price: 3), Product(id: 50, name: "fifty", price: 50),
            Product(id: 51, name: "d", price: 4),
        ])
    }

    @Test(arguments: strategies)
    func aFailureInTheMiddleUndoesTheWholeBatch(strategy: EntitySaveStrategy) async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        let before = try await db.save([Product(id: nil, name: "a", price: 1), Product(id: nil, name: "b", price: 2)])

        do {
            try await db.save([
                Product(id: nil, name: "new", price: 3),
                Product(id: 1, name: "a", price: 100),      // an update that must be undone
                Product(id: nil, name: "b", price: 9),      // UNIQUE(name) fails here
                Product(id: nil, name: "never", price: 4),
            ], strategy: strategy)
            Issue.record("expected a UNIQUE failure")
        } catch let SqlCipherError.sqlite(code, _, _, _) {
            #expect(code == 19)  // SQLITE_CONSTRAINT
        }
        #expect(try await db.fetch(Product.self, orderBy: col("id")) == before)

        // The statements were reset: the next batch runs and reuses them.
        let after = try await db.save([Product(id: nil, name: "c", price: 3)], strategy: strategy)
        #expect(after[0].id == 3)
    }

    @Test func anEncodingFailureInTheMiddleUndoesTheWholeBatch() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        do {
            try await db.save([
                KeyMismatch(id: nil, other: nil, name: "agrees: both nil"),
                KeyMismatch(id: 5, other: 6, name: "disagrees"),
            ])
            Issue.record("expected an encoding failure")
        } catch let SqlCipherError.encodingFailed(entity, reason) {
            #expect(entity == "KeyMismatch")
            #expect(reason.contains("primaryKeyColumn"))
        }
        #expect(try await db.query("SELECT count(*) AS n FROM swapped")[0].get("n", as: Int.self) == 0)
    }

    @Test(arguments: strategies)
    func entitiesOfOneBatchMayEncodeDifferentColumns(strategy: EntitySaveStrategy) async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        let saved = try await db.save([
            Sparse(id: nil, name: "with", note: "mine"),
            Sparse(id: nil, name: "without", note: nil),     // note left out: the column default
            Sparse(id: nil, name: "twice", note: nil),
            Sparse(id: nil, name: "with again", note: "again"),
        ], strategy: strategy)
        #expect(saved.map(\.id) == [1, 2, 3, 4])
        var rows = try await db.query("SELECT name, note FROM sparse ORDER BY id").map {
            [$0.get("name", as: String.self) ?? "NULL", $0.get("note", as: String.self) ?? "NULL"]
        }
        #expect(rows == [["with", "mine"], ["without", "default note"], ["twice, renamed", "default note"],
                         ["with again", "again"]])

        // Updates: a column left out keeps its value.
        try await db.save([Sparse(id: 1, name: "with, renamed", note: nil), Sparse(id: 2, name: "without", note: "set"),
                           Sparse(id: 9, name: "nine", note: nil)], strategy: strategy)
        rows = try await db.query("SELECT name, note FROM sparse ORDER BY id").map {
            [$0.get("name", as: String.self) ?? "NULL", $0.get("note", as: String.self) ?? "NULL"]
        }
        #expect(rows == [["with, renamed", "mine"], ["without", "set"], ["twice, renamed", "default note"],
                         ["with again", "again"], ["nine", "default note"]])
    }

    @Test(arguments: strategies)
    func keyOnlyEntitiesInABatch(strategy: EntitySaveStrategy) async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        let saved = try await db.save([KeyOnly(id: 7), KeyOnly(id: nil), KeyOnly(id: 7), KeyOnly(id: 3), KeyOnly(id: nil)],
                                      strategy: strategy)
        #expect(saved.map(\.id) == [7, 8, 7, 3, 9])
        #expect(try await db.fetch(KeyOnly.self, orderBy: col("id")).map(\.id) == [3, 7, 8, 9])
    }

    /// SQLCipher 3.4.1 (SQLite 3.15) has no UPSERT: the automatic strategy must update then insert.
    @Test func automaticStrategyFitsTheLoadedSQLite() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        try await db.save([Product(id: 1, name: "a", price: 1)])
        try await db.save([Product(id: 1, name: "a", price: 2), Product(id: 2, name: "b", price: 3)])
        #expect(try await db.fetch(Product.self, orderBy: col("id"))
            == [Product(id: 1, name: "a", price: 2), Product(id: 2, name: "b", price: 3)])
        if !isSQLCipher4() {
            // The UPSERT form is a syntax error there, which shows the automatic choice mattered.
            await #expect(throws: SqlCipherError.self) {
                try await db.save([Product(id: 1, name: "a", price: 5)], strategy: .upsert)
            }
            #expect(try await db.fetchOne(Product.self, id: 1)?.price == 2)
        }
    }

    @Test func anEmptyBatchSavesNothing() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        #expect(try await db.save([Product]()).isEmpty)
        #expect(try await db.count(Product.self) == 0)
    }

    /// Fetching decodes while stepping: a row that does not decode stops the fetch, and the
    /// statement is reset so that the connection goes on.
    @Test func aRowThatDoesNotDecodeLeavesTheConnectionUsable() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        try await db.save((1...100).map { Product(id: nil, name: "p\($0)", price: Double($0)) })
        try await db.execute("UPDATE products SET price = 'not a number' WHERE id = 50")
        do {
            _ = try await db.fetch(Product.self, orderBy: col("id"))
            Issue.record("expected a decoding failure")
        } catch let SqlCipherError.decodingFailed(entity, column, stored, _) {
            #expect(entity == "Product")
            #expect(column == "price")
            #expect(stored.contains("not a number"))
        }
        // No statement was left running: a write transaction and the same fetch both work.
        try await db.transaction { conn in
            try conn.execute("UPDATE products SET price = 50 WHERE id = 50")
        }
        let all = try await db.fetch(Product.self, orderBy: col("id"))
        #expect(all.count == 100)
        #expect(all[49] == Product(id: 50, name: "p50", price: 50))
        #expect(try await db.fetch(Product.self, where: col("id") > 1000).isEmpty)
    }
}
