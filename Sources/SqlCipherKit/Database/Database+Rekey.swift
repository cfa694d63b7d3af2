import CSqlCipherBridge
import Foundation
import Synchronization

extension Database {
    /// Re-encrypts the database with a new key (`sqlite3_rekey`): a passphrase (a string literal
    /// is one), a passphrase given as bytes, or a raw key.
    ///
    /// ```swift
    /// let db = try Database(path: path, key: "old passphrase")
    /// try await db.rekey("new passphrase")
    /// // From now on: Database(path: path, key: "new passphrase")
    /// try await db.rekey(.passphrase(passphraseBytes))   // any bytes
    /// ```
    ///
    /// A rekey keeps the file's salt: a ``DatabaseKey/rawKey(_:salt:)`` or
    /// ``DatabaseKey/passphrase(_:salt:)-(String,_)`` whose salt is not the file's is refused (the error says
    /// what to give instead: for a file without a plaintext header, the key without a salt). A key
    /// without a salt keeps the salt too, also on a file with a plaintext header, which stores none:
    /// after `rekey("new passphrase")` it opens with `.passphrase("new passphrase", salt: salt)`
    /// and the salt it was opened with.
    ///
    /// Every page is rewritten in one write transaction, so the call takes time in proportion to
    /// the file's size. SQLCipher can report success for a rekey that did not happen (a read-only
    /// file, a lock held elsewhere), so SqlCipherKit takes the exclusive lock first, then proves the
    /// result by opening a fresh connection with the new key, and checkpoints the WAL
    /// (`wal_checkpoint(TRUNCATE)`) before and after. Close every other connection to the file
    /// first: one still holding the old key cannot read what the rekey wrote; its next statement
    /// fails, writes nothing, and its error says that the key was most likely changed.
    ///
    /// `progress` hears the pages rewritten so far, from 0 to the total once the new key is
    /// proven. SQLCipher's `sqlite3_rekey` calls nothing back, so SqlCipherKit watches it read the
    /// file page by page (the page cache is emptied first, so that every page but the first is
    /// read).
    ///
    /// Cancelling the calling task stops the rekey:
    /// - before the rewrite starts, the call throws `CancellationError` with nothing changed,
    ///   and this Database stays open;
    /// - during the rewrite, at the next page read, SQLCipher rolls its transaction back as after
    ///   a crash: the file keeps the old key and its contents (pages already spilled to the file
    ///   come back from the journal encrypted with a fresh IV; <doc:RekeyAndConversions>). SQLCipher leaves the
    ///   connection's keys half-changed after a rewrite that did not finish, so this Database is
    ///   closed, and the call throws `CancellationError`; open the file again with the old key;
    /// - once the last page has been read, the rekey completes.
    ///
    /// A rewrite that stops midway (cancelled, failed, or cut short by a crash) is undone from the
    /// rollback journal on disk. A connection switched to `PRAGMA journal_mode = OFF` has none and
    /// one on `MEMORY` loses it in a crash, so for the length of the rekey such a connection uses
    /// `DELETE`, and gets its mode back afterwards.
    ///
    /// - Parameters:
    ///   - key: The new key.
    ///   - progress: Called with the pages rewritten (see ``DatabaseProgress``); it must return quickly.
    /// - Throws: ``SqlCipherError/notEncrypted`` for a database opened with
    ///   ``init(unencryptedPath:journalMode:readOnly:configuration:)``; ``SqlCipherError/emptyKey``;
    ///   ``SqlCipherError/passphraseLooksLikeRawKey`` for a passphrase spelled like SQLCipher's
    ///   raw-key literal (`x'` and 64, 96 or 160 hex digits), which would become a raw key (use
    ///   ``rekey(rawKey:progress:)``);
    ///   ``SqlCipherError/rekeyFailed(path:reason:)`` when the file is read-only, busy, inside a
    ///   transaction, its key was changed by another connection first (another process's rekey
    ///   that took the lock first), or the new key does not open it afterwards;
    ///   `CancellationError` (see above). After any failure the file opens with the key it had
    ///   before the call.
    public func rekey(_ key: DatabaseKey, progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws {
        try performRekey(key, checkingSalt: true, progress: progress)
    }

    /// Re-encrypts the database with a new raw 32-byte key (no key derivation). A database opened
    /// with a passphrase can move to a raw key and back. See ``rekey(_:progress:)``.
    ///
    /// - Throws: ``SqlCipherError/invalidRawKey(byteCount:)`` unless the key has 32 bytes, and the
    ///   errors of ``rekey(_:progress:)``.
    public func rekey(rawKey: Data, progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws {
        try performRekey(.rawKey(rawKey), checkingSalt: true, progress: progress)
    }

    /// Changes the key; every statement of the change is the package's own, marked internal in
    /// traces (``TraceEvent``).
    /// `afterwards` runs on the actor once the rekey succeeded, before any other call (a pool
    /// wakes its observers there).
    /// `checkingSalt` when `newKey` is the caller's: a salt it names must be the file's. A pool's
    /// own derived key names the salt it read from the file, which SQLCipher 3 cannot report.
    func performRekey(_ newKey: DatabaseKey, checkingSalt: Bool, progress: (@Sendable (DatabaseProgress) -> Void)?,
                      afterwards: (@Sendable () -> Void)? = nil) throws {
        guard let core = connection else { throw SqlCipherError.databaseClosed }
        try core.asInternal { try rekeyBody(newKey, checkingSalt: checkingSalt, progress: progress) }
        afterwards?()
    }

    private func rekeyBody(_ newKey: DatabaseKey, checkingSalt: Bool,
                           progress: (@Sendable (DatabaseProgress) -> Void)?) throws {
        guard isEncrypted else { throw SqlCipherError.notEncrypted }
        let core = try liveConnection()
        // A read-only Database may have been opened with settings only a reader may name: it is
        // refused below as read-only, not for its settings.
        let newKey = try newKey.keepingSalt(Self.salt(of: core), of: cipherSettings)
            .resolved(for: cipherSettings, library: library, readOnly: isReadOnly)
        let material = try newKey.material()
        guard path != ":memory:" else {
            throw SqlCipherError.rekeyFailed(path: path, reason: "an in-memory database has no file to re-encrypt")
        }
        guard !core.isInTransaction else {
            throw SqlCipherError.rekeyFailed(
                path: path, reason: "a transaction is open; finish it (COMMIT or ROLLBACK) before changing the key")
        }
        guard !isReadOnly, scb_db_readonly(core.handle, "main") != 1 else {
            throw SqlCipherError.rekeyFailed(path: path, reason: "the file is read-only")
        }

        // A rekey rewrites the pages under the file's own salt: a key that names another salt
        // would describe a file that does not exist.
        if checkingSalt, let salt = newKey.salt {
            var current = Self.salt(of: core)
            // SQLCipher 3 has no `cipher_salt`: a file without a plaintext header stores its salt in
            // its first 16 bytes (before the first checkpoint, in the -wal's page 1), read as a pool
            // reads it. The file's own salt was refused there, which 4.x takes.
            if current == nil, (cipherSettings.plaintextHeaderSize ?? 0) == 0,
               let pageSize = try? core.integer("PRAGMA main.page_size"),
               case .salt(let stored, _)? = try? KeySalt.lookup(path: path, settings: cipherSettings, pageSize: pageSize) {
                current = stored
            }
            guard let current, current == salt else {
                // A file with a plaintext header needs its salt with a passphrase; any other file
                // stores its salt, and a key without one takes it from there.
                let way = (cipherSettings.plaintextHeaderSize ?? 0) > 0
                    ? "give the salt the file was created with: rekey(.passphrase(passphrase, salt: salt)) or "
                        + "rekey(.rawKey(key, salt: salt))"
                    : "pass the new key without a salt, as the file stores its own: rekey(.passphrase(passphrase)) or "
                        + "rekey(rawKey:)"
                throw SqlCipherError.rekeyFailed(
                    path: path, reason: "a rekey keeps the file's salt, and the key gives another one (or this "
                        + "SQLCipher does not report the file's); " + way)
            }
        }
        // A file with a plaintext header does not store its salt, so the verifying connection
        // needs it from this one; only a raw key can be combined with a salt. (A header of 0 bytes
        // is the ordinary layout, whose salt is in the file.)
        var verifyMaterial = material
        if (cipherSettings.plaintextHeaderSize ?? 0) > 0 {
            guard newKey.kind == .raw else {
                throw SqlCipherError.rekeyFailed(
                    path: path, reason: "a database with a plaintext header keeps its salt outside the file; "
                        + "change its key with rekey(.passphrase(passphrase, salt: salt)) or rekey(.rawKey(key, salt: salt)) and the salt it was created with")
            }
            guard let salt = Self.salt(of: core), salt.count == KeySalt.length else {
                throw SqlCipherError.rekeyFailed(path: path, reason: "SQLCipher did not report the database's salt")
            }
            verifyMaterial = try KeyMaterial(rawKey: newKey.secret.view, salt: salt)
        }

        do {
            try rewrite(newKey, verifyMaterial: verifyMaterial, material: material, core: core, progress: progress)
        } catch let SqlCipherError.sqlite(code, _, message, sql) where code == SQLiteConnection.sqliteNotADatabase {
            // Before the rewrite (it closes this Database on any failure of its own): page 1 no
            // longer decrypts with the key this connection holds, so another connection changed
            // the key since this one opened the file, most often a rekey in another process that
            // won the race for the exclusive lock. Said as such, not as "busy".
            throw SqlCipherError.rekeyFailed(
                path: path, reason: Self.keyChangedElsewhere + " (SQLite error \(code): "
                    + message.replacingOccurrences(of: SQLiteMessageAdvice.keyChanged, with: "")
                    + (sql.map { " in `\($0)`" } ?? "") + ")")
        }
    }

    /// The salt SQLCipher reports for the connection's main database (`PRAGMA cipher_salt`), nil
    /// where it reports none (SQLCipher 3).
    private static func salt(of core: SQLiteConnection) -> Data? {
        (try? core.scalar("PRAGMA cipher_salt")).flatMap { $0.flatMap { String.fromDatabaseValue($0) } }
            .flatMap { Data(hexString: $0) }
    }

    /// Why a rekey failed when another connection had changed the file's key first.
    static let keyChangedElsewhere = "the file's key was changed by another connection (in this process or another) "
        + "since this one opened it, most likely by a rekey that took the lock first: the file's first page no longer "
        + "decrypts with the key this connection holds, and nothing was written. Close this connection, open the "
        + "file with the key it has now, and change it from there if it still needs changing"

    /// The part of a rekey from its first read of the file on: the lock, the rewrite, the proof.
    private func rewrite(_ newKey: DatabaseKey, verifyMaterial: KeyMaterial, material: KeyMaterial,
                         core: SQLiteConnection, progress: (@Sendable (DatabaseProgress) -> Void)?) throws {
        // Start from a WAL moved into the file; a reader elsewhere may keep it from completing,
        // which is harmless here: the rewrite reads every page through the WAL.
        if journalMode == .wal { _ = try? core.checkpoint("TRUNCATE") }
        let reporter = try Exporter.pageReporter(of: core, progress)
        reporter?.start()
        // The last moment to stop with nothing changed and this Database still open.
        try Task.checkCancellation()
        let pageSize = Int32(clamping: try core.integer("PRAGMA main.page_size") ?? 0)
        // A rewrite that stops midway is undone from the rollback journal; without one on disk
        // (`journal_mode = OFF` or `MEMORY`, which SQL may set) the pages already spilled to the
        // file would keep the new key and the others the old one: a file neither key reads (after
        // a crash, also with MEMORY). The rekey lends the connection a journal on disk.
        let journal = try core.lowercasedText("PRAGMA main.journal_mode")
        let lendsJournal = journal == "off" || journal == "memory"
        if lendsJournal { _ = try core.query("PRAGMA main.journal_mode = DELETE") }
        defer {
            // A Database that closed itself after a failed rewrite has no mode to restore.
            if lendsJournal, let journal, connection != nil {
                _ = try? core.query("PRAGMA main.journal_mode = \(journal)")
            }
        }
        // The rewrite can only be watched, and stopped, where it reads a page from the file
        // (scb_rekey_watched); pages left in the cache would be rewritten unseen. Releasing them
        // costs at most the cache's size in reads (8 MiB by default).
        _ = try? core.execute("PRAGMA shrink_memory")

        // The exclusive lock is taken before the key changes, so a busy or locked file fails here
        // with the connection untouched. The rewrite then runs inside that lock.
        do {
            try core.execute("BEGIN EXCLUSIVE")
        } catch {
            // The key changed elsewhere: said as such by the caller, rekeyBody.
            if case SqlCipherError.sqlite(let code, _, _, _) = error, code == SQLiteConnection.sqliteNotADatabase { throw error }
            throw SqlCipherError.rekeyFailed(path: path, reason: "the database is busy or locked (\(error))")
        }
        // The lock may have been awaited for up to the busy timeout, which no cancellation cuts
        // short. One that came meanwhile still finds nothing rewritten and the keys untouched:
        // stop here, with this Database open, rather than at the rewrite's first page.
        if Task.isCancelled {
            core.interruptGate.shielded { _ = try? core.execute("ROLLBACK") }
            throw CancellationError()
        }
        let watch = RekeyWatch(gate: core.interruptGate)
        var sample: (@Sendable () -> Void)?
        if let reporter { sample = { reporter.report(watch.pagesRead) } }
        var stopped: Int32 = 0
        let rc = try core.interruptGate.watching(cancellable: true, sample: sample) { () -> Int32 in
            material.withBytes { bytes in
                watch.rekey(core.handle, key: bytes, pageSize: pageSize, stopped: &stopped)
            }
        }
        // Why the COMMIT failed is the user's to know: a full disk (SQLITE_FULL) or an I/O error
        // needs a different remedy than a retry.
        var commitFailure: (any Error)?
        // A rewrite that failed (rc) is never committed: SQLCipher rolled it back, and a COMMIT
        // could only make its half-written state durable.
        if stopped == 0 && rc == 0 {
            do { try core.execute("COMMIT") } catch { commitFailure = error }
        }
        let committed = stopped == 0 && rc == 0 && commitFailure == nil
        if !committed && core.isInTransaction { _ = try? core.execute("ROLLBACK") }

        do {
            // Stopped: SQLCipher rolled the rewrite back, as after a crash.
            if stopped != 0 { throw CancellationError() }
            guard rc == 0 else { throw core.error(rc, sql: nil) }
            guard committed else {
                throw SqlCipherError.rekeyFailed(
                    path: path, reason: "the rewrite could not be committed" + (commitFailure.map { " (\($0))" } ?? ""))
            }
            if journalMode == .wal { _ = try? core.checkpoint("TRUNCATE") }
        } catch {
            // SQLCipher leaves this connection's keys in an unknown state after a failed or
            // stopped rekey (the new key for writing, the old one for reading): a write through it
            // could mix keys in one file. Close it; the file itself still opens with the old key
            // because the rewrite is one transaction that did not take effect.
            close()
            if error is CancellationError { throw error }
            let reason: String
            if case let SqlCipherError.rekeyFailed(_, inner) = error { reason = inner } else { reason = "\(error)" }
            throw SqlCipherError.rekeyFailed(
                path: path, reason: reason + ". " + Self.closedAfterRekey + "; open the file again with the old key")
        }
        // The rewrite is committed: from here on the file has the new key, and a proof that
        // cannot be made (no file descriptor left, a creation lock held too long) must not send
        // the caller back to the old key.
        do {
            try verifyKey(verifyMaterial, against: core)
        } catch let notRewritten as RewriteNotTaken {
            // SQLCipher's rekey reports success even when it could not write the rewrite and rolled
            // it back (it only logs why: a full disk in rollback mode does this), and the COMMIT
            // after it then commits nothing. A fresh connection proved that the file's first page
            // does not decrypt with the new key: the file has the old one, whatever was committed.
            close()
            throw SqlCipherError.rekeyFailed(
                path: path, reason: "the rewrite did not take effect: SQLCipher rolled it back without reporting an "
                    + "error, which it does when it cannot write the file or its journal, most often because the disk "
                    + "is full" + Self.freeSpace(of: path) + " (a fresh connection with the new key: \(notRewritten.reason)). "
                    + Self.closedAfterRekey + "; open the file again with the old key, which it still has, free space, "
                    + "then change the key again")
        } catch {
            close()
            let reason: String
            if case let SqlCipherError.rekeyFailed(_, inner) = error { reason = inner } else { reason = "\(error)" }
            throw SqlCipherError.rekeyFailed(
                path: path, reason: SqlCipherError.rekeyCommitted + ", but a fresh connection could not prove it ("
                    + reason + "). " + Self.closedAfterRekey + "; open the file with the new key")
        }
        reporter?.finish()
    }

    /// What a failed rekey did to the object it was called on: a `Database` closes itself, and a
    /// pool whose writer this is closes with it (DatabasePool+Rekey.swift).
    static let closedAfterRekey = "This Database (or the DatabasePool it writes for) was closed"

    /// A fresh connection found that the file's first page does not decrypt with the new key.
    private struct RewriteNotTaken: Error {
        let reason: String
    }

    /// ", where N bytes are free", for the filesystem that holds `path`, or "" when unknown.
    private static func freeSpace(of path: String) -> String {
        var info = statvfs()
        guard statvfs(DatabasePath.folder(of: path), &info) == 0 else { return "" }
        return " (its filesystem has \(UInt64(info.f_bavail) * UInt64(info.f_frsize)) bytes free)"
    }

    /// Proves that a fresh connection opens the file with `key` and sees the same schema.
    private func verifyKey(_ key: KeyMaterial, against core: SQLiteConnection) throws {
        let expected = try core.scalar("SELECT count(*) FROM sqlite_master").flatMap { Int.fromDatabaseValue($0) }
        let fresh: DatabaseOpener.Opened
        do {
            fresh = try DatabaseOpener.open(path: path, key: key, journalMode: journalMode, cipher: cipherSettings)
        } catch SqlCipherError.keyFailed(_, let reason) {
            // Page 1 was read and did not decrypt with the new key: proof the rewrite is not there.
            throw RewriteNotTaken(reason: reason)
        } catch {
            throw SqlCipherError.rekeyFailed(path: path, reason: "a fresh connection with the new key did not open the file (\(error))")
        }
        defer { fresh.connection.close() }
        let seen = try fresh.connection.scalar("SELECT count(*) FROM sqlite_master").flatMap { Int.fromDatabaseValue($0) }
        guard seen == expected else {
            throw SqlCipherError.rekeyFailed(
                path: path, reason: "a fresh connection with the new key sees \(seen ?? -1) schema objects, not \(expected ?? -1)")
        }
    }
}

extension Data {
    /// Bytes from hexadecimal text such as `73616c74` (optionally in SQLCipher's `x'...'` form).
    init?(hexString: String) {
        var text = Substring(hexString)
        if text.hasPrefix("x'") || text.hasPrefix("X'") { text = text.dropFirst(2) }
        if text.hasSuffix("'") { text = text.dropLast() }
        guard text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}

/// What the rewrite of a rekey has read so far, and whether it must stop: asked by the bridge
/// before each page it reads from the file (`scb_rekey_watched`), on the thread running the rekey.
final class RekeyWatch: Sendable {
    private let gate: InterruptGate
    private let highest = Atomic<Int64>(0)

    init(gate: InterruptGate) { self.gate = gate }

    /// The highest page number read: SQLCipher rewrites pages in order, so the pages done.
    var pagesRead: Int64 { highest.load(ordering: .relaxed) }

    /// Records a read of `page`; true when the rekey must stop (its task was cancelled).
    func reading(page: Int64) -> Bool {
        if page > highest.load(ordering: .relaxed) { highest.store(page, ordering: .relaxed) }
        return gate.pollWatchedWork()
    }

    /// Runs `scb_rekey_watched` on `handle` with this watch asked before each read.
    func rekey(_ handle: OpaquePointer, key: UnsafeRawBufferPointer, pageSize: Int32, stopped: inout Int32) -> Int32 {
        let check: scb_rekey_check_fn = { context, page in
            guard let context else { return 0 }
            return Unmanaged<RekeyWatch>.fromOpaque(context).takeUnretainedValue().reading(page: page) ? 1 : 0
        }
        return withExtendedLifetime(self) {
            scb_rekey_watched(handle, key.baseAddress, Int32(key.count), pageSize, check,
                              Unmanaged.passUnretained(self).toOpaque(), &stopped)
        }
    }
}
