import CSqlCipherBridge
import Foundation

extension Database {
    /// Re-encrypts the database with a new passphrase (`sqlite3_rekey`).
    ///
    /// ```swift
    /// let db = try Database(path: path, key: "old passphrase")
    /// try await db.rekey("new passphrase")
    /// // From now on: Database(path: path, key: "new passphrase")
    /// ```
    ///
    /// Every page is rewritten in one write transaction, so the call takes time in proportion to
    /// the file's size. SQLCipher can report success for a rekey that did not happen (a read-only
    /// file, a lock held elsewhere), so SqlCipherKit takes the exclusive lock first, then proves the
    /// result by opening a fresh connection with the new key, and checkpoints the WAL
    /// (`wal_checkpoint(TRUNCATE)`) before and after. Close every other connection to the file
    /// first: one still holding the old key cannot read what the rekey wrote.
    ///
    /// `progress` hears the database's pages twice: 0 before the rewrite and the total once the
    /// new key is proven, because SQLCipher's `sqlite3_rekey` rewrites every page without calling
    /// back. For the same reason a rekey cannot be cancelled: interrupting the rewrite halfway is
    /// what SQLCipher cannot recover from cleanly, so the call runs to its end even when its task
    /// is cancelled (a cancellation only stops the calls that follow).
    ///
    /// - Parameters:
    ///   - passphrase: The new passphrase.
    ///   - progress: Called with the pages rewritten (see ``DatabaseProgress``); it must return quickly.
    /// - Throws: ``SqlCipherError/notEncrypted`` for a database opened with
    ///   ``init(unencryptedPath:journalMode:readOnly:)``; ``SqlCipherError/emptyKey``;
    ///   ``SqlCipherError/passphraseLooksLikeRawKey`` for a passphrase spelled like SQLCipher's
    ///   raw-key literal (`x'` and 64 or 96 hex digits), which would become a raw key (use
    ///   ``rekey(rawKey:progress:)``);
    ///   ``SqlCipherError/rekeyFailed(path:reason:)`` when the file is read-only, busy, inside a
    ///   transaction, or the new key does not open it afterwards. After any failure the file opens
    ///   with the old key.
    public func rekey(_ passphrase: String, progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws {
        try performRekey(.passphrase(passphrase), progress: progress)
    }

    /// Re-encrypts the database with a new passphrase given as bytes (any bytes). See ``rekey(_:progress:)-(String,_)``.
    public func rekey(_ passphrase: Data, progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws {
        try performRekey(.passphrase(passphrase), progress: progress)
    }

    /// Re-encrypts the database with a new raw 32-byte key (no key derivation). A database opened
    /// with a passphrase can move to a raw key and back. See ``rekey(_:progress:)-(String,_)``.
    ///
    /// - Throws: ``SqlCipherError/invalidRawKey(byteCount:)`` unless the key has 32 bytes, and the
    ///   errors of ``rekey(_:progress:)-(String,_)``.
    public func rekey(rawKey: Data, progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws {
        try performRekey(.rawKey(rawKey), progress: progress)
    }

    /// Changes the key; every statement of the change is the package's own, marked internal in
    /// traces (``TraceEvent``).
    /// `afterwards` runs on the actor once the rekey succeeded, before any other call (a pool
    /// wakes its observers there).
    func performRekey(_ newKey: DatabaseKey, progress: (@Sendable (DatabaseProgress) -> Void)?,
                      afterwards: (@Sendable () -> Void)? = nil) throws {
        guard let core = connection else { throw SqlCipherError.databaseClosed }
        try core.asInternal { try rekeyBody(newKey, progress: progress) }
        afterwards?()
    }

    private func rekeyBody(_ newKey: DatabaseKey, progress: (@Sendable (DatabaseProgress) -> Void)?) throws {
        guard isEncrypted else { throw SqlCipherError.notEncrypted }
        let core = try liveConnection()
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

        // A file with a plaintext header does not store its salt, so the verifying connection
        // needs it from this one; only a raw key can be combined with a salt.
        var verifyMaterial = material
        if cipherSettings.plaintextHeaderSize != nil {
            guard newKey.kind == .raw else {
                throw SqlCipherError.rekeyFailed(
                    path: path, reason: "a database with a plaintext header keeps its salt outside the file; "
                        + "change its key with rekey(rawKey:)")
            }
            let saltHex = try core.scalar("PRAGMA cipher_salt").flatMap { String.fromDatabaseValue($0) } ?? ""
            guard let salt = Data(hexString: saltHex), salt.count == 16 else {
                throw SqlCipherError.rekeyFailed(path: path, reason: "SQLCipher did not report the database's salt")
            }
            verifyMaterial = try KeyMaterial(rawKey: newKey.bytes, salt: salt)
        }

        // Start from a WAL moved into the file; a reader elsewhere may keep it from completing,
        // which is harmless here: the rewrite reads every page through the WAL.
        if journalMode == .wal { _ = try? core.checkpoint("TRUNCATE") }
        let reporter = try Exporter.pageReporter(of: core, progress)
        reporter?.start()

        // The exclusive lock is taken before the key changes, so a busy or locked file fails here
        // with the connection untouched. The rewrite then runs inside that lock.
        do {
            try core.execute("BEGIN EXCLUSIVE")
        } catch {
            throw SqlCipherError.rekeyFailed(path: path, reason: "the database is busy or locked (\(error))")
        }
        let rc = material.withBytes { bytes in
            scb_rekey(core.handle, bytes.baseAddress, Int32(bytes.count))
        }
        let committed = (try? core.execute("COMMIT")) != nil
        if !committed && core.isInTransaction { _ = try? core.execute("ROLLBACK") }

        do {
            guard rc == 0 else { throw core.error(rc, sql: nil) }
            guard committed else {
                throw SqlCipherError.rekeyFailed(path: path, reason: "the rewrite could not be committed")
            }
            if journalMode == .wal { _ = try? core.checkpoint("TRUNCATE") }
            try verifyKey(verifyMaterial, against: core)
            reporter?.finish()
        } catch {
            // SQLCipher leaves this connection's keys in an unknown state after a failed rekey: a
            // write through it could mix keys in one file. Close it; the file itself still opens
            // with the old key because the rewrite is one transaction that did not take effect.
            close()
            let reason: String
            if case let SqlCipherError.rekeyFailed(_, inner) = error { reason = inner } else { reason = "\(error)" }
            throw SqlCipherError.rekeyFailed(
                path: path, reason: reason + ". This Database was closed; open the file again with the old key")
        }
    }

    /// Proves that a fresh connection opens the file with `key` and sees the same schema.
    private func verifyKey(_ key: KeyMaterial, against core: SQLiteConnection) throws {
        let expected = try core.scalar("SELECT count(*) FROM sqlite_master").flatMap { Int.fromDatabaseValue($0) }
        let fresh: DatabaseOpener.Opened
        do {
            fresh = try DatabaseOpener.open(path: path, key: key, journalMode: journalMode, cipher: cipherSettings)
        } catch {
            throw SqlCipherError.rekeyFailed(path: path, reason: "the new key does not open the file (\(error))")
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
