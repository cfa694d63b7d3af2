import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a new copy (a hot backup, an export) is written: under a hidden name beside its target,
/// `.<name>.<kind>-<UUID>` in the same folder, and given the target's name only once complete,
/// synced and verified, so that the target's name never holds a partial copy, even after a crash.
///
/// A process killed while writing cannot remove its hidden file. Every writer holds an exclusive
/// `flock` on its hidden file until it ends (``own(_:fail:)``), and the lock dies with its
/// process, so the next copy to the same target can prove a leftover dead and remove it
/// (``removeDead(besides:kind:)``); a live writer's file, in this process or another, is left.
enum HiddenCopy {
    /// A new hidden name beside `target` for a copy of this kind (`backup`, `export`).
    static func path(besides target: String, kind: String) -> String {
        let name = "." + DatabasePath.lastComponent(of: target) + "." + kind + "-" + UUID().uuidString
        return DatabasePath.joined(DatabasePath.folder(of: target), name)
    }

    /// Takes the `flock` that marks the just-created `file` as a live writer's, and checks that
    /// the name still leads to it: a clean-up that came between the creation and the lock took it
    /// for a dead one's. The caller closes the descriptor once no connection of its own has the
    /// file open (a close drops the process's POSIX locks on the file).
    static func own(_ file: String, fail: (String) -> SqlCipherError) throws -> Int32 {
        let descriptor = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw fail("its work file \(file) could not be opened (\(String(cString: strerror(errno))))")
        }
        var result = flock(descriptor, LOCK_EX | LOCK_NB)
        while result != 0 && errno == EINTR { result = flock(descriptor, LOCK_EX | LOCK_NB) }
        var locked = stat(), named = stat()
        // A file system without flock (EINVAL, ENOLCK) lets the copy go on; its leftovers are
        // then never taken for dead ones, since nothing can prove it.
        guard result == 0 || (errno != EWOULDBLOCK && errno != EAGAIN), fstat(descriptor, &locked) == 0,
              lstat(file, &named) == 0, named.st_dev == locked.st_dev, named.st_ino == locked.st_ino else {
            _ = close(descriptor)
            throw fail("its work file \(file) was removed or taken as it was created, by another copy to the same "
                + "target; try again")
        }
        return descriptor
    }

    /// Removes the hidden files of this kind that dead writers left beside `target`: a
    /// `.<name>.<kind>-<UUID>` regular file that no process holds the `flock` of, with its
    /// `-journal`, `-wal` and `-shm`. Never throws: a file that cannot be proven dead is left.
    static func removeDead(besides target: String, kind: String) {
        let folder = DatabasePath.folder(of: target)
        let prefix = "." + DatabasePath.lastComponent(of: target) + "." + kind + "-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) && UUID(uuidString: String(name.dropFirst(prefix.count))) != nil {
            let file = DatabasePath.joined(folder, name)
            let descriptor = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { _ = close(descriptor) }
            var locked = stat(), named = stat()
            guard fstat(descriptor, &locked) == 0, (locked.st_mode & S_IFMT) == S_IFREG,
                  flock(descriptor, LOCK_EX | LOCK_NB) == 0,
                  lstat(file, &named) == 0, named.st_dev == locked.st_dev, named.st_ino == locked.st_ino else { continue }
            // With its -wal and -shm too: a copy killed while its verification had it open in WAL
            // mode left them, and nothing else ever removed them.
            try? FileReplacement.removeDatabaseFiles(file)
        }
    }

    /// Gives the complete, verified copy at `file` the name `target`: syncs it, links it there
    /// (which fails, rather than replaces, when a file appeared there meanwhile), removes the
    /// hidden name and syncs the folder.
    static func publish(_ file: String, as target: String, fail: (String) -> SqlCipherError) throws {
        try FileReplacement.fsyncPath(file, directory: false)
        guard link(file, target) == 0 else {
            throw fail("\(target) could not be created (\(String(cString: strerror(errno)))); it may have appeared "
                + "while the copy was written: remove it or choose another path")
        }
        unlink(file)
        try FileReplacement.fsyncPath(DatabasePath.folder(of: target), directory: true)
    }
}
