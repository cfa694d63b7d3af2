import Foundation
import SqlCipherKit

// Schema introspection and the entity counts, existence checks and deletes, written as a user
// writes them in each isolation context: top-level code is in main.swift; here a @MainActor class,
// the caller's own actor and Task.detached. Each is written out in full on purpose: the closures
// must be formed in the context under test, so no shared helper can stand in for them.

@MainActor
final class SchemaModel {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/schema-main-actor.db", key: "my-passphrase")
            let marker = self.marker
            try await db.migrate([CreateOrders(), CreateProductsTable()])
            try await db.execute("CREATE INDEX products_by_name ON products(name)")
            try await db.execute("CREATE VIEW cheap_products AS SELECT * FROM products WHERE price < 5")
            try await db.execute("""
                CREATE TRIGGER orders_count AFTER INSERT ON orders
                BEGIN UPDATE customers SET orders = orders + 1 WHERE name = NEW.customer; END
                """)
            let ordersExists = try await db.tableExists("orders")
            let viewIsTable = try await db.tableExists("cheap_products")
            try expect(ordersExists && !viewIsTable, "schema-main-actor", "tableExists \(ordersExists) \(viewIsTable)")
            let columns = try await db.columns(in: "line_items").map(\.name)
            try expect(columns == ["id", "orderID", "sku"], "schema-main-actor", "columns(in:) \(columns)")
            let indexes = try await db.indexes(on: "products").map(\.name)
            try expect(indexes == ["products_by_name"], "schema-main-actor", "indexes(on:) \(indexes)")
            let key = try await db.primaryKey(of: "orders")
            try expect(key.columns == ["id"] && key.kind == .rowIDAlias, "schema-main-actor", "primaryKey(of:) \(key)")
            let foreignKeys = try await db.foreignKeys(of: "line_items").map(\.table)
            try expect(foreignKeys == ["orders"], "schema-main-actor", "foreignKeys(of:) \(foreignKeys)")
            let triggers = try await db.triggers().map(\.name)
            try expect(triggers == ["orders_count"], "schema-main-actor", "triggers() \(triggers)")
            let views = try await db.views()
            try expect(views == ["cheap_products"], "schema-main-actor", "views() \(views)")
            let (inRead, viewsInRead) = try await db.read { conn in (try conn.tableExists("products"), try conn.views()) }
            try expect(inRead && viewsInRead == views, "schema-main-actor", "introspection in read { }")
            let widget = "Widget\(marker)"
            _ = try await db.save([Product(id: nil, name: widget, price: 9.99), Product(id: nil, name: "Gadget", price: 2.5)])
            let all = try await db.count(Product.self)
            let dear = try await db.count(Product.self, where: col("price") > 5)
            let hasWidget = try await db.exists(Product.self, where: col("name") == widget)
            let (inTransaction, free) = try await db.transaction { conn in
                (try conn.count(Product.self), try conn.exists(Product.self, where: col("price") < 1))
            }
            try expect(all == 2 && dear == 1 && hasWidget && inTransaction == 2 && !free, "schema-main-actor",
                       "count/exists \(all) \(dear) \(hasWidget) \(inTransaction) \(free)")
            let deleted = try await db.deleteAll(Product.self)
            let left = try await db.count(Product.self)
            try expect(deleted == 2 && left == 0, "schema-main-actor", "deleteAll \(deleted), left \(left)")
            await db.close()
            finished.append("schema-main-actor")
            print("ok schema-main-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/schema-pool-main-actor.db", key: "my-passphrase")
            let marker = self.marker
            try await db.migrate([CreateOrders(), CreateProductsTable()])
            try await db.execute("CREATE INDEX products_by_name ON products(name)")
            try await db.execute("CREATE VIEW cheap_products AS SELECT * FROM products WHERE price < 5")
            try await db.execute("""
                CREATE TRIGGER orders_count AFTER INSERT ON orders
                BEGIN UPDATE customers SET orders = orders + 1 WHERE name = NEW.customer; END
                """)
            let ordersExists = try await db.tableExists("orders")
            let viewIsTable = try await db.tableExists("cheap_products")
            try expect(ordersExists && !viewIsTable, "schema-pool-main-actor", "tableExists \(ordersExists) \(viewIsTable)")
            let columns = try await db.columns(in: "line_items").map(\.name)
            try expect(columns == ["id", "orderID", "sku"], "schema-pool-main-actor", "columns(in:) \(columns)")
            let indexes = try await db.indexes(on: "products").map(\.name)
            try expect(indexes == ["products_by_name"], "schema-pool-main-actor", "indexes(on:) \(indexes)")
            let key = try await db.primaryKey(of: "orders")
            try expect(key.columns == ["id"] && key.kind == .rowIDAlias, "schema-pool-main-actor", "primaryKey(of:) \(key)")
            let foreignKeys = try await db.foreignKeys(of: "line_items").map(\.table)
            try expect(foreignKeys == ["orders"], "schema-pool-main-actor", "foreignKeys(of:) \(foreignKeys)")
            let triggers = try await db.triggers().map(\.name)
            try expect(triggers == ["orders_count"], "schema-pool-main-actor", "triggers() \(triggers)")
            let views = try await db.views()
            try expect(views == ["cheap_products"], "schema-pool-main-actor", "views() \(views)")
            let (inRead, viewsInRead) = try await db.read { conn in (try conn.tableExists("products"), try conn.views()) }
            try expect(inRead && viewsInRead == views, "schema-pool-main-actor", "introspection in read { }")
            let widget = "Widget\(marker)"
            _ = try await db.save([Product(id: nil, name: widget, price: 9.99), Product(id: nil, name: "Gadget", price: 2.5)])
            let all = try await db.count(Product.self)
            let dear = try await db.count(Product.self, where: col("price") > 5)
            let hasWidget = try await db.exists(Product.self, where: col("name") == widget)
            let (inTransaction, free) = try await db.transaction { conn in
                (try conn.count(Product.self), try conn.exists(Product.self, where: col("price") < 1))
            }
            try expect(all == 2 && dear == 1 && hasWidget && inTransaction == 2 && !free, "schema-pool-main-actor",
                       "count/exists \(all) \(dear) \(hasWidget) \(inTransaction) \(free)")
            let deleted = try await db.deleteAll(Product.self)
            let left = try await db.count(Product.self)
            try expect(deleted == 2 && left == 0, "schema-pool-main-actor", "deleteAll \(deleted), left \(left)")
            await db.close()
            finished.append("schema-pool-main-actor")
            print("ok schema-pool-main-actor")
        }
    }
}

actor SchemaService {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/schema-actor.db", key: "my-passphrase")
            let marker = self.marker
            try await db.migrate([CreateOrders(), CreateProductsTable()])
            try await db.execute("CREATE INDEX products_by_name ON products(name)")
            try await db.execute("CREATE VIEW cheap_products AS SELECT * FROM products WHERE price < 5")
            try await db.execute("""
                CREATE TRIGGER orders_count AFTER INSERT ON orders
                BEGIN UPDATE customers SET orders = orders + 1 WHERE name = NEW.customer; END
                """)
            let ordersExists = try await db.tableExists("orders")
            let viewIsTable = try await db.tableExists("cheap_products")
            try expect(ordersExists && !viewIsTable, "schema-actor", "tableExists \(ordersExists) \(viewIsTable)")
            let columns = try await db.columns(in: "line_items").map(\.name)
            try expect(columns == ["id", "orderID", "sku"], "schema-actor", "columns(in:) \(columns)")
            let indexes = try await db.indexes(on: "products").map(\.name)
            try expect(indexes == ["products_by_name"], "schema-actor", "indexes(on:) \(indexes)")
            let key = try await db.primaryKey(of: "orders")
            try expect(key.columns == ["id"] && key.kind == .rowIDAlias, "schema-actor", "primaryKey(of:) \(key)")
            let foreignKeys = try await db.foreignKeys(of: "line_items").map(\.table)
            try expect(foreignKeys == ["orders"], "schema-actor", "foreignKeys(of:) \(foreignKeys)")
            let triggers = try await db.triggers().map(\.name)
            try expect(triggers == ["orders_count"], "schema-actor", "triggers() \(triggers)")
            let views = try await db.views()
            try expect(views == ["cheap_products"], "schema-actor", "views() \(views)")
            let (inRead, viewsInRead) = try await db.read { conn in (try conn.tableExists("products"), try conn.views()) }
            try expect(inRead && viewsInRead == views, "schema-actor", "introspection in read { }")
            let widget = "Widget\(marker)"
            _ = try await db.save([Product(id: nil, name: widget, price: 9.99), Product(id: nil, name: "Gadget", price: 2.5)])
            let all = try await db.count(Product.self)
            let dear = try await db.count(Product.self, where: col("price") > 5)
            let hasWidget = try await db.exists(Product.self, where: col("name") == widget)
            let (inTransaction, free) = try await db.transaction { conn in
                (try conn.count(Product.self), try conn.exists(Product.self, where: col("price") < 1))
            }
            try expect(all == 2 && dear == 1 && hasWidget && inTransaction == 2 && !free, "schema-actor",
                       "count/exists \(all) \(dear) \(hasWidget) \(inTransaction) \(free)")
            let deleted = try await db.deleteAll(Product.self)
            let left = try await db.count(Product.self)
            try expect(deleted == 2 && left == 0, "schema-actor", "deleteAll \(deleted), left \(left)")
            await db.close()
            finished.append("schema-actor")
            print("ok schema-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/schema-pool-actor.db", key: "my-passphrase")
            let marker = self.marker
            try await db.migrate([CreateOrders(), CreateProductsTable()])
            try await db.execute("CREATE INDEX products_by_name ON products(name)")
            try await db.execute("CREATE VIEW cheap_products AS SELECT * FROM products WHERE price < 5")
            try await db.execute("""
                CREATE TRIGGER orders_count AFTER INSERT ON orders
                BEGIN UPDATE customers SET orders = orders + 1 WHERE name = NEW.customer; END
                """)
            let ordersExists = try await db.tableExists("orders")
            let viewIsTable = try await db.tableExists("cheap_products")
            try expect(ordersExists && !viewIsTable, "schema-pool-actor", "tableExists \(ordersExists) \(viewIsTable)")
            let columns = try await db.columns(in: "line_items").map(\.name)
            try expect(columns == ["id", "orderID", "sku"], "schema-pool-actor", "columns(in:) \(columns)")
            let indexes = try await db.indexes(on: "products").map(\.name)
            try expect(indexes == ["products_by_name"], "schema-pool-actor", "indexes(on:) \(indexes)")
            let key = try await db.primaryKey(of: "orders")
            try expect(key.columns == ["id"] && key.kind == .rowIDAlias, "schema-pool-actor", "primaryKey(of:) \(key)")
            let foreignKeys = try await db.foreignKeys(of: "line_items").map(\.table)
            try expect(foreignKeys == ["orders"], "schema-pool-actor", "foreignKeys(of:) \(foreignKeys)")
            let triggers = try await db.triggers().map(\.name)
            try expect(triggers == ["orders_count"], "schema-pool-actor", "triggers() \(triggers)")
            let views = try await db.views()
            try expect(views == ["cheap_products"], "schema-pool-actor", "views() \(views)")
            let (inRead, viewsInRead) = try await db.read { conn in (try conn.tableExists("products"), try conn.views()) }
            try expect(inRead && viewsInRead == views, "schema-pool-actor", "introspection in read { }")
            let widget = "Widget\(marker)"
            _ = try await db.save([Product(id: nil, name: widget, price: 9.99), Product(id: nil, name: "Gadget", price: 2.5)])
            let all = try await db.count(Product.self)
            let dear = try await db.count(Product.self, where: col("price") > 5)
            let hasWidget = try await db.exists(Product.self, where: col("name") == widget)
            let (inTransaction, free) = try await db.transaction { conn in
                (try conn.count(Product.self), try conn.exists(Product.self, where: col("price") < 1))
            }
            try expect(all == 2 && dear == 1 && hasWidget && inTransaction == 2 && !free, "schema-pool-actor",
                       "count/exists \(all) \(dear) \(hasWidget) \(inTransaction) \(free)")
            let deleted = try await db.deleteAll(Product.self)
            let left = try await db.count(Product.self)
            try expect(deleted == 2 && left == 0, "schema-pool-actor", "deleteAll \(deleted), left \(left)")
            await db.close()
            finished.append("schema-pool-actor")
            print("ok schema-pool-actor")
        }
    }

    func report(_ fraction: Double) {
        self.fraction = fraction
    }
}

func schemaDetached(directory: String) async throws {
    try await Task.detached {
        // a Database
        do {
            let db = try Database(path: directory + "/schema-detached.db", key: "my-passphrase")
            let marker = "!"
            try await db.migrate([CreateOrders(), CreateProductsTable()])
            try await db.execute("CREATE INDEX products_by_name ON products(name)")
            try await db.execute("CREATE VIEW cheap_products AS SELECT * FROM products WHERE price < 5")
            try await db.execute("""
                CREATE TRIGGER orders_count AFTER INSERT ON orders
                BEGIN UPDATE customers SET orders = orders + 1 WHERE name = NEW.customer; END
                """)
            let ordersExists = try await db.tableExists("orders")
            let viewIsTable = try await db.tableExists("cheap_products")
            try expect(ordersExists && !viewIsTable, "schema-detached", "tableExists \(ordersExists) \(viewIsTable)")
            let columns = try await db.columns(in: "line_items").map(\.name)
            try expect(columns == ["id", "orderID", "sku"], "schema-detached", "columns(in:) \(columns)")
            let indexes = try await db.indexes(on: "products").map(\.name)
            try expect(indexes == ["products_by_name"], "schema-detached", "indexes(on:) \(indexes)")
            let key = try await db.primaryKey(of: "orders")
            try expect(key.columns == ["id"] && key.kind == .rowIDAlias, "schema-detached", "primaryKey(of:) \(key)")
            let foreignKeys = try await db.foreignKeys(of: "line_items").map(\.table)
            try expect(foreignKeys == ["orders"], "schema-detached", "foreignKeys(of:) \(foreignKeys)")
            let triggers = try await db.triggers().map(\.name)
            try expect(triggers == ["orders_count"], "schema-detached", "triggers() \(triggers)")
            let views = try await db.views()
            try expect(views == ["cheap_products"], "schema-detached", "views() \(views)")
            let (inRead, viewsInRead) = try await db.read { conn in (try conn.tableExists("products"), try conn.views()) }
            try expect(inRead && viewsInRead == views, "schema-detached", "introspection in read { }")
            let widget = "Widget\(marker)"
            _ = try await db.save([Product(id: nil, name: widget, price: 9.99), Product(id: nil, name: "Gadget", price: 2.5)])
            let all = try await db.count(Product.self)
            let dear = try await db.count(Product.self, where: col("price") > 5)
            let hasWidget = try await db.exists(Product.self, where: col("name") == widget)
            let (inTransaction, free) = try await db.transaction { conn in
                (try conn.count(Product.self), try conn.exists(Product.self, where: col("price") < 1))
            }
            try expect(all == 2 && dear == 1 && hasWidget && inTransaction == 2 && !free, "schema-detached",
                       "count/exists \(all) \(dear) \(hasWidget) \(inTransaction) \(free)")
            let deleted = try await db.deleteAll(Product.self)
            let left = try await db.count(Product.self)
            try expect(deleted == 2 && left == 0, "schema-detached", "deleteAll \(deleted), left \(left)")
            await db.close()
            print("ok schema-detached")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/schema-pool-detached.db", key: "my-passphrase")
            let marker = "!"
            try await db.migrate([CreateOrders(), CreateProductsTable()])
            try await db.execute("CREATE INDEX products_by_name ON products(name)")
            try await db.execute("CREATE VIEW cheap_products AS SELECT * FROM products WHERE price < 5")
            try await db.execute("""
                CREATE TRIGGER orders_count AFTER INSERT ON orders
                BEGIN UPDATE customers SET orders = orders + 1 WHERE name = NEW.customer; END
                """)
            let ordersExists = try await db.tableExists("orders")
            let viewIsTable = try await db.tableExists("cheap_products")
            try expect(ordersExists && !viewIsTable, "schema-pool-detached", "tableExists \(ordersExists) \(viewIsTable)")
            let columns = try await db.columns(in: "line_items").map(\.name)
            try expect(columns == ["id", "orderID", "sku"], "schema-pool-detached", "columns(in:) \(columns)")
            let indexes = try await db.indexes(on: "products").map(\.name)
            try expect(indexes == ["products_by_name"], "schema-pool-detached", "indexes(on:) \(indexes)")
            let key = try await db.primaryKey(of: "orders")
            try expect(key.columns == ["id"] && key.kind == .rowIDAlias, "schema-pool-detached", "primaryKey(of:) \(key)")
            let foreignKeys = try await db.foreignKeys(of: "line_items").map(\.table)
            try expect(foreignKeys == ["orders"], "schema-pool-detached", "foreignKeys(of:) \(foreignKeys)")
            let triggers = try await db.triggers().map(\.name)
            try expect(triggers == ["orders_count"], "schema-pool-detached", "triggers() \(triggers)")
            let views = try await db.views()
            try expect(views == ["cheap_products"], "schema-pool-detached", "views() \(views)")
            let (inRead, viewsInRead) = try await db.read { conn in (try conn.tableExists("products"), try conn.views()) }
            try expect(inRead && viewsInRead == views, "schema-pool-detached", "introspection in read { }")
            let widget = "Widget\(marker)"
            _ = try await db.save([Product(id: nil, name: widget, price: 9.99), Product(id: nil, name: "Gadget", price: 2.5)])
            let all = try await db.count(Product.self)
            let dear = try await db.count(Product.self, where: col("price") > 5)
            let hasWidget = try await db.exists(Product.self, where: col("name") == widget)
            let (inTransaction, free) = try await db.transaction { conn in
                (try conn.count(Product.self), try conn.exists(Product.self, where: col("price") < 1))
            }
            try expect(all == 2 && dear == 1 && hasWidget && inTransaction == 2 && !free, "schema-pool-detached",
                       "count/exists \(all) \(dear) \(hasWidget) \(inTransaction) \(free)")
            let deleted = try await db.deleteAll(Product.self)
            let left = try await db.count(Product.self)
            try expect(deleted == 2 && left == 0, "schema-pool-detached", "deleteAll \(deleted), left \(left)")
            await db.close()
            print("ok schema-pool-detached")
        }
    }.value
}
