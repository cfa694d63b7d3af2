/// `CREATE [UNIQUE] INDEX` (https://sqlite.org/lang_createindex.html), run with
/// ``MigrationContext/execute(_:)``.
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

    /// The SQL this builder runs, as text.
    func text() throws -> String {
        guard !columns.isEmpty else {
            throw SqlCipherError.invalidQuery(reason: "CreateIndex(\(name)) names no column")
        }
        return "CREATE " + (unique ? "UNIQUE " : "") + "INDEX " + (ifNotExists ? "IF NOT EXISTS " : "")
            + (try SQLRenderer.quoteIdentifier(name)) + " ON " + (try SQLRenderer.quoteIdentifier(table.name))
            + " (" + (try CreateTable.list(columns)) + ")"
    }
}

/// `DROP INDEX` (https://sqlite.org/lang_dropindex.html).
///
/// ```swift
/// try ctx.execute(DropIndex("products_by_name"))   // DROP INDEX "products_by_name"
/// ```
public struct DropIndex: Sendable, Hashable {
    let name: String
    let ifExists: Bool

    /// Drops the index called `name`; with `ifExists`, nothing happens when it does not exist.
    public init(_ name: String, ifExists: Bool = false) {
        self.name = name
        self.ifExists = ifExists
    }

    /// The SQL this builder runs, as text.
    func text() throws -> String {
        "DROP INDEX " + (ifExists ? "IF EXISTS " : "") + (try SQLRenderer.quoteIdentifier(name))
    }
}
