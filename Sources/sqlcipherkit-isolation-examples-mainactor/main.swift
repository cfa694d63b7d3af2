// The seed's examples in a module built with Swift 6.2's `.defaultIsolation(MainActor.self)`, as
// new app templates are: top-level code, a class and a free async function are all main-actor
// isolated without saying so. Models.swift shows what the types need (`nonisolated`). Compiled by
// the package build (a compile error fails the suite) and run by IsolationContextTests against
// each SQLCipher library.
//
// Usage: sqlcipherkit-isolation-examples-mainactor DIRECTORY
import Foundation
import SqlCipherKit

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: sqlcipherkit-isolation-examples-mainactor DIRECTORY\n".utf8))
    exit(2)
}
let directory = CommandLine.arguments[1]

/// A view model as an app declares it in such a module: no annotation, main-actor isolated.
final class ProductListModel {
    let db: Database
    var count = 0

    init(path: String) throws {
        db = try Database(path: path, key: "my-passphrase")
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
        var streamed = 0
        for try await _ in db.stream(Product.self, sql: "SELECT * FROM products") { streamed += 1 }
        if streamed != 1 { throw ExampleFailure(context: "default-main-actor-class", what: "streamed \(streamed)") }
        try await db.rollback(to: "002-add-discount", using: migrations)
        try await verify(db, context: "default-main-actor-class")
        if count != 1 { throw ExampleFailure(context: "default-main-actor-class", what: "live count \(count)") }
    }
}

do {
    // 1. Top-level code, main-actor isolated by default.
    let db = try Database(path: directory + "/default-main-actor.db", key: "my-passphrase")
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
    var streamed = 0
    for try await _ in db.stream(Product.self, sql: "SELECT * FROM products") { streamed += 1 }
    if streamed != 1 { throw ExampleFailure(context: "default-main-actor", what: "streamed \(streamed)") }
    try await db.rollback(to: "002-add-discount", using: migrations)
    try await verify(db, context: "default-main-actor")
    await db.close()
    print("ok default-main-actor")

    // 2. A class without annotation (main-actor isolated by default).
    try await ProductListModel(path: directory + "/default-main-actor-class.db").run()
    print("ok default-main-actor-class")

    // 3. A pool from the same context.
    // A configuration whose closure is formed here, in main-actor code, and runs on each of the
    // pool's connections: its type is @Sendable, so it is nonisolated.
    var configuration = DatabaseConfiguration()
    configuration.prepareConnection = { conn in try conn.execute("PRAGMA recursive_triggers = ON") }
    let pool = try DatabasePool(path: directory + "/default-main-actor-pool.db", key: "my-passphrase",
                                configuration: configuration)
    try await pool.migrate(migrations)
    let poolOrder = try await pool.transaction { conn in
        let order = try conn.save(Order(id: nil, customer: "Alice"))
        try conn.save(skus.map { LineItem(id: nil, orderID: order.id!, sku: $0) })
        try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
        return order
    }
    try await pool.transaction { conn in
        try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Bob")
    }
    try await pool.savepoint { conn in
        try conn.execute("INSERT INTO customers(name, orders) VALUES (?, ?)", "Dave", poolOrder.id! - poolOrder.id!)
    }
    try await pool.rollback(to: "002-add-discount", using: migrations)
    try await verify(pool, context: "default-main-actor-pool")
    let triggers = try await pool.read { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
    if triggers != 1 {
        throw ExampleFailure(context: "default-main-actor-pool", what: "prepareConnection did not reach a reader")
    }
    await pool.close()
    print("ok default-main-actor-pool")
} catch {
    FileHandle.standardError.write(Data("examples failed: \(error)\n".utf8))
    exit(1)
}
