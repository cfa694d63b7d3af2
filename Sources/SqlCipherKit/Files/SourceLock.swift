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

/// The right to convert a file in place (`encryptInPlace`, `upgradeFromSqlCipher3`): an
/// exclusive `flock` on the file itself, taken before anything is removed or opened and kept
/// until the new file has replaced it.
///
/// SQLite's own lock keeps a second conversion from copying the file meanwhile, but not from
/// what happens around the copy: a second call removed the first one's work file as a "leftover"
/// (the first then failed its verification), and a call started while the first was under way
/// could copy the file and rename its copy over it, so that the first failed or converted a file
/// that was no longer there. `flock` belongs to the open file description, so it excludes two
/// calls of one process as it does two processes, and it is independent of SQLite's POSIX locks.
/// A call that finds the lock taken fails at once; one that gets it checks that the path still
/// names the file it locked.
final class ConversionLock {
    private var descriptor: Int32

    /// Locks the regular file at `path` (resolved). Where there is no regular file there is
    /// nothing to lock, and the caller's own checks name what is there.
    ///
    /// - Throws: ``SqlCipherError/conversionFailed(source:target:reason:)`` when another
    ///   conversion of the file is running, the file was replaced while the lock was taken, or
    ///   this process may not write the file.
    init(path: String) throws {
        descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, (opened.st_mode & S_IFMT) == S_IFREG else {
            release()
            return
        }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            if error == EINTR { continue }
            // A file system without flock: SQLite's exclusive lock still keeps two copies apart.
            guard error == EWOULDBLOCK else { return }
            release()
            throw SqlCipherError.conversionFailed(
                source: path, target: path,
                reason: "another conversion of this file (encryptInPlace or upgradeFromSqlCipher3, in this process or "
                    + "another) is running; wait for it to end, then look at the file again")
        }
        // Replacing a file needs only a writable folder, so a file this process may not write
        // (mode 0444, or another user's) would be replaced, and change owner, without a word.
        guard access(path, W_OK) == 0 else {
            let reason = String(cString: strerror(errno))
            release()
            throw SqlCipherError.conversionFailed(
                source: path, target: path,
                reason: "the file is not writable by this process (\(reason); mode "
                    + "\(String(opened.st_mode & 0o7777, radix: 8))), and converting it in place would replace it. Make it "
                    + "writable first (chmod u+w) if it is meant to change, or write a converted copy elsewhere")
        }
        var named = stat()
        guard stat(path, &named) == 0, named.st_dev == opened.st_dev, named.st_ino == opened.st_ino else {
            release()
            throw SqlCipherError.conversionFailed(
                source: path, target: path,
                reason: "the file was replaced while the conversion started (another conversion finished meanwhile); "
                    + "look at the file again before converting it")
        }
    }

    deinit { release() }

    /// Lets the file go: once the new file is in place, or the conversion failed. Closing this
    /// descriptor also drops POSIX locks this process holds on the file, so it happens only after
    /// the conversion's own connections are closed.
    func release() {
        guard descriptor >= 0 else { return }
        _ = close(descriptor)
        descriptor = -1
    }
}
