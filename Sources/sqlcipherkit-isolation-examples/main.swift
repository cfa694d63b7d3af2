// The seed's examples for transactions, savepoints, live queries and migrations, written as a
// user writes them in each isolation context a Swift program has. This file is top-level code:
// its closures are formed main-actor isolated, which is where a non-Sendable body used to trap at
// run time as soon as it held a nested closure. Compiled by the package build (a compile error
// fails the suite) and run by IsolationContextTests against each SQLCipher library.
//
// Usage: sqlcipherkit-isolation-examples DIRECTORY
import Foundation
import SqlCipherKit

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: sqlcipherkit-isolation-examples DIRECTORY\n".utf8))
    exit(2)
}
let directory = CommandLine.arguments[1]

do {
    // 1. Top-level code.
    let db = try Database(path: directory + "/top-level.db", key: "my-passphrase")
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
    try await verify(db, context: "top-level")
    print("ok top-level")

    // 2. A @MainActor class (a view model).
    try await ProductListModel(path: directory + "/main-actor.db").run()
    print("ok main-actor")

    // 3. A method of the caller's own actor.
    try await OrderService(path: directory + "/actor.db").run()
    print("ok actor")

    // 4. A plain async function.
    try await plainAsyncExamples(path: directory + "/async-function.db")
    print("ok async-function")

    // 5. Task.detached.
    try await detachedExamples(path: directory + "/detached.db")
    print("ok detached")

    // 6. A @Sendable closure, as a server's route handler is.
    try await routeHandlerExamples(path: directory + "/route-handler.db")
    print("ok route-handler")

    // 7. Top-level code, on a DatabasePool.
    var configuration = DatabaseConfiguration()
    configuration.synchronous = .normal
    configuration.prepareConnection = { conn in try conn.execute("PRAGMA recursive_triggers = ON") }
    let pool = try DatabasePool(path: directory + "/pool-top-level.db", key: "my-passphrase",
                                configuration: configuration)
    let poolMigrations: [any Migration] = [CreateOrders(), CreateProductsTable(), AddDiscountColumn()]
    try await pool.migrate(poolMigrations)

    let poolSkus = ["A-1", "B-2", "C-3"]
    let poolOrder = try await pool.transaction { conn in
        let order = try conn.save(Order(id: nil, customer: "Alice"))
        try conn.save(poolSkus.map { LineItem(id: nil, orderID: order.id!, sku: $0) })
        try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
        return order
    }
    try await pool.transaction { conn in
        try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Bob")
        try? conn.savepoint { conn in
            try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Carol")
            throw CancellationError()
        }
    }
    try await pool.savepoint { conn in
        try conn.execute("INSERT INTO customers(name, orders) VALUES (?, ?)", "Dave", poolOrder.id! - poolOrder.id!)
    }
    for try await count in pool.values(of: .count(Product.self)) {
        if count == 1 { break }
        try await pool.save(Product(id: nil, name: "Widget", price: 9.99))
    }
    try await pool.rollback(to: "002-add-discount", using: poolMigrations)
    try await readsBesideAWrite(pool, context: "pool-top-level")
    try await verify(pool, context: "pool-top-level")
    try await verifyConfiguration(pool, context: "pool-top-level")
    await pool.close()
    print("ok pool-top-level")

    try await PooledProductListModel(path: directory + "/pool-main-actor.db").run()
    print("ok pool-main-actor")
    try await PooledOrderService(path: directory + "/pool-actor.db").run()
    print("ok pool-actor")
    try await pooledDetachedExamples(path: directory + "/pool-detached.db")
    print("ok pool-detached")

    // 8. Streams left with `break` inside an `if`, `do` or `switch` of top-level code: Swift does
    // not destroy such an iterator, so nothing may depend on its deinit. A watchdog turns a call
    // that would wait forever into a failure instead of a hung suite.
    let watchdog = Task.detached {
        try await Task.sleep(for: .seconds(60))
        FileHandle.standardError.write(Data("examples failed: a call after an abandoned stream never returned\n".utf8))
        exit(3)
    }
    let streamed = try Database(path: directory + "/streams.db", key: "my-passphrase")
    try await streamed.execute("CREATE TABLE t(x INTEGER)")
    try await streamed.transaction { conn in
        for x in 0..<1000 { try conn.execute("INSERT INTO t VALUES (?)", x) }
    }
    for try await row in streamed.stream("SELECT x FROM t", batchSize: 10) {
        if row.get(0, as: Int.self) == 5 { break }
    }
    for try await row in streamed.stream("SELECT x FROM t", batchSize: 10) {
        do { if row.get(0, as: Int.self) == 5 { break } }
    }
    rows: for try await row in streamed.stream("SELECT x FROM t", batchSize: 10) {
        switch row.get(0, as: Int.self) {
        case 5: break rows
        default: continue
        }
    }
    // Each stream above still holds its statement; the DROP needs the table they read.
    try await streamed.execute("DROP TABLE t")
    await streamed.close()
    print("ok streams-database")

    let onePool = try DatabasePool(path: directory + "/streams-pool.db", key: "my-passphrase", maximumReaderCount: 1)
    try await onePool.execute("CREATE TABLE t(x INTEGER)")
    try await onePool.transaction { conn in
        for x in 0..<1000 { try conn.execute("INSERT INTO t VALUES (?)", x) }
    }
    for try await row in onePool.stream("SELECT x FROM t", batchSize: 10) {
        if row.get(0, as: Int.self) == 5 { break }
    }
    for try await row in onePool.stream("SELECT x FROM t", batchSize: 10) {
        do { if row.get(0, as: Int.self) == 5 { break } }
    }
    // The only reader is held by the abandoned streams in turn: each read takes it back.
    let count = try await onePool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self)
    guard count == 1000 else { throw ExampleFailure(context: "streams-pool", what: "count \(String(describing: count))") }
    var seen = 0
    for try await _ in onePool.stream("SELECT x FROM t", batchSize: 10) { seen += 1 }
    guard seen == 1000 else { throw ExampleFailure(context: "streams-pool", what: "streamed \(seen)") }
    await onePool.close()
    watchdog.cancel()
    print("ok streams-pool")
} catch {
    FileHandle.standardError.write(Data("examples failed: \(error)\n".utf8))
    exit(1)
}
