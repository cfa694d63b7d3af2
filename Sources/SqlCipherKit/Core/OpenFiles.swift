import CSqlCipherBridge
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The database files this process's connections have open, and the package's own descriptors of
/// them: how the package reads a file without taking its connections' locks away.
///
/// POSIX advisory locks belong to the process and the file, not to a descriptor: closing *any*
/// descriptor of a file drops every lock the process holds on it, those SQLite's connections took
/// included (https://sqlite.org/howtocorrupt.html, 2.2.1). The package reads files beside SQLite
/// (a header before it opens one, the inspector, the proof that pages are ciphertext), and each
/// such read used to close its descriptor at once: a `Database` opened on a file that another
/// `Database` or a pool of this process had open, or an inspection of it, left the first one's
/// file unlocked, and another process could then take it (leave WAL mode, or checkpoint and delete
/// a `-wal` still in use, losing the commits written to it afterwards).
///
/// So every connection notes its file here (``connectionOpened(_:)``), every descriptor the package
/// opens on a file it may share with them is given back through ``release(_:)``, which keeps it
/// open while a connection has the file open, and a read of such a file (``withReadDescriptor(_:_:)``)
/// uses a kept descriptor when there is one, so that at most one is kept per file in the usual case.
/// Kept descriptors are closed when the last connection closes, which is what SQLite's unix VFS
/// does with its own. Reads go through `pread`: a kept descriptor is shared, its offset is not.
///
/// The lock is a leaf of the lock table (docs/architecture.md): nothing else is locked under it.
enum OpenFiles {
    /// A file, by device and inode.
    struct Identity: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    private struct Entry {
        /// The package's connections that have the file open.
        var connections = 0
        /// Reads running on ``kept``.
        var borrowers = 0
        /// The descriptor reads use while connections have the file open.
        var kept: Int32?
        /// Other descriptors given back meanwhile (two reads that opened the file at once).
        var others: [Int32] = []

        var descriptors: [Int32] { (kept.map { [$0] } ?? []) + others }
    }

    private static let entries = Mutex<[Identity: Entry]>([:])

    /// Notes that the connection `handle` has its main database file open; returns the file, to
    /// give to ``connectionClosed(_:)``. Nil for an in-memory or temporary database.
    static func connectionOpened(_ handle: OpaquePointer) -> Identity? {
        guard let name = scb_db_filename(handle, "main"), name.pointee != 0 else { return nil }
        var info = stat()
        guard stat(name, &info) == 0 else { return nil }
        let file = Identity(info)
        entries.withCheckedLock { $0[file, default: Entry()].connections += 1 }
        return file
    }

    /// Notes that a connection noted by ``connectionOpened(_:)`` closed; the last one closes the
    /// descriptors kept for the file.
    static func connectionClosed(_ file: Identity?) {
        guard let file else { return }
        leave(file) { $0.connections -= 1 }
    }

    /// Gives back a descriptor the package opened on a file: closed at once, unless a connection
    /// of this process has the file open, in which case it is kept until the last one closes.
    static func release(_ descriptor: Int32) {
        var info = stat()
        guard descriptor >= 0, fstat(descriptor, &info) == 0 else {
            if descriptor >= 0 { _ = close(descriptor) }
            return
        }
        let file = Identity(info)
        let closeNow: Bool = entries.withCheckedLock { entries in
            guard var entry = entries[file], entry.connections > 0 else { return true }
            if entry.kept == nil { entry.kept = descriptor } else { entry.others.append(descriptor) }
            entries[file] = entry
            return false
        }
        if closeNow { _ = close(descriptor) }
    }

    /// Calls `body` with a read-only descriptor of the file at `path` and its size (read it with
    /// `pread`), or returns nil when the file cannot be opened. The descriptor is one kept for the
    /// file when a connection has it open, else a new one given back through ``release(_:)``.
    /// Opens without waiting (`O_NONBLOCK`: a named pipe opens at once).
    static func withReadDescriptor<R>(_ path: String, _ body: (_ descriptor: Int32, _ size: Int) -> R) -> R? {
        var info = stat()
        if stat(path, &info) == 0 {
            let file = Identity(info)
            let borrowed: Int32? = entries.withCheckedLock { entries in
                guard var entry = entries[file], let kept = entry.kept else { return nil }
                entry.borrowers += 1
                entries[file] = entry
                return kept
            }
            if let borrowed {
                defer { giveBack(file) }
                var current = stat()
                guard fstat(borrowed, &current) == 0 else { return nil }
                return body(borrowed, Int(current.st_size))
            }
        }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { return nil }
        defer { release(descriptor) }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0 else { return nil }
        return body(descriptor, Int(opened.st_size))
    }

    /// Whether a connection of this process has the file at `path` open.
    static func hasConnections(to path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let file = Identity(info)
        return entries.withCheckedLock { ($0[file]?.connections ?? 0) > 0 }
    }

    /// Up to `count` bytes at `offset` of an open file (fewer at its end), or nil when reading fails.
    static func read(_ descriptor: Int32, offset: Int, count: Int) -> [UInt8]? {
        guard count > 0 else { return [] }
        // Read into uninitialised storage: zeroing a buffer that `pread` then overwrites was a
        // `memset` of page 1's size at every opening. Only the bytes read count as initialised,
        // so a read cut short by the end of the file needs no trimming either.
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let got = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if got < 0 {
                    if errno == EINTR { continue }
                    failed = true
                    break
                }
                if got == 0 { break }
                done += got
            }
            initialized = done
        }
        return failed ? nil : bytes
    }

    /// The whole file at `path` (empty when it does not exist or cannot be read), read without
    /// taking the locks of this process's connections to it.
    static func contents(of path: String) -> Data {
        withReadDescriptor(path) { descriptor, size in
            read(descriptor, offset: 0, count: size).map { Data($0) } ?? Data()
        } ?? Data()
    }

    private static func giveBack(_ file: Identity) {
        leave(file) { $0.borrowers -= 1 }
    }

    /// Ends one use of `file` (a connection or a borrowed descriptor, as `ending` counts it); the
    /// last use closes the descriptors kept for it, outside the lock.
    private static func leave(_ file: Identity, _ ending: (inout Entry) -> Void) {
        let closing: [Int32] = entries.withCheckedLock { entries in
            guard var entry = entries[file] else { return [] }
            ending(&entry)
            if entry.connections <= 0 && entry.borrowers == 0 {
                entries[file] = nil
                return entry.descriptors
            }
            entries[file] = entry
            return []
        }
        for descriptor in closing { _ = close(descriptor) }
    }
}
