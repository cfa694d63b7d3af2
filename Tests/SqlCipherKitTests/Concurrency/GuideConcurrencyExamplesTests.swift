import Foundation
import Testing
@testable import SqlCipherKit

/// The examples of the DocC articles "Isolation and cancellation" and "Cursors, streams and prepared
/// statements", compiled and run. Each block is copied as it stands in its article, inside the
/// setup it assumes (checked by `ArticleCodeBlockTests`); ``Product``, ``Order`` and ``LineItem``
/// are the shared fixtures.
@Suite struct GuideConcurrencyExamplesTests {
    @MainActor
    final class OrdersModel {
        let db: Database
        var lastOrderID: Int?

        init(db: Database) { self.db = db }

        func placeOrder(skus: [String]) async throws {
            let order = try await db.transaction { conn in
                let order = try conn.save(Order(id: nil, customer: "Alice"))
                try conn.save(skus.map { LineItem(id: nil, orderID: order.id!, sku: $0) })
                return order
            }
            lastOrderID = order.id   // back on the main actor: update state here
        }
    }

    @MainActor
    final class BackupModel {
        let db: Database
        var fraction = 0.0

        init(db: Database) { self.db = db }

        func backUp(to path: String, key: DatabaseKey) async throws {
            try await db.backup(to: path, key: key, progress: { progress in
                Task { @MainActor in self.fraction = progress.fraction }
            })
        }
    }

    func database() async throws -> Database {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("""
            CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL);
            CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT NOT NULL);
            CREATE TABLE line_items(id INTEGER PRIMARY KEY, orderID INTEGER NOT NULL, sku TEXT NOT NULL);
            CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
            CREATE TABLE payments(amount INTEGER, year INTEGER);
            CREATE TABLE documents(body TEXT);
            INSERT INTO products(name, price) VALUES ('Widget', 9.99), ('Gadget', 24.5), ('Bolt', 0.5);
            INSERT INTO notes(body) VALUES ('first'), ('second');
            INSERT INTO payments VALUES (10, 2026), (32, 2026), (5, 2025);
            """)
        return db
    }

    @MainActor @Test func whichIsolationContext() async throws {
        let db = try await database()
        let model = OrdersModel(db: db)
        try await model.placeOrder(skus: ["A-1", "B-2"])
        #expect(model.lastOrderID == 1)
        #expect(try await db.count(LineItem.self) == 2)
    }

    /// The progress of a backup reaches a @MainActor model through a task of the closure's own.
    @MainActor @Test func progressOnAMainActorModel() async throws {
        let directory = TemporaryDirectory()
        let db = try Database(path: directory.path("source.db"), key: "source-passphrase")
        try await db.execute("CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('first')")
        let model = BackupModel(db: db)
        try await model.backUp(to: directory.path("copy.db"), key: .passphrase("copy-passphrase"))
        // The last report is a task on this actor, queued before backUp returned.
        let deadline = ContinuousClock.now + .seconds(20)
        while model.fraction != 1, ContinuousClock.now < deadline { await Task.yield() }
        #expect(model.fraction == 1)
        let copy = try Database(path: directory.path("copy.db"), key: "copy-passphrase")
        #expect(try await copy.query("SELECT body FROM notes")[0].get(0, as: String.self) == "first")
    }

    /// A static conversion run off the main actor, as the article writes it. Written without `_ =`
    /// (as the article had it inline), the task's value was the `String?` that `encryptInPlace`
    /// returns, and the line warned "expression of type 'String?' is unused".
    @MainActor @Test func conversionOffTheMainActor() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path("notes.db")
        let key: DatabaseKey = "conversion-passphrase"
        let plain = try Database(unencryptedPath: path)
        try await plain.execute("CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('first')")
        await plain.close()
        try await Task.detached { _ = try Database.encryptInPlace(path: path, key: key) }.value
        let encrypted = try Database(path: path, key: key)
        #expect(try await encrypted.query("SELECT body FROM notes")[0].get(0, as: String.self) == "first")
        #expect(FileManager.default.contents(atPath: path)?.prefix(15) != Data("SQLite format 3".utf8))
    }

    @Test func cancellation() async throws {
        let db = try await database()
        try await db.execute("""
            INSERT INTO documents
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 200000)
            SELECT printf('document %d', x) FROM c
            """)
        let search = Task { try await db.query("SELECT * FROM documents WHERE body LIKE ?", "%needle%") }
        search.cancel()   // the query stops within microseconds of SQLite work; `search` throws CancellationError
        await #expect(throws: CancellationError.self) { try await search.value }
    }

    @Test func readOnlyBodyAndCursors() async throws {
        let db = try await database()
        let (count, newest) = try await db.read { conn in
            let count = try conn.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) ?? 0
            let newest = try conn.query("SELECT max(id) FROM notes")[0].get(0, as: Int.self)
            return (count, newest)
        }
        #expect(count == 2 && newest == 2)

        let printed = GuideRenderings()
        @Sendable func print(_ text: String) { printed.append(text) }
        let total = try await db.read { conn in
            let cursor = try conn.cursor("SELECT amount FROM payments WHERE year = ?", 2026)
            var total = 0
            while let row = try cursor.next() {
                total += row.get("amount", as: Int.self) ?? 0
            }
            return total
        }

        try await db.read { conn in
            try conn.cursor(Product.self, sql: "SELECT * FROM products ORDER BY name").forEach { product in
                print(product.name)
            }
        }
        #expect(total == 42)
        #expect(printed.all == ["Bolt", "Gadget", "Widget"])
    }

    /// A loop left early: the stream's statement is given up, so the `DROP TABLE` works.
    @Test func leavingAStreamEarly() async throws {
        let db = try await database()
        try await db.execute("CREATE TABLE jobs(id INTEGER PRIMARY KEY)")
        try await db.execute("INSERT INTO jobs(id) VALUES (1), (2), (3)")
        let stopAt = 2
        for try await row in db.stream("SELECT id FROM jobs ORDER BY id") {
            if row.get("id", as: Int.self) == stopAt { break }   // the iterator may outlive the loop
        }
        try await db.execute("DROP TABLE jobs")                // still works
        #expect(try await db.query("SELECT name FROM sqlite_master WHERE name = 'jobs'").isEmpty)
    }

    /// Types decoded off the actor, declared `nonisolated` (SE-0449, SE-0470).
    @MainActor @Test func nonisolatedDecodableTypes() async throws {
        let db = try await database()
        try await db.execute("CREATE TABLE customers(name TEXT, orders INTEGER)")
        try await db.execute("INSERT INTO customers VALUES ('Alice', 3), ('Bob', 1)")
        nonisolated struct CustomerOrders: Decodable, Sendable {
            var name: String
            var orders: Int
        }

        struct CustomerName: nonisolated Decodable, Sendable {   // only the conformance (SE-0470)
            var name: String
        }

        let alice = try await db.fetch(CustomerOrders.self, sql: "SELECT name, orders FROM customers WHERE name = ?", "Alice")
        #expect(alice.map(\.orders) == [3])
        #expect(try await db.fetch(CustomerName.self, sql: "SELECT name FROM customers ORDER BY name").map(\.name)
            == ["Alice", "Bob"])
    }

    @Test func streams() async throws {
        let db = try await database()
        var printed: [String] = []
        func print(_ text: String) { printed.append(text) }
        for try await row in db.stream("SELECT id, body FROM notes ORDER BY id") {
            print(row.get("body", as: String.self) ?? "")
        }

        for try await product in db.stream(Product.self, sql: "SELECT * FROM products", batchSize: 500) {
            print(product.name)
        }
        #expect(printed.prefix(2) == ["first", "second"])
        #expect(printed.dropFirst(2).sorted() == ["Bolt", "Gadget", "Widget"])
    }

    @Test func entitiesFromAnyQuery() async throws {
        let db = try await database()
        _ = try await db.save(Order(id: nil, customer: "Alice"))
        _ = try await db.save([LineItem(id: nil, orderID: 1, sku: "A-1"), LineItem(id: nil, orderID: 1, sku: "B-2")])

        struct OrderLine: Decodable, Sendable {
            var customer: String
            var sku: String
        }

        let lines = try await db.fetch(OrderLine.self, sql: """
            SELECT orders.customer, line_items.sku
            FROM orders JOIN line_items ON line_items.orderID = orders.id
            WHERE orders.customer = ?
            """, "Alice")

        let orders = TableName("orders"), items = TableName("line_items")
        let join = Select(orders.col("customer"), items.col("sku"))
            .from(orders)
            .join(items, on: items.col("orderID") == orders.col("id"))
        let sameLines = try await db.fetch(OrderLine.self, join)

        let rows = try await db.query("SELECT * FROM products WHERE price < ?", 10.0)
        let products = try rows.map { try $0.decode(Product.self) }

        let cheapest = try await db.fetchOne(Product.self, where: col("price") > 0.0, orderBy: col("price"))
        let page2 = try await db.fetch(Product.self, orderBy: col("name"), limit: 20, offset: 20)

        #expect(lines.map(\.sku) == ["A-1", "B-2"])
        #expect(sameLines.map(\.customer) == ["Alice", "Alice"])
        #expect(Set(products.map(\.name)) == ["Widget", "Bolt"])
        #expect(cheapest?.name == "Bolt")
        #expect(page2.isEmpty)
    }

    @Test func preparedStatements() async throws {
        let db = try await database()
        try await db.execute("DELETE FROM payments")   // the example's own payments only

        try await db.transaction { conn in
            let insert = try conn.prepare("INSERT INTO payments(amount, year) VALUES (?, ?)")
            for (amount, year) in [(12, 2026), (7, 2026), (30, 2025)] {
                try insert.execute(amount, year)
            }
        }

        let (byYear, rows) = try await db.read { conn in
            let sumForYear = try conn.prepare("SELECT sum(amount) FROM payments WHERE year = ?")
            let byYear = try [2025, 2026].map { year in
                try sumForYear.query(year)[0].get(0, as: Int.self) ?? 0
            }
            let recent = try conn.prepare("SELECT amount, year FROM payments WHERE year >= ? ORDER BY amount")
            var rows: [String] = []
            let cursor = try recent.cursor(2026)
            while let row = try cursor.next() {
                rows.append("\(row.get("year", as: Int.self) ?? 0): \(row.get("amount", as: Int.self) ?? 0)")
            }
            return (byYear, rows)
        }

        let cheap = try await db.read { conn in
            try conn.prepare("SELECT * FROM products WHERE price < ? ORDER BY price").fetch(Product.self, 10.0)
        }

        #expect(byYear == [30, 19])
        #expect(rows == ["2026: 7", "2026: 12"])
        #expect(cheap.map(\.name) == ["Bolt", "Widget"])
        // The guide's claims: a refused statement throws at prepare; a write in read {} too.
        await #expect(throws: SqlCipherError.self) { try await db.transaction { conn in _ = try conn.prepare("PRAGMA key = 'x'") } }
        await #expect(throws: SqlCipherError.transactionControlInBody(sql: "COMMIT")) {
            try await db.transaction { conn in _ = try conn.prepare("COMMIT") }
        }
        await #expect(throws: SqlCipherError.readOnlyViolation(sql: "DELETE FROM payments")) {
            try await db.read { conn in _ = try conn.prepare("DELETE FROM payments") }
        }
    }
}
