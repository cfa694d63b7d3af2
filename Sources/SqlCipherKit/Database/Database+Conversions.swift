// The public entry points of the conversions between plaintext and encrypted files, and between
// cipher settings. The work is in Files/: the export and its verification (Exporter.swift), the
// in-place encryption (InPlaceEncryption.swift), the SQLCipher 3 upgrade (SqlCipher3Upgrade.swift),
// the source's exclusive lock (SourceLock.swift) and the atomic, durable file swap
// (FileReplacement.swift): a crash leaves either the old file or the complete new one.
extension Database {
    // MARK: Plaintext to encrypted

    /// Writes an encrypted copy of a plaintext database to a new file; the source's contents are
    /// not changed.
    ///
    /// The source is opened as any SQLite opening does: a `-wal` left beside it is moved into it,
    /// and a `-journal` of an interrupted write is rolled back, so its bytes can change while its
    /// rows stay those it had committed.
    ///
    /// ```swift
    /// try Database.encrypt(plaintextAt: "/data/public.db", to: "/data/secret.db", key: "a passphrase")
    /// let db = try Database(path: "/data/secret.db", key: "a passphrase")
    /// ```
    ///
    /// Schema, rows, `user_version` and `application_id` are copied. The copy is then opened with
    /// the key and checked: the same tables with the same row counts, `PRAGMA quick_check`, and a
    /// header that is not plaintext. The new file gets the source's journal mode.
    ///
    /// Cancelling the task that calls it stops the copy (the running statement is interrupted
    /// within milliseconds) and throws `CancellationError`; the partial copy is removed. The copy
    /// is written under a hidden name beside `target` and takes that name only once verified, so
    /// that a crash never leaves a partial copy there (<doc:RekeyAndConversions>).
    ///
    /// - Parameters:
    ///   - source: A plaintext SQLite file.
    ///   - target: A path where no file exists yet, in an existing folder.
    ///   - key: The key of the new file: a passphrase, or ``DatabaseKey/rawKey(_:salt:)``.
    ///   - cipher: Cipher settings of the new file.
    ///   - progress: Called with the pages of the source copied so far (see ``DatabaseProgress``);
    ///     it runs while the work goes on and must return quickly.
    /// - Throws: ``SqlCipherError/notPlaintextDatabase(path:)`` when the source is encrypted;
    ///   ``SqlCipherError/cannotOpen(path:reason:)`` when the target exists;
    ///   ``SqlCipherError/conversionFailed(source:target:reason:)`` when the export or its
    ///   verification fails (the partial copy is removed); `CancellationError` when the task
    ///   was cancelled (no target is left).
    public static func encrypt(plaintextAt source: String, to target: String, key: DatabaseKey,
                               cipher: CipherSettings = .default,
                               progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws {
        let material = try key.resolved(for: cipher, library: SqlCipherLibrary.shared).material()
        let opened = try Exporter.openPlaintextSource(source)
        defer { opened.connection.close() }
        try Exporter(source: opened.connection, sourcePath: source, library: opened.library,
                     registration: Exporter.registrationForStaticCopy)
            .export(to: target, key: material, cipher: cipher, journalMode: opened.journalMode, progress: progress)?
            .finish()
    }

    /// Encrypts a plaintext database file where it is: the safe form of "export, then delete the
    /// plaintext".
    ///
    /// ```swift
    /// try Database.encryptInPlace(path: "/data/notes.db", key: "a passphrase")
    /// let db = try Database(path: "/data/notes.db", key: "a passphrase")
    /// ```
    ///
    /// The steps: export to `<path>.sqlcipherkit-encrypting` beside the original, verify it (see
    /// ``Database/encrypt(plaintextAt:to:key:cipher:progress:)``), `fsync` it, optionally keep
    /// the original under `<path>.plaintext-backup` (a hard link, made before the switch), then
    /// `rename` the new file over the original and `fsync` the folder. A crash or power loss at any
    /// moment leaves at `path` either the complete plaintext original or the complete encrypted
    /// file; a leftover `.sqlcipherkit-encrypting` file is removed by the next call. A call with
    /// `keepBackup` interrupted between making the backup and the switch leaves the original with
    /// a second name, the backup: the next call with `keepBackup` keeps it and finishes, one without
    /// it refuses, naming it (the plaintext would stay readable under that name).
    ///
    /// Close every connection to the file first: the original's WAL must be empty, and a process
    /// still holding the old file open would go on writing plaintext to it.
    ///
    /// Through a symbolic link, the link's target is the file encrypted: the work files and the
    /// backup are made beside the target, the new file replaces the target, and the link is kept,
    /// so that no plaintext copy stays behind under either name.
    ///
    /// Without a backup the plaintext bytes are unlinked, not overwritten: they may stay readable
    /// on the storage until the file system reuses the blocks (see `docs/security.md`).
    ///
    /// Cancelling the task that calls it before the new file is in place stops the work and throws
    /// `CancellationError`: the temporary copy is removed and the original is left as it was.
    /// Once the rename is done the call completes.
    ///
    /// - Parameters:
    ///   - path: The plaintext database to encrypt.
    ///   - key: The key of the encrypted file.
    ///   - cipher: The settings of the encrypted file.
    ///   - keepBackup: Keep the plaintext original as `<path>.plaintext-backup`.
    ///   - progress: Called with the pages of the source copied so far; the total is reported once the new file is in place (see ``DatabaseProgress``);
    ///     it runs while the work goes on and must return quickly.
    /// - Returns: The backup's path when one was kept.
    /// - Throws: ``SqlCipherError/notPlaintextDatabase(path:)`` when the file is already encrypted,
    ///   ``SqlCipherError/conversionFailed(source:target:reason:)`` when a step fails; the
    ///   original is then unchanged; `CancellationError` when the task was cancelled.
    @discardableResult
    public static func encryptInPlace(path: String, key: DatabaseKey, cipher: CipherSettings = .default,
                                      keepBackup: Bool = false,
                                      progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws -> String? {
        try InPlaceEncryption.run(path: path, key: key, cipher: cipher, keepBackup: keepBackup, progress: progress)
    }

    // MARK: SQLCipher 3 to 4

    /// Upgrades a SQLCipher 1.x-3.x file made with that version's default settings to SQLCipher 4's
    /// format, in place, with `PRAGMA cipher_migrate`
    /// (https://www.zetetic.net/sqlcipher/sqlcipher-api/#cipher_migrate).
    ///
    /// ```swift
    /// try Database.upgradeFromSqlCipher3(path: "/data/old.db", key: "secret")
    /// let db = try Database(path: "/data/old.db", key: "secret")   // 4.x defaults from now on
    /// ```
    ///
    /// The migration runs on a copy beside the file, which is verified with SQLCipher 4's default
    /// settings (same tables, same row counts, same `user_version`), synced and renamed over the
    /// original, so a crash leaves the old or the new file. Close every connection first. A file
    /// made with non-default settings (page size, KDF iterations, no page HMACs) cannot be migrated
    /// this way: open it with those settings and use ``export(to:key:cipher:progress:)``.
    ///
    /// `progress` hears the file's pages: 0 at the start, the total once the new file is in place
    /// (`cipher_migrate` says nothing on the way). Cancelling the calling task before the new file
    /// is in place stops the migration and throws `CancellationError`; the original is unchanged.
    ///
    /// - Throws: ``SqlCipherError/unsupported(feature:requires:loaded:)`` on SQLCipher 3;
    ///   ``SqlCipherError/keyFailed(path:reason:)`` when the key does not open the file as a
    ///   SQLCipher 3 file with that version's defaults (the reason says when the file is already in
    ///   SQLCipher 4's format); ``SqlCipherError/conversionFailed(source:target:reason:)``, also,
    ///   before anything changes, for a file with other names (hard links), which would keep the
    ///   SQLCipher 3 file.
    public static func upgradeFromSqlCipher3(path: String, key: DatabaseKey,
                                             progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws {
        try SqlCipher3Upgrade.run(path: path, key: key, progress: progress)
    }

}

extension DatabaseAccess {
    // MARK: Copies of an open database

    /// Writes a plaintext copy of this database to a new file. This database is not changed.
    ///
    /// ```swift
    /// try await db.exportDecrypted(to: "/tmp/inspect.db")   // readable by any SQLite tool
    /// ```
    ///
    /// The copy is verified like ``Database/encrypt(plaintextAt:to:key:cipher:progress:)``.
    /// It holds every row in the clear: keep it only as long as needed. Cancelling the calling
    /// task stops the copy and removes the partial copy.
    ///
    /// - Parameters:
    ///   - target: A path where no file exists yet, in an existing folder.
    ///   - progress: Called with the pages of the source copied so far (see ``DatabaseProgress``);
    ///     it runs while the work goes on and must return quickly.
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` when the target exists,
    ///   ``SqlCipherError/conversionFailed(source:target:reason:)``; `CancellationError`.
    public func exportDecrypted(to target: String, progress: (@Sendable (DatabaseProgress) -> Void)? = nil) async throws {
        let (path, library, journalMode) = (self.path, self.library, exportJournalMode)
        try await _withConnection(.write) { conn in
            try Exporter(source: conn.core, sourcePath: path, library: library)
                .export(to: target, key: nil, cipher: .default, journalMode: journalMode, progress: progress)?
                .finish()
        }
    }

    /// Writes an encrypted copy of this database, with another key and possibly other cipher
    /// settings, to a new file. This database is not changed.
    ///
    /// ```swift
    /// // A SQLCipher 3 file, copied to SQLCipher 4's format with a raw key:
    /// let old = try Database(path: "/data/v3.db", key: "secret", cipher: .sqlcipher3)
    /// try await old.export(to: "/data/v4.db", key: .rawKey(keyBytes), cipher: .default)
    /// ```
    ///
    /// Works from a plaintext database too. The copy is verified like
    /// ``Database/encrypt(plaintextAt:to:key:cipher:progress:)``. Cancelling the
    /// calling task stops the copy and removes the partial copy.
    ///
    /// - Parameters:
    ///   - target: A path where no file exists yet, in an existing folder.
    ///   - key: The key of the copy.
    ///   - cipher: The cipher settings of the copy.
    ///   - progress: Called with the pages of the source copied so far (see ``DatabaseProgress``);
    ///     it runs while the work goes on and must return quickly.
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` when the target exists,
    ///   ``SqlCipherError/conversionFailed(source:target:reason:)``; `CancellationError`.
    public func export(to target: String, key: DatabaseKey, cipher: CipherSettings = .default,
                       progress: (@Sendable (DatabaseProgress) -> Void)? = nil) async throws {
        let key = try key.resolved(for: cipher, library: library)
        _ = try key.material()
        let (path, library, journalMode) = (self.path, self.library, exportJournalMode)
        try await _withConnection(.write) { conn in
            let material = try key.material()
            try Exporter(source: conn.core, sourcePath: path, library: library)
                .export(to: target, key: material, cipher: cipher, journalMode: journalMode, progress: progress)?
                .finish()
        }
    }

    /// The journal mode an exported copy gets: the source's, WAL for an in-memory source.
    var exportJournalMode: JournalMode { path == ":memory:" ? .wal : journalMode }
}
