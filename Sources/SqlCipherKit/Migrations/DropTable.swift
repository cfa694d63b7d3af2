/// `DROP TABLE` (https://sqlite.org/lang_droptable.html). With foreign keys on, dropping a parent
/// table first deletes its rows, which runs the children's `ON DELETE` actions.
///
/// ```swift
/// try ctx.execute(DropTable(TableName("products")))   // DROP TABLE "products"
/// ```
public struct DropTable: Sendable, Hashable {
    let table: TableName
    let ifExists: Bool

    /// Drops `table`; with `ifExists`, nothing happens when it does not exist.
    public init(_ table: TableName, ifExists: Bool = false) {
        self.table = table
        self.ifExists = ifExists
    }

    /// The SQL this builder runs.
    public func sql() throws -> String {
        "DROP TABLE " + (ifExists ? "IF EXISTS " : "") + (try SQLRenderer.quoteIdentifier(table.name))
    }
}
