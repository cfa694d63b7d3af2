/// The tables one statement can read and write, as SQLite's authorizer reports them while the
/// statement is compiled (https://sqlite.org/c3ref/set_authorizer.html).
///
/// Compiling a statement also compiles every trigger it can fire and every foreign-key action
/// (`ON DELETE CASCADE`, `SET NULL`, `SET DEFAULT`, `ON UPDATE ...`) it can cause, and the
/// authorizer sees their writes as `SQLITE_INSERT`/`UPDATE`/`DELETE` of the affected tables. This
/// was checked on SQLite 3.15.2 (SQLCipher 3.4.1) and 3.46.1 (SQLCipher 4.6.1) and is pinned by
/// the live-query tests, so write sets need no schema walk of their own.
struct StatementAccess {
    /// Tables whose rows the statement can read (`SQLITE_READ`).
    var reads = TableRegion()
    /// Tables whose rows or definition the statement can change.
    var writes = TableRegion()
    /// Whether running the statement can make earlier analyses stale: schema changes (a new
    /// trigger adds writes to existing statements), pragma assignments (`foreign_keys` changes the
    /// cascades), `ATTACH`/`DETACH`, and rollbacks (which can undo a schema change).
    var invalidatesAnalysis = false
    /// Whether ``reads`` lists every table the statement reads. Older SQLite (3.15.2, in
    /// SQLCipher 3.4.1) reports no `SQLITE_READ` for a table from which no column is read
    /// (`SELECT count(*) FROM t`, `EXISTS (SELECT 1 FROM t)`, a view over such a query); newer
    /// ones report it with an empty column name. Where it is missing (found by a probe, not by
    /// version), the reads of a statement that runs inside a fetch are completed from its
    /// bytecode (`SQLiteConnection.tablesOpenedForReading`).
    var readsComplete = true

    /// Used when the statement cannot be compiled a second time for analysis: assume the worst.
    static func unknown(readOnly: Bool) -> StatementAccess {
        var access = StatementAccess()
        access.reads = .everything
        if !readOnly {
            access.writes = .everything
            access.invalidatesAnalysis = true
        }
        return access
    }

    /// Authorizer action codes (https://sqlite.org/c3ref/c_alter_table.html).
    enum Action {
        static let createIndex: Int32 = 1
        static let createTable: Int32 = 2
        static let createTempIndex: Int32 = 3
        static let createTempTable: Int32 = 4
        static let createTempTrigger: Int32 = 5
        static let createTempView: Int32 = 6
        static let createTrigger: Int32 = 7
        static let createView: Int32 = 8
        static let delete: Int32 = 9
        static let dropIndex: Int32 = 10
        static let dropTable: Int32 = 11
        static let dropTempIndex: Int32 = 12
        static let dropTempTable: Int32 = 13
        static let dropTempTrigger: Int32 = 14
        static let dropTempView: Int32 = 15
        static let dropTrigger: Int32 = 16
        static let dropView: Int32 = 17
        static let insert: Int32 = 18
        static let pragma: Int32 = 19
        static let read: Int32 = 20
        static let transaction: Int32 = 22
        static let update: Int32 = 23
        static let attach: Int32 = 24
        static let detach: Int32 = 25
        static let alterTable: Int32 = 26
        static let createVirtualTable: Int32 = 29
        static let dropVirtualTable: Int32 = 30
        static let savepoint: Int32 = 32
    }

    /// Adds one authorizer report. `first` and `second` are the action's two detail arguments.
    mutating func record(action: Int32, first: UnsafePointer<CChar>?, second: UnsafePointer<CChar>?) {
        switch action {
        case Action.read:
            if let first { reads.insert(String(cString: first)) }
        case Action.insert, Action.update, Action.delete:
            guard let first else { return }
            let table = String(cString: first)
            writes.insert(table)
            if Self.isSchemaTable(table) { invalidatesAnalysis = true }
        case Action.createTable, Action.createTempTable, Action.createView, Action.createTempView,
             Action.dropTable, Action.dropTempTable, Action.dropView, Action.dropTempView,
             Action.createVirtualTable, Action.dropVirtualTable:
            // The object's rows appear or vanish: its observers must fetch (and may then fail).
            if let first { writes.insert(String(cString: first)) }
            invalidatesAnalysis = true
        case Action.alterTable:
            // The detail is (schema, table): a renamed or widened table changes its observers' results.
            if let second { writes.insert(String(cString: second)) }
            invalidatesAnalysis = true
        case Action.createIndex, Action.createTempIndex, Action.dropIndex, Action.dropTempIndex,
             Action.createTrigger, Action.createTempTrigger, Action.dropTrigger, Action.dropTempTrigger:
            // No row changes, but triggers change what other statements write.
            invalidatesAnalysis = true
        case Action.attach, Action.detach:
            // A schema appears or disappears under tables of the same names: assume everything.
            writes = .everything
            invalidatesAnalysis = true
        case Action.pragma:
            // An assignment such as `foreign_keys = OFF` changes how statements compile.
            if second != nil { invalidatesAnalysis = true }
        case Action.transaction, Action.savepoint:
            if let first, String(cString: first).uppercased() == "ROLLBACK" { invalidatesAnalysis = true }
        default:
            break
        }
    }

    private static func isSchemaTable(_ name: String) -> Bool {
        switch name.lowercased() {
        case "sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema": return true
        default: return false
        }
    }
}
