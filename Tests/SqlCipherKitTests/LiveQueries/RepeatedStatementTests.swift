import Foundation
import Testing
@testable import SqlCipherKit

/// A statement run again inside the same transaction, with nothing new to account for, skips the
/// change tracker (`ChangeTracker.isSettled`). These tests pin that the shortcut never hides a
/// write: whatever runs in between, the observers of every written table hear of the commit.
@Suite struct RepeatedStatementTests {
    static func count(_ table: String) -> LiveRequest<Int> {
        LiveRequest(placeholder: -1) { conn in
            try conn.query("SELECT count(*) AS n FROM \(table)")[0].get("n", as: Int.self) ?? -1
        }
    }

    @Test func aStatementRepeatedInOneTransactionMarksItsTableOnce() async throws {
        let t = try await LiveTestDatabase()
        let products = LiveReader(t.db.values(of: Self.count("products")))
        #expect(try await products.next() == 0)
        try await t.db.transaction { conn in
            for index in 0..<200 {
                try conn.execute("INSERT INTO products(name, price) VALUES (?, 1)", "p\(index)")
            }
        }
        #expect(try await products.next() == 200)
    }

    @Test func statementsTakingTurnsEachMarkTheirTable() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("CREATE TABLE audit(note TEXT)")
        let products = LiveReader(t.db.values(of: Self.count("products")))
        let audit = LiveReader(t.db.values(of: Self.count("audit")))
        #expect(try await products.next() == 0)
        #expect(try await audit.next() == 0)
        try await t.db.transaction { conn in
            for index in 0..<20 {
                try conn.execute("INSERT INTO products(name, price) VALUES (?, 1)", "p\(index)")
                try conn.execute("INSERT INTO products(name, price) VALUES (?, 2)", "q\(index)")
            }
            // Runs last, after the products insert settled: it must still be accounted for.
            try conn.execute("INSERT INTO audit VALUES (?)", "done")
        }
        #expect(try await products.next() == 40)
        #expect(try await audit.next() == 1)
    }

    @Test func aRepeatedStatementInTheNextTransactionIsAccountedForAgain() async throws {
        let t = try await LiveTestDatabase()
        let products = LiveReader(t.db.values(of: Self.count("products")))
        #expect(try await products.next() == 0)
        let insert = "INSERT INTO products(name, price) VALUES (?, 1)"
        try await t.db.transaction { conn in
            try conn.execute(insert, "a")
            try conn.execute(insert, "b")
        }
        #expect(try await products.next() == 2)
        // A rolled-back transaction empties the pending tables; the next one starts afresh.
        await #expect(throws: CancellationError.self) {
            try await t.db.transaction { conn in
                try conn.execute(insert, "c")
                throw CancellationError()
            }
        }
        try await t.db.transaction { conn in
            try conn.execute(insert, "d")
            try conn.execute(insert, "e")
        }
        #expect(try await products.next() == 4)
    }

    @Test func anObserverAddedInsideAHandWrittenTransactionHearsOfItsCommit() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("CREATE TABLE audit(note TEXT)")
        // Keeps the tracker active, so that the inserts below are accounted for (and settle).
        let audit = LiveReader(t.db.values(of: Self.count("audit")))
        #expect(try await audit.next() == 0)
        let insert = "INSERT INTO products(name, price) VALUES (?, 1)"
        try await t.db.execute("BEGIN IMMEDIATE")
        try await t.db.execute(insert, "a")
        try await t.db.execute(insert, "b")
        let products = LiveReader(t.db.values(of: Self.count("products")))
        // Its first fetch runs inside the open transaction and sees the uncommitted rows.
        #expect(try await products.next() == 2)
        try await t.db.execute(insert, "c")   // settled: skips the tracker
        try await t.db.execute("COMMIT")
        #expect(try await products.next() == 3)
        #expect(await t.db.liveTrackingState.observations.allSatisfy { !$0.isDirty })
    }

    @Test func aSchemaChangeBetweenRunsIsSeenByTheNextRun() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("CREATE TABLE audit(note TEXT)")
        let audit = LiveReader(t.db.values(of: Self.count("audit")))
        #expect(try await audit.next() == 0)
        let insert = "INSERT INTO products(name, price) VALUES (?, 1)"
        try await t.db.transaction { conn in
            try conn.execute(insert, "a")
            try conn.execute(insert, "b")
            // The settled insert now also writes `audit`, through the trigger.
            try conn.execute("CREATE TRIGGER products_audit AFTER INSERT ON products BEGIN "
                + "INSERT INTO audit VALUES (new.name); END")
            try conn.execute(insert, "c")
        }
        #expect(try await audit.next() == 1)
    }
}
