import CSqlCipherBridge

extension SQLiteConnection {
    /// Prepares `sql`, which must be exactly one statement, outside the statement cache: for
    /// statements that run once, or whose bindings must not stay in a cached statement (key bytes).
    func uncachedStatement(_ sql: String) throws -> Statement {
        guard let statement = try prepareFirst(sql) else { throw SqlCipherError.emptyStatement(sql: sql).redactingSQL() }
        guard !statement.hasTrailingStatements else { throw SqlCipherError.multipleStatements(sql: sql).redactingSQL() }
        return statement
    }

    /// Runs `PRAGMA wal_checkpoint(mode)` on the main database
    /// (https://sqlite.org/pragma.html#pragma_wal_checkpoint). `busy` tells that the checkpoint
    /// could not complete because another connection was reading or writing. A database that is
    /// not in WAL mode reports not busy.
    @discardableResult
    func checkpoint(_ mode: String = "TRUNCATE") throws -> (busy: Bool, walFrames: Int, checkpointed: Int) {
        let row = try asInternal { try query("PRAGMA main.wal_checkpoint(\(mode))").first }
        let busy = row.flatMap { $0.get(0, as: Int.self) } ?? 0
        let frames = row.flatMap { $0.get(1, as: Int.self) } ?? -1
        let done = row.flatMap { $0.get(2, as: Int.self) } ?? -1
        return (busy != 0, frames, done)
    }

    /// `PRAGMA data_version` (https://sqlite.org/pragma.html#pragma_data_version): a number that
    /// changes when another connection, in this process or another, commits to the file.
    func dataVersion() throws -> Int {
        guard case .integer(let version)? = try asPackage({ try scalar("PRAGMA data_version") }) else { return 0 }
        return Int(version)
    }
}
