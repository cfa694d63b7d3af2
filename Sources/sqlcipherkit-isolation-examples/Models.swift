import SqlCipherKit

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
