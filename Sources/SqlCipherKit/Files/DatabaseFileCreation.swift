import Foundation
import Synchronization

/// The permissions a new database file is created with (its `-wal`, `-shm` and `-journal` get the
/// same: SQLite copies them from the database file). The default, ``ownerOnly`` (`0o600`), keeps
/// an encrypted store, its size and its timestamps, nobody else's business; the process's umask
/// can only take permissions away. An existing file keeps its permissions.
///
/// ```swift
/// var configuration = DatabaseConfiguration()
/// configuration.filePermissions = 0o640   // the group may read
/// let db = try Database(path: path, key: passphrase, configuration: configuration)
/// ```
public struct FilePermissions: Sendable, Hashable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// The permission bits, as `chmod` takes them (`0o600`); only the lowest nine bits may be set.
    public let rawValue: UInt16

    /// Read and write for the file's owner only: `0o600`.
    public static let ownerOnly = FilePermissions(rawValue: 0o600)

    /// Permissions from their bits (`0o640`); bits beyond `0o777` are refused when a file is created.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Permissions from an octal literal: `0o640`.
    public init(integerLiteral value: UInt16) { self.rawValue = value }

    /// The bits in octal, as `chmod` writes them: `0o600`.
    public var description: String { "0o" + String(rawValue, radix: 8) }

    /// The bits for `open(2)`, or a typed error for bits that are not permissions.
    func mode(path: String) throws -> mode_t {
        guard rawValue & ~0o777 == 0 else {
            throw SqlCipherError.cannotOpen(
                path: path, reason: "file permissions \(self) are not permission bits (setuid, setgid, sticky or "
                    + "beyond); give at most 0o777, for example 0o600")
        }
        return mode_t(rawValue)
    }
}

/// The file a database path names, resolved once, at open (<doc:Security>, "Paths and permissions").
///
/// A symbolic link as the last component is followed to its target, also when the target does not
/// exist yet (a dangling link: the target is created). SQLite names the companion files after the
/// path it is given: resolved here, `-wal`, `-shm` and `-journal` lie beside the file that holds
/// the pages, and every reader of the package (the ciphertext proof, the salt lookup) reads those.
/// Links among the folders need no resolving: they lead every name to the same folder.
enum DatabasePath {
    /// The most links followed, as Linux's own limit (`MAXSYMLINKS`).
    static let maximumLinks = 40

    /// Refuses a path no file can be opened by, at every public entry that takes a path (an
    /// opening, a conversion, an export, a backup, a plaintext import):
    /// - a NUL character: C reads a path only up to it, so `"a.db\0x"` names the file `a.db`.
    ///   Checked at the openings and the copies' targets only, it let `encryptInPlace` and
    ///   `upgradeFromSqlCipher3` convert, and `importPlaintext` read, the file named by the
    ///   path's first part (found by the attack review);
    /// - a SQLite `file:` URI with a `key`, `hexkey` or `textkey` parameter: a path is a file name
    ///   here, never a URI (<doc:Security>), so `file:app.db?key=secret` named a file of that
    ///   name, created with the key in its name, and every error repeated it (found by the attack
    ///   review). The error shows the path with the key masked.
    static func refuseUnusable(_ path: String) throws {
        guard !path.utf8.contains(0) else { throw SqlCipherError.cannotOpen(path: path, reason: nulReason) }
        if let masked = keyURI(path) { throw SqlCipherError.cannotOpen(path: masked, reason: keyURIReason) }
    }

    /// Why a path with a NUL is refused (``refuseUnusable(_:)``).
    static let nulReason = "the path contains a NUL character; remove it"

    /// Why a `file:` URI with a key parameter is refused (``refuseUnusable(_:)``).
    static let keyURIReason = "it is a SQLite file: URI with a key parameter, and SqlCipherKit takes a file path, never a "
        + "URI, and the key separately: give the path alone (app.db) and the key as the key: argument. Nothing was "
        + "created and the key was not used"

    /// `path` with its key parameters masked when it is a `file:` URI that has one, or nil.
    static func keyURI(_ path: String) -> String? {
        guard path.hasPrefix("file:") else { return nil }
        let masked = SQLRedaction.fileName(path)
        return masked == path ? nil : masked
    }

    /// The reason of a ``SqlCipherError/cannotOpen(path:reason:)`` for a `folder` that cannot hold
    /// the file, the same from every entry point (an opening, a creation, an export): a file where
    /// the folder or one above it should be ("create it first" sent the user to do what cannot be
    /// done), or a missing folder. A `~` in the path is not the home folder: the shell expands it,
    /// a program does not, so `Database(path: "~/app.db")` looked for a folder named `~` in the
    /// working folder, and "create it first" would have made one.
    static func missingFolderReason(_ folder: String) -> String {
        var info = stat()
        if stat(folder, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR {
            return "\(folder) is a file, not a folder; give a path inside a folder"
        }
        if errno == ENOTDIR {
            return "a part of the folder \(folder) is a file, not a folder; give a path inside a folder"
        }
        let reason = "the folder \(folder) does not exist; create it first"
        guard folder.split(separator: "/").contains(where: { $0.hasPrefix("~") }) else { return reason }
        return reason + " (a \"~\" in a path names a folder called \"~\", not the home folder: only a shell "
            + "expands it; expand it in the program, for example with NSString(string: path).expandingTildeInPath "
            + "or FileManager.default.homeDirectoryForCurrentUser)"
    }

    // MARK: Components
    // The package's one way to take a path apart. Foundation's path methods of `NSString` trap on
    // Linux for a relative path of one character (`deletingLastPathComponent` of "x", "é", "x/"
    // or "."), which made `Database(path: "x")`, `backup(to: "x")` and every other entry given
    // such a path end the process.

    /// The folder that holds `path`, `.` for a bare file name: Foundation's
    /// `deletingLastPathComponent` (runs of `/` count as one, a trailing `/` is dropped, `/x`
    /// gives `/`), with an empty answer read as the working folder, and `/` for a path of
    /// slashes only.
    ///
    /// Worked out on the UTF-8 bytes (`/` is one byte in UTF-8 and never part of another
    /// character): every opening asks for the folder once or twice (the creation lock), and
    /// `NSString`'s version cost about 45,000 instructions a call, 10% of an unencrypted open
    /// (docs/performance.md, "Opening"). It also trapped on a path of one character (`x`, `a/`),
    /// so `Database(path: "x")` in the working folder crashed the process.
    static func folder(of path: String) -> String {
        let slash = UInt8(ascii: "/")
        let bytes = path.utf8
        let start = bytes.startIndex
        // Trailing slashes go; a path of nothing but slashes is the root.
        var end = bytes.endIndex
        while end > start && bytes[bytes.index(before: end)] == slash { end = bytes.index(before: end) }
        if end == start { return bytes.isEmpty ? "." : "/" }
        // Before the last component, and before the run of slashes that ends the folder's name.
        guard var parentEnd = bytes[..<end].lastIndex(of: slash) else { return "." }
        while parentEnd > start && bytes[bytes.index(before: parentEnd)] == slash { parentEnd = bytes.index(before: parentEnd) }
        if parentEnd == start { return "/" }
        // Decoded from the bytes, not sliced as characters: a slice of a String rounds its bounds
        // to whole characters.
        let parent = bytes[..<parentEnd]
        var previous: UInt8 = 0
        guard parent.contains(where: { byte in
            defer { previous = byte }
            return byte == slash && previous == slash
        }) else { return String(decoding: parent, as: UTF8.self) }
        // Runs of `/` inside count as one, as Foundation writes them.
        var compressed: [UInt8] = []
        for byte in parent where byte != slash || compressed.last != slash { compressed.append(byte) }
        return String(decoding: compressed, as: UTF8.self)
    }

    /// The last component of `path`, as `lastPathComponent` gives it; trailing slashes are ignored.
    static func lastComponent(of path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return trimmed }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// `name` inside `folder` (``folder(of:)``'s answer, or empty for `name` alone).
    static func joined(_ folder: String, _ name: String) -> String {
        folder.isEmpty ? name : folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// `path` without its trailing slashes, or "/" when it is made of slashes only.
    private static func trimmingTrailingSlashes(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }

    // MARK: Names of files kept beside a database

    /// Why a new database file cannot be made at `path`, or nil: its name ends like a companion
    /// file's (`-wal`, `-shm`, `-journal`), so that SQLite takes it for another database's
    /// companion and deletes it at the other database's next opening or write (ForeignCompanion.swift).
    /// Every way of making a new database file asks this: an opening that creates one, an export,
    /// a backup, a conversion's target.
    static func companionNameReason(_ path: String) -> String? {
        guard let suffix = ["-wal", "-shm", "-journal"].first(where: { path.hasSuffix($0) }) else { return nil }
        return "a name ending in \(suffix) is the companion file SQLite keeps beside a database and may delete; choose "
            + "a name without that ending"
    }

    /// What SQLite appends to a database's name for its companion files; `-journal` is the longest.
    static let longestCompanionSuffix = "-journal"

    /// The most bytes a file name may have in `folder` (`pathconf(_PC_NAME_MAX)`, 255 on Linux's
    /// file systems; 255 when the folder cannot say).
    static func maximumNameBytes(in folder: String) -> Int {
        let answer = pathconf(folder, Int32(_PC_NAME_MAX))
        return answer > 0 ? answer : 255
    }

    /// Why a file named like the last component of `path` followed by `suffix` cannot be created
    /// beside it, or nil: together they are longer than a name may be in the folder. A file name
    /// that the file system accepts can still be too long for the names kept beside it: SQLite's
    /// `-journal`, `-wal` and `-shm`, and a conversion's work files. Such a name failed at the first
    /// write with SQLite's bare "unable to open database file" (error 14), or a conversion failed
    /// naming a work file the caller never gave, and an export or backup to a legal name could not
    /// be made at all. `files` names the files kept beside the database, for the message; the
    /// reason ends in what to rename the file to.
    static func nameTooLong(_ path: String, suffix: String, files: String) -> String? {
        let name = lastComponent(of: path).utf8.count
        let limit = maximumNameBytes(in: folder(of: path))
        guard name + suffix.utf8.count > limit else { return nil }
        return "its name is too long for the files kept beside it: it is \(name) bytes, and \(files) named after it "
            + "with \"\(suffix)\" added, \(name + suffix.utf8.count) bytes, longer than the \(limit) bytes a file name "
            + "may have there: "
            + "give it a name of at most \(limit - suffix.utf8.count) bytes"
    }

    /// The path of the file `path` names, after following symbolic links in its last component,
    /// made absolute (``absolute(_:)``). Unchanged for `:memory:`.
    ///
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` for a loop of links or more than
    ///   ``maximumLinks`` of them.
    static func resolve(_ path: String) throws -> String {
        guard path != ":memory:", !path.isEmpty, !path.utf8.contains(0) else { return path }
        var current = path
        for _ in 0...maximumLinks {
            var info = stat()
            guard lstat(current, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else { return absolute(current) }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count >= 0 else { return absolute(current) }
            let target = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if target.hasPrefix("/") {
                current = target
            } else {
                current = joined(folder(of: current), target)
            }
        }
        throw SqlCipherError.cannotOpen(
            path: path, reason: "it is a symbolic link that leads through more than \(maximumLinks) links (a loop?); "
                + "point it at the database file")
    }
}

extension DatabasePath {
    /// `path` from the root: a relative path after the working folder as it is now, at open.
    ///
    /// A `Database` or pool keeps the path it opened, and works on it by name later: a pool opens
    /// readers and reads the salt, a rekey proves the new key on a fresh connection, a conversion
    /// or integrity check reads the files. Kept relative, every later use followed the process's
    /// working folder: after a `chdir`, a pool's reads failed as if the file had been replaced, and
    /// a rekey proved its key on a new, empty file it created in the new folder, then reported the
    /// rekey failed and closed the database. The working folder at open is the one the caller meant.
    /// Unchanged when the working folder cannot be named (it was removed).
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), path != ":memory:", !path.isEmpty else { return path }
        let folder = FileManager.default.currentDirectoryPath
        guard folder.hasPrefix("/") else { return path }
        return joined(folder, path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
    }
}

/// The device and inode of a database file: who opened a file can tell whether the path still
/// names it, or another file was renamed over it (DatabasePool's readers check this).
struct FileIdentity: Sendable, Equatable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the file at `path` now, or nil when there is none.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// Throws unless `path` still names this file.
    func check(path: String) throws {
        guard FileIdentity(path: path) != self else { return }
        throw SqlCipherError.cannotOpen(
            path: path, reason: "the database file was replaced (another file renamed over it, or it was deleted) "
                + "after the pool opened it; a connection to the new file would use the old file's -wal and -shm. "
                + "Close the pool and open it again")
    }
}

/// The right to create a database file, and the record of what a call created
/// (<doc:CreationProof>, "Creating a file: the creation lock").
///
/// Every opener of the package that may create a file — a path that is missing or holds an empty
/// file — takes an exclusive `flock` on the database's folder before it looks at the file, and
/// keeps it until the new database is keyed, proven ciphertext and checkpointed, so that its salt
/// is in the file's first 16 bytes. A second opener of the same new path, in this process or
/// another, waits, and then finds a finished database with the winner's salt. An opener of an
/// existing non-empty file, or a read-only one, waits for the folder's creators to finish
/// (``waitForCreators(of:)``) but holds no lock while it opens.
///
/// Only a call that proved it created the file — `open(O_CREAT | O_EXCL)` succeeded — may remove
/// it; only a call holding the lock on a file that was missing or empty may zero or truncate what
/// it wrote, and remove the companion files that appeared while it held the lock. A call that
/// found a file proves nothing, and removes nothing.
final class CreationClaim: Sendable {
    /// How long an opener waits for another to finish creating a database in the same folder.
    /// Long enough for a key derivation with many iterations on a loaded machine.
    static let timeoutSeconds = 30.0

    /// The resolved path of the database file.
    let path: String
    /// Its folder, whose lock this claim takes.
    private let folder: String
    /// The folder's descriptor, holding the lock (-1 when none is held), and whether this call
    /// created the file. Behind a mutex only so that a pool can hand the claim to the writer's
    /// actor; one opening uses it at a time.
    private let state = Mutex<(folderDescriptor: Int32, createdFile: Bool)>((-1, false))
    /// Whether the file was missing or empty once the lock was held: what it holds at the end of
    /// the opening, this call wrote.
    let foundEmpty: Bool
    /// Whether this call created the file (an exclusive create succeeded).
    var createdFile: Bool { state.withCheckedLock { $0.createdFile } }
    /// The companion files that were there when the lock was taken.
    private let companionsBefore: Set<String>

    static func companions(of path: String) -> [String] { [path + "-wal", path + "-shm", path + "-journal"] }

    /// Takes the lock for `path` (resolved) when the file is missing or empty; otherwise claims
    /// nothing.
    ///
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` when the folder is missing or cannot
    ///   be read, and when another opener holds the lock for longer than ``timeoutSeconds``.
    init(path: String) throws {
        self.path = path
        folder = DatabasePath.folder(of: path)
        guard path != ":memory:", Self.isMissingOrEmpty(path) else {
            foundEmpty = false
            companionsBefore = []
            if path != ":memory:" { try Self.waitForCreators(of: path) }
            return
        }
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor >= 0, Self.holding(descriptor)?.thread == Self.currentThread {
            close(descriptor)
            throw Self.waitForItself(folder: folder, path: path)
        }
        guard descriptor >= 0 else {
            let error = errno
            if error == ENOENT || error == ENOTDIR {
                throw SqlCipherError.cannotOpen(path: path, reason: DatabasePath.missingFolderReason(folder))
            }
            // A folder that can be written but not read (mode 0300): no lock to take, but the
            // exclusive create still proves which call made the file, as without flock below.
            foundEmpty = Self.isMissingOrEmpty(path)
            companionsBefore = Self.existing(Self.companions(of: path))
            return
        }
        let deadline = Date().addingTimeInterval(Self.timeoutSeconds)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            if error == EINTR { continue }
            guard error == EWOULDBLOCK else {
                // A file system without flock (ENOLCK, EINVAL): the exclusive create still proves
                // which call created the file, so removal stays safe; only the wait is lost.
                close(descriptor)
                foundEmpty = Self.isMissingOrEmpty(path)
                companionsBefore = Self.existing(Self.companions(of: path))
                return
            }
            if Date() >= deadline {
                close(descriptor)
                throw SqlCipherError.cannotOpen(
                    path: path, reason: "another connection has been creating a database in \(folder) for more than "
                        + "\(Int(Self.timeoutSeconds)) seconds (it holds SqlCipherKit's creation lock on the folder); "
                        + "try again, or look for a process stuck while opening a database there")
            }
            usleep(2000)
        }
        Self.noteHeld(path, folder: descriptor)
        state.withCheckedLock { $0.folderDescriptor = descriptor }
        foundEmpty = Self.isMissingOrEmpty(path)
        companionsBefore = Self.existing(Self.companions(of: path))
        // Nothing to create any more (another opener finished meanwhile): the lock is not needed.
        if !foundEmpty { release() }
    }

    deinit { release() }

    /// Waits until no opener in this process or another is creating a database in `path`'s
    /// folder (a shared `flock` on it, released at once), for an opener that found the file
    /// already there, or opens it read-only. Another opener may have made the file and still be
    /// proving it (its creation probe is in the file): the file is not finished until its creator
    /// lets the lock go, and an opener that went ahead could take the probe for the leftover of a
    /// crash and drop it under the creator. Nothing is waited for where the folder cannot be read
    /// or does not support `flock`.
    ///
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` when a creator holds the lock for
    ///   longer than ``timeoutSeconds``.
    static func waitForCreators(of path: String) throws {
        let folder = DatabasePath.folder(of: path)
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }  // releases the shared lock
        if let holding = holding(descriptor) {
            // This process holds the folder's lock, for another file: no other process can be
            // creating there, and this one is not creating this file. Waiting would wait for
            // itself: a new database's prepareConnection that opened another database of the
            // folder waited the whole timeout and failed ("creating a database … for more than
            // 30 seconds").
            if holding.path != path { return }
            // This very file, being created by this thread: an opening from inside its own opening.
            if holding.thread == currentThread { throw waitForItself(folder: folder, path: path) }
        }
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while flock(descriptor, LOCK_SH | LOCK_NB) != 0 {
            let error = errno
            if error == EINTR { continue }
            guard error == EWOULDBLOCK else { return }
            if Date() >= deadline {
                throw SqlCipherError.cannotOpen(
                    path: path, reason: "another connection has been creating a database in \(folder) for more than "
                        + "\(Int(timeoutSeconds)) seconds (it holds SqlCipherKit's creation lock on the folder); "
                        + "try again, or look for a process stuck while opening a database there")
            }
            usleep(2000)
        }
    }

    /// Whether this claim holds the lock.
    var isLocked: Bool { state.withCheckedLock { $0.folderDescriptor >= 0 } }

    /// Creates the file when it is missing, with `permissions`, and records that this call did.
    /// A file that appears meanwhile (a program that does not take the lock) is left to the
    /// caller as found.
    func createIfMissing(permissions: FilePermissions) throws {
        let mode = try permissions.mode(path: path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        if descriptor >= 0 {
            close(descriptor)
            state.withCheckedLock { $0.createdFile = true }
            return
        }
        let error = errno
        guard error != EEXIST else { return }
        let folder = DatabasePath.folder(of: path)
        throw SqlCipherError.cannotOpen(
            path: path, reason: error == EACCES || error == EROFS || error == EPERM
                ? "the folder \(folder) is not writable"
                : "the file cannot be created (\(String(cString: strerror(error))))")
    }

    /// Whether this call may zero and truncate the database file and its companions: it created
    /// the file, or held the lock on an empty one, so everything in them is its own.
    var mayWipe: Bool { createdFile || (isLocked && foundEmpty) }

    /// The files this call may remove when its open fails: the database file if it created it,
    /// and the companions that appeared while it held the lock (or after its exclusive create).
    var removableFiles: [String] {
        guard mayWipe else { return [] }
        let companions = Self.companions(of: path).filter { !companionsBefore.contains($0) }
        return createdFile ? [path] + companions : companions
    }

    /// Whether what ``mayWipe`` and ``removableFiles`` grant still holds after this call's open
    /// failed with `error`: false when `error` says that the file's first page is not one this call
    /// could have written (it does not open with the call's key: `keyFailed`, `notADatabase`,
    /// SQLite's error 26; or, for a plaintext opening, `notPlaintextDatabase`). Every page 1 an
    /// opening writes opens with its own key, so another program wrote this one: a program that
    /// does not take the creation lock (a plaintext libsqlite3, the `sqlcipher` shell) between the
    /// exclusive create and the first read. The file and the companions beside it (that program's
    /// `-journal`, which may be hot) hold its data, and are not this call's to remove or wipe,
    /// though it created the file.
    func stillOwnsItsFiles(after error: any Error) -> Bool {
        switch error {
        case SqlCipherError.keyFailed, SqlCipherError.notPlaintextDatabase, SqlCipherError.notADatabase:
            return false
        case SqlCipherError.sqlite(let code, _, _, _):
            return code & 0xFF != 26
        default:
            return true
        }
    }

    /// Releases the lock (once the new database is finished, or the opening failed).
    func release() {
        let descriptor = state.withCheckedLock { state -> Int32 in
            defer { state.folderDescriptor = -1 }
            return state.folderDescriptor
        }
        guard descriptor >= 0 else { return }
        // Forgotten first: while listed, the lock is held (``waitForCreators(of:)`` relies on it).
        Self.noteReleased(folder: descriptor)
        close(descriptor)  // closing the only descriptor releases the flock
    }

    /// A folder, by device and inode: one folder has many spellings (links, `..`).
    private struct FolderKey: Hashable {
        let device: UInt64
        let inode: UInt64

        init?(_ descriptor: Int32) {
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// Which file of a folder this process is creating, and on which thread: the claim that holds
    /// the folder's lock (a `flock` is exclusive between the descriptors of one process too, so
    /// there is one per folder).
    private struct Holding {
        let path: String
        let thread: UInt
    }

    /// The folders whose creation lock this process holds: listed from the moment the lock is
    /// taken until just before it is released.
    private static let heldFolders = Mutex<[FolderKey: Holding]>([:])

    private static func noteHeld(_ path: String, folder descriptor: Int32) {
        guard let key = FolderKey(descriptor) else { return }
        let holding = Holding(path: path, thread: currentThread)
        heldFolders.withCheckedLock { $0[key] = holding }
    }

    private static func noteReleased(folder descriptor: Int32) {
        guard let key = FolderKey(descriptor) else { return }
        _ = heldFolders.withCheckedLock { $0.removeValue(forKey: key) }
    }

    /// The claim of this process that holds the lock of the folder open at `descriptor`, if any.
    private static func holding(_ descriptor: Int32) -> Holding? {
        guard let key = FolderKey(descriptor) else { return nil }
        return heldFolders.withCheckedLock { $0[key] }
    }

    /// The calling thread, as ``Holding`` records it.
    private static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    /// The refusal of an opening that needs `folder`'s creation lock (to create a file, or to
    /// open the very file being created) while its own thread holds it: an opening that creates a
    /// database runs its `prepareConnection` (and the observers and functions its statements
    /// call) with the lock held, and a database opened from there waited for its own thread for
    /// ``timeoutSeconds`` (30 s), then blamed "another connection" and "a process stuck" (found
    /// by the attack review).
    private static func waitForItself(folder: String, path: String) -> SqlCipherError {
        SqlCipherError.cannotOpen(
            path: path, reason: "this thread is creating a database in \(folder), and holds SqlCipherKit's creation "
                + "lock on the folder until that opening ends, so this opening would wait for itself. It was most likely "
                + "called from inside that opening (its DatabaseConfiguration.prepareConnection, a trace observer or an "
                + "SQL function): open this database before or after the other one, not from inside its opening")
    }

    private static func isMissingOrEmpty(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return errno == ENOENT }
        return (info.st_mode & S_IFMT) == S_IFREG && info.st_size == 0
    }

    private static func existing(_ paths: [String]) -> Set<String> {
        Set(paths.filter { access($0, F_OK) == 0 || isLink($0) })
    }

    private static func isLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}
