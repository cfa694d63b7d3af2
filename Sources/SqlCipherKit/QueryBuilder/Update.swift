/// An `UPDATE` template (https://sqlite.org/lang_update.html).
///
/// ```swift
/// let newPrice = Param<Double>("newPrice")
/// let targetId = Param<Int>("id")
/// let updatePrice = Update(TableName("products"))
///     .set(col("price"), to: newPrice)
///     .where(col("id") == targetId)
/// let changed = try await db.execute(updatePrice, newPrice.set(39.99), targetId.set(7))
/// // UPDATE "products" SET "price" = :p_newPrice WHERE "id" = :p_id
/// ```
///
/// Without ``where(_:)`` an update changes every row, as in SQL. Setting the same column twice
/// keeps the last value.
public struct Update: Sendable, Hashable, ColumnAssigning {
    let table: TableName
    var columnNames: [String] = []
    var values: [SQLExpression.Node] = []
    private(set) var predicate: SQLExpression?

    /// An update of `table`.
    public init(_ table: TableName) {
        self.table = table
    }

    /// `SET column = :literal`.
    public func set<V: DatabaseValueConvertible>(_ column: Column, to value: V) -> Update {
        setting(column.name, .literal(value.databaseValue))
    }

    /// `SET column = expression`: a parameter, another column or an expression.
    public func set(_ column: Column, to expression: some SQLExpressible) -> Update {
        setting(column.name, expression.sqlExpression.node)
    }

    /// `WHERE condition`; a second call adds its condition with `AND`.
    public func `where`(_ condition: some SQLExpressible) -> Update {
        var copy = self
        copy.predicate = copy.predicate.map { $0 && condition.sqlExpression } ?? condition.sqlExpression
        return copy
    }

    /// The SQL text and literals of this template.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` when no column is set.
    public func render() throws -> SQLFragment {
        guard !columnNames.isEmpty else {
            throw SqlCipherError.invalidQuery(reason: "an Update sets no column; add .set(column, to: value)")
        }
        var renderer = SQLRenderer()
        renderer.append("UPDATE ")
        try renderer.identifier(table.name)
        renderer.append(" SET ")
        for (index, name) in columnNames.enumerated() {
            if index > 0 { renderer.append(", ") }
            try renderer.identifier(name)
            renderer.append(" = ")
            try values[index].render(into: &renderer, minimum: SQLExpression.Precedence.or)
        }
        if let predicate {
            renderer.append(" WHERE ")
            try predicate.node.render(into: &renderer, minimum: SQLExpression.Precedence.or)
        }
        return renderer.fragment
    }
}
