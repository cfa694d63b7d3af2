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
/// `up` and `down` run once, inside a transaction, and must change only the database.
///
/// A migration that renames or drops a column where SQLite cannot do it natively (before 3.25 and
/// 3.35: SQLCipher 3.4.1) rebuilds the table, which needs foreign keys off when a foreign key
/// references the table: declare it with ``foreignKeyChecks``.
///
/// ```swift
/// struct DropLegacyColumn: Migration {
///     let id = "004-drop-legacy"
///     let foreignKeyChecks = ForeignKeyChecks.deferred
///
///     func up(_ ctx: MigrationContext) throws {
///         try ctx.execute(AlterTable(TableName("products"), dropColumn: "legacy"))
///     }
/// }
/// ```
public protocol Migration: Sendable {
    /// A unique, stable identifier, recorded in the `_migrations` table once applied.
    var id: String { get }

    /// How foreign keys are enforced while ``up(_:)`` and ``down(_:)`` run. The default is
    /// ``ForeignKeyChecks/immediate``: as the connection has them, so `ON DELETE CASCADE` in a
    /// migration does what it does in the app. Declare ``ForeignKeyChecks/deferred`` for a
    /// migration that rebuilds a table (a column rename or drop on SQLite before 3.25 or 3.35),
    /// which otherwise fails with ``SqlCipherError/migrationFailed(id:reason:)``.
    var foreignKeyChecks: ForeignKeyChecks { get }

    /// Applies the change.
    func up(_ ctx: MigrationContext) throws

    /// Reverses ``up(_:)``, for ``Database/rollback(to:using:)``. The default throws
    /// ``SqlCipherError/migrationNotReversible(id:)``.
    func down(_ ctx: MigrationContext) throws
}

extension Migration {
    /// ``ForeignKeyChecks/immediate``: foreign keys as the connection has them.
    public var foreignKeyChecks: ForeignKeyChecks { .immediate }

    /// Throws ``SqlCipherError/migrationNotReversible(id:)``: a migration without `down` cannot be
    /// rolled back.
    public func down(_ ctx: MigrationContext) throws {
        throw SqlCipherError.migrationNotReversible(id: id)
    }
}

/// How a ``Migration`` runs with respect to foreign keys, declared up front because SQLite can
/// switch foreign keys off only outside a transaction, and each migration runs inside its own.
/// (GRDB's `registerMigration(_:foreignKeyChecks:)` makes the same choice.)
public enum ForeignKeyChecks: Sendable, Hashable {
    /// Foreign keys stay as the connection has them (enforced, unless the program switched them
    /// off): every statement of the migration is checked as it runs, and `ON DELETE CASCADE` /
    /// `SET NULL` actions happen as they do in the app. A table rebuild is refused with
    /// ``SqlCipherError/migrationFailed(id:reason:)`` while foreign keys are enforced, because
    /// its `DROP TABLE` would run those actions on the children's rows.
    case immediate

    /// Foreign keys are switched off for the migration, before its transaction begins, and
    /// switched back on after it, whatever happened. No action cascades and no statement is
    /// checked as it runs; instead `PRAGMA foreign_key_check` runs before the commit, and a row
    /// it reports fails the migration with ``SqlCipherError/foreignKeyViolation(table:rowid:parent:)``
    /// and rolls it back. Needed for table rebuilds; on a connection whose foreign keys are
    /// already off, the migration runs as it is, without the check.
    case deferred
}
