import Foundation
import Testing
@testable import SqlCipherKit

private struct AddNoteColumn: Migration {
    let id = "live-001-add-note"
    let foreignKeyChecks = ForeignKeyChecks.deferred  // its down drops a column (a rebuild, forced below)
    func up(_ ctx: MigrationContext) throws {
        try ctx.execute(AlterTable(TableName("products"), addColumn: "note", .text))
        try ctx.execute("UPDATE products SET note = 'migrated'")
    }
    func down(_ ctx: MigrationContext) throws {
        try ctx.execute(AlterTable(TableName("products"), dropColumn: "note"))
    }
}

private struct AddCheapProduct: Migration {
    let id = "live-002-add-cheap"
    func up(_ ctx: MigrationContext) throws {
        try ctx.execute("INSERT INTO products(name, price) VALUES ('from migration', 1)")
    }
}

private struct Failing: Migration {
    let id = "live-003-failing"
    func up(_ ctx: MigrationContext) throws {
        try ctx.execute("INSERT INTO products(name, price) VALUES ('never', 1)")
        try ctx.execute("INSERT INTO missing_table VALUES (1)")
    }
}

/// Observers stay correct while migrations and batch saves run.
@Suite struct ObservingWhileWritingTests {
    @Test func migrationsYieldTheirCommittedStateAndAFailedOneNothing() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.save(LiveProduct(id: nil, name: "existing", price: 5))
        let rows = LiveReader(t.db.values(of: .query("SELECT * FROM products ORDER BY id")))
        let entities = LiveReader(t.db.values(of: .fetch(LiveProduct.self, orderBy: col("id"))))
        #expect(try await rows.next()?.first?.columnNames == ["id", "name", "price"])
        #expect(try await entities.next()?.map(\.name) == ["existing"])

        // Two migrations in one call: the actor runs them in one go, so the first value after it
        // is the final state, never one in between.
        try await t.db.migrate([AddNoteColumn(), AddCheapProduct()])
        let migrated = try #require(try await rows.next())
        #expect(migrated.first?.columnNames == ["id", "name", "price", "note"])
        #expect(migrated.map { $0.get("note", as: String.self) } == ["migrated", nil])
        #expect(try await entities.next()?.map(\.name) == ["existing", "from migration"])

        // A failing migration is rolled back: nothing is yielded for it.
        let pending = Task { try await entities.next() }
        await #expect(throws: SqlCipherError.self) {
            try await t.db.migrate([AddNoteColumn(), AddCheapProduct(), Failing()])
        }
        try await t.db.save(LiveProduct(id: nil, name: "sentinel", price: 1))
        #expect(try await pending.value?.map(\.name) == ["existing", "from migration", "sentinel"])
    }

    @Test func aTableRebuildKeepsItsObserversAlive() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.save([LiveProduct(id: nil, name: "a", price: 1), LiveProduct(id: nil, name: "b", price: 2)])
        let entities = LiveReader(t.db.values(of: .fetch(LiveProduct.self, orderBy: col("id"))))
        #expect(try await entities.next()?.map(\.name) == ["a", "b"])
        try await t.db.migrate([AddNoteColumn()])
        // Rolling back drops the column, by rebuilding the table (forced here on every SQLite): the
        // table is dropped and replaced inside the migration's transaction.
        try await t.db.rollback(to: "live-001-add-note", using: [AddNoteColumn()], forceTableRebuild: true)
        try await t.db.save(LiveProduct(id: nil, name: "c", price: 3))
        var latest = try await entities.next()
        while latest?.count != 3 { latest = try await entities.next() }
        #expect(latest?.map(\.name) == ["a", "b", "c"])
        let columns = try await t.db.query("SELECT * FROM products LIMIT 1").first?.columnNames
        #expect(columns == ["id", "name", "price"])
    }

    @Test func batchSavesFromAnotherTaskAreSeenWholeAndInOrder() async throws {
        let t = try await LiveTestDatabase()
        let counts = t.db.values(of: .count(LiveProduct.self))
        let batches = 25, size = 4
        let writer = Task {
            for batch in 0..<batches {
                try await t.db.save((0..<size).map { LiveProduct(id: nil, name: "b\(batch)-\($0)", price: 1) })
            }
        }
        var seen: [Int] = []
        for try await count in counts {
            seen.append(count)
            if count == batches * size { break }
        }
        try await writer.value
        // Every value is a committed state: whole batches only, never going back.
        #expect(seen.allSatisfy { $0 % size == 0 })
        #expect(seen == seen.sorted())
        #expect(Set(seen).count == seen.count)
        #expect(seen.last == batches * size)
    }
}
