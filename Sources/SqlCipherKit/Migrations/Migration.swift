/// One step of a database's schema history, applied once by ``Database/migrate(_:)``.
///
/// ```swift
/// struct CreateProductsTable: Migration {
///     let id = "001-create-products"
///
///     func up(_ ctx: MigrationContext) throws {
///         try ctx.execute(
///             CreateTable(TableName("products"))
///                 .column("id",    .integer, .primaryKey)
///                 .column("name",  .text,    .notNull)
///                 .column("price", .real,    .notNull)
///         )
///     }
///
///     func down(_ ctx: MigrationContext) throws {
///         try ctx.execute(DropTable(TableName("products")))
///     }
/// }
/// ```
///
/// `up` and `down` run inside a transaction and must change only the database: a migration that
/// rebuilds a table (a column rename or drop on old SQLite) runs its `up` a second time with
/// foreign keys off, after rolling back the first attempt.
public protocol Migration: Sendable {
    /// A unique, stable identifier, recorded in the `_migrations` table once applied.
    var id: String { get }

    /// Applies the change.
    func up(_ ctx: MigrationContext) throws

    /// Reverses ``up(_:)``, for ``Database/rollback(to:using:)``. The default throws
    /// ``SqlCipherError/migrationNotReversible(id:)``.
    func down(_ ctx: MigrationContext) throws
}

extension Migration {
    /// Throws ``SqlCipherError/migrationNotReversible(id:)``: a migration without `down` cannot be
    /// rolled back.
    public func down(_ ctx: MigrationContext) throws {
        throw SqlCipherError.migrationNotReversible(id: id)
    }
}
