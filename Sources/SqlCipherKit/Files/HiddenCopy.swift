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
    ///
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` naming `target` when the folder's
    ///   path leaves no room for a hidden name within SQLite's path limit.
    static func path(besides target: String, kind: String) throws -> String {
        let file = DatabasePath.joined(DatabasePath.folder(of: target), prefix(besides: target, kind: kind) + UUID().uuidString)
        if let tooLong = SQLiteConnection.pathTooLong(file) {
            throw SqlCipherError.cannotOpen(
                path: target, reason: "the copy is written first under a hidden name beside it, \(file), and " + tooLong)
        }
        return file
    }

    /// How every hidden name of this kind beside `target` begins: `.<name>.<kind>-`, with the
    /// target's name cut short (at a whole character) where the whole hidden name, its `-journal`
    /// included, would be longer than a file name may be in the folder or its full path longer
    /// than SQLite opens. A target whose name was legal and long (230 bytes, say) could not be
    /// copied: the hidden name, 45 bytes longer, failed with "File name too long", naming a file
    /// the caller never gave, or its `-wal` failed with SQLite's bare "unable to open database
    /// file". The UUID after the prefix keeps the names apart; the clean-up of dead copies
    /// (``removeDead(besides:kind:)``) works out the same prefix.
    static func prefix(besides target: String, kind: String) -> String {
        let folder = DatabasePath.folder(of: target)
        let fixed = 1 + 1 + kind.utf8.count + 1 + 36
        let full = (folder.hasPrefix("/") ? folder : FileManager.default.currentDirectoryPath + "/" + folder) + "/"
        let room = min(DatabasePath.maximumNameBytes(in: folder) - DatabasePath.longestCompanionSuffix.utf8.count,
                       SQLiteConnection.maximumPathBytes - full.utf8.count) - fixed
        var name = ""
        var bytes = 0
        for scalar in DatabasePath.lastComponent(of: target).unicodeScalars {
            bytes += String(scalar).utf8.count
            guard bytes <= room else { break }
            name.unicodeScalars.append(scalar)
        }
        return "." + name + "." + kind + "-"
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
        let start = prefix(besides: target, kind: kind)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(start) && UUID(uuidString: String(name.dropFirst(start.count))) != nil {
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

    /// The kinds of copy written under a hidden name: hot backups and exports (the encrypted copies
    /// of `encrypt(plaintextAt:to:key:)` among them).
    static let kinds = ["backup", "export"]

    /// Removes what dead writers of every kind left beside `target` (``removeDead(besides:kind:)``).
    /// A writer killed between the two steps of ``publish(_:as:fail:)`` left its complete copy with
    /// two names, the target's and the hidden one, which every writable opening of the target
    /// refuses (DatabaseOpener.refuseOtherNames); that opening calls this first.
    static func removeDeadCopies(besides target: String) {
        for kind in kinds { removeDead(besides: target, kind: kind) }
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
