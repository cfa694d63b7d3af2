/// `ALTER TABLE` (https://sqlite.org/lang_altertable.html), run with
/// ``MigrationContext/execute(_:)``: rename a table, add, rename or drop a column.
///
/// ```swift
/// try ctx.execute(AlterTable(TableName("products"), addColumn: "discount", .real, .default(0.0)))
/// try ctx.execute(AlterTable(TableName("products"), renameColumn: "discount", to: "rebate"))
/// try ctx.execute(AlterTable(TableName("products"), dropColumn: "rebate"))
/// try ctx.execute(AlterTable(TableName("products"), renameTo: "items"))
/// ```
///
/// Renaming a column needs SQLite 3.25 and dropping one SQLite 3.35. On older SQLite (SQLCipher
/// 3.4.1 ships 3.15.2) both rebuild the table as SQLite's documentation prescribes
/// (https://sqlite.org/lang_altertable.html#otheralter): a new table with the changed definition,
/// the rows copied (rowids included), the old table dropped, the new one renamed, and its indexes
/// and triggers created again. Foreign-key enforcement is off during the rebuild (the migration runner
/// arranges it) and foreign keys are checked before the migration commits. The rebuild refuses,
/// like SQLite's own `DROP COLUMN`, to drop a column that is a primary key, unique, indexed, part of a
/// constraint or foreign key, or used by a trigger or view; and it refuses to rename a column that a
/// view, another table's foreign key, or a trigger uses in a way it cannot rewrite safely.
public struct AlterTable: Sendable, Hashable {
    enum Change: Sendable, Hashable {
        case renameTable(String)
        case addColumn(ColumnDefinition)
        case renameColumn(String, to: String)
        case dropColumn(String)
    }

    let table: TableName
    let change: Change

    /// `ALTER TABLE table RENAME TO newName`.
    public init(_ table: TableName, renameTo newName: String) {
        self.table = table
        self.change = .renameTable(newName)
    }

    /// `ALTER TABLE table ADD COLUMN name TYPE constraints…`. SQLite adds columns only under its
    /// rules (https://sqlite.org/lang_altertable.html#altertabaddcol): not `PRIMARY KEY` or
    /// `UNIQUE`, a `NOT NULL` column needs a non-NULL default, and with foreign keys on a
    /// `REFERENCES` column needs a NULL default.
    public init(_ table: TableName, addColumn name: String, _ type: ColumnType, _ constraints: ColumnConstraint...) {
        self.table = table
        self.change = .addColumn(ColumnDefinition(name: name, type: type, constraints: constraints))
    }

    /// `ALTER TABLE table RENAME COLUMN name TO newName`, or a table rebuild before SQLite 3.25.
    public init(_ table: TableName, renameColumn name: String, to newName: String) {
        self.table = table
        self.change = .renameColumn(name, to: newName)
    }

    /// `ALTER TABLE table DROP COLUMN name`, or a table rebuild before SQLite 3.35.
    public init(_ table: TableName, dropColumn name: String) {
        self.table = table
        self.change = .dropColumn(name)
    }

    /// The native `ALTER TABLE` statement. Where the loaded SQLite lacks it, the change runs as a
    /// table rebuild instead.
    func text() throws -> String {
        let prefix = "ALTER TABLE " + (try SQLRenderer.quoteIdentifier(table.name))
        switch change {
        case .renameTable(let name):
            return prefix + " RENAME TO " + (try SQLRenderer.quoteIdentifier(name))
        case .addColumn(let column):
            return prefix + " ADD COLUMN " + (try column.render())
        case let .renameColumn(name, newName):
            return prefix + " RENAME COLUMN " + (try SQLRenderer.quoteIdentifier(name)) + " TO "
                + (try SQLRenderer.quoteIdentifier(newName))
        case .dropColumn(let name):
            return prefix + " DROP COLUMN " + (try SQLRenderer.quoteIdentifier(name))
        }
    }

    /// The rebuild this change needs on SQLite `version` (`sqlite3_libversion_number`), or nil when
    /// SQLite can do it natively. `force` asks for the rebuild anyway (for tests).
    func rebuild(onSQLiteVersion version: Int, force: Bool) -> TableRebuild.Change? {
        switch change {
        case let .renameColumn(name, newName) where force || version < 3_025_000:
            return .renameColumn(name, to: newName)
        case let .dropColumn(name) where force || version < 3_035_000:
            return .dropColumn(name)
        default:
            return nil
        }
    }
}
