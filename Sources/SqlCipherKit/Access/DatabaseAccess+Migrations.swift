extension DatabaseAccess {
    /// Applies, in order, every migration of `migrations` that the database has not recorded yet.
    ///
    /// ```swift
    /// let migrations: [any Migration] = [CreateProductsTable(), AddDiscountColumn()]
    /// try await db.migrate(migrations)   // safe to call at every launch
    /// ```
    ///
    /// Applied ids are recorded in the `_migrations` table (`id TEXT PRIMARY KEY, applied_at TEXT`,
    /// the time in UTC). Each pending migration runs once, in its own transaction together with its
    /// record, with foreign keys as it declares (``Migration/foreignKeyChecks``), and when foreign
    /// keys are enforced `PRAGMA foreign_key_check` must find no violation before it commits. The
    /// first failure rolls that migration back entirely and stops: later migrations are not
    /// attempted, earlier ones stay applied. Calling `migrate` again applies nothing.
    ///
    /// - Throws: ``SqlCipherError/unknownAppliedMigrations(ids:)`` when the database records ids the
    ///   list does not contain (a database migrated by a newer program), before changing anything,
    ///   or, when another program records one while this call runs, before its next migration
    ///   (those it applied before stay applied);
    ///   ``SqlCipherError/foreignKeyViolation(table:rowid:parent:)`` when the check before the
    ///   commit finds one; ``SqlCipherError/migrationFailed(id:reason:)`` for any other failure
    ///   (a table rebuild in a migration that does not declare ``ForeignKeyChecks/deferred``
    ///   included);
    ///   ``SqlCipherError/invalidQuery(reason:)`` for duplicate or empty ids, or inside a transaction.
    public func migrate(_ migrations: [any Migration]) async throws {
        try await _withConnection(.write) { try $0.core.migrate(migrations) }
    }

    /// Reverses every applied migration from the one called `id` to the end of `migrations`, newest
    /// first, each in its own transaction with its record removed.
    ///
    /// ```swift
    /// // Undo AddDiscountColumn and everything applied after it.
    /// try await db.rollback(to: "002-add-discount", using: migrations)
    /// ```
    ///
    /// Each `down` runs once, with foreign keys as its migration declares
    /// (``Migration/foreignKeyChecks``). A failure stops the rollback: the migrations reversed so
    /// far stay reversed, the failing one and those before it stay applied.
    /// - Throws: ``SqlCipherError/unknownMigration(id:)`` when `id` is not in the list or not applied;
    ///   ``SqlCipherError/migrationNotReversible(id:)`` for a migration without `down`;
    ///   ``SqlCipherError/foreignKeyViolation(table:rowid:parent:)``;
    ///   ``SqlCipherError/migrationFailed(id:reason:)``; ``SqlCipherError/unknownAppliedMigrations(ids:)``,
    ///   also when another program records such an id while the rollback runs, before its next step.
    public func rollback(to id: String, using migrations: [any Migration]) async throws {
        try await _withConnection(.write) { try $0.core.rollback(to: id, using: migrations) }
    }

    /// The ids of the applied migrations, in the order they were applied.
    public func appliedMigrations() async throws -> [String] {
        try await _withConnection(.read) { try $0.core.appliedMigrationIDs() }
    }

    /// `migrate` with the table-rebuild path forced on every SQLite version, for tests.
    func migrate(_ migrations: [any Migration], forceTableRebuild: Bool) async throws {
        try await _withConnection(.write) { try $0.core.migrate(migrations, forceTableRebuild: forceTableRebuild) }
    }

    /// `rollback` with the table-rebuild path forced on every SQLite version, for tests.
    func rollback(to id: String, using migrations: [any Migration], forceTableRebuild: Bool) async throws {
        try await _withConnection(.write) { try $0.core.rollback(to: id, using: migrations, forceTableRebuild: forceTableRebuild) }
    }
}
