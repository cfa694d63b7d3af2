import SqlCipherKit

// The seed's types, declared as a user declares them: plain structs, no isolation of their own.

struct Product: Entity {
    static let tableName = TableName("products")
    static let primaryKey: WritableKeyPath<Product, Int?> & Sendable = \.id

    var id: Int?
    var name: String
    var price: Double
}

struct Order: Entity {
    static let tableName = TableName("orders")
    static let primaryKey: WritableKeyPath<Order, Int?> & Sendable = \.id

    var id: Int?
    var customer: String
}

struct LineItem: Entity {
    static let tableName = TableName("line_items")
    static let primaryKey: WritableKeyPath<LineItem, Int?> & Sendable = \.id

    var id: Int?
    var orderID: Int
    var sku: String
}

struct CreateProductsTable: Migration {
    let id = "001-create-products"

    func up(_ ctx: MigrationContext) throws {
        try ctx.execute(
            CreateTable(TableName("products"))
                .column("id", .integer, .primaryKey)
                .column("name", .text, .notNull)
                .column("price", .real, .notNull)
        )
    }

    func down(_ ctx: MigrationContext) throws {
        try ctx.execute(DropTable(TableName("products")))
    }
}

struct AddDiscountColumn: Migration {
    let id = "002-add-discount"

    func up(_ ctx: MigrationContext) throws {
        try ctx.execute(AlterTable(TableName("products"), addColumn: "discount", .real, .default(0.0)))
    }

    func down(_ ctx: MigrationContext) throws {
        try ctx.execute(AlterTable(TableName("products"), dropColumn: "discount"))
    }
}

struct CreateOrders: Migration {
    let id = "000-create-orders"

    func up(_ ctx: MigrationContext) throws {
        try ctx.execute("CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT NOT NULL)")
        try ctx.execute("""
            CREATE TABLE line_items(id INTEGER PRIMARY KEY, orderID INTEGER NOT NULL REFERENCES orders(id),
                                    sku TEXT NOT NULL)
            """)
        try ctx.execute("CREATE TABLE customers(name TEXT PRIMARY KEY, orders INTEGER NOT NULL)")
        try ctx.execute("INSERT INTO customers VALUES ('Alice', 0)")
    }
}

/// What every context must find after running the examples; throws with the first difference.
func verify(_ db: some DatabaseAccess, context: String) async throws {
    func expect(_ condition: Bool, _ what: String) throws {
        if !condition { throw ExampleFailure(context: context, what: what) }
    }
    let items = try await db.fetch(LineItem.self, orderBy: col("id"))
    try expect(items.map(\.sku) == ["A-1", "B-2", "C-3"], "line items \(items.map(\.sku))")
    let orders = try await db.query("SELECT orders FROM customers WHERE name = 'Alice'")
    try expect(orders.first?.get("orders", as: Int.self) == 1, "Alice's order count")
    let names = try await db.query("SELECT name FROM customers ORDER BY name").compactMap { $0.get("name", as: String.self) }
    try expect(names == ["Alice", "Bob", "Dave"], "customers \(names)")
    try expect(try await db.appliedMigrations() == ["000-create-orders", "001-create-products"], "migrations after rollback")
    let columns = try await db.query("PRAGMA table_info(products)").compactMap { $0.get("name", as: String.self) }
    try expect(!columns.contains("discount"), "discount column after rollback")
}

struct ExampleFailure: Error, CustomStringConvertible {
    let context: String
    let what: String
    var description: String { "\(context): unexpected \(what)" }
}
