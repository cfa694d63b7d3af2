/// How a database file keeps its journal (https://sqlite.org/wal.html, https://sqlite.org/lockingv3.html).
///
/// The mode is chosen when SqlCipherKit creates a file. Opening an existing file keeps the mode
/// the file is in, whatever is passed, and ``Database/journalMode`` reports that mode.
public enum JournalMode: String, Sendable, Hashable, CaseIterable {
    /// Write-ahead log: readers do not block the writer. Creates `-wal` and `-shm` files beside
    /// the database while it is open. The default for new files.
    case wal
    /// A rollback journal (`DELETE` mode): the database is a single file whenever no transaction is
    /// running. For files copied between media, backed up as opaque blobs, or read from read-only
    /// storage. Existing files in SQLite's other rollback modes (`TRUNCATE`, `PERSIST`) report this.
    case rollback

    /// The value of `PRAGMA journal_mode` that selects the mode.
    var pragmaValue: String {
        switch self {
        case .wal: return "WAL"
        case .rollback: return "DELETE"
        }
    }

    /// The mode a `PRAGMA journal_mode` answer stands for.
    init(pragmaAnswer: String) {
        self = pragmaAnswer.lowercased() == "wal" ? .wal : .rollback
    }
}
