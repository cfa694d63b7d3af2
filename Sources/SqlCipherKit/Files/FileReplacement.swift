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
    /// Removes a database file and its journal files, when they exist: the leftovers of a work
    /// file (a conversion killed before its rename) or a partial copy.
    ///
    /// Only files and links are removed, never what they point to: a directory (or pipe, socket,
    /// device) under one of these names is someone else's and stays, with a typed error naming it,
    /// because removing a directory recursively under a name the package merely expects to be its
    /// own would lose data.
    static func removeDatabaseFiles(_ path: String) throws {
        var refusal: Error?
        for file in [path, path + "-wal", path + "-shm", path + "-journal"] {
            do { try removeFile(file) } catch { refusal = refusal ?? error }
        }
        if let refusal { throw refusal }
    }

    /// Removes one regular file or symbolic link (the link, not its target) when it exists; throws
    /// ``SqlCipherError/cannotOpen(path:reason:)`` for anything else there, which is left as it is.
    /// The package's one way to remove a file it wrote, so that no clean-up can take a directory.
    static func removeFile(_ file: String) throws {
        var info = stat()
        guard lstat(file, &info) == 0 else { return }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG || type == S_IFLNK else {
            throw SqlCipherError.cannotOpen(
                path: file, reason: "it is \(SnapshotFiles.specialKind(mode: info.st_mode) ?? "not a regular file"), "
                    + "where SqlCipherKit keeps a work file of its own; it was left as it is. Move it away and try again")
        }
        guard unlink(file) == 0 || errno == ENOENT else {
            throw SqlCipherError.cannotOpen(
                path: file, reason: "the leftover file cannot be removed (\(String(cString: strerror(errno)))); "
                    + "remove it, or make its folder writable")
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
        let folder = DatabasePath.folder(of: path)
        do {
            // The new file gets the original's permissions (SQLite creates files with the umask's).
            var original = stat()
            if stat(path, &original) == 0 {
                guard chmod(replacement, original.st_mode & 0o7777) == 0 else { throw posixError("chmod \(replacement)") }
            }
            try fsyncPath(replacement, directory: false)
            try fsyncPath(folder, directory: true)
            if let backup {
                guard link(path, backup) == 0 else { throw posixError("link \(path) to \(backup)") }
                try fsyncPath(folder, directory: true)
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
        _ = try? fsyncPath(folder, directory: true)
        for stale in [path + "-wal", path + "-shm"] { unlink(stale) }
    }

    /// `fsync` of a file or folder (a folder's entry list is what makes a rename durable).
    static func fsyncPath(_ path: String, directory: Bool) throws {
        let fd = open(path, directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY)
        guard fd >= 0 else { throw posixError("open \(path) for fsync") }
        // Given back through OpenFiles: a connection of this process may have the file open.
        defer { OpenFiles.release(fd) }
        guard fsync(fd) == 0 else { throw posixError("fsync \(path)") }
    }

    private static func posixError(_ what: String) -> SqlCipherError {
        .cannotOpen(path: what, reason: String(cString: strerror(errno)))
    }
}
