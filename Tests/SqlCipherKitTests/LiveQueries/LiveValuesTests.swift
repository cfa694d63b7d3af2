import Foundation
import Testing
@testable import SqlCipherKit

/// The async sequence of `Database.values(of:)`: first value, one value per transaction, nothing
/// for unchanged results and rollbacks, slow consumers, cancellation, failures.
@Suite struct LiveValuesTests {
    @Test func firstValueIsTheCurrentState() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('b', 1), ('a', 2)")
        let reader = LiveReader(t.db.values(of: productNames))
        #expect(try await reader.next() == ["a", "b"])
    }

    @Test func severalWritesInOneTransactionYieldOneValue() async throws {
        let t = try await LiveTestDatabase()
        let reader = LiveReader(t.db.values(of: productNames))
        #expect(try await reader.next() == [])
        let before = await t.db.liveTrackingState.fetches
        try await t.db.transaction { conn in
            try conn.execute("INSERT INTO products(name, price) VALUES ('a', 1)")
            try conn.execute("INSERT INTO products(name, price) VALUES ('b', 2)")
            try conn.execute("UPDATE products SET price = 3 WHERE name = 'a'")
        }
        #expect(try await reader.next() == ["a", "b"])
        // The whole transaction cost exactly one fetch.
        #expect(await t.db.liveTrackingState.fetches == before + 1)
    }

    @Test func aWriteOutsideTheResultYieldsNothing() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('cheap', 10), ('dear', 100)")
        let reader = LiveReader(t.db.values(of: cheapProductRows))
        #expect(names(try await reader.next()) == ["cheap"])
        let before = await t.db.liveTrackingState.fetches
        let pending = Task { try await reader.next() }
        // Same table, but a row the request filters out: the observation fetches and finds its
        // rows unchanged.
        try await t.db.execute("UPDATE products SET price = 200 WHERE name = 'dear'")
        try await waitUntil { await t.db.liveTrackingState.fetches > before }
        // The sentinel changes the result: the next value must be its state, proving that the
        // unchanged fetch yielded nothing.
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('sentinel', 1)")
        #expect(names(try await pending.value) == ["cheap", "sentinel"])
    }

    @Test func aRollbackYieldsNothing() async throws {
        let t = try await LiveTestDatabase()
        let reader = LiveReader(t.db.values(of: productNames))
        #expect(try await reader.next() == [])
        let pending = Task { try await reader.next() }
        struct Abort: Error {}
        await #expect(throws: Abort.self) {
            try await t.db.transaction { conn in
                try conn.execute("INSERT INTO products(name, price) VALUES ('rolled back', 1)")
                throw Abort()
            }
        }
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('sentinel', 1)")
        #expect(try await pending.value == ["sentinel"])
    }

    @Test func aSavepointRollbackYieldsNothing() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("CREATE TABLE other(x)")
        let reader = LiveReader(t.db.values(of: productNames))
        #expect(try await reader.next() == [])
        let before = await t.db.liveTrackingState.fetches
        let pending = Task { try await reader.next() }
        struct Abort: Error {}
        try await t.db.transaction { conn in
            try conn.execute("INSERT INTO other VALUES (1)")
            _ = try? conn.savepoint { conn in
                try conn.execute("INSERT INTO products(name, price) VALUES ('undone', 1)")
                throw Abort()
            }
        }
        // The products table stays "possibly changed" after ROLLBACK TO, so the observation
        // fetches once and finds its result unchanged.
        try await waitUntil { await t.db.liveTrackingState.fetches > before }
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('sentinel', 1)")
        #expect(try await pending.value == ["sentinel"])
    }

    @Test func aSlowConsumerGetsTheLatestStateNotABacklog() async throws {
        let t = try await LiveTestDatabase()
        let reader = LiveReader(t.db.values(of: productNames))
        #expect(try await reader.next() == [])
        let before = await t.db.liveTrackingState.fetches
        for name in ["a", "b", "c", "d", "e"] {
            try await t.db.execute("INSERT INTO products(name, price) VALUES (?, 1)", name)
        }
        #expect(try await reader.next() == ["a", "b", "c", "d", "e"])
        #expect(await t.db.liveTrackingState.fetches == before + 1)
        // Nothing is queued behind it: the next value is the next change.
        let pending = Task { try await reader.next() }
        try await t.db.execute("DELETE FROM products WHERE name <> 'c'")
        #expect(try await pending.value == ["c"])
    }

    @Test func cancellationEndsTheSequenceAndRemovesTheObservation() async throws {
        let t = try await LiveTestDatabase()
        let (firstValues, firstValue) = AsyncStream.makeStream(of: [String].self)
        let consumer = Task {
            var received = 0
            for try await names in t.db.values(of: productNames) {
                received += 1
                firstValue.yield(names)
            }
            return received
        }
        var iterator = firstValues.makeAsyncIterator()
        #expect(await iterator.next() == [])
        #expect(await t.db.liveObservationCount == 1)
        consumer.cancel()
        // The loop ended normally (no error) after the one value.
        #expect(try await consumer.value == 1)
        #expect(await t.db.liveObservationCount == 0)
        // And writes no longer analyse anything: the tracker is idle again.
        let analyses = await t.db.liveTrackingState.analyses
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('x', 1)")
        #expect(await t.db.liveTrackingState.analyses == analyses)
    }

    @Test func aSequenceOfACancelledTaskYieldsNothing() async throws {
        let t = try await LiveTestDatabase()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var iterator = t.db.values(of: productNames).makeAsyncIterator()
            return try await iterator.next()
        }
        #expect(try await task.value == nil)
        #expect(await t.db.liveObservationCount == 0)
    }

    @Test func breakingOutOfTheLoopFreesTheObservation() async throws {
        let t = try await LiveTestDatabase()
        for try await names in t.db.values(of: productNames) {
            #expect(names == [])
            break
        }
        #expect(await t.db.liveObservationCount == 0)
    }

    @Test func aMissingTableMakesTheFirstFetchThrow() async throws {
        let t = try await LiveTestDatabase()
        let reader = LiveReader(t.db.values(of: .query("SELECT * FROM missing")))
        await #expect {
            _ = try await reader.next()
        } throws: { error in
            guard case let SqlCipherError.sqlite(_, _, message, _) = error else { return false }
            return message.contains("no such table")
        }
        #expect(try await reader.next() == nil)
        #expect(await t.db.liveObservationCount == 0)
    }

    @Test func droppingTheObservedTableMakesTheSequenceThrowAndEnd() async throws {
        let t = try await LiveTestDatabase()
        let reader = LiveReader(t.db.values(of: productNames))
        #expect(try await reader.next() == [])
        try await t.db.execute("DROP TABLE products")
        await #expect(throws: SqlCipherError.self) { _ = try await reader.next() }
        #expect(try await reader.next() == nil)
        #expect(await t.db.liveObservationCount == 0)
    }

    @Test func closingTheDatabaseEndsAWaitingConsumerWithAnError() async throws {
        let t = try await LiveTestDatabase()
        let reader = LiveReader(t.db.values(of: productNames))
        #expect(try await reader.next() == [])
        let pending = Task { try await reader.next() }
        await t.db.close()
        await #expect(throws: SqlCipherError.databaseClosed) { _ = try await pending.value }
    }

    @Test func aHundredObserversAtOnceAndOthersTablesCauseNoFetch() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("CREATE TABLE notes(body TEXT)")
        let noteCount = LiveRequest(placeholder: 0) { conn in
            try conn.query("SELECT count(*) AS n FROM notes")[0].get("n", as: Int.self) ?? -1
        }
        let productReaders = (0..<50).map { _ in LiveReader(t.db.values(of: productNames)) }
        let noteReaders = (0..<50).map { _ in LiveReader(t.db.values(of: noteCount)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for reader in productReaders { group.addTask { let value = try await reader.next(); #expect(value == []) } }
            for reader in noteReaders { group.addTask { let value = try await reader.next(); #expect(value == 0) } }
            try await group.waitForAll()
        }
        #expect(await t.db.liveObservationCount == 100)

        try await withThrowingTaskGroup(of: Void.self) { group in
            for reader in productReaders { group.addTask { let value = try await reader.next(); #expect(value == ["new"]) } }
            try await t.db.execute("INSERT INTO products(name, price) VALUES ('new', 1)")
            // Checked right after the commit, before anyone could fetch: the commit marked only the
            // products observers, so the notes observers will not even fetch.
            let states = await t.db.liveTrackingState.observations
            #expect(states.filter { $0.tables == ["notes"] && $0.isDirty }.isEmpty)
            #expect(states.filter { $0.tables == ["notes"] }.count == 50)
            try await group.waitForAll()
        }
        // The notes observers are still waiting, and their next value is the next notes change.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for reader in noteReaders { group.addTask { let value = try await reader.next(); #expect(value == 1) } }
            try await t.db.execute("INSERT INTO notes VALUES ('hello')")
            try await group.waitForAll()
        }
    }

    @Test func aClosureRequestFollowsEveryTableItReads() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("CREATE TABLE settings(key TEXT PRIMARY KEY, value REAL)")
        try await t.db.execute("INSERT INTO settings VALUES ('limit', 50)")
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('a', 10), ('b', 60)")
        // Reads the limit from one table, then the products under it from another.
        let underLimit = LiveRequest(placeholder: [String]()) { conn in
            let limit = try conn.query("SELECT value FROM settings WHERE key = 'limit'")[0].get("value", as: Double.self) ?? 0
            return try conn.query("SELECT name FROM products WHERE price < ? ORDER BY name", limit)
                .compactMap { $0.get("name", as: String.self) }
        }
        let reader = LiveReader(t.db.values(of: underLimit))
        #expect(try await reader.next() == ["a"])
        #expect(await t.db.liveTrackingState.observations.first?.tables == ["settings", "products"])
        try await t.db.execute("UPDATE settings SET value = 100")
        #expect(try await reader.next() == ["a", "b"])
    }

    @Test func aRequestThatWritesIsRefused() async throws {
        let t = try await LiveTestDatabase()
        let writing = LiveRequest(placeholder: 0) { conn in
            try conn.execute("INSERT INTO products(name, price) VALUES ('sneaky', 1)")
        }
        let reader = LiveReader(t.db.values(of: writing))
        await #expect {
            _ = try await reader.next()
        } throws: { error in
            guard case SqlCipherError.invalidQuery(let reason) = error else { return false }
            return reason.contains("must only read")
        }
        #expect(try await t.db.query("SELECT * FROM products").isEmpty)
    }

    @Test func requestsCompareBySQLOrByCopy() {
        #expect(LiveRequest<[Row]>.query("SELECT 1 WHERE ?", 1) == .query("SELECT 1 WHERE ?", 1))
        #expect(LiveRequest<[Row]>.query("SELECT 1 WHERE ?", 1) != .query("SELECT 1 WHERE ?", 2))
        let copy = productNames
        #expect(copy == productNames)
        let other = LiveRequest(placeholder: [String]()) { _ in [] }
        #expect(other != productNames)
    }
}
