// The public entry points of the hot backup (HotBackup.swift): a `Database` steps between its
// other calls, a `DatabasePool` copies one reader's snapshot.

extension Database {
    /// Copies the live database into a new encrypted file at `target`, while other calls go on.
    ///
    /// ```swift
    /// try await db.backup(to: "/backups/store-2026-12-05.db", key: "backup passphrase") { progress in
    ///     print("\(progress.completed) of \(progress.total) pages")
    /// }
    /// ```
    ///
    /// The copy is made with SQLite's online-backup API, `pagesPerStep` pages at a time
    /// (https://sqlite.org/backup.html). Between two steps the actor runs the calls that wait for
    /// it, so reads and writes go on during the backup; a write made meanwhile through this
    /// database is copied too, and the copy is the database as it is when the last step ends.
    ///
    /// The copy is written beside `target` under a hidden name and takes the name `target` only
    /// once it is complete, synced to disk and verified: it opens with `key`, holds the same
    /// tables, row counts, `user_version` and `application_id` as the source, passes
    /// `quick_check`, and does not start with a plaintext header. A failure or a cancellation
    /// removes the partial copy and leaves `target` absent. The copy has the source's cipher
    /// settings; `key` may differ from the source's (a passphrase, a raw key, or either with a
    /// salt). For other cipher settings use ``export(to:key:cipher:progress:)``.
    ///
    /// - Parameters:
    ///   - target: A path where no file exists yet, in an existing folder.
    ///   - key: The key of the copy.
    ///   - pagesPerStep: Pages copied per step; below 1 is taken as 1.
    ///   - progress: Called with the pages copied so far (see ``DatabaseProgress``).
    /// - Throws: ``SqlCipherError/notEncrypted`` for an unencrypted database (its pages cannot be
    ///   copied into an encrypted file; use ``Database/encrypt(plaintextAt:to:key:cipher:progress:)``),
    ///   ``SqlCipherError/cannotOpen(path:reason:)`` when `target` exists,
    ///   ``SqlCipherError/conversionFailed(source:target:reason:)`` (also inside a raw `BEGIN` that
    ///   has written, and when another connection keeps the file locked past `busyTimeout`),
    ///   ``SqlCipherError/databaseClosed``,
    ///   `CancellationError`.
    public func backup(to target: String, key: DatabaseKey, pagesPerStep: Int = 256,
                       progress: (@Sendable (DatabaseProgress) -> Void)? = nil) async throws {
        guard let core = connection else { throw SqlCipherError.databaseClosed }
        guard isEncrypted else { throw SqlCipherError.notEncrypted }
        try Task.checkCancellation()
        let run = try core.asInternal {
            try HotBackup(source: core, sourcePath: path, target: target, key: key, cipher: cipherSettings,
                          pagesPerStep: pagesPerStep, sourceMayWrite: true, progress: progress)
        }
        // The counts the copy is verified against come from the snapshot of the step that ended
        // it: each step runs in a read transaction of its own, and the last one reads the counts
        // before it ends. Read after it, another process's commit in between made them differ
        // from the copy (always, beside a busy writer in WAL mode), and the backup failed its
        // verification although the copy was whole. Under the caller's own open transaction the
        // steps run in it, as before.
        var expected: Exporter.Contents?
        while expected == nil {
            expected = try core.asInternal { () -> Exporter.Contents? in
                let snapshot = !core.isInTransaction
                if snapshot {
                    // A read starts the read transaction: a step that found none would open and
                    // close its own, and the counts would come from a later snapshot.
                    try core.execute("BEGIN")
                    _ = try core.scalar("PRAGMA main.schema_version")
                }
                defer { if snapshot && core.isInTransaction { _ = try? core.execute("COMMIT") } }
                return try run.step() ? Exporter.contents(of: core, schema: "main") : nil
            }
            if expected != nil { break }
            // Other calls run on the actor here.
            await Task.yield()
            try Task.checkCancellation()
            guard connection === core else { throw SqlCipherError.databaseClosed }
        }
        try core.asInternal { try run.finish(expected: expected!) }
    }
}

extension DatabasePool {
    /// Copies the live pool's database into a new encrypted file at `target`, from one reader's
    /// snapshot, while the writer goes on.
    ///
    /// ```swift
    /// try await pool.backup(to: "/backups/store.db", key: .rawKey(backupKey))
    /// ```
    ///
    /// One reader holds a read transaction for the whole copy, so the copy is the database as it
    /// was when the backup started, whatever commits meanwhile; the writer is not blocked, and
    /// other reads use the other readers. Everything else (the copy beside the target, the
    /// verification, the errors) is as for ``Database/backup(to:key:pagesPerStep:progress:)``.
    public func backup(to target: String, key: DatabaseKey, pagesPerStep: Int = 256,
                       progress: (@Sendable (DatabaseProgress) -> Void)? = nil) async throws {
        guard isEncrypted else { throw SqlCipherError.notEncrypted }
        let path = self.path
        let cipher = cipherSettings
        try await _withConnection(.snapshot) { conn in
            let core = conn.core
            try core.inSavepoint(readOnly: true) {
                try core.asInternal {
                    // The snapshot begins at the first read.
                    let expected = try Exporter.contents(of: core, schema: "main")
                    let run = try HotBackup(source: core, sourcePath: path, target: target, key: key, cipher: cipher,
                                            pagesPerStep: pagesPerStep, sourceMayWrite: false, progress: progress)
                    while try !run.step() {
                        try Task.checkCancellation()
                    }
                    try run.finish(expected: expected)
                }
            }
        }
    }
}
