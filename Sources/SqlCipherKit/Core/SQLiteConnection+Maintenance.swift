import CSqlCipherBridge

extension SQLiteConnection {
    /// Prepares `sql`, which must be exactly one statement, outside the statement cache: for
    /// statements that run once, or whose bindings must not stay in a cached statement (key bytes).
    func uncachedStatement(_ sql: String) throws -> Statement {
        try Self.refuseNUL(in: sql)
        var statement: OpaquePointer?
        var trailing = false
        let rc: Int32 = sql.utf8CString.withUnsafeBufferPointer { buffer in
            var tail: UnsafePointer<CChar>?
            let base = buffer.baseAddress!
            let rc = scb_prepare(handle, base, Int32(buffer.count - 1), 0, &statement, &tail)
            if rc == 0, let tail {
                // Anything but whitespace after the statement counts as more SQL.
                var cursor = tail
                while cursor < base + (buffer.count - 1) {
                    let byte = UInt8(bitPattern: cursor.pointee)
                    if byte != 0x20 && byte != 0x0A && byte != 0x0D && byte != 0x09 && byte != 0x3B {
                        trailing = true
                        break
                    }
                    cursor += 1
                }
            }
            return rc
        }
        guard rc == 0 else {
            if let statement { scb_finalize(statement) }
            throw prepareError(rc, sql: sql)
        }
        guard let statement else { throw SqlCipherError.emptyStatement(sql: sql) }
        let prepared = Statement(handle: statement, sql: sql, hasTrailingStatements: trailing, connection: self)
        guard !trailing else { throw SqlCipherError.multipleStatements(sql: sql) }
        return prepared
    }

    /// Runs `PRAGMA wal_checkpoint(mode)` on the main database
    /// (https://sqlite.org/pragma.html#pragma_wal_checkpoint). `busy` tells that the checkpoint
    /// could not complete because another connection was reading or writing. A database that is
    /// not in WAL mode reports not busy.
    @discardableResult
    func checkpoint(_ mode: String = "TRUNCATE") throws -> (busy: Bool, walFrames: Int, checkpointed: Int) {
        let row = try query("PRAGMA main.wal_checkpoint(\(mode))").first
        let busy = row.flatMap { $0.get(0, as: Int.self) } ?? 0
        let frames = row.flatMap { $0.get(1, as: Int.self) } ?? -1
        let done = row.flatMap { $0.get(2, as: Int.self) } ?? -1
        return (busy != 0, frames, done)
    }
}
