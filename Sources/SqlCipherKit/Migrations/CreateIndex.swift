/// `CREATE [UNIQUE] INDEX` (https://sqlite.org/lang_createindex.html), run with
/// ``MigrationContext/execute(_:)-(CreateIndex)``.
///
/// ```swift
/// try ctx.execute(CreateIndex("products_by_name", on: TableName("products"), columns: "name", unique: true))
/// // CREATE UNIQUE INDEX "products_by_name" ON "products" ("name")
/// ```
public struct CreateIndex: Sendable, Hashable {
    let name: String
    let table: TableName
    let columns: [String]
    let unique: Bool
    let ifNotExists: Bool

    /// An index called `name` on `columns` of `table`.
    public init(_ name: String, on table: TableName, columns: String..., unique: Bool = false,
                ifNotExists: Bool = false) {
        self.name = name
        self.table = table
        self.columns = columns
        self.unique = unique
        self.ifNotExists = ifNotExists
    }

    /// The SQL this builder runs.
    public func sql() throws -> String {
        guard !columns.isEmpty else {
            throw SqlCipherError.invalidQuery(reason: "CreateIndex(\(name)) names no column")
        }
        return "CREATE " + (unique ? "UNIQUE " : "") + "INDEX " + (ifNotExists ? "IF NOT EXISTS " : "")
            + (try SQLRenderer.quoteIdentifier(name)) + " ON " + (try SQLRenderer.quoteIdentifier(table.name))
            + " (" + (try CreateTable.list(columns)) + ")"
    }
}
