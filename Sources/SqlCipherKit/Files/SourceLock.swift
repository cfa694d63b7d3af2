import CSqlCipherBridge
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
        connection.setBusyTimeout(1000)
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

    /// Runs a step of a conversion that reads its source before the source is locked (the
    /// opening, the first reads), and names what SQLite's bare "database is locked" means there:
    /// another connection, in this process or another, kept a lock on the file for longer than the
    /// opening's busy timeout (a write in progress, a long transaction, or a file held in
    /// exclusive locking mode). Nothing was changed; the caller should wait or close it.
    static func describingBusy<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch SqlCipherError.sqlite(let code, _, _, _) where code == 5 || code == 6 {
            let seconds = DatabaseConfiguration().busyTimeout.components.seconds
            throw SqlCipherError.conversionFailed(
                source: path, target: path,
                reason: "another connection, in this process or another, holds a lock on the file and did not release it "
                    + "within \(seconds) seconds (SQLite error \(code), \"database is locked\"): it is writing, is inside a long transaction, or keeps "
                    + "the file in exclusive locking mode. Nothing was changed; let that transaction end and close every "
                    + "connection to the file, then convert again")
        }
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

/// The right to convert a file in place (`encryptInPlace`, `upgradeFromSqlCipher3`): an
/// exclusive `flock` on a lock file beside it (`<path>.sqlcipherkit-converting`), taken before
/// anything is removed or opened and kept until the new file has replaced the old one.
///
/// SQLite's own lock keeps a second conversion from copying the file meanwhile, but not from
/// what happens around the copy: a second call removed the first one's work file as a "leftover"
/// (the first then failed its verification), and a call started while the first was under way
/// could copy the file and rename its copy over it, so that the first failed or converted a file
/// that was no longer there. `flock` belongs to the open file description, so it excludes two
/// calls of one process as it does two processes. A call that finds the lock taken fails at once.
///
/// The lock is on a file of its own, never on the database: closing any descriptor of the
/// database's file drops every POSIX lock this process holds on it
/// (https://sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_),
/// so a descriptor opened and closed here would silently take the locks of another `Database` of
/// this process on the same file, and another process could then delete a WAL still in use.
///
/// The lock file is removed when the lock is released, and a call that locked a lock file
/// checks that the name still leads to it (a call that finished meanwhile removed it), so that
/// two calls never hold locks on two different lock files. One left by a killed process is
/// taken over: a `flock` dies with its process.
final class ConversionLock {
    private var descriptor: Int32 = -1
    private let lockPath: String

    /// How many times a lock file removed under the call is opened again before giving up.
    private static let attempts = 8

    /// Locks the conversion of the regular file at `path` (resolved). Where there is no regular
    /// file there is nothing to convert, and the caller's own checks name what is there.
    ///
    /// - Throws: ``SqlCipherError/conversionFailed(source:target:reason:)`` when another
    ///   conversion of the file is running, the lock file's name is taken by something else, or
    ///   this process may not write the file.
    init(path: String) throws {
        lockPath = path + ".sqlcipherkit-converting"
        var file = stat()
        guard lstat(path, &file) == 0, (file.st_mode & S_IFMT) == S_IFREG else { return }
        // Replacing a file needs only a writable folder, so a file this process may not write
        // (mode 0444, or another user's) would be replaced, and change owner, without a word.
        guard access(path, W_OK) == 0 else {
            let reason = String(cString: strerror(errno))
            throw SqlCipherError.conversionFailed(
                source: path, target: path,
                reason: "the file is not writable by this process (\(reason); mode "
                    + "\(String(file.st_mode & 0o7777, radix: 8))), and converting it in place would replace it. Make it "
                    + "writable first (chmod u+w) if it is meant to change, or write a converted copy elsewhere")
        }
        // Whoever may read the database may read the lock file, and so wait for the conversion
        // (waitForConversions opens it read-only): with mode 0600, another user's opening of a
        // file this call converted could not open it, waited for nothing and read the original.
        let mode = mode_t(0o600) | (file.st_mode & 0o044)
        for _ in 0..<Self.attempts {
            var opened = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode)
            var error = errno
            // Another user's lock file (a conversion of theirs, or one they left): flock takes an
            // exclusive lock through a read-only descriptor too. Without it, this call went on
            // unlocked and removed the running conversion's work file as a leftover.
            if opened < 0 && (error == EACCES || error == EPERM) {
                opened = open(lockPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                if opened < 0 { errno = error }
            }
            guard opened >= 0 else {
                error = errno
                // A folder this process may not write cannot take the converted file either; the
                // conversion says so in its own words when it writes there.
                if error == EACCES || error == EROFS || error == EPERM { return }
                throw Self.cannotCreate(path: path, lockPath: lockPath, error: error)
            }
            var locked = stat(), named = stat()
            guard fstat(opened, &locked) == 0, (locked.st_mode & S_IFMT) == S_IFREG else {
                _ = close(opened)
                throw SqlCipherError.conversionFailed(
                    source: path, target: path,
                    reason: "the name of its lock file, \(lockPath), is taken by something that is not a file; "
                        + "remove what is there, then convert again")
            }
            // An opener of the file tests the lock with a shared flock it lets go at once
            // (waitForConversions): a few tries over 20 ms keep that moment from reading as a
            // conversion, which holds the lock for the whole copy.
            var result = flock(opened, LOCK_EX | LOCK_NB)
            var tries = 1
            while result != 0 && (errno == EINTR || (errno == EWOULDBLOCK && tries < 20)) {
                if errno == EWOULDBLOCK {
                    tries += 1
                    usleep(1000)
                }
                result = flock(opened, LOCK_EX | LOCK_NB)
            }
            if result != 0 {
                let error = errno
                _ = close(opened)
                // A file system without flock: SQLite's exclusive lock still keeps two copies apart.
                guard error == EWOULDBLOCK else { return }
                throw SqlCipherError.conversionFailed(
                    source: path, target: path,
                    reason: "another conversion of this file (encryptInPlace or upgradeFromSqlCipher3, in this process or "
                        + "another) is running; wait for it to end, then look at the file again")
            }
            // The lock file this call locked must still be the one the name leads to: a call that
            // finished meanwhile removed it, and a third may have made a new one.
            if lstat(lockPath, &named) == 0, named.st_dev == locked.st_dev, named.st_ino == locked.st_ino {
                // A lock file left by a killed call keeps the mode it was made with; the umask may
                // have taken read bits from a new one.
                if named.st_uid == geteuid() { _ = fchmod(opened, mode) }
                descriptor = opened
                return
            }
            _ = close(opened)
        }
        throw SqlCipherError.conversionFailed(
            source: path, target: path,
            reason: "its lock file, \(lockPath), kept being replaced while this call took it; another conversion of this "
                + "file is running: wait for it to end, then look at the file again")
    }

    /// The error for a lock file that `open` could not create or open. Only a name taken by
    /// something else (a link, a folder) is for the user to remove; a name too long for the file
    /// system was told "taken (File name too long); remove what is there" with nothing there,
    /// and so were a full disk and a process out of descriptors.
    private static func cannotCreate(path: String, lockPath: String, error: Int32) -> SqlCipherError {
        let reason = String(cString: strerror(error))
        switch error {
        case ELOOP, EISDIR, EEXIST, ENXIO, ETXTBSY:
            return .conversionFailed(
                source: path, target: path,
                reason: "the name of its lock file, \(lockPath), is taken (\(reason)); remove what is there, then "
                    + "convert again")
        case ENAMETOOLONG:
            // The work files beside it (`.sqlcipherkit-encrypting`, `.sqlcipherkit-upgrading`)
            // add as many characters: no conversion of this name can be written there.
            return .conversionFailed(
                source: path, target: path,
                reason: "its name is too long for the files a conversion writes beside it (\(lockPath): \(reason)); "
                    + "nothing was changed. Close every connection to it, give it a shorter name, then convert it")
        default:
            return .conversionFailed(
                source: path, target: path,
                reason: "its lock file, \(lockPath), cannot be created (\(reason)); nothing was changed. Convert again "
                    + "once that is resolved")
        }
    }

    /// Waits until no `encryptInPlace` or `upgradeFromSqlCipher3` of the file at `path` (resolved)
    /// runs, in this process or another, for an opening of that file: one that went ahead judged
    /// the original the conversion was about to replace. A key opening the plaintext original
    /// was told "it is a plaintext SQLite database" a moment before it became the encrypted file
    /// the key opens; a plaintext opening got a `Database` on the original's file after it was
    /// replaced, which showed the old content and failed every write. The lock is tested with a
    /// shared `flock` let go at once (a conversion starting meanwhile tries again); nothing is
    /// waited for where there is no lock file, or it cannot be opened or locked.
    ///
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` when a conversion holds the lock for
    ///   longer than `timeoutMilliseconds` (the configuration's busy timeout).
    static func waitForConversions(of path: String, timeoutMilliseconds: Int32) throws {
        let lockPath = path + ".sqlcipherkit-converting"
        let descriptor = open(lockPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var locked = stat()
        guard fstat(descriptor, &locked) == 0, (locked.st_mode & S_IFMT) == S_IFREG else { return }
        let deadline = ContinuousClock.now + .milliseconds(Int(max(0, timeoutMilliseconds)))
        while flock(descriptor, LOCK_SH | LOCK_NB) != 0 {
            let error = errno
            if error == EINTR { continue }
            guard error == EWOULDBLOCK else { return }
            if ContinuousClock.now >= deadline {
                throw SqlCipherError.cannotOpen(
                    path: path, reason: "a conversion of this file (encryptInPlace or upgradeFromSqlCipher3, in this "
                        + "process or another) is running and replaces the file when it ends; it held its lock file, "
                        + "\(lockPath), for longer than the busy timeout (DatabaseConfiguration.busyTimeout). Open the "
                        + "file once it has ended; if no conversion runs, look for the process that holds that file open")
            }
            usleep(2000)
        }
        _ = flock(descriptor, LOCK_UN)
    }

    deinit { release() }

    /// Lets the conversion go: once the new file is in place, or the conversion failed. The
    /// lock file is removed while it is still locked, so that the next call makes its own.
    func release() {
        guard descriptor >= 0 else { return }
        _ = unlink(lockPath)
        _ = close(descriptor)
        descriptor = -1
    }
}
