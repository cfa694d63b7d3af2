import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ``Database/encryptInPlace(path:key:cipher:keepBackup:progress:)``: export
/// beside the original, verify, `fsync`, optionally keep the original as a hard link, then one
/// `rename` over the original (the contract and its crash guarantees are documented there).
enum InPlaceEncryption {
    /// Encrypts the plaintext file at `path` where it is; returns the backup's path when one was kept.
    static func run(path: String, key: DatabaseKey, cipher: CipherSettings, keepBackup: Bool,
                    progress: (@Sendable (DatabaseProgress) -> Void)?) throws -> String? {
        try DatabasePath.refuseUnusable(path)
        let material = try key.resolved(for: cipher, library: SqlCipherLibrary.shared).material()
        // Through a symbolic link, the file to encrypt is its target: renaming the new file over
        // the link would leave the plaintext target on disk and the link gone.
        let path = SnapshotFiles.resolvedPath(path)
        let temporary = path + workSuffix
        // Before anything is made: a name with no room for the work file's -journal failed midway
        // with SQLite's bare "unable to open database file", naming the work file.
        if let tooLong = DatabasePath.nameTooLong(
            path, suffix: workSuffix + DatabasePath.longestCompanionSuffix,
            files: "encryptInPlace writes the encrypted file and its -journal beside it") {
            throw SqlCipherError.conversionFailed(
                source: path, target: path,
                reason: tooLong + ", or make an encrypted copy under a shorter name with "
                    + "Database.encrypt(plaintextAt:to:key:). The file was not changed")
        }
        let backup = path + ".plaintext-backup"
        // Before anything is removed or opened: a second conversion of the file waits for nothing
        // and removes nothing of this one's (ConversionLock).
        let lock = try ConversionLock(path: path)
        defer { lock.release() }
        // The backup of a call interrupted between making it and the switch: kept when a backup
        // is asked for (it is what this call would make), named when one is not.
        let leftBackup = isInterruptedBackup(backup, of: path)
        // lstat: a link there, even a dangling one, takes the name (link(2) would fail at the end).
        var existing = stat()
        if keepBackup && !leftBackup && lstat(backup, &existing) == 0 {
            throw SqlCipherError.conversionFailed(
                source: path, target: path,
                reason: "a backup already exists at \(backup); move it away first")
        }
        try refuseOtherNames(path, allowing: keepBackup && leftBackup ? backup : nil)
        try FileReplacement.removeDatabaseFiles(temporary)

        let opened = try Exporter.openPlaintextSource(path, conversion: lock)
        let source = opened.connection
        let reporter: ProgressReporter?
        do {
            try SourceLock.lockExclusively(source, path: path, journalMode: opened.journalMode)
            reporter = try Exporter(source: source, sourcePath: path, library: opened.library,
                                    registration: Exporter.registrationForStaticCopy
                                        + "; then move that copy over this file once it opens with the key")
                .export(to: temporary, key: material, cipher: cipher, journalMode: opened.journalMode, hidden: false,
                        progress: progress)
            // The last moment to stop: after it the original is replaced. Until here the original
            // was only read; now its WAL moves into it, so that none is left beside the new file.
            try Task.checkCancellation()
            if opened.journalMode == .wal { try SourceLock.leaveWAL(source, path: path) }
        } catch {
            try? FileReplacement.removeDatabaseFiles(temporary)
            SourceLock.unlock(source, journalMode: opened.journalMode)
            source.close()
            throw error
        }
        // The source keeps its exclusive lock through the switch and lets it go only once the new
        // file is in place: a connection of another process left open on the original in rollback
        // mode (it holds no lock while idle, so nothing here could see it) then writes only after
        // the rename, where SQLite finds its file moved and refuses the write. Closed before the
        // rename, its commit could land on the original between the copy and the switch, and be
        // lost with the old file although it had been reported as committed.
        do {
            try FileReplacement.replace(path, with: temporary, backup: keepBackup && !leftBackup ? backup : nil)
            source.close()
        } catch {
            source.close()
            // The original stays; give it back the WAL mode that lockExclusively took from it.
            if opened.journalMode == .wal, let connection = try? SQLiteConnection(path: path) {
                _ = try? connection.query("PRAGMA journal_mode = WAL")
                connection.close()
            }
            throw error
        }
        reporter?.finish()
        return keepBackup ? backup : nil
    }

    /// What the new file's name adds to the original's while it is written beside it.
    static let workSuffix = ".sqlcipherkit-encrypting"

    /// Whether `backup` is another name of the file at `path`: the state a call with `keepBackup`
    /// leaves when it is killed (or loses power) between linking the backup and renaming the new
    /// file over the original (``FileReplacement/replace(_:with:backup:)``). The original is then
    /// whole at `path`, and the backup is exactly the one such a call makes.
    static func isInterruptedBackup(_ backup: String, of path: String) -> Bool {
        var original = stat(), linked = stat()
        return stat(path, &original) == 0 && lstat(backup, &linked) == 0 && (linked.st_mode & S_IFMT) == S_IFREG
            && linked.st_dev == original.st_dev && linked.st_ino == original.st_ino
    }

    /// Refuses a file that has other names (hard links): the rename replaces one name only, and
    /// the plaintext would stay readable under the others, as it would under a symbolic link's
    /// target if the link were replaced. `allowed`, a backup this call keeps, is not counted.
    /// Nothing has been changed when this throws.
    static func refuseOtherNames(_ path: String, allowing allowed: String? = nil) throws {
        let names = SnapshotFiles.nameCount(path)
        guard names > (allowed == nil ? 1 : 2) else { return }
        let backup = path + ".plaintext-backup"
        if allowed == nil && names == 2 && isInterruptedBackup(backup, of: path) {
            throw SqlCipherError.conversionFailed(
                source: path, target: path,
                reason: "its other name, \(backup), is the plaintext backup that an earlier encryptInPlace with "
                    + "keepBackup: true made just before it was interrupted; the file itself is the untouched original. "
                    + "Call again with keepBackup: true to keep that backup, or remove it first (it holds the plaintext)")
        }
        throw SqlCipherError.conversionFailed(
            source: path, target: path,
            reason: "the file has \(names) names (hard links), and encrypting it under one name would leave the "
                + "plaintext readable under the others. Remove the other links first (`find / -samefile \(path)` "
                + "lists them), or make an encrypted copy with Database.encrypt(plaintextAt:to:key:) and delete "
                + "every name of the original yourself")
    }
}
