import CSqlCipherBridge

/// Whether the file a connection has open is still the one at its path, asked at every commit.
///
/// A connection keeps the file it opened, whatever happens to the name: after a removal, or a
/// rename of another file over the path (a restore, a reset that deletes and recreates the
/// database, another program's in-place conversion), its commits still succeed, into a file that
/// nobody will ever open again, and are lost when it closes. SQLite refuses such a write by itself
/// only when it opens a rollback journal (`SQLITE_READONLY_DBMOVED`); in WAL mode, the default,
/// and with `journal_mode` `MEMORY` or `OFF`, nothing stopped it. The commit hook asks SQLite's own
/// test (`SQLITE_FCNTL_HAS_MOVED`: the path names no file, or another inode) and refuses the
/// commit when the file moved; SQLite then rolls the transaction back, and the error mapping
/// reports it as `SQLITE_READONLY_DBMOVED`, the code a rollback-mode write gets, with the same
/// advice (``SQLiteMessageAdvice/databaseMoved``).
///
/// Used on the connection's own thread only: the commit hook runs inside the statement that commits.
final class MovedFileCheck {
    /// The connection's handle, set once it is open.
    var handle: OpaquePointer?
    /// The connection's tracker, which the commit hook tells of a commit that goes ahead.
    var tracker: ChangeTracker?
    /// Set by the opener for a connection in a rollback journal mode: such a connection is also
    /// asked before each statement that begins a transaction (``SQLiteConnection/statementWillRun(_:)``).
    /// SQLite's rollback-mode pager looks for a `-wal` by the path's name whenever a read begins,
    /// and opens the one it finds: after the file was removed and another made at the path in WAL
    /// mode, it opened the new file's `-wal` (its reads failed as if the key had changed), and
    /// SQLite 3.15.2 (SQLCipher 3.4.1) checkpointed that `-wal` into the old file at close and
    /// deleted it, so the new file lost its commits. The question costs one `stat` per statement
    /// outside a transaction, where the pager already makes several system calls; a WAL
    /// connection keeps its own `-wal` open and is not asked.
    var checksBeforeEachStatement = false
    /// Set by the commit hook when it refused a commit; taken by the error mapping of that statement.
    private(set) var refusedCommit = false
    /// Set once the package has seen the file gone from its path (a refused commit, or the
    /// live-query watch, ``noticeIfMoved()``): from then on a statement that would begin a
    /// transaction is refused (``SQLiteConnection/statementWillRun(_:)``), so that a live query
    /// ends with the error rather than showing the old file's rows for ever.
    private(set) var fileLeftPath = false

    /// `SQLITE_FCNTL_HAS_MOVED` (https://sqlite.org/c3ref/c_fcntl_begin_atomic_write.html).
    private static let hasMovedOpcode: Int32 = 20

    /// Whether the main database file is no longer at its path. False for an in-memory database
    /// and wherever the VFS cannot say (it answers `SQLITE_NOTFOUND`).
    var fileHasMoved: Bool {
        guard let handle else { return false }
        var moved: Int32 = 0
        guard scb_file_control(handle, "main", Self.hasMovedOpcode, &moved) == 0 else { return false }
        return moved != 0
    }

    /// The commit hook's question: true refuses the commit (SQLite rolls it back).
    func refusesCommit() -> Bool {
        guard fileHasMoved else { return false }
        refusedCommit = true
        fileLeftPath = true
        return true
    }

    /// Asks whether the file moved, and remembers it when it did (``fileLeftPath``). The
    /// live-query watch asks this at each of its checks, on the connection's executor.
    func noticeIfMoved() -> Bool {
        if !fileLeftPath && fileHasMoved { fileLeftPath = true }
        return fileLeftPath
    }

    /// Remembers that SQLite itself found the file moved (`SQLITE_READONLY_DBMOVED` on a write
    /// in rollback mode): the same as a refused commit from then on.
    func noteMovedBySQLite() { fileLeftPath = true }

    /// Whether the failure being mapped is a commit this check refused; clears the mark.
    func takeRefusal() -> Bool {
        defer { refusedCommit = false }
        return refusedCommit
    }
}
