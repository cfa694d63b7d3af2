/// A statement a builder makes: ``Select``, ``Insert``, ``Update``, ``Delete`` and the schema
/// statements (``CreateTable``, ``CreateIndex``, ``AlterTable``, ``DropTable``, ``DropIndex``).
///
/// Every builder renders the same way: SQL text whose values are placeholders, with the values
/// beside it, bound when the statement runs (``SQLFragment``). Schema statements have no values:
/// SQLite takes none in a schema, so their defaults are written into the text as quoted
/// literals.
///
/// ```swift
/// let fragment = try Update(TableName("products")).set(col("price"), to: 9.5).where(col("id") == 7).render()
/// print(fragment.sql)   // UPDATE "products" SET "price" = :l1 WHERE "id" = :l2
/// ```
public protocol SQLStatement: Sendable {
    /// The statement's SQL text, the values of its literals and the names of its parameters.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for a statement that cannot be written
    ///   (an identifier with a NUL character, a table without columns, an empty `IN` list, ...).
    func render() throws -> SQLFragment
}

/// A statement that changes rows (``Insert``, ``Update``, ``Delete``, ``FTS5Command``): what `execute(_:_:)`
/// takes on a ``Database``, a ``DatabasePool``, a ``Connection`` and a ``MigrationContext``,
/// with values for its ``Param``s.
///
/// ```swift
/// let newPrice = Param<Double>("newPrice")
/// let reprice = Update(TableName("products")).set(col("price"), to: newPrice).where(col("id") == 7)
/// try await db.execute(reprice, newPrice.set(39.99))
/// ```
public protocol DataChangeStatement: SQLStatement {}

/// A statement that changes the schema (``CreateTable``, ``CreateIndex``, ``AlterTable``,
/// ``DropTable``, ``DropIndex``, ``CreateFTS5Table``): what ``MigrationContext/execute(_:)`` takes.
public protocol SchemaStatement: SQLStatement {}

extension Select: SQLStatement {}
extension Insert: DataChangeStatement {}
extension Update: DataChangeStatement {}
extension Delete: DataChangeStatement {}
extension CreateTable: SchemaStatement {
    /// The `CREATE TABLE` statement's text, with no values to bind.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for a statement that cannot be written.
    public func render() throws -> SQLFragment { SQLFragment(schemaText: try text()) }
}

extension CreateIndex: SchemaStatement {
    /// The `CREATE INDEX` statement's text, with no values to bind.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for a statement that cannot be written.
    public func render() throws -> SQLFragment { SQLFragment(schemaText: try text()) }
}

extension AlterTable: SchemaStatement {
    /// The `ALTER TABLE` (as SQLite 3.35 and later run it; a migration rebuilds the table where the loaded SQLite cannot) statement's text, with no values to bind.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for a statement that cannot be written.
    public func render() throws -> SQLFragment { SQLFragment(schemaText: try text()) }
}

extension DropTable: SchemaStatement {
    /// The `DROP TABLE` statement's text, with no values to bind.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for a statement that cannot be written.
    public func render() throws -> SQLFragment { SQLFragment(schemaText: try text()) }
}

extension DropIndex: SchemaStatement {
    /// The `DROP INDEX` statement's text, with no values to bind.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for a statement that cannot be written.
    public func render() throws -> SQLFragment { SQLFragment(schemaText: try text()) }
}

extension SQLFragment {
    /// A fragment of text alone: a schema statement, which binds nothing.
    init(schemaText sql: String) {
        self.init(sql: sql, literals: [], parameterNames: [])
    }
}
