import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a conversion removes a database's files and puts a new file in place of an old one:
/// durably (`fsync` of the file and of its folder) and atomically (one `rename`), so that a crash
/// leaves either the old file or the complete new one.
enum FileReplacement {
    /// Removes a database file and its journal files, when they exist.
    static func removeDatabaseFiles(_ path: String) throws {
        for file in [path, path + "-wal", path + "-shm", path + "-journal"]
        where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.removeItem(atPath: file)
        }
    }

    /// Puts `replacement` at `path` in one atomic step, after making it durable; keeps the old
    /// file as `backup` (a hard link made before the switch) when asked.
    static func replace(_ path: String, with replacement: String, backup: String?) throws {
        func fail(_ reason: String) -> SqlCipherError {
            .conversionFailed(source: path, target: replacement, reason: reason)
        }
        // A stale WAL beside the original would be replayed into the new file. The original's
        // connection was closed and checkpointed, so one still there belongs to someone else.
        if let wal = FileHeader(path: path + "-wal"), wal.fileSize > 0 {
            try? removeDatabaseFiles(replacement)
            throw fail("\(path)-wal is not empty: another connection is using the file; close it first")
        }
        if FileManager.default.fileExists(atPath: path + "-journal") {
            try? removeDatabaseFiles(replacement)
            throw fail("\(path)-journal exists: another connection is writing to the file; close it first")
        }
        let folder = (path as NSString).deletingLastPathComponent
        do {
            // The new file gets the original's permissions (SQLite creates files with the umask's).
            var original = stat()
            if stat(path, &original) == 0 {
                guard chmod(replacement, original.st_mode & 0o7777) == 0 else { throw posixError("chmod \(replacement)") }
            }
            try fsyncPath(replacement, directory: false)
            try fsyncPath(folder.isEmpty ? "." : folder, directory: true)
            if let backup {
                guard link(path, backup) == 0 else { throw posixError("link \(path) to \(backup)") }
                try fsyncPath(folder.isEmpty ? "." : folder, directory: true)
            }
        } catch {
            try? removeDatabaseFiles(replacement)
            throw fail("\(error)")
        }
        guard rename(replacement, path) == 0 else {
            let error = posixError("rename \(replacement) to \(path)")
            try? removeDatabaseFiles(replacement)
            if let backup { unlink(backup) }
            throw fail("\(error)")
        }
        // After the rename the new file is in place; a failing folder sync can only mean that the
        // switch may not survive a power loss, which leaves the old file: still no data lost.
        _ = try? fsyncPath(folder.isEmpty ? "." : folder, directory: true)
        for stale in [path + "-wal", path + "-shm"] { unlink(stale) }
    }

    /// `fsync` of a file or folder (a folder's entry list is what makes a rename durable).
    static func fsyncPath(_ path: String, directory: Bool) throws {
        let fd = open(path, directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY)
        guard fd >= 0 else { throw posixError("open \(path) for fsync") }
        defer { closeDescriptor(fd) }
        guard fsync(fd) == 0 else { throw posixError("fsync \(path)") }
    }

    private static func closeDescriptor(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    private static func posixError(_ what: String) -> SqlCipherError {
        .cannotOpen(path: what, reason: String(cString: strerror(errno)))
    }
}
