import Foundation

/// How a `readOnly: true` open reaches a file without writing a byte of it or of its folder, and
/// the typed errors for files in WAL mode on storage this process cannot write.
///
/// `SQLITE_OPEN_READONLY` alone is not enough: a read-only connection to a WAL database creates
/// `-wal` and `-shm` beside it when the folder is writable, writes read marks into the `-shm`,
/// and leaves both files behind (measured with SQLCipher 4.6.1). The encrypted header does not
/// tell which journal mode a file is in before the key is applied, so the choice is made from
/// the companion files that exist:
///
/// - `-wal` and `-shm` both exist (a connection has the file open, or one ended without
///   cleaning up): `mode=ro&readonly_shm=1`. SQLite reads the WAL through a `-shm` opened
///   read-only, so committed transactions still in the WAL are seen, with SQLite's locking.
/// - a `-wal` with content but no `-shm`: refused. The newest transactions exist only in the
///   WAL, and reading it needs a `-shm` that would have to be created.
/// - otherwise: `immutable=1` (https://sqlite.org/uri.html#uriimmutable). SQLite reads the main
///   file alone and takes no locks, since everything committed is in it. A `-journal` with a
///   live header means a write is under way or was interrupted; that is refused, because the
///   main file may then be half-written.
///
/// Every statement that is not read-only (`sqlite3_stmt_readonly`, which covers `VACUUM INTO`,
/// a write that SQLite allows on read-only connections) is then refused before it runs
/// (``SQLiteConnection/refusesWrites``).
enum ReadOnlyOpening {
    /// `SQLITE_OPEN_READONLY` (https://sqlite.org/c3ref/open.html).
    static let readOnlyFlag: Int32 = 0x0000_0001

    /// How the file is handed to SQLite.
    enum Access: Equatable {
        /// `mode=ro&readonly_shm=1`: the WAL is read through the existing `-shm`.
        case sharedWAL
        /// `mode=ro&immutable=1`: the main file alone, no locks.
        case immutable
    }

    /// The access for `path`, from its companion files.
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` when the file cannot be read without
    ///   writing.
    static func access(for path: String) throws -> Access {
        let wal = SnapshotFiles.regularFileSize(path + "-wal")
        let shm = SnapshotFiles.regularFileSize(path + "-shm")
        if wal != nil && shm != nil { return .sharedWAL }
        if let wal, wal > 0 {
            throw SqlCipherError.cannotOpen(
                path: path,
                reason: "it has a \(fileName(path))-wal file holding transactions that are not yet in the database "
                    + "file, and no \(fileName(path))-shm, which SQLite needs to read the WAL and which a read-only "
                    + "open must not create. Open it once without readOnly on writable storage (that moves the WAL "
                    + "into the file), or copy the database together with its -wal and -shm files")
        }
        if hasLiveJournalHeader(path + "-journal") {
            throw SqlCipherError.cannotOpen(
                path: path,
                reason: "a write is under way or was interrupted: \(fileName(path))-journal holds pages that may still "
                    + "have to be restored, which a read-only open must not do. Try again once the writer is done, or "
                    + "open it once without readOnly on writable storage to roll the interrupted write back")
        }
        return .immutable
    }

    /// The URI that opens `path` with `access` (https://sqlite.org/uri.html); `%`, `?` and `#`
    /// are escaped so that the path is taken as it is.
    static func uri(for path: String, access: Access) -> String {
        let escaped = escapedURIPath(path)
        switch access {
        case .sharedWAL: return "file:" + escaped + "?mode=ro&readonly_shm=1"
        case .immutable: return "file:" + escaped + "?mode=ro&immutable=1"
        }
    }

    /// The URI that opens `path` read-only with SQLite's locking, its `-wal` and `-shm` (which
    /// SQLite creates when it is missing): a connection that can read everything committed and
    /// can neither checkpoint nor remove the `-wal` when it closes.
    static func lockingReadOnlyURI(for path: String) -> String {
        "file:" + escapedURIPath(path) + "?mode=ro"
    }

    /// `path` for a `file:` URI: `%`, `?` and `#` escaped, a leading `//` collapsed.
    private static func escapedURIPath(_ path: String) -> String {
        var escaped = ""
        for scalar in path.unicodeScalars {
            switch scalar {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        // A path that begins with "//" would be read as an authority.
        if escaped.hasPrefix("//") { escaped = "/" + String(escaped.drop { $0 == "/" }) }
        return escaped
    }

    /// Whether `path` is a rollback journal that SQLite could treat as hot: a file whose header is
    /// not zeroed (`PERSIST` mode zeroes it when a transaction ends; `TRUNCATE` leaves it empty).
    private static func hasLiveJournalHeader(_ path: String) -> Bool {
        guard let size = SnapshotFiles.regularFileSize(path), size > 0 else { return false }
        guard let handle = FileHandle(forReadingAtPath: path) else { return true }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 28)) ?? Data()
        return header.contains { $0 != 0 }
    }

    /// The page size that the rollback journal at `path` records in its header, when it is a live
    /// journal (SQLite's magic, a page size SQLite accepts), else nil. The header is plaintext in
    /// SQLCipher's journals too, and the page size is the database's at the time of the write.
    static func liveJournalPageSize(_ path: String) -> Int? {
        guard let size = SnapshotFiles.regularFileSize(path), size >= 28,
              let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let header = [UInt8]((try? handle.read(upToCount: 28)) ?? Data())
        // https://sqlite.org/fileformat.html#the_rollback_journal: magic, record count, nonce,
        // initial page count, sector size, page size (big-endian).
        let magic: [UInt8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]
        guard header.count == 28, Array(header[0..<8]) == magic else { return nil }
        let pageSize = header[24..<28].reduce(0) { $0 << 8 | Int($1) }
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else { return nil }
        return pageSize
    }

    private static func fileName(_ path: String) -> String {
        DatabasePath.lastComponent(of: path)
    }

    // MARK: WAL on storage that cannot be written

    /// The typed error for an open that failed because SQLite could not create or write the WAL's
    /// companion files, or nil when `code`/`extended` is something else.
    ///
    /// Codes: `SQLITE_CANTOPEN` (14), and the `SQLITE_READONLY` (8) variants SQLite reports for a
    /// WAL it cannot set up: `_RECOVERY` (264), `_CANTLOCK` (520), `_CANTINIT` (1288) and
    /// `_DIRECTORY` (1544).
    static func walStorageError(path: String, code: Int32, extended: Int32, message: String,
                                readOnly: Bool) -> SqlCipherError? {
        let walCodes: Set<Int32> = [264, 520, 1288, 1544]
        guard code == 14 || (code == 8 && walCodes.contains(extended)) else { return nil }
        let name = fileName(path)
        let folder = DatabasePath.folder(of: path)
        if readOnly {
            return .cannotOpen(
                path: path,
                reason: "SQLite could not read its WAL without writing (\(message)): \(name)-wal and \(name)-shm "
                    + "were left by a connection that has ended, and the -shm does not describe the WAL. Open it once "
                    + "without readOnly on writable storage, which moves the WAL into the file")
        }
        return .cannotOpen(
            path: path,
            reason: "SQLite could not open it (\(message)). A database in WAL mode needs to create or write "
                + "\(name)-wal and \(name)-shm beside it, so its folder \(folder) must be writable (and the -wal and "
                + "-shm files, if they exist). Make the folder writable; or open the file with readOnly: true, which "
                + "reads it without writing anything; or, on writable storage, switch the file to rollback mode once "
                + "(execute(\"PRAGMA journal_mode = DELETE\")), which reads from read-only storage afterwards")
    }
}

extension SQLiteConnection {
    /// The error for a statement that would write on a connection opened with `readOnly: true`:
    /// SQLite's own `SQLITE_READONLY` (8), which SQLite also reports for the writes it refuses
    /// itself, so one `catch` covers both.
    static func readOnlyRefusal(sql: String) -> SqlCipherError {
        .sqlite(code: 8, extendedCode: 8,
                message: "attempt to write a readonly database: this Database was opened with readOnly: true, "
                    + "which runs only statements that read, and this one would write (or, like VACUUM INTO, create "
                    + "a file). Open the file without readOnly to change it",
                sql: sql).redactingSQL()
    }
}
