import SqlCipherKit

// The seed's types, declared as a user declares them: plain structs, no isolation of their own.
// The same file is compiled by both example executables (the main-actor one through a symbolic
// link): once in a module without default isolation, once in a module whose default isolation is
// the main actor, where the same declarations must compile unchanged.

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
    // Its down drops a column: a table rebuild on SQLite before 3.35 (SQLCipher 3.4.1).
    let foreignKeyChecks = ForeignKeyChecks.deferred

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

struct ExampleFailure: Error, CustomStringConvertible {
    let context: String
    let what: String
    var description: String { "\(context): unexpected \(what)" }
}
