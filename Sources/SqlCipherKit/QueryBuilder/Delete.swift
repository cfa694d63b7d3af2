/// A `DELETE` template (https://sqlite.org/lang_delete.html).
///
/// ```swift
/// let old = Delete(TableName("sessions")).where(col("expires_at") < Date())
/// let removed = try await db.execute(old)
/// // DELETE FROM "sessions" WHERE "expires_at" < :l1
/// ```
///
/// A delete without a `where` clause would remove every row, so it refuses to render
/// (``SqlCipherError/deleteWithoutWhere(table:)``) unless it was created with `allRows: true`.
public struct Delete: Sendable, Hashable {
    let table: TableName
    let allRows: Bool
    private(set) var predicate: SQLExpression?

    /// A delete from `table`. Pass `allRows: true` to allow deleting every row when there is no
    /// ``where(_:)`` clause.
    ///
    /// ```swift
    /// try await db.execute(Delete(TableName("cache"), allRows: true))   // DELETE FROM "cache"
    /// ```
    public init(_ table: TableName, allRows: Bool = false) {
        self.table = table
        self.allRows = allRows
    }

    /// `WHERE condition`; a second call adds its condition with `AND`.
    public func `where`(_ condition: some SQLExpressible) -> Delete {
        var copy = self
        copy.predicate = copy.predicate.map { $0 && condition.sqlExpression } ?? condition.sqlExpression
        return copy
    }

    /// The SQL text and literals of this template.
    /// - Throws: ``SqlCipherError/deleteWithoutWhere(table:)`` without a condition and `allRows`.
    public func render() throws -> SQLFragment {
        var renderer = SQLRenderer()
        renderer.append("DELETE FROM ")
        try renderer.identifier(table.name)
        if let predicate {
            renderer.append(" WHERE ")
            try predicate.node.render(into: &renderer, minimum: SQLExpression.Precedence.or)
        } else if !allRows {
            throw SqlCipherError.deleteWithoutWhere(table: table.name)
        }
        return renderer.fragment
    }
}
