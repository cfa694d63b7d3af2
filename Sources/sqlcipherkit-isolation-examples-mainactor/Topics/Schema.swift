import Foundation
import SqlCipherKit

// Schema introspection and the entity counts, existence checks and deletes, in a class without
// annotation of a module whose default isolation is the main actor (top-level code is in
// main.swift). Written out in full on purpose: the closures must be formed in the context under
// test.

final class SchemaModel {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/schema-default-main-actor-class.db", key: "my-passphrase")
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
            try expect(ordersExists && !viewIsTable, "schema-default-main-actor-class", "tableExists \(ordersExists) \(viewIsTable)")
            let columns = try await db.columns(in: "line_items").map(\.name)
            try expect(columns == ["id", "orderID", "sku"], "schema-default-main-actor-class", "columns(in:) \(columns)")
            let indexes = try await db.indexes(on: "products").map(\.name)
            try expect(indexes == ["products_by_name"], "schema-default-main-actor-class", "indexes(on:) \(indexes)")
            let key = try await db.primaryKey(of: "orders")
            try expect(key.columns == ["id"] && key.kind == .rowIDAlias, "schema-default-main-actor-class", "primaryKey(of:) \(key)")
            let foreignKeys = try await db.foreignKeys(of: "line_items").map(\.table)
            try expect(foreignKeys == ["orders"], "schema-default-main-actor-class", "foreignKeys(of:) \(foreignKeys)")
            let triggers = try await db.triggers().map(\.name)
            try expect(triggers == ["orders_count"], "schema-default-main-actor-class", "triggers() \(triggers)")
            let views = try await db.views()
            try expect(views == ["cheap_products"], "schema-default-main-actor-class", "views() \(views)")
            let (inRead, viewsInRead) = try await db.read { conn in (try conn.tableExists("products"), try conn.views()) }
            try expect(inRead && viewsInRead == views, "schema-default-main-actor-class", "introspection in read { }")
            let widget = "Widget\(marker)"
            _ = try await db.save([Product(id: nil, name: widget, price: 9.99), Product(id: nil, name: "Gadget", price: 2.5)])
            let all = try await db.count(Product.self)
            let dear = try await db.count(Product.self, where: col("price") > 5)
            let hasWidget = try await db.exists(Product.self, where: col("name") == widget)
            let (inTransaction, free) = try await db.transaction { conn in
                (try conn.count(Product.self), try conn.exists(Product.self, where: col("price") < 1))
            }
            try expect(all == 2 && dear == 1 && hasWidget && inTransaction == 2 && !free, "schema-default-main-actor-class",
                       "count/exists \(all) \(dear) \(hasWidget) \(inTransaction) \(free)")
            let deleted = try await db.deleteAll(Product.self)
            let left = try await db.count(Product.self)
            try expect(deleted == 2 && left == 0, "schema-default-main-actor-class", "deleteAll \(deleted), left \(left)")
            await db.close()
            finished.append("schema-default-main-actor-class")
            print("ok schema-default-main-actor-class")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/schema-default-main-actor-class-pool.db", key: "my-passphrase")
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
            try expect(ordersExists && !viewIsTable, "schema-default-main-actor-class-pool", "tableExists \(ordersExists) \(viewIsTable)")
            let columns = try await db.columns(in: "line_items").map(\.name)
            try expect(columns == ["id", "orderID", "sku"], "schema-default-main-actor-class-pool", "columns(in:) \(columns)")
            let indexes = try await db.indexes(on: "products").map(\.name)
            try expect(indexes == ["products_by_name"], "schema-default-main-actor-class-pool", "indexes(on:) \(indexes)")
            let key = try await db.primaryKey(of: "orders")
            try expect(key.columns == ["id"] && key.kind == .rowIDAlias, "schema-default-main-actor-class-pool", "primaryKey(of:) \(key)")
            let foreignKeys = try await db.foreignKeys(of: "line_items").map(\.table)
            try expect(foreignKeys == ["orders"], "schema-default-main-actor-class-pool", "foreignKeys(of:) \(foreignKeys)")
            let triggers = try await db.triggers().map(\.name)
            try expect(triggers == ["orders_count"], "schema-default-main-actor-class-pool", "triggers() \(triggers)")
            let views = try await db.views()
            try expect(views == ["cheap_products"], "schema-default-main-actor-class-pool", "views() \(views)")
            let (inRead, viewsInRead) = try await db.read { conn in (try conn.tableExists("products"), try conn.views()) }
            try expect(inRead && viewsInRead == views, "schema-default-main-actor-class-pool", "introspection in read { }")
            let widget = "Widget\(marker)"
            _ = try await db.save([Product(id: nil, name: widget, price: 9.99), Product(id: nil, name: "Gadget", price: 2.5)])
            let all = try await db.count(Product.self)
            let dear = try await db.count(Product.self, where: col("price") > 5)
            let hasWidget = try await db.exists(Product.self, where: col("name") == widget)
            let (inTransaction, free) = try await db.transaction { conn in
                (try conn.count(Product.self), try conn.exists(Product.self, where: col("price") < 1))
            }
            try expect(all == 2 && dear == 1 && hasWidget && inTransaction == 2 && !free, "schema-default-main-actor-class-pool",
                       "count/exists \(all) \(dear) \(hasWidget) \(inTransaction) \(free)")
            let deleted = try await db.deleteAll(Product.self)
            let left = try await db.count(Product.self)
            try expect(deleted == 2 && left == 0, "schema-default-main-actor-class-pool", "deleteAll \(deleted), left \(left)")
            await db.close()
            finished.append("schema-default-main-actor-class-pool")
            print("ok schema-default-main-actor-class-pool")
        }
    }
}
