import Foundation
import SqlCipherKit

// The same examples in the five other contexts. Each is written out in full on purpose: the
// closures must be formed in the context under test, so no shared helper can stand in for them.

@MainActor
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
        try await db.rollback(to: "002-add-discount", using: migrations)
        try await verify(db, context: "main-actor")
        if count != 1 { throw ExampleFailure(context: "main-actor", what: "live count \(count)") }
    }
}

actor OrderService {
    let db: Database
    var lastOrder: Order?

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
        try await verify(db, context: "actor")
    }
}

func plainAsyncExamples(path: String) async throws {
    let db = try Database(path: path, key: "my-passphrase")
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
    try await verify(db, context: "async-function")
}

func detachedExamples(path: String) async throws {
    try await Task.detached {
        let db = try Database(path: path, key: "my-passphrase")
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
        try await verify(db, context: "detached")
    }.value
}

/// A route table of `@Sendable` handlers, as a server framework keeps them.
struct Router {
    var routes: [String: @Sendable (Database) async throws -> String] = [:]
}

func routeHandlerExamples(path: String) async throws {
    var router = Router()
    router.routes["POST /orders"] = { @Sendable db in
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
        try await verify(db, context: "route-handler")
        return "created order \(order.id!)"
    }
    let db = try Database(path: path, key: "my-passphrase")
    guard let handler = router.routes["POST /orders"] else { return }
    _ = try await handler(db)
}
