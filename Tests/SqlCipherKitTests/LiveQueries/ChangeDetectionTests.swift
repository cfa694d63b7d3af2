import Foundation
import Testing
@testable import SqlCipherKit

/// How writes are found: triggers, foreign-key actions, views, schema changes, hand-written
/// transactions, and what an unobserved database pays.
@Suite struct ChangeDetectionTests {
    static func countRequest(_ table: String) -> LiveRequest<Int> {
        LiveRequest(placeholder: 0) { conn in
            try conn.query("SELECT count(*) AS n FROM \(table)")[0].get("n", as: Int.self) ?? -1
        }
    }

    @Test func writesMadeByATriggerAreSeen() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("""
            CREATE TABLE audit(product TEXT);
            CREATE TRIGGER products_audit AFTER INSERT ON products BEGIN
                INSERT INTO audit VALUES (new.name);
            END;
            """)
        let reader = LiveReader(t.db.values(of: Self.countRequest("audit")))
        #expect(try await reader.next() == 0)
        try await t.db.execute("INSERT INTO products(name, price) VALUES (?, 1)", "a")
        #expect(try await reader.next() == 1)
    }

    @Test func aTriggerCreatedAfterAStatementWasCachedIsSeen() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("CREATE TABLE audit(product TEXT)")
        let reader = LiveReader(t.db.values(of: Self.countRequest("audit")))
        #expect(try await reader.next() == 0)
        // Prepared, cached and analysed while it writes only `products`.
        let insert = "INSERT INTO products(name, price) VALUES (?, 1)"
        try await t.db.execute(insert, "before")
        #expect(await t.db.liveTrackingState.observations.allSatisfy { !$0.isDirty })
        try await t.db.execute(
            "CREATE TRIGGER products_audit AFTER INSERT ON products BEGIN INSERT INTO audit VALUES (new.name); END")
        // The same cached statement now also writes `audit`, through the trigger.
        try await t.db.execute(insert, "after")
        #expect(try await reader.next() == 1)
    }

    @Test func foreignKeyCascadesAreSeen() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("""
            CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE orders(id INTEGER PRIMARY KEY,
                                customer INTEGER REFERENCES customers(id) ON DELETE CASCADE ON UPDATE CASCADE);
            CREATE TABLE notes(id INTEGER PRIMARY KEY,
                               order_id INTEGER REFERENCES orders(id) ON DELETE SET NULL);
            INSERT INTO customers VALUES (1, 'Alice'), (2, 'Bob');
            INSERT INTO orders VALUES (10, 1), (11, 1), (12, 2);
            INSERT INTO notes VALUES (100, 10), (101, 12);
            """)
        let orders = LiveReader(t.db.values(of: .query("SELECT id, customer FROM orders ORDER BY id")))
        let notes = LiveReader(t.db.values(of: .query("SELECT id FROM notes WHERE order_id IS NULL")))
        #expect(try await orders.next()?.count == 3)
        #expect(try await notes.next()?.isEmpty == true)
        // Deleting a customer deletes its orders (CASCADE), which sets their notes' order to NULL.
        try await t.db.execute("DELETE FROM customers WHERE id = 1")
        #expect(try await orders.next()?.compactMap { $0.get("id", as: Int.self) } == [12])
        #expect(try await notes.next()?.compactMap { $0.get("id", as: Int.self) } == [100])
        // ON UPDATE CASCADE rewrites the child rows.
        try await t.db.execute("UPDATE customers SET id = 3 WHERE id = 2")
        #expect(try await orders.next()?.compactMap { $0.get("customer", as: Int.self) } == [3])
    }

    @Test func writesToATableUnderAViewAreSeen() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("CREATE VIEW product_count AS SELECT count(*) AS n FROM products")
        let reader = LiveReader(t.db.values(of: .query("SELECT n FROM product_count")))
        #expect(try await reader.next()?.first?.get("n", as: Int.self) == 0)
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('a', 1)")
        #expect(try await reader.next()?.first?.get("n", as: Int.self) == 1)
    }

    @Test func aHandWrittenTransactionIsCorrectedWhenItEnds() async throws {
        let t = try await LiveTestDatabase()
        let early = LiveReader(t.db.values(of: productNames))
        #expect(try await early.next() == [])
        try await t.db.execute("BEGIN")
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('uncommitted', 1)")
        // An observation that starts inside the open transaction sees its uncommitted row...
        let late = LiveReader(t.db.values(of: productNames))
        #expect(try await late.next() == ["uncommitted"])
        try await t.db.execute("ROLLBACK")
        // ...and fetches again when it ends, so the rollback is corrected.
        #expect(try await late.next() == [])
        // The observation that fetched before BEGIN saw nothing of it.
        let pending = Task { try await early.next() }
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('sentinel', 1)")
        #expect(try await pending.value == ["sentinel"])
        #expect(try await late.next() == ["sentinel"])
    }

    @Test func aHandWrittenCommitYieldsOnce() async throws {
        let t = try await LiveTestDatabase()
        let reader = LiveReader(t.db.values(of: productNames))
        #expect(try await reader.next() == [])
        try await t.db.execute("BEGIN")
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('a', 1)")
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('b', 1)")
        try await t.db.execute("COMMIT")
        #expect(try await reader.next() == ["a", "b"])
    }

    @Test func withoutObserversNothingIsAnalysed() async throws {
        let t = try await LiveTestDatabase()
        for index in 0..<50 {
            try await t.db.execute("INSERT INTO products(name, price) VALUES (?, ?)", "p\(index)", Double(index))
        }
        try await t.db.save(LiveProduct(id: nil, name: "entity", price: 1))
        _ = try await t.db.fetch(LiveProduct.self)
        #expect(await t.db.liveTrackingState.analyses == 0)
        // An observer makes statements analysed once each, not once per run.
        let reader = LiveReader(t.db.values(of: .count(LiveProduct.self)))
        #expect(try await reader.next() == 51)
        let afterFirst = await t.db.liveTrackingState.analyses
        for index in 0..<20 {
            try await t.db.execute("INSERT INTO products(name, price) VALUES (?, ?)", "q\(index)", 1.0)
        }
        #expect(await t.db.liveTrackingState.analyses == afterFirst + 1)
    }

    @Test func aRenamedTableEndsItsObserversWithAnError() async throws {
        let t = try await LiveTestDatabase()
        let reader = LiveReader(t.db.values(of: .count(LiveProduct.self)))
        #expect(try await reader.next() == 0)
        try await t.db.execute("ALTER TABLE products RENAME TO goods")
        await #expect(throws: SqlCipherError.self) { _ = try await reader.next() }
    }

    /// A live query's watch for other connections' commits waited with `Task.sleep`, the first
    /// timer of the process: libdispatch creates the descriptor behind a clock's timers then, and
    /// trapped (SIGILL) when the process had none left, so a service whose first live query came
    /// at its descriptor limit ended there. The watch now waits on the package's own thread
    /// (`ThreadSleeper`), which needs no descriptor; in a child process with none left, the live
    /// query sees the other connection's commit.
    @Test func aLiveQueryAtTheDescriptorLimitSeesAnotherConnectionsCommit() throws {
        let dir = TemporaryDirectory()
        let result = try runHelper(["live-query-without-descriptors", dir.url.path])
        #expect(result.status == 0 && !result.signaled, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.split(separator: "\n") == ["live 0", "live 1", "live ok"], "\(result.stdout)")
    }
}
