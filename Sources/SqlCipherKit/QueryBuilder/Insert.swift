/// An `INSERT` template (https://sqlite.org/lang_insert.html).
///
/// ```swift
/// let name = Param<String>("name")
/// let insert = Insert(into: TableName("products"))
///     .set(col("name"), to: name)
///     .set(col("price"), to: 9.99)
/// try await db.execute(insert, name.set("Widget"))
/// // INSERT INTO "products" ("name", "price") VALUES (:p_name, :l1)
/// ```
///
/// Setting the same column twice keeps the last value. An insert with no column renders
/// `DEFAULT VALUES`.
public struct Insert: Sendable, Hashable, ColumnAssigning {
    /// What SQLite does when the new row violates a `UNIQUE` or `PRIMARY KEY` constraint
    /// (https://sqlite.org/lang_conflict.html).
    public enum ConflictPolicy: String, Sendable, Hashable {
        /// `INSERT OR IGNORE`: skip the row; the statement reports 0 rows changed.
        case ignore = "OR IGNORE"
        /// `INSERT OR REPLACE`: delete the conflicting rows, then insert. The deletion fires delete
        /// triggers only when recursive triggers are on and runs foreign-key actions; to update a
        /// row in place use ``Update`` or `Database.save(_:)`.
        case replace = "OR REPLACE"
    }

    let table: TableName
    private(set) var policy: ConflictPolicy?
    var columnNames: [String] = []
    var values: [SQLExpression.Node] = []

    /// An insert into `table`, with an optional conflict policy.
    public init(into table: TableName, onConflict policy: ConflictPolicy? = nil) {
        self.table = table
        self.policy = policy
    }

    /// Sets `column` to a literal value, bound at run time.
    public func set<V: DatabaseValueConvertible>(_ column: Column, to value: V) -> Insert {
        setting(column.name, .literal(value.databaseValue))
    }

    /// Sets `column` to a parameter or an expression.
    public func set(_ column: Column, to expression: some SQLExpressible) -> Insert {
        setting(column.name, expression.sqlExpression.node)
    }

    /// The same insert with another conflict policy.
    public func onConflict(_ policy: ConflictPolicy?) -> Insert {
        var copy = self
        copy.policy = policy
        return copy
    }

    /// The SQL text and literals of this template.
    public func render() throws -> SQLFragment {
        var renderer = SQLRenderer()
        renderer.append("INSERT ")
        if let policy { renderer.append(policy.rawValue + " ") }
        renderer.append("INTO ")
        try renderer.identifier(table.name)
        guard !columnNames.isEmpty else {
            renderer.append(" DEFAULT VALUES")
            return renderer.fragment
        }
        renderer.append(" (")
        for (index, name) in columnNames.enumerated() {
            if index > 0 { renderer.append(", ") }
            try renderer.identifier(name)
        }
        renderer.append(") VALUES (")
        for (index, value) in values.enumerated() {
            if index > 0 { renderer.append(", ") }
            try value.render(into: &renderer, minimum: SQLExpression.Precedence.or)
        }
        renderer.append(")")
        return renderer.fragment
    }
}
