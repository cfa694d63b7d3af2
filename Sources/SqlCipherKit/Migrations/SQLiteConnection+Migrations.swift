import CSqlCipherBridge
import Foundation

/// The migration runner's shared names and signals.
enum MigrationRunner {
    enum Direction {
        case up, down
    }

    static let createTable = """
        CREATE TABLE IF NOT EXISTS "main"."_migrations" ("id" TEXT PRIMARY KEY NOT NULL, "applied_at" TEXT NOT NULL)
        """
}

extension SQLiteConnection {
    /// SQLite's version number, e.g. `3046001` (https://sqlite.org/c3ref/libversion.html).
    var sqliteVersionNumber: Int { Int(scb_sqlite_version_number()) }

    /// Whether foreign-key constraints are enforced on this connection (https://sqlite.org/pragma.html#pragma_foreign_keys).
    func foreignKeysEnabled() throws -> Bool {
        try asInternal { try scalar("PRAGMA foreign_keys") == .integer(1) }
    }

    /// The first table of the main schema (`table` itself included) with a foreign key that
    /// references `table`, or nil. A table rebuild under enforced foreign keys is safe only when
    /// this is nil: dropping the old table then deletes no row that a foreign-key action or check
    /// would see, and renaming the new one rewrites no reference.
    func tableReferencing(_ table: String) throws -> String? {
        let tables = try asInternal {
            try query("SELECT name FROM main.sqlite_master WHERE type = 'table' ORDER BY name")
                .compactMap { $0.get(0, as: String.self) }
        }
        for name in tables {
            let keys = try asInternal { try foreignKeys(of: name, schema: "main") }
            if keys.contains(where: { SQLTokenizer.sameIdentifier($0.table, table) }) { return name }
        }
        return nil
    }

    /// Prepares `sql` and throws its error, without running it: compiling a statement also compiles
    /// the triggers it would fire, so this proves that the schema they refer to exists.
    func compileOnly(_ sql: String) throws {
        try Self.refuseNUL(in: sql)
        var statement: OpaquePointer?
        let compiled = compile(sql, statement: &statement)
        if let statement { scb_finalize(statement) }
        guard compiled.rc == 0 else { throw compiled.error(sql: sql, on: self) }
    }

    /// The ids recorded in `_migrations`, in the order they were applied, each once.
    ///
    /// The table is named with its schema everywhere (a `TEMP` table of that name would otherwise
    /// take the records, which vanish at close, so every migration ran again on the next opening),
    /// and its shape is checked before it is read: a table changed outside the package (another
    /// program's `_migrations`, a column of another type) is refused with a message that names
    /// it, instead of failing with a bare type mismatch or `no such column: rowid`.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for a table that is not the runner's.
    func appliedMigrationIDs() throws -> [String] {
        try asInternal {
            // Another kind of object of that name (a view, an index) or a trigger on the table
            // would take, change or drop the records: every migration then ran again each time.
            let objects = try query(#"""
                SELECT "type", "name" FROM "main"."sqlite_master"
                WHERE "name" = '_migrations' COLLATE NOCASE
                   OR ("type" = 'trigger' AND "tbl_name" = '_migrations' COLLATE NOCASE)
                """#).map { ($0.get(0, as: String.self) ?? "", $0.get(1, as: String.self) ?? "") }
            if let other = objects.first(where: { $0.0 != "table" }) {
                throw Self.foreignMigrationsTable(
                    other.0 == "trigger" ? "it has a trigger, \"\(other.1)\"" : "it is a \(other.0), not a table")
            }
            guard try tableExists("_migrations", schema: "main") else { return [] }
            let columns = try query(#"PRAGMA "main".table_info("_migrations")"#).compactMap { $0.get(1, as: String.self) }
            guard columns.contains("id") && columns.contains("applied_at") else {
                throw Self.foreignMigrationsTable(
                    "its columns are \(columns.map { "\"\($0)\"" }.joined(separator: ", ")), not \"id\" and \"applied_at\"")
            }
            do {
                try compileOnly(#"SELECT rowid FROM "main"."_migrations""#)
            } catch {
                throw Self.foreignMigrationsTable("it is a WITHOUT ROWID table, which keeps no order of application")
            }
            var ids: [String] = []
            var seen = Set<String>()
            for row in try query(#"SELECT "id" FROM "main"."_migrations" ORDER BY rowid"#) {
                guard case .text(let id) = row[0] else {
                    throw Self.foreignMigrationsTable(
                        "a row's \"id\" holds \(row[0].kindDescription), where the runner writes a migration's id as text")
                }
                if seen.insert(id).inserted { ids.append(id) }
            }
            return ids
        }
    }

    /// The refusal of a `_migrations` table that the runner did not write.
    static func foreignMigrationsTable(_ what: String) -> SqlCipherError {
        .invalidQuery(
            reason: "the table \"_migrations\", where SqlCipherKit records the migrations applied, was changed outside "
                + "SqlCipherKit (\(what)), so which migrations ran cannot be told and nothing was migrated or rolled back. "
                + "Restore it as CREATE TABLE \"_migrations\" (\"id\" TEXT PRIMARY KEY NOT NULL, \"applied_at\" TEXT NOT "
                + "NULL) holding the id of each applied migration, or rename it if another program owns it")
    }

    /// Applies every migration of `migrations` not yet recorded, in order, each in its own transaction.
    func migrate(_ migrations: [any Migration], forceTableRebuild: Bool = false) throws {
        try checkMigrationList(migrations)
        try asInternal { _ = try execute(MigrationRunner.createTable) }
        let applied = try appliedMigrationIDs()
        let known = Set(migrations.map(\.id))
        let unknown = applied.filter { !known.contains($0) }
        guard unknown.isEmpty else { throw SqlCipherError.unknownAppliedMigrations(ids: unknown) }
        let done = Set(applied)
        for migration in migrations where !done.contains(migration.id) {
            try run(migration, .up, known: known, forceTableRebuild: forceTableRebuild)
        }
    }

    /// Reverses, newest first, every applied migration from `id` to the end of `migrations`.
    func rollback(to id: String, using migrations: [any Migration], forceTableRebuild: Bool = false) throws {
        try checkMigrationList(migrations)
        let applied = try appliedMigrationIDs()
        let known = Set(migrations.map(\.id))
        let unknown = applied.filter { !known.contains($0) }
        guard unknown.isEmpty else { throw SqlCipherError.unknownAppliedMigrations(ids: unknown) }
        let done = Set(applied)
        guard let target = migrations.firstIndex(where: { $0.id == id }), done.contains(id) else {
            throw SqlCipherError.unknownMigration(id: id)
        }
        for migration in migrations[target...].reversed() where done.contains(migration.id) {
            try run(migration, .down, known: known, forceTableRebuild: forceTableRebuild)
        }
    }

    private func checkMigrationList(_ migrations: [any Migration]) throws {
        guard !isInTransaction else {
            throw SqlCipherError.invalidQuery(
                reason: "migrations cannot run inside a transaction, because each runs in its own and foreign keys "
                    + "can only be switched off outside one; commit or roll back first")
        }
        var seen = Set<String>()
        for migration in migrations {
            guard !migration.id.isEmpty else {
                throw SqlCipherError.invalidQuery(reason: "a migration has an empty id; give every migration a unique id")
            }
            guard seen.insert(migration.id).inserted else {
                throw SqlCipherError.invalidQuery(
                    reason: "two migrations have the id \"\(migration.id)\"; ids must be unique")
            }
        }
    }

    /// Runs one migration step, once, in its own transaction, with foreign keys as the migration
    /// declares (``Migration/foreignKeyChecks``):
    /// - ``ForeignKeyChecks/immediate``: as the connection has them; when they are enforced,
    ///   `PRAGMA foreign_key_check` runs before the commit (it catches deferred constraints and
    ///   rows that were orphans before).
    /// - ``ForeignKeyChecks/deferred``: when the connection enforces them, switched off before the
    ///   transaction (SQLite ignores the pragma inside one), checked with `foreign_key_check`
    ///   before the commit, and switched back on after it, whatever happened.
    /// A failure is ``SqlCipherError/migrationFailed(id:reason:)``, but for a failed check
    /// (``SqlCipherError/foreignKeyViolation(table:rowid:parent:)``) and a missing `down`
    /// (``SqlCipherError/migrationNotReversible(id:)``), which keep their own type.
    private func run(_ migration: any Migration, _ direction: MigrationRunner.Direction, known: Set<String>,
                     forceTableRebuild: Bool) throws {
        do {
            let enforced = try foreignKeysEnabled()
            switch migration.foreignKeyChecks {
            case .immediate:
                try attempt(migration, direction, known: known, forceTableRebuild: forceTableRebuild, checkForeignKeys: enforced)
            case .deferred where enforced:
                try withForeignKeysOff {
                    try attempt(migration, direction, known: known, forceTableRebuild: forceTableRebuild, checkForeignKeys: true)
                }
            case .deferred:
                try attempt(migration, direction, known: known, forceTableRebuild: forceTableRebuild, checkForeignKeys: false)
            }
        } catch let error as SqlCipherError {
            switch error {
            case .migrationNotReversible, .migrationFailed, .foreignKeyViolation, .unknownAppliedMigrations:
                throw error
            case let .perConnectionPragma(name, _):
                throw SqlCipherError.migrationFailed(
                    id: migration.id,
                    reason: "it sets PRAGMA \(name), a setting of the connection rather than of the file: the rollback of a "
                        + "failed migration would not undo it, and it would stay set for every later call on this "
                        + "connection (and for none of a pool's other connections). Set it when the database opens, with "
                        + "DatabaseConfiguration's prepareConnection, or outside the migration; for foreign keys, declare "
                        + "foreignKeyChecks = .deferred on the migration")
            default:
                throw SqlCipherError.migrationFailed(id: migration.id, reason: error.description)
            }
        } catch {
            throw SqlCipherError.migrationFailed(id: migration.id, reason: String(describing: error))
        }
    }

    /// Runs `body` with foreign keys off, and switches them back on when it returns or throws.
    /// The package's own pragmas (asPackage): a pool refuses them as raw SQL.
    private func withForeignKeysOff<T>(_ body: () throws -> T) throws -> T {
        try asPackage { _ = try execute("PRAGMA foreign_keys = OFF") }
        defer { interruptGate.shielded { asPackage { _ = try? execute("PRAGMA foreign_keys = ON") } } }
        guard try !foreignKeysEnabled() else {
            throw SqlCipherError.invalidQuery(reason: "foreign keys could not be switched off for the migration")
        }
        return try body()
    }

    private func attempt(_ migration: any Migration, _ direction: MigrationRunner.Direction, known: Set<String>,
                         forceTableRebuild: Bool, checkForeignKeys: Bool) throws {
        let context = MigrationContext(core: self, migrationID: migration.id, forceTableRebuild: forceTableRebuild)
        defer { context.invalidate() }
        let attachedBefore = try attachedSchemas()
        do {
            try inTransaction {
                // The list of applied migrations was read before this transaction took the write
                // lock: another connection (another process migrating the same file at the same
                // time) may have applied, or rolled back, this one since. Read again under the
                // lock, and leave a step already taken alone: run again, it failed with "table …
                // already exists" or a missing column, where the file was already migrated.
                //
                // The same holds for a migration another program recorded meanwhile, one this list
                // does not have (another version of the program, or another branch, migrating at
                // the same moment): refused here as it is before the first step, rather than
                // applying this list's migrations over a schema this program does not know (both
                // calls succeeded, and the file then opened with neither list), or rolling back
                // the ones it was built on.
                let recordedIDs = try asInternal {
                    try query(#"SELECT "id" FROM "main"."_migrations" ORDER BY rowid"#).compactMap { $0.get(0, as: String.self) }
                }
                var unknown: [String] = []
                for id in recordedIDs where !known.contains(id) && !unknown.contains(id) { unknown.append(id) }
                guard unknown.isEmpty else { throw SqlCipherError.unknownAppliedMigrations(ids: unknown) }
                let recorded = recordedIDs.contains(migration.id)
                guard recorded == (direction == .down) else { return }
                try scope.with(.migration) {
                    switch direction {
                    case .up: try migration.up(context)
                    case .down: try migration.down(context)
                    }
                }
                if let refusal = context.refusedRebuild { throw refusal }
                switch direction {
                case .up:
                    try asInternal {
                        _ = try execute(#"INSERT INTO "main"."_migrations" ("id", "applied_at") VALUES (?, ?)"#,
                                        [.text(migration.id), .text(DatabaseDateFormat.string(from: Date()))])
                    }
                case .down:
                    try asInternal { _ = try execute(#"DELETE FROM "main"."_migrations" WHERE "id" = ?"#, [.text(migration.id)]) }
                }
                if checkForeignKeys { try checkForeignKeyViolations() }
            }
        } catch {
            detachSchemas(except: attachedBefore)
            // A migration that caught the refusal of its rebuild fails with it all the same.
            if let refusal = context.refusedRebuild { throw refusal }
            throw error
        }
    }

    /// The schemas attached to the connection (`main` and `temp` excepted).
    private func attachedSchemas() throws -> Set<String> {
        try asInternal {
            Set(try query("PRAGMA database_list").compactMap { $0.get(1, as: String.self) }
                .filter { $0 != "main" && $0 != "temp" })
        }
    }

    /// Detaches what a failed migration attached: its rollback does not undo an `ATTACH`, and the
    /// name, still in use, made every retry of the migration fail ('database … is already in use').
    private func detachSchemas(except kept: Set<String>) {
        guard let attached = try? attachedSchemas() else { return }
        for schema in attached.subtracting(kept) {
            let quoted = SQLRenderer.quotedName(schema)
            interruptGate.shielded { asInternal { _ = try? execute("DETACH \(quoted)") } }
        }
    }

    /// Throws ``SqlCipherError/foreignKeyViolation(table:rowid:parent:)`` for the first row that
    /// `PRAGMA foreign_key_check` reports (https://sqlite.org/pragma.html#pragma_foreign_key_check).
    func checkForeignKeyViolations() throws {
        guard let row = try asInternal({ try query("PRAGMA foreign_key_check").first }) else { return }
        throw SqlCipherError.foreignKeyViolation(
            table: row.get(0, as: String.self) ?? "", rowid: row.get(1, as: Int64.self),
            parent: row.get(2, as: String.self) ?? "")
    }
}
