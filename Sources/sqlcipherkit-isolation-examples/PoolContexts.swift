import Dispatch
import Foundation
import SqlCipherKit

// The same examples on a DatabasePool, in the contexts the brief names (top-level code is in
// main.swift): a @MainActor class, the caller's own actor, Task.detached. Written out in full for
// the reason given in Contexts.swift. Each also runs reads beside a held write, which only a pool
// can do.

/// Reads on the pool while a transaction holds its writer: the reads must not wait for it, and
/// must not see its uncommitted row. The transaction is held until the read is done (or 20 s, when
/// the read waited for the writer, which the example then reports).
func readsBesideAWrite(_ pool: DatabasePool, context: String) async throws {
    let writing = AsyncGate()
    let readDone = DispatchSemaphore(value: 0)
    let write = Task {
        try await pool.transaction { conn in
            try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Eve")
            writing.open()
            return readDone.wait(timeout: .now() + 20) == .success
        }
    }
    await writing.wait()
    let names = try await pool.read { conn in
        try conn.query("SELECT name FROM customers ORDER BY name").compactMap { $0.get("name", as: String.self) }
    }
    readDone.signal()
    if names.contains("Eve") { throw ExampleFailure(context: context, what: "a read saw an uncommitted row") }
    if try await !write.value { throw ExampleFailure(context: context, what: "the read waited for the writer") }
    try await pool.execute("DELETE FROM customers WHERE name = 'Eve'")
}

/// The configuration the example gave reached the writer and a reader: `synchronous = NORMAL` and
/// the pragma its `prepareConnection` set.
func verifyConfiguration(_ pool: DatabasePool, context: String) async throws {
    @Sendable func settings(_ conn: borrowing Connection) throws -> [Int?] {
        [try conn.query("PRAGMA synchronous")[0].get(0, as: Int.self),
         try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self)]
    }
    let writer = try await pool.transaction { conn in try settings(conn) }
    let reader = try await pool.read { conn in try settings(conn) }
    guard writer == [1, 1], reader == [1, 1] else {
        throw ExampleFailure(context: context, what: "configuration: writer \(writer), reader \(reader)")
    }
}

/// A one-shot signal between a body and the task that waits for it.
final class AsyncGate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var waiter: CheckedContinuation<Void, Never>?

    func open() {
        let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            isOpen = true
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let ready = lock.withLock { () -> Bool in
                if isOpen { return true }
                waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

@MainActor
final class PooledProductListModel {
    let db: DatabasePool
    var count = 0

    init(path: String) throws {
        var configuration = DatabaseConfiguration()
        configuration.synchronous = .normal
        configuration.prepareConnection = { conn in try conn.execute("PRAGMA recursive_triggers = ON") }
        db = try DatabasePool(path: path, key: "my-passphrase", configuration: configuration)
    }

    func run() async throws {
        let migrations: [any Migration] = [CreateOrders(), CreateProductsTable(), AddDiscountColumn()]
        try await db.migrate(migrations)
        let skus = ["A-1", "B-2", "C-3"]
        let order = try await db.transaction { conn in
            let order = try conn.save(Order(id: nil, customer: "Alice"))
            try conn.save(skus.map { LineItem(id: nil, orderID: order.id!, sku: $0) })
            try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
            return order
        }
        try await db.transaction { conn in
            try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Bob")
            try? conn.savepoint { conn in
                try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Carol")
                throw CancellationError()
            }
        }
        try await db.savepoint { conn in
            try conn.execute("INSERT INTO customers(name, orders) VALUES (?, ?)", "Dave", order.id! - order.id!)
        }
        for try await count in db.values(of: .count(Product.self)) {
            self.count = count
            if count == 1 { break }
            try await db.save(Product(id: nil, name: "Widget", price: 9.99))
        }
        try await db.rollback(to: "002-add-discount", using: migrations)
        try await readsBesideAWrite(db, context: "pool-main-actor")
        try await verify(db, context: "pool-main-actor")
        try await verifyConfiguration(db, context: "pool-main-actor")
        if count != 1 { throw ExampleFailure(context: "pool-main-actor", what: "live count \(count)") }
    }
}

actor PooledOrderService {
    let db: DatabasePool
    var lastOrder: Order?

    init(path: String) throws {
        var configuration = DatabaseConfiguration()
        configuration.synchronous = .normal
        configuration.prepareConnection = { conn in try conn.execute("PRAGMA recursive_triggers = ON") }
        db = try DatabasePool(path: path, key: "my-passphrase", configuration: configuration)
    }

    func run() async throws {
        let migrations: [any Migration] = [CreateOrders(), CreateProductsTable(), AddDiscountColumn()]
        try await db.migrate(migrations)
        let skus = ["A-1", "B-2", "C-3"]
        let order = try await db.transaction { conn in
            let order = try conn.save(Order(id: nil, customer: "Alice"))
            try conn.save(skus.map { LineItem(id: nil, orderID: order.id!, sku: $0) })
            try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
            return order
        }
        lastOrder = order
        try await db.transaction { conn in
            try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Bob")
            try? conn.savepoint { conn in
                try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Carol")
                throw CancellationError()
            }
        }
        try await db.savepoint { conn in
            try conn.execute("INSERT INTO customers(name, orders) VALUES (?, ?)", "Dave", order.id! - order.id!)
        }
        for try await count in db.values(of: .count(Product.self)) {
            if count == 1 { break }
            try await db.save(Product(id: nil, name: "Widget", price: 9.99))
        }
        try await db.rollback(to: "002-add-discount", using: migrations)
        try await readsBesideAWrite(db, context: "pool-actor")
        try await verify(db, context: "pool-actor")
        try await verifyConfiguration(db, context: "pool-actor")
    }
}

func pooledDetachedExamples(path: String) async throws {
    try await Task.detached {
        var configuration = DatabaseConfiguration()
        configuration.synchronous = .normal
        configuration.prepareConnection = { conn in try conn.execute("PRAGMA recursive_triggers = ON") }
        let db = try DatabasePool(path: path, key: "my-passphrase", configuration: configuration)
        let migrations: [any Migration] = [CreateOrders(), CreateProductsTable(), AddDiscountColumn()]
        try await db.migrate(migrations)
        let skus = ["A-1", "B-2", "C-3"]
        let order = try await db.transaction { conn in
            let order = try conn.save(Order(id: nil, customer: "Alice"))
            try conn.save(skus.map { LineItem(id: nil, orderID: order.id!, sku: $0) })
            try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
            return order
        }
        try await db.transaction { conn in
            try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Bob")
            try? conn.savepoint { conn in
                try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Carol")
                throw CancellationError()
            }
        }
        try await db.savepoint { conn in
            try conn.execute("INSERT INTO customers(name, orders) VALUES (?, ?)", "Dave", order.id! - order.id!)
        }
        for try await count in db.values(of: .count(Product.self)) {
            if count == 1 { break }
            try await db.save(Product(id: nil, name: "Widget", price: 9.99))
        }
        try await db.rollback(to: "002-add-discount", using: migrations)
        try await readsBesideAWrite(db, context: "pool-detached")
        try await verify(db, context: "pool-detached")
        try await verifyConfiguration(db, context: "pool-detached")
        await db.close()
    }.value
}
