import Foundation

/// What an opening that failed for want of file descriptors, or a write that met a full disk,
/// tells the user. SQLite reports both in words that point elsewhere: an opening without a free
/// descriptor fails with "unable to open database file", which the package explained as a folder
/// to make writable or a file that "cannot be read", and a full disk with a bare "database or disk
/// is full" after the package's own SQL. A service that leaks descriptors, or whose disk fills,
/// needs to hear that, and that the file is intact.
enum ResourceExhaustion {
    /// The descriptors one more connection may need at once: the file, its `-wal` and `-shm` (or
    /// its `-journal`), and one to spare.
    static let descriptorsPerConnection = 4

    /// Whether this process cannot open ``descriptorsPerConnection`` more descriptors now
    /// (`EMFILE`: its `RLIMIT_NOFILE`; `ENFILE`: the system's table). Asked only after an opening
    /// failed: SQLite has closed what it opened by then, so fewer than one connection's worth
    /// free means the limit is what stopped it.
    static var isOutOfDescriptors: Bool {
        var opened: [Int32] = []
        defer { for descriptor in opened { close(descriptor) } }
        for _ in 0..<descriptorsPerConnection {
            let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
            if descriptor < 0 { return errno == EMFILE || errno == ENFILE }
            opened.append(descriptor)
        }
        return false
    }

    /// The process's descriptor limit (the soft `RLIMIT_NOFILE`), for the message.
    private static var descriptorLimit: String {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return "" }
        return " (its limit is \(limit.rlim_cur))"
    }

    /// How ``outOfDescriptors`` begins, whatever the limit it names.
    static let outOfDescriptorsLead = "the process has run out of file descriptors"

    /// Whether `error` is an opening that failed for want of descriptors (``explaining(_:)``).
    static func isOutOfDescriptors(_ error: any Error) -> Bool {
        switch error as? SqlCipherError {
        case .cannotOpen(_, let reason)?: return reason.hasPrefix(outOfDescriptorsLead)
        case .sqlite(_, _, let message, _)?: return message.contains(outOfDescriptorsLead)
        default: return false
        }
    }

    /// What to do when the process is out of descriptors.
    static var outOfDescriptors: String {
        outOfDescriptorsLead + "\(descriptorLimit): every open Database holds about three (the "
            + "file, its -wal and -shm) and every reader of a DatabasePool two more. Nothing was written. Close the "
            + "databases, pools and files this process no longer uses (a connection is closed by close() or when its "
            + "last reference goes), keep maximumReaderCount within the limit, or raise the limit (ulimit -n, "
            + "LimitNOFILE= in a systemd unit), then try again"
    }

    /// `error` with the cause named when it is an opening that failed while the process is out of
    /// descriptors; any other error unchanged. Every opening of a connection comes through here
    /// (``DatabaseOpener`` and ``SQLiteConnection``'s initialiser).
    static func explaining(_ error: any Error) -> any Error {
        guard case .cannotOpen(let path, let reason)? = error as? SqlCipherError, !reason.hasPrefix(outOfDescriptorsLead),
              isOutOfDescriptors else { return error }
        // A reason built around SQLite's message may carry the advice already (``cannotOpenAdvice``),
        // after advice of its own that does not apply (a folder to make writable): the cause comes first.
        let reported = reason.replacingOccurrences(of: ": " + outOfDescriptors, with: "")
        return SqlCipherError.cannotOpen(path: path, reason: outOfDescriptors + " (SQLite reported: \(reported))")
    }

    /// What follows SQLite's "database or disk is full" (`SQLITE_FULL`, 13).
    static let diskFull = ": the filesystem that holds the file being written (the database, its -wal or "
        + "-journal, or the target of a backup or an export) has no space left, or the file reached a size limit "
        + "(the process's RLIMIT_FSIZE, or PRAGMA max_page_count). This statement did not take effect, and what was "
        + "committed before is intact. Free space on that filesystem, then retry"

    /// What follows SQLite's "unable to open database file" (`SQLITE_CANTOPEN`, 14) for a statement
    /// (an `ATTACH`, a reader's first read of the `-wal`) run while the process is out of
    /// descriptors; nil otherwise.
    static var cannotOpenAdvice: String? {
        isOutOfDescriptors ? ": " + outOfDescriptors : nil
    }
}
