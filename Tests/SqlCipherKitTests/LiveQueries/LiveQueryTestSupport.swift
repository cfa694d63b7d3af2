import Foundation
import SqlCipherKit
import Testing

/// A database in a fresh temporary directory, opened with a raw key (no key derivation), with a
/// `products` table.
struct LiveTestDatabase {
    let directory: TemporaryDirectory
    let db: Database

    init(_ label: String = #function) async throws {
        directory = TemporaryDirectory(label)
        db = try Database(path: directory.path("live.db"), rawKey: rawKey(5))
        await db.recordLiveTracking()
        try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
    }
}

/// No value arrived within the guard time: the test would otherwise hang.
struct LiveReaderTimeout: Error, CustomStringConvertible {
    var description: String { "no value arrived within the guard time" }
}

/// Pulls values from a live sequence one at a time, with a generous guard against hangs.
///
/// The guard is never used to assert that something did *not* happen: tests prove absence with a
/// sentinel write instead (the next value must be the sentinel's state).
final class LiveReader<Value: Sendable>: @unchecked Sendable {
    private var iterator: LiveValues<Value>.Iterator

    init(_ values: LiveValues<Value>) {
        iterator = values.makeAsyncIterator()
    }

    /// The next value, or nil when the sequence ended.
    func next(guardTime: Duration = .seconds(60)) async throws -> Value? {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await self.iterator.next() }
            group.addTask {
                try await Task.sleep(for: guardTime)
                throw LiveReaderTimeout()
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw LiveReaderTimeout() }
            return first
        }
    }

    /// Reads values until one equals `expected` and returns it, or returns the last value read
    /// when the sequence ended first (nil if it ended before any).
    func next(until expected: Value) async throws -> Value? where Value: Equatable {
        var seen: Value?
        while seen != expected {
            guard let value = try await next() else { break }
            seen = value
        }
        return seen
    }
}

/// Waits until `condition` holds, polling; throws ``LiveReaderTimeout`` after the guard time.
func waitUntil(guardTime: Duration = .seconds(60), _ condition: @Sendable () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + guardTime
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw LiveReaderTimeout() }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// The names of the products, in name order: a closure request.
let productNames = LiveRequest(placeholder: [String]()) { conn in
    try conn.query("SELECT name FROM products ORDER BY name").compactMap { $0.get("name", as: String.self) }
}

/// The names of the products cheaper than 50, as rows: a raw SQL request.
let cheapProductRows = LiveRequest<[Row]>.query("SELECT name FROM products WHERE price < ? ORDER BY name", 50.0)

func names(_ rows: [Row]?) -> [String]? {
    rows?.compactMap { $0.get("name", as: String.self) }
}
