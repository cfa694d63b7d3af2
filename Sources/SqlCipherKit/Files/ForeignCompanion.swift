import Foundation

/// Tells a `-journal`, `-wal` or `-shm` that SQLite wrote from a file of another kind that only has
/// such a name: a database called `x.db-wal` or `x.db-journal` beside `x.db`, or any other file.
///
/// SQLite manages a database's companion files by name and never asks what is in them: opening
/// `x.db` took a `-journal` it did not write for an interrupted write and deleted it, wrote its
/// WAL over a `-wal` and deleted it at close, and truncated a `-shm` (measured on 4.6.1 with a
/// database of the package's own at each name: gone after one write to `x.db`). Every file
/// SQLite writes under those names starts with a magic number, or with zeros (a journal whose
/// header is not yet synced or was zeroed by `journal_mode = PERSIST`, a file left by a crash
/// before its first bytes reached the disk); a database starts with `SQLite format 3` or, when
/// encrypted, with random bytes. Each of the first bytes is checked on its own, so a header caught
/// while it is first written passes.
enum ForeignCompanion {
    /// The first bytes of each companion SQLite writes (https://sqlite.org/fileformat2.html and
    /// https://sqlite.org/walformat.html): the rollback journal's 8-byte magic, the WAL's magic
    /// (big-endian, last bit the checksum's byte order), and the wal-index's version, 3007000, in
    /// the machine's byte order (either is accepted).
    private static func magics(for suffix: String) -> [[UInt8]] {
        switch suffix {
        case "-journal": return [[0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]]
        case "-wal": return [[0x37, 0x7f, 0x06, 0x82], [0x37, 0x7f, 0x06, 0x83]]
        default: return [[0x18, 0xe2, 0x2d, 0x00], [0x00, 0x2d, 0xe2, 0x18]]
        }
    }

    /// Why the file at `path + suffix` is not a companion SQLite wrote (what its first bytes
    /// show), or nil when it is missing, empty, not a regular file (refused elsewhere), or starts
    /// as one SQLite writes. `readsShm` false skips reading a `-shm`: the process's connections
    /// hold their WAL locks on it, and closing any descriptor of a file drops every POSIX lock the
    /// process holds on it (https://sqlite.org/howtocorrupt.html, 2.2.1); a `-shm` in use by a
    /// connection of this process was checked when that connection opened.
    static func description(of path: String, suffix: String, readsShm: Bool) -> String? {
        let companion = path + suffix
        guard suffix != "-shm" || readsShm,
              let size = SnapshotFiles.regularFileSize(companion), size > 0,
              let handle = FileHandle(forReadingAtPath: companion) else { return nil }
        let first = [UInt8]((try? handle.read(upToCount: 16)) ?? Data())
        try? handle.close()
        let count = min(first.count, suffix == "-journal" ? 8 : 4)
        guard count > 0 else { return nil }
        let head = Array(first.prefix(count))
        // Byte by byte, each either the magic's or zero: a header read while another process
        // writes it for the first time (a -shm's is stored through shared memory) may show part of
        // it; a database's first bytes ("SQLite format 3", or random) never pass.
        if magics(for: suffix).contains(where: { magic in zip(head, magic).allSatisfy { $0 == 0 || $0 == $1 } }) {
            return nil
        }
        if first.count == 16 && first.elementsEqual(FileHeader.sqliteMagic) { return "a SQLite database" }
        return "not a \(suffix) file SQLite wrote (it does not start as one does)"
    }

    /// Why the `-wal` beside `path` must be left alone although it is SQLite's: it holds frames
    /// (commits not yet copied into the database file) and the database file is missing or empty.
    /// SQLite deletes the `-wal` of a file of no pages when it opens that file, so a new database
    /// made at `path` deleted another database's last commits (measured: a `-wal` of 2,000 rows
    /// left by a killed `sqlcipher` CLI, its database file moved away). A live WAL database never
    /// looks like this: SQLite writes page 1 into the file when it switches it to WAL, before any
    /// frame, and the file never shrinks back to nothing; the `-wal` is read first and the file
    /// after, so a creator racing this check is never taken for one. Nil in every other case.
    static func orphanedWAL(of path: String) -> String? {
        let wal = path + "-wal"
        guard let size = SnapshotFiles.regularFileSize(wal), size > walHeaderSize,
              let handle = FileHandle(forReadingAtPath: wal) else { return nil }
        let first = [UInt8]((try? handle.read(upToCount: 4)) ?? Data())
        try? handle.close()
        guard magics(for: "-wal").contains(first) else { return nil }
        var info = stat()
        let missing = lstat(path, &info) != 0
        guard missing || SnapshotFiles.regularFileSize(path) == 0 else { return nil }
        let name = DatabasePath.lastComponent(of: path), walName = DatabasePath.lastComponent(of: wal)
        return "\(walName) beside it holds \(size) bytes of a database's commits that SQLite had not yet copied into "
            + "the database file, and \(name) is \(missing ? "missing" : "empty"): the file they belong to was moved, "
            + "deleted or truncated without them, and SQLite deletes such a -wal when it opens or creates \(name). Put "
            + "that database file back beside it (its commits are then read), or, if it is gone for good, move "
            + "\(walName) (and \(name)-shm) away and try again. Nothing was read or changed"
    }

    /// The size of a WAL's header: a `-wal` longer than this holds frames.
    private static let walHeaderSize = 32
}
