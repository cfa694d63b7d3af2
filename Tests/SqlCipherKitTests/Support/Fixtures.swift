import Foundation
import SqlCipherKit
import Synchronization
import Testing

// Fixtures shared by several suites: the databases and pools they open and the models they
// store. A suite takes a database fixture by conforming to its protocol.

/// A database with a table `t` of one row and an empty table `big`, and statements that run for
/// minutes unless interrupted; their `started()` signals a ``RunningSignal`` once they run.
protocol InterruptibleDatabaseFixture {}

extension InterruptibleDatabaseFixture {
    /// A write that runs for minutes unless interrupted; `started()` signals that it runs.
    static var longWrite: String {
        """
        INSERT INTO big(x) SELECT x FROM (WITH RECURSIVE c(x) AS (SELECT started() UNION ALL SELECT x + 1 FROM c \
        LIMIT 2000000000) SELECT x FROM c)
        """
    }

    /// A read that runs for minutes unless interrupted; `started()` signals that it runs.
    static var longRead: String {
        """
        WITH RECURSIVE c(x) AS (SELECT started() UNION ALL SELECT x + 1 FROM c LIMIT 2000000000) SELECT sum(x) FROM c
        """
    }

    /// The database, with `started()` (see ``RunningSignal``) signalling `running`.
    func database(_ directory: TemporaryDirectory, _ name: String = "a.db",
                  running: RunningSignal = RunningSignal()) async throws -> Database {
        let db = try Database(path: directory.path(name), rawKey: rawKey())
        try await db.add(function: running.function)
        try await db.execute("CREATE TABLE IF NOT EXISTS t(x INTEGER)")
        try await db.execute("CREATE TABLE IF NOT EXISTS big(x INTEGER)")
        try await db.execute("INSERT INTO t VALUES (1)")
        return db
    }

    func values(_ db: Database, _ sql: String = "SELECT x FROM t ORDER BY x") async throws -> [Int] {
        try await db.query(sql).map { try $0.decode(0, as: Int.self) }
    }

    /// Starts `operation`, cancels it once its long statement runs, and returns its outcome.
    func cancelled<T: Sendable>(once running: RunningSignal,
                                _ operation: @escaping @Sendable () async throws -> T) async -> Result<T, any Error> {
        let task = Task { try await operation() }
        await running.wait(orEndOf: task)
        task.cancel()
        return await task.result
    }

    var isSqlCipher4: Bool { (try? SqlCipherLibrary.shared)?.cipherVersionIsAtLeast(4) ?? false }
}

/// A database with a table `t` of one row (x = 1), and readers of values.
protocol OneRowDatabaseFixture {}

extension OneRowDatabaseFixture {
    func database(_ directory: TemporaryDirectory, _ name: String = "a.db",
                  journalMode: JournalMode = .wal) async throws -> Database {
        let db = try Database(path: directory.path(name), rawKey: rawKey(), journalMode: journalMode)
        try await db.execute("CREATE TABLE IF NOT EXISTS t(x INTEGER)")
        try await db.execute("INSERT INTO t VALUES (1)")
        return db
    }

    func values(_ db: Database) async throws -> [Int] {
        try await db.query("SELECT x FROM t ORDER BY x").map { try $0.decode(0, as: Int.self) }
    }

    /// The value SQLite returns for `expression`, read as `T`.
    func read<T: DatabaseValueConvertible>(_ db: Database, _ expression: String, as type: T.Type) async throws -> T? {
        try await db.query("SELECT \(expression) AS v")[0].get("v", as: type)
    }
}

/// A pool with a table `t(id, v)` of one row.
protocol PoolFixture {}

extension PoolFixture {
    func pool(_ dir: TemporaryDirectory, _ name: String = "p.db", readers: Int = 4) async throws -> DatabasePool {
        let pool = try DatabasePool(path: dir.path(name), rawKey: rawKey(), maximumReaderCount: readers)
        try await pool.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v INTEGER)")
        try await pool.execute("INSERT INTO t(v) VALUES (1)")
        return pool
    }

    func count(_ pool: DatabasePool) async throws -> Int {
        try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) ?? -1
    }
}

// MARK: Models used by several suites

/// A type of its own conversion (an integer of cents), Codable too.
struct Cents: DatabaseValueConvertible, Codable, Equatable {
    var value: Int64
    var databaseValue: DatabaseValue { .integer(value) }
    static func fromDatabaseValue(_ value: DatabaseValue) -> Cents? {
        if case .integer(let int) = value { return Cents(value: int) }
        return nil
    }
}

/// A nested Codable value, stored as JSON text.
struct Address: Codable, Equatable, Sendable {
    var street: String
    var zip: Int
    var since: Date
}

/// An entity of table `products(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, price REAL NOT NULL)`.
struct Product: Entity, Equatable {
    static let tableName = TableName("products")
    static let primaryKey: WritableKeyPath<Product, Int?> & Sendable = \.id
    var id: Int?
    var name: String
    var price: Double
}

/// An entity of table `items(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)`.
struct Item: Entity, Equatable {
    static let tableName = TableName("items")
    static let primaryKey: WritableKeyPath<Item, Int?> & Sendable = \.id
    var id: Int?
    var name: String
    var price: Double
}

/// An entity of table `orders(id INTEGER PRIMARY KEY, customer TEXT NOT NULL)`, as the guide's
/// examples declare it.
struct Order: Entity, Equatable {
    static let tableName = TableName("orders")
    static let primaryKey: WritableKeyPath<Order, Int?> & Sendable = \.id
    var id: Int?
    var customer: String
}

/// An entity of table `line_items(id INTEGER PRIMARY KEY, orderID INTEGER NOT NULL, sku TEXT NOT NULL)`,
/// a line of an ``Order``, as the guide's examples declare it.
struct LineItem: Entity, Equatable {
    static let tableName = TableName("line_items")
    static let primaryKey: WritableKeyPath<LineItem, Int?> & Sendable = \.id
    var id: Int?
    var orderID: Int
    var sku: String
}

/// An entity of table `key_only(id INTEGER PRIMARY KEY)`: nothing but its key.
struct KeyOnly: Entity, Equatable {
    static let tableName = TableName("key_only")
    static let primaryKey: WritableKeyPath<KeyOnly, Int?> & Sendable = \.id
    var id: Int?
}

// MARK: Handshakes

/// True for the first caller of ``setFirst()`` only: a `@Sendable` closure called many times (a
/// progress report) acts once.
final class OnceFlag: Sendable {
    private let done = Mutex(false)

    /// Whether this is the first call.
    func setFirst() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}

/// Tells a test that a long query has started running: the query calls `started()`, whose body
/// signals. Waiting on it replaces a sleep that guessed how long the statement takes to start.
/// A counting semaphore for async code: each call of `started()` lets one `wait()` return.
final class RunningSignal: Sendable {
    private struct State {
        var available = 0
        var waiters: [(id: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var nextID = 0
        /// Waits whose task ended before they were resumed.
        var ended: Set<Int> = []
    }

    private let state = Mutex(State())

    /// `started()`: signals, and returns 1. Allowed in the schema because SqlCipherKit's guard
    /// counts a call inside a common table expression (where the long queries call it) as one.
    var function: DatabaseFunction {
        DatabaseFunction("started", argumentCount: 0, allowedInSchema: true) { [self] _ in
            signal()
            return 1
        }
    }

    private func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        waiter?.resume()
    }

    /// Ends the wait `id` without a signal (its task ended first).
    private func end(_ id: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                state.ended.insert(id)
                return nil
            }
            return state.waiters.remove(at: index).continuation
        }
        waiter?.resume()
    }

    /// Returns once `started()` has been called (once per wait), or once `task` ended without
    /// calling it (it failed early: the test then sees its error instead of hanging).
    func wait<T: Sendable>(orEndOf task: Task<T, any Error>) async {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        // Not awaited: once this wait returned, its end finds no waiter and changes nothing.
        Task { [self] in
            _ = await task.result
            end(id)
        }
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.ended.remove(id) != nil { return true }
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                state.waiters.append((id, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
