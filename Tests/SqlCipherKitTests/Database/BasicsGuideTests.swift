import Foundation
import SqlCipherKit
import Testing

/// Draws for the `render` of the guide's live-query example.
private let basicsRenderings = GuideRenderings()

/// The examples of the DocC articles "Getting started", "Raw SQL", "Transactions and savepoints"
/// and of the landing page, each copied as it stands in its article (checked by
/// `ArticleCodeBlockTests`) inside the setup it assumes, and run against a temporary database.
/// Blocks whose paths are the reader's own (`/data/...`) are compiled, not run.
@Suite struct BasicsGuideTests {
    // MARK: Compiled only: the reader's own paths

    /// GettingStarted.md, block 1.
    func gettingStartedOpenings(keyBytes: Data) throws {
        // A passphrase: SQLCipher derives the key with PBKDF2 (about 200 ms on SQLCipher 4, by design).
        let db = try Database(path: "/data/store.db", key: "my-passphrase")

        // A raw 32-byte key from a key store: no key derivation, opens at once.
        let fast = try Database(path: "/data/fast.db", rawKey: keyBytes)

        // A plaintext SQLite file, on purpose.
        let plain = try Database(unencryptedPath: "/data/public.db")
        _ = (db, fast, plain)
    }

    /// SqlCipherKit.md (the landing page), its one block.
    func landingPageExample() async throws {
        let db = try Database(path: "/var/lib/myapp/store.db", key: "correct horse battery staple")
        try await db.execute("CREATE TABLE IF NOT EXISTS notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        try await db.execute("INSERT INTO notes(body) VALUES (?)", "hello, encrypted world")
        let rows = try await db.query("SELECT id, body FROM notes ORDER BY id")
        await db.close()
        _ = rows
    }

    // MARK: Run

    @Test func cipherSettingsForOtherFormats() throws {
        let dir = TemporaryDirectory()
        let (legacyPath, tunedPath) = (dir.path("legacy.db"), dir.path("tuned.db"))
        let legacy = try Database(path: legacyPath, key: "k", cipher: .sqlcipher3)
        let tuned = try Database(path: tunedPath, key: "k", cipher: CipherSettings(pageSize: 8192, kdfIterations: 100_000))
        #expect(legacy.isEncrypted && tuned.isEncrypted)
    }

    @Test func rawSQLAndTransactions() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("basics.db"), rawKey: rawKey(3))
        try await db.execute("CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT NOT NULL)")
        try await db.execute("CREATE TABLE drafts(body TEXT)")
        try await db.execute("INSERT INTO drafts(body) VALUES ('draft')")

        try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL)")
        try await db.execute("INSERT INTO products(name, price) VALUES (?, ?)", "Widget", 9.99)
        let rows = try await db.query("SELECT name, price FROM products WHERE price < ?", 50.0)
        let name = rows.first?.get("name", as: String.self)

        let orderID = try await db.transaction { conn in
            try conn.execute("INSERT INTO orders(customer) VALUES (?)", "Alice")
            return conn.lastInsertRowID
        }
        #expect(rows.count == 1 && name == "Widget")
        #expect(orderID == 1)

        Task<Void, any Error> {
            try await db.transaction { conn in _ = try conn.execute("DELETE FROM drafts") }
        }
        try await waitUntil { try await db.query("SELECT count(*) FROM drafts")[0].get(0, as: Int.self) == 0 }

        let maxPrice = Param<Double>("maxPrice")
        let cheap = Select(.all).from(TableName("products")).where(col("price") < maxPrice).orderBy(col("price"))
        let result = try await db.query(cheap, maxPrice.set(50.0))
        #expect(result.map { $0.get("name", as: String.self) } == ["Widget"])
    }

    @Test func entitiesMigrationsAndLiveValues() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("entities.db"), rawKey: rawKey(3))
        try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
        struct Product: Entity {
            static let tableName = TableName("products")
            static let primaryKey: WritableKeyPath<Product, Int?> & Sendable = \.id
            var id: Int?
            var name: String
            var price: Double
        }

        let saved = try await db.save(Product(id: nil, name: "Widget", price: 9.99))   // id assigned
        let affordable = try await db.fetch(Product.self, where: col("price") <= 10.0)
        #expect(saved.id == 1)
        #expect(affordable.map(\.name) == ["Widget"])

        let fresh = try Database(path: dir.path("migrated.db"), rawKey: rawKey(3))
        try await migrateExample(fresh)
        #expect(try await fresh.appliedMigrations() == ["001-create-products"])
    }

    /// GettingStarted.md, block 7, on `db`.
    private func migrateExample(_ db: Database) async throws {
        struct CreateProducts: Migration {
            let id = "001-create-products"
            func up(_ ctx: MigrationContext) throws {
                try ctx.execute(CreateTable(TableName("products"))
                    .column("id", .integer, .primaryKey)
                    .column("name", .text, .notNull))
            }
        }
        try await db.migrate([CreateProducts()])
    }

    @Test func liveValuesLoop() async throws {
        let t = try await LiveTestDatabase()
        let db = t.db
        @Sendable func render(_ products: [Product]) { basicsRenderings.append(products.map(\.name)) }
        try await db.save(Product(id: nil, name: "Kettle", price: 30))
        let loop = Task {
            for try await products in db.values(of: .fetch(Product.self, where: col("price") < 50.0)) {
                render(products)
            }
        }
        try await waitUntil { basicsRenderings.all.contains(#"["Kettle"]"#) }
        loop.cancel()
        _ = await loop.result
    }

    @Test func rawSQLChapter() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("raw.db"), rawKey: rawKey(3))
        var printed: [String] = []
        func print(_ name: String, _ price: Double) { printed.append("\(name) \(price)") }
        try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL)")
        let changed = try await db.execute("INSERT INTO products(name, price) VALUES (?, ?), (?, ?)",
                                           "Widget", 9.99, "Gadget", 24.5)     // 2
        let rows = try await db.query("SELECT id, name, price FROM products WHERE price < ? ORDER BY price", 50.0)
        for row in rows {
            let name = row.get("name", as: String.self)          // String? (nil: missing, NULL, not text)
            let price = try row.decode("price", as: Double.self) // throws with the reason
            print(name ?? "-", price)
        }
        try await db.execute("DELETE FROM products WHERE id IN (?, ?)", arguments: [1, 2])  // array form
        #expect(changed == 2)
        #expect(rows.count == 2)
        #expect(printed == ["Widget 9.99", "Gadget 24.5"])
        #expect(try await db.query("SELECT * FROM products").isEmpty)
    }

    /// RawSQL.md, block 2 ("Arguments in one value").
    @Test func argumentsInOneValue() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("guide.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL)")
        try await db.execute("INSERT INTO products(name, price) VALUES ('Widget', 9.99), ('Gadget', 24.5), ('Gizmo', 3)")

        try await db.execute("UPDATE products SET price = :price WHERE id = :id", arguments: ["price": 19.5, "id": 1])
        let ids = [1, 2]
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        let picked = try await db.query("SELECT name FROM products WHERE id IN (\(marks))", arguments: StatementArguments(ids))

        #expect(picked.map { $0.get(0, as: String.self) } == ["Widget", "Gadget"])
        #expect(try await db.query("SELECT price FROM products WHERE id = 1")[0].get(0, as: Double.self) == 19.5)
        await db.close()
    }

    /// RawSQL.md, block 3 (a fragment: one line per call), checked line by line.
    @Test func rowAccessListing() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey(3))
        let row = try await db.query("SELECT 1 AS id, 'Ann' AS Name, NULL AS note")[0]
        #expect(row.get("id", as: Int.self) == 1)
        #expect(row.get("name", as: String.self) == "Ann")
        #expect(row.get(1, as: String.self) == "Ann")
        #expect(row.get("note", as: String.self) == nil)
        #expect(try row.decode("note", as: String?.self) == nil)
        #expect(throws: SqlCipherError.typeMismatch(column: "note", stored: "NULL", expected: "String")) {
            try row.decode("note", as: String.self)
        }
        #expect(throws: SqlCipherError.columnNotFound(name: "nope", available: ["id", "Name", "note"])) {
            try row.decode("nope", as: Int.self)
        }
        #expect(throws: SqlCipherError.columnIndexOutOfRange(index: 7, count: 3)) { try row.decode(7, as: Int.self) }
        #expect(row["id"] == .integer(1))
    }

    @Test func transactionsAndSavepoints() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("tx.db"), rawKey: rawKey(3))
        try await db.execute("""
            CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT NOT NULL);
            CREATE TABLE customers(name TEXT PRIMARY KEY, orders INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE audit(order_id INTEGER, orders_so_far INTEGER);
            INSERT INTO customers(name) VALUES ('Alice');
            """)
        let orderID = try await db.transaction { conn in
            try conn.execute("INSERT INTO orders(customer) VALUES (?)", "Alice")
            let id = conn.lastInsertRowID
            try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
            // Reads inside see the body's own uncommitted writes.
            let count = try conn.query("SELECT count(*) FROM orders")[0].decode(0, as: Int.self)
            try conn.savepoint { conn in
                // A step that may fail on its own: a throw here undoes only this block.
                try conn.execute("INSERT INTO audit(order_id, orders_so_far) VALUES (?, ?)", id, count)
            }
            return id
        }
        #expect(orderID == 1)
        #expect(try await db.query("SELECT orders FROM customers")[0].get(0, as: Int.self) == 1)
        let audit = try await db.query("SELECT order_id, orders_so_far FROM audit")
        #expect(audit.map { [$0.get(0, as: Int.self), $0.get(1, as: Int.self)] } == [[1, 1]])
    }
}
