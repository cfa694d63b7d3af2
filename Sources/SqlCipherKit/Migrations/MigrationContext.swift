/// What a ``Migration`` uses to change the database: schema builders, query builders and raw SQL,
/// all inside the migration's transaction.
///
/// ```swift
/// func up(_ ctx: MigrationContext) throws {
///     try ctx.execute(AlterTable(TableName("products"), addColumn: "discount", .real, .default(0.0)))
///     try ctx.execute("UPDATE products SET discount = 0.1 WHERE price > ?", 100.0)
/// }
/// ```
///
/// A context is valid only while its migration runs; using it afterwards throws
/// ``SqlCipherError/connectionNotUsable``.
public final class MigrationContext {
    private let core: SQLiteConnection
    private let migrationID: String
    private let forceTableRebuild: Bool
    private var isActive = true
    /// The refusal of a table rebuild while foreign keys were enforced: the runner fails the
    /// migration with it even if the migration caught it, so that a migration never commits
    /// without a change it asked for.
    private(set) var refusedRebuild: SqlCipherError?

    init(core: SQLiteConnection, migrationID: String, forceTableRebuild: Bool) {
        self.core = core
        self.migrationID = migrationID
        self.forceTableRebuild = forceTableRebuild
    }

    func invalidate() {
        isActive = false
    }

    func connection() throws -> SQLiteConnection {
        guard isActive else { throw SqlCipherError.connectionNotUsable }
        return core
    }

    /// SQLite's version number, e.g. `3046001`, for migrations that depend on it.
    public var sqliteVersionNumber: Int { core.sqliteVersionNumber }

    // MARK: Statements

    /// Runs a schema change: ``CreateTable``, ``CreateIndex``, ``AlterTable``, ``DropTable``,
    /// ``DropIndex`` or ``CreateFTS5Table`` (with its triggers, see there). An ``AlterTable`` that renames or drops a column rebuilds the table where
    /// the loaded SQLite cannot do it natively (see ``AlterTable``).
    public func execute(_ statement: some SchemaStatement) throws {
        let core = try connection()
        if let alter = statement as? AlterTable {
            try alterTable(alter, on: core)
        } else if let multiple = statement as? any MultipleSchemaStatements {
            for fragment in try multiple.statements() { try core.execute(fragment, []) }
        } else {
            try core.execute(statement.render(), [])
        }
    }

    /// Runs an ``Insert``, ``Update`` or ``Delete`` template with values for its ``Param``s;
    /// returns the number of rows it inserted, changed or deleted.
    @discardableResult
    public func execute(_ statement: some DataChangeStatement, _ bindings: ParameterBinding...) throws -> Int {
        try connection().execute(statement.render(), bindings)
    }

    private func alterTable(_ statement: AlterTable, on core: SQLiteConnection) throws {
        guard let change = statement.rebuild(onSQLiteVersion: core.sqliteVersionNumber, force: forceTableRebuild) else {
            try core.execute(statement.text())
            return
        }
        // With foreign keys enforced, the rebuild's DROP TABLE would run the delete actions of the
        // tables that reference this one (and check them): only a table that no foreign key
        // references, its own included, is rebuilt as it is. The seed's own migration (a column
        // added, then dropped by `down`) is such a table.
        if try core.foreignKeysEnabled(), let child = try core.tableReferencing(statement.table.name) {
            let what = switch change {
            case let .dropColumn(column): "dropping column \"\(column)\""
            case let .renameColumn(column, _): "renaming column \"\(column)\""
            }
            let error = SqlCipherError.migrationFailed(
                id: migrationID,
                reason: "\(what) of table \"\(statement.table.name)\" rebuilds the table (SQLite has native "
                    + "RENAME COLUMN from 3.25 and DROP COLUMN from 3.35), and a foreign key of table \"\(child)\" "
                    + "references it, so the rebuild needs foreign keys off, which they are not: "
                    + "declare `let foreignKeyChecks = ForeignKeyChecks.deferred` on the migration (foreign keys "
                    + "are then off while it runs, and PRAGMA foreign_key_check runs before it commits)")
            refusedRebuild = error
            throw error
        }
        try TableRebuild(connection: core, table: statement.table.name, change: change).run()
    }

    // MARK: Data

    /// Runs raw SQL with `?` arguments; returns the number of rows changed.
    @discardableResult
    public func execute(_ sql: String, _ arguments: (any DatabaseValueConvertible)?...) throws -> Int {
        try connection().execute(sql, binding: ArgumentList(arguments))
    }

    /// Runs a raw query with `?` arguments.
    public func query(_ sql: String, _ arguments: (any DatabaseValueConvertible)?...) throws -> [Row] {
        try connection().query(sql, binding: ArgumentList(arguments))
    }

    /// Runs a ``Select`` template.
    public func query(_ select: Select, _ bindings: ParameterBinding...) throws -> [Row] {
        try connection().query(select.render(), bindings)
    }
}
