/// `CREATE TABLE` (https://sqlite.org/lang_createtable.html), run with
/// ``MigrationContext/execute(_:)``.
///
/// ```swift
/// try ctx.execute(
///     CreateTable(TableName("products"))
///         .column("id",    .integer, .primaryKey)
///         .column("name",  .text,    .notNull)
///         .column("price", .real,    .notNull, .default(0.0))
/// )
/// // CREATE TABLE "products" ("id" INTEGER PRIMARY KEY, "name" TEXT NOT NULL,
/// //                          "price" REAL NOT NULL DEFAULT 0.0)
/// ```
public struct CreateTable: Sendable, Hashable {
    let table: TableName
    let ifNotExists: Bool
    private(set) var columns: [ColumnDefinition] = []
    private(set) var tableConstraints: [TableConstraint] = []

    enum TableConstraint: Sendable, Hashable {
        case primaryKey([String])
        case unique([String])
        case foreignKey([String], table: String, columns: [String], onDelete: ForeignKeyAction?, onUpdate: ForeignKeyAction?)
    }

    /// A table called `table`; with `ifNotExists`, nothing happens when it already exists.
    public init(_ table: TableName, ifNotExists: Bool = false) {
        self.table = table
        self.ifNotExists = ifNotExists
    }

    /// Adds a column.
    public func column(_ name: String, _ type: ColumnType, _ constraints: ColumnConstraint...) -> CreateTable {
        var copy = self
        copy.columns.append(ColumnDefinition(name: name, type: type, constraints: constraints))
        return copy
    }

    /// A primary key made of several columns: `PRIMARY KEY ("a", "b")`.
    public func primaryKey(_ columns: String...) -> CreateTable {
        var copy = self
        copy.tableConstraints.append(.primaryKey(columns))
        return copy
    }

    /// A uniqueness constraint over several columns: `UNIQUE ("a", "b")`.
    public func unique(_ columns: String...) -> CreateTable {
        var copy = self
        copy.tableConstraints.append(.unique(columns))
        return copy
    }

    /// A foreign key over several columns:
    /// `FOREIGN KEY ("a", "b") REFERENCES "parent" ("x", "y") ON DELETE …`.
    public func foreignKey(_ columns: [String], references table: TableName, columns parentColumns: [String],
                           onDelete: ForeignKeyAction? = nil, onUpdate: ForeignKeyAction? = nil) -> CreateTable {
        var copy = self
        copy.tableConstraints.append(
            .foreignKey(columns, table: table.name, columns: parentColumns, onDelete: onDelete, onUpdate: onUpdate))
        return copy
    }

    /// The SQL this builder runs, as text.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for a table without columns, an identifier
    ///   with NUL, or a default text with NUL.
    func text() throws -> String {
        guard !columns.isEmpty else {
            throw SqlCipherError.invalidQuery(reason: "CreateTable(\(table.name)) has no column; add .column(...)")
        }
        var parts = try columns.map { try $0.render() }
        for constraint in tableConstraints {
            switch constraint {
            case .primaryKey(let names):
                parts.append("PRIMARY KEY (" + (try Self.list(names)) + ")")
            case .unique(let names):
                parts.append("UNIQUE (" + (try Self.list(names)) + ")")
            case let .foreignKey(names, parent, parentColumns, onDelete, onUpdate):
                var text = "FOREIGN KEY (" + (try Self.list(names)) + ") REFERENCES "
                    + (try SQLRenderer.quoteIdentifier(parent))
                if !parentColumns.isEmpty { text += " (" + (try Self.list(parentColumns)) + ")" }
                if let onDelete { text += " ON DELETE " + onDelete.rawValue }
                if let onUpdate { text += " ON UPDATE " + onUpdate.rawValue }
                parts.append(text)
            }
        }
        return "CREATE TABLE " + (ifNotExists ? "IF NOT EXISTS " : "") + (try SQLRenderer.quoteIdentifier(table.name))
            + " (" + parts.joined(separator: ", ") + ")"
    }

    static func list(_ names: [String]) throws -> String {
        guard !names.isEmpty else { throw SqlCipherError.invalidQuery(reason: "a table constraint names no column") }
        return try names.map { try SQLRenderer.quoteIdentifier($0) }.joined(separator: ", ")
    }
}

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

    /// The SQL this builder runs, as text.
    func text() throws -> String {
        "DROP TABLE " + (ifExists ? "IF EXISTS " : "") + (try SQLRenderer.quoteIdentifier(table.name))
    }
}
