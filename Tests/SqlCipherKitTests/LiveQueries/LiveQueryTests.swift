import Foundation
import Observation
import Testing
@testable import SqlCipherKit

/// Waits on the main actor until `condition` holds; throws ``LiveReaderTimeout`` after the guard time.
@MainActor
func waitOnMain(guardTime: Duration = .seconds(60), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + guardTime
    while !condition() {
        guard ContinuousClock.now < deadline else { throw LiveReaderTimeout() }
        try await Task.sleep(for: .milliseconds(5))
    }
}

extension LivePhase {
    var isLoaded: Bool {
        if case .loaded = self { return true }
        return false
    }
}

/// The observable `LiveQuery`: everything a SwiftUI wrapper needs, tested without SwiftUI.
@Suite @MainActor struct LiveQueryTests {
    @Test func showsThePlaceholderThenTheValueThenEachChange() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('a', 1)")
        let query = LiveQuery(.fetch(LiveProduct.self, orderBy: col("name")), database: t.db)
        #expect(query.value == [])
        #expect(query.phase.isLoading)
        try await waitOnMain { query.phase.isLoaded }
        #expect(query.value.map(\.name) == ["a"])

        // Observation framework: a change of `value` is reported to trackers.
        let changed = AsyncStream.makeStream(of: Void.self)
        withObservationTracking { _ = query.value } onChange: { changed.continuation.yield() }
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('b', 1)")
        var changes = changed.stream.makeAsyncIterator()
        _ = await changes.next()
        try await waitOnMain { query.value.count == 2 }
        #expect(query.value.map(\.name) == ["a", "b"])
    }

    @Test func aFailedFetchStopsUntilRetry() async throws {
        let t = try await LiveTestDatabase()
        let query = LiveQuery(.query("SELECT x FROM later ORDER BY x"), database: t.db)
        try await waitOnMain { query.phase.error != nil }
        #expect(query.value.isEmpty)
        let error = try #require(query.phase.error as? SqlCipherError)
        guard case let .sqlite(_, _, message, _) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(message.contains("no such table"))
        #expect(await t.db.liveObservationCount == 0)

        try await t.db.execute("CREATE TABLE later(x); INSERT INTO later VALUES (1)")
        query.retry()
        #expect(query.phase.isLoading)
        try await waitOnMain { query.phase.isLoaded }
        #expect(query.value.first?.get("x", as: Int.self) == 1)
    }

    @Test func switchingDatabasesShowsThePlaceholderNeverTheOldRows() async throws {
        let first = try await LiveTestDatabase("first")
        let second = try await LiveTestDatabase("second")
        try await first.db.execute("INSERT INTO products(name, price) VALUES ('from first', 1)")
        try await second.db.execute("INSERT INTO products(name, price) VALUES ('from second', 1)")
        let query = LiveQuery(productNames, database: first.db)
        try await waitOnMain { query.phase.isLoaded }
        #expect(query.value == ["from first"])

        query.database = second.db
        #expect(query.value == [])
        #expect(query.phase.isLoading)
        try await waitOnMain { query.phase.isLoaded }
        #expect(query.value == ["from second"])
        // The first database's observation is gone, so its changes cannot arrive any more.
        try await waitUntil { await first.db.liveObservationCount == 0 }
        try await first.db.execute("INSERT INTO products(name, price) VALUES ('late first', 1)")
        try await second.db.execute("INSERT INTO products(name, price) VALUES ('sentinel', 1)")
        try await waitOnMain { query.value.count == 2 }
        #expect(query.value == ["from second", "sentinel"])
    }

    @Test func noDatabaseIsReportedAsMissing() async throws {
        let query = LiveQuery(.count(LiveProduct.self), database: nil)
        #expect(query.value == 0)
        #expect(query.phase.error as? LiveError == .missingDatabase)
        #expect(LiveError.missingDatabase.description.contains("database"))
    }

    @Test func anEqualRequestKeepsTheObservationADifferentOneReplacesIt() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("INSERT INTO products(name, price) VALUES ('cheap', 10), ('dear', 100)")
        let query = LiveQuery(.count(LiveProduct.self, where: col("price") < 50.0), database: t.db)
        try await waitOnMain { query.phase.isLoaded }
        #expect(query.value == 1)
        let fetches = await t.db.liveTrackingState.fetches

        query.request = .count(LiveProduct.self, where: col("price") < 50.0)
        #expect(query.phase.isLoaded)
        #expect(await t.db.liveTrackingState.fetches == fetches)

        query.request = .count(LiveProduct.self, where: col("price") < 500.0)
        // The current value stays while the new request loads.
        #expect(query.value == 1)
        #expect(query.phase.isLoading)
        try await waitOnMain { query.phase.isLoaded }
        #expect(query.value == 2)
        try await waitUntil { await t.db.liveObservationCount == 1 }
    }

    @Test func releasingTheQueryEndsItsObservation() async throws {
        let t = try await LiveTestDatabase()
        var query: LiveQuery<[String]>? = LiveQuery(productNames, database: t.db)
        try await waitOnMain { query?.phase.isLoaded == true }
        #expect(await t.db.liveObservationCount == 1)
        query = nil
        try await waitUntil { await t.db.liveObservationCount == 0 }
    }
}
