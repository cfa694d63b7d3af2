extension MigrationContext {
    /// Runs one statement written as an ``SQL`` literal, its interpolated values bound; returns
    /// the number of rows changed.
    ///
    /// ```swift
    /// try ctx.execute(literal: "UPDATE \(identifier: table) SET status = \(Status.active) WHERE status IS NULL")
    /// ```
    ///
    /// SQLite takes no bound values in a schema (`CREATE TABLE … DEFAULT`, `CREATE VIEW`, …): use
    /// the schema builders (``CreateTable``) or identifiers only there.
    @discardableResult
    public func execute(literal sql: SQL) throws -> Int {
        try connection().execute(sql.checkedText(), binding: sql)
    }
}
