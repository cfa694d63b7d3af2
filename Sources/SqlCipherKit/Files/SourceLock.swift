import CSqlCipherBridge

/// How a conversion keeps its source file to itself while it reads or replaces it, and gives it
/// back after a failure.
enum SourceLock {
    /// Makes `connection` the only user of its file until it closes: the exclusive lock is taken
    /// and kept (`locking_mode = EXCLUSIVE`), so that nobody reads or writes the original while it
    /// is copied. Waits at most a second for other connections.
    ///
    /// A WAL file stays in WAL mode unless `movingWAL`: leaving it changes the header (the change
    /// counters and the format bytes), which a cancelled operation must not do, so callers that
    /// read through the connection switch only once they cannot be stopped any more
    /// (``leaveWAL(_:path:)``). A caller that copies the file's bytes needs the WAL moved into the
    /// file first: switching to a rollback journal does that, and SQLite refuses it while any
    /// other connection has the file open.
    static func lockExclusively(_ connection: SQLiteConnection, path: String, journalMode: JournalMode,
                                movingWAL: Bool = false) throws {
        scb_busy_timeout(connection.handle, 1000)
        if journalMode == .wal && movingWAL { try leaveWAL(connection, path: path) }
        try connection.execute("PRAGMA locking_mode = EXCLUSIVE")
        do {
            try connection.execute("BEGIN EXCLUSIVE")
            try connection.execute("COMMIT")
        } catch {
            throw fileInUse(path, "\(error)")
        }
    }

    /// Switches a WAL file to a rollback journal (`DELETE`): the WAL moves into the file and is
    /// removed, so that nothing of it is left beside a file about to be replaced.
    ///
    /// The switch writes the header through a rollback journal. In exclusive locking mode SQLite
    /// keeps that journal (zeroed) until the connection closes, and a crash before then would
    /// leave it beside the file, where it blocks the next conversion; so the switch runs in
    /// normal locking mode, and a connection that held the file exclusively takes it back.
    static func leaveWAL(_ connection: SQLiteConnection, path: String) throws {
        let exclusive = (try? connection.lowercasedText("PRAGMA locking_mode")) == "exclusive"
        if exclusive { try connection.execute("PRAGMA locking_mode = NORMAL") }
        let mode: String?
        do {
            mode = try connection.lowercasedText("PRAGMA journal_mode = DELETE")
        } catch {
            throw fileInUse(path, "\(error)")
        }
        guard mode == "delete" else { throw fileInUse(path, "it stays in WAL mode") }
        if exclusive { try lockExclusively(connection, path: path, journalMode: .rollback) }
    }

    private static func fileInUse(_ path: String, _ detail: String) -> SqlCipherError {
        .conversionFailed(
            source: path, target: path,
            reason: "another connection is using the file (\(detail)); close every connection to it first")
    }

    /// Undoes ``lockExclusively(_:path:journalMode:movingWAL:)`` and ``leaveWAL(_:path:)`` after a
    /// failure: the lock is released and a WAL file gets its journal mode back (a no-op for one
    /// that never left it, which then keeps every byte).
    static func unlock(_ connection: SQLiteConnection, journalMode: JournalMode) {
        _ = try? connection.execute("PRAGMA locking_mode = NORMAL")
        if journalMode == .wal { _ = try? connection.query("PRAGMA journal_mode = WAL") }
    }
}
