import CSqlCipherBridge
import Foundation

/// One hot backup: SQLite's online-backup API copying the source connection's main database, a
/// few pages per step, into a new keyed file written beside the target, which takes the target's
/// name only once it is complete, synced and verified (https://sqlite.org/backup.html).
///
/// SQLCipher encrypts each page with the destination's key as the page is written, so the copy
/// may have another key than the source and never holds a plaintext page. The copy has the
/// source's cipher settings (the backup copies pages as they are laid out); a copy with other
/// settings is ``Database/export(to:key:cipher:progress:)``'s work.
///
/// Used only on the source connection's executor, one call at a time: it is created, stepped and
/// finished there (a `Database` between other calls on its actor, a pool inside one reader's
/// body), which is what `@unchecked Sendable` stands for.
final class HotBackup: @unchecked Sendable {
    private let source: SQLiteConnection
    private let sourcePath: String
    private let target: String
    private let temporary: String
    private let key: KeyMaterial
    private let cipher: CipherSettings
    private let pagesPerStep: Int32
    /// Whether the source connection can hold a write transaction of its own (a `Database`'s; a
    /// pool's reader cannot).
    private let sourceMayWrite: Bool
    private let claim: CreationClaim
    private var destination: SQLiteConnection? = nil
    private var handle: OpaquePointer? = nil
    private var reporter: ProgressReporter? = nil
    /// A descriptor of the hidden copy holding its `flock` (``HiddenCopy``) for as long as this
    /// backup may still use it. Closed only once no connection of this backup has the copy open
    /// (a close drops the process's POSIX locks on the file).
    private var ownership: Int32 = -1

    /// Starts a backup of `source` into a new file beside `target`.
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` when `target` exists or its folder
    ///   does not, ``SqlCipherError/conversionFailed(source:target:reason:)`` when the copy cannot
    ///   start.
    init(source: SQLiteConnection, sourcePath: String, target: String, key: DatabaseKey, cipher: CipherSettings,
         pagesPerStep: Int, sourceMayWrite: Bool, progress: (@Sendable (DatabaseProgress) -> Void)?) throws {
        // A dead backup's hidden file is removed first, even when the target is refused because
        // it exists: otherwise it stayed beside the target for as long as the target did.
        HiddenCopy.removeDead(besides: target, kind: "backup")
        try Exporter.checkNewTarget(target)
        let key = try key.resolved(for: cipher, library: SqlCipherLibrary.shared)
        let material = try key.material()
        // Before the work file exists: with a plaintext header only a key with its salt could
        // open the copy again (the work file's refusal named the work file).
        try cipher.requireSaltedKey(material, path: target)
        self.source = source
        self.sourcePath = sourcePath
        self.target = target
        self.key = material
        self.cipher = cipher
        self.pagesPerStep = Int32(clamping: max(1, pagesPerStep))
        self.sourceMayWrite = sourceMayWrite
        // Beside the target, in its folder (so the final link stays on one file system), under a
        // name no other backup picks.
        let temporary = try HiddenCopy.path(besides: target, kind: "backup")
        self.temporary = temporary
        // An error about the work file names the target the caller gave: the work file is removed
        // before anyone sees the error.
        func named(_ error: any Error) -> any Error {
            guard case let SqlCipherError.cannotOpen(path, reason) = error, path == temporary else { return error }
            return SqlCipherError.cannotOpen(path: target, reason: reason.replacingOccurrences(of: temporary, with: target))
        }
        do {
            claim = try Exporter.createTarget(temporary)
        } catch {
            throw named(error)
        }
        do {
            ownership = try HiddenCopy.own(temporary, fail: fail)
            let opened = try DatabaseOpener.open(path: temporary, key: try key.material(), journalMode: .rollback,
                                                 cipher: cipher)
            destination = opened.connection
            guard let backup = scb_backup_init(opened.connection.handle, "main", source.handle, "main") else {
                throw fail(String(cString: scb_errmsg(opened.connection.handle)))
            }
            handle = backup
            let pages = try source.scalar("PRAGMA main.page_count").flatMap { Int64.fromDatabaseValue($0) } ?? 0
            reporter = ProgressReporter(total: pages, unit: .pages, progress)
            reporter?.start()
        } catch {
            abandon()
            throw named(error)
        }
    }

    deinit {
        abandon()
    }

    /// Copies the next pages; returns true once every page is copied.
    ///
    /// A step never comes back to a lock: SQLite returns `SQLITE_BUSY` at once while the source
    /// connection itself has written in a transaction it has not ended (a raw `BEGIN`), and
    /// otherwise only after the source's busy handler waited its whole busy timeout for another
    /// connection's lock. Both used to be tried again at the next step, forever: the backup spun
    /// until the process was killed.
    func step() throws -> Bool {
        guard let handle else { throw fail("the backup was already ended") }
        let rc = scb_backup_step(handle, pagesPerStep)
        switch rc {
        case 101:  // SQLITE_DONE
            return true
        case 0:  // SQLITE_OK
            let total = Int64(scb_backup_pagecount(handle))
            reporter?.report(total - Int64(scb_backup_remaining(handle)))
            return false
        case 5, 6:  // SQLITE_BUSY, SQLITE_LOCKED
            if sourceMayWrite && source.isInTransaction {
                throw fail("the database has a transaction open that has written (a BEGIN without COMMIT), and a "
                    + "backup copies committed pages only: commit or roll back that transaction, then back up again")
            }
            throw fail("the source database is locked" + SQLiteMessageAdvice.busy)
        default:
            let message = destination.map { String(cString: scb_errmsg($0.handle)) } ?? "error \(rc)"
            throw fail("SQLite's backup step failed (\(rc)): \(message)")
        }
    }

    /// Ends a backup whose every page is copied: checks it against `expected` (the source's
    /// contents, read where the copy was taken), syncs it, and gives it the target's name without
    /// ever replacing a file that appeared there meanwhile.
    func finish(expected: Exporter.Contents) throws {
        guard let backup = handle else { throw fail("the backup was already ended") }
        handle = nil
        let rc = scb_backup_finish(backup)
        destination?.close()
        destination = nil
        guard rc == 0 else { throw fail("SQLite's backup ended with error \(rc)") }
        do {
            try Task.checkCancellation()
            try Exporter.verify(temporary, promised: target, key: key, cipher: cipher, expected: expected, source: sourcePath,
                                schemaExtensions: Exporter.schemaExtensions(of: source))
            try Task.checkCancellation()
            try HiddenCopy.publish(temporary, as: target, fail: fail)
            releaseOwnership()
            reporter?.finish()
        } catch {
            removeTemporary()
            if error is CancellationError { throw error }
            if case SqlCipherError.conversionFailed = error { throw error }
            throw fail("\(error)")
        }
    }

    /// Stops the backup and removes the partial copy; nothing under the target's name changed.
    func abandon() {
        if let backup = handle {
            handle = nil
            _ = scb_backup_finish(backup)
        }
        destination?.close()
        destination = nil
        removeTemporary()
        releaseOwnership()
    }

    private func releaseOwnership() {
        guard ownership >= 0 else { return }
        _ = close(ownership)
        ownership = -1
    }

    private func removeTemporary() {
        for file in claim.removableFiles + [temporary, temporary + "-journal"] { try? FileReplacement.removeFile(file) }
    }

    private func fail(_ reason: String) -> SqlCipherError {
        .conversionFailed(source: sourcePath, target: target, reason: "backup: " + reason)
    }
}
