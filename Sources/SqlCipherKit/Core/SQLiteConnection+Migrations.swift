import CSqlCipherBridge
import Foundation

/// The migration runner's shared names and signals.
enum MigrationRunner {
    /// Thrown when a table rebuild is needed while foreign keys are enforced; the runner then rolls
    /// back and runs the migration again with foreign keys off.
    struct NeedsForeignKeysOff: Error {}

    enum Direction {
        case up, down
    }

    static let createTable = """
        CREATE TABLE IF NOT EXISTS "_migrations" ("id" TEXT PRIMARY KEY NOT NULL, "applied_at" TEXT NOT NULL)
        """
}

extension SQLiteConnection {
    /// SQLite's version number, e.g. `3046001` (https://sqlite.org/c3ref/libversion.html).
    var sqliteVersionNumber: Int { Int(scb_sqlite_version_number()) }

    /// Whether foreign-key constraints are enforced on this connection (https://sqlite.org/pragma.html#pragma_foreign_keys).
    func foreignKeysEnabled() throws -> Bool {
        try asInternal { try scalar("PRAGMA foreign_keys") == .integer(1) }
    }

    /// Prepares `sql` and throws its error, without running it: compiling a statement also compiles
    /// the triggers it would fire, so this proves that the schema they refer to exists.
    func compileOnly(_ sql: String) throws {
        try Self.refuseNUL(in: sql)
        var statement: OpaquePointer?
        let rc = scb_prepare(handle, sql, -1, 0, &statement, nil)
        if let statement { scb_finalize(statement) }
        guard rc == 0 else { throw prepareError(rc, sql: sql) }
    }

    /// The ids recorded in `_migrations`, in the order they were applied.
    func appliedMigrationIDs() throws -> [String] {
        try asInternal {
            guard try tableExists("_migrations", schema: "main") else { return [] }
            return try query(#"SELECT "id" FROM "_migrations" ORDER BY rowid"#).map { try $0.decode(0, as: String.self) }
        }
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
            try run(migration, .up, forceTableRebuild: forceTableRebuild)
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
            try run(migration, .down, forceTableRebuild: forceTableRebuild)
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

    /// Runs one migration step in its own transaction. When it needs a table rebuild while foreign
    /// keys are enforced, the first attempt is rolled back and the step runs again with foreign
    /// keys off (which SQLite allows only outside a transaction), then `PRAGMA foreign_key_check`
    /// runs before the commit and enforcement is switched back on.
    private func run(_ migration: any Migration, _ direction: MigrationRunner.Direction,
                     forceTableRebuild: Bool) throws {
        do {
            let enforced = try foreignKeysEnabled()
            do {
                try attempt(migration, direction, forceTableRebuild: forceTableRebuild, checkForeignKeys: enforced)
            } catch is MigrationRunner.NeedsForeignKeysOff {
                // The package's own (asPackage): a pool refuses the pragma as raw SQL.
                try asInternal { try asPackage { _ = try execute("PRAGMA foreign_keys = OFF") } }
                defer { asInternal { asPackage { _ = try? execute("PRAGMA foreign_keys = ON") } } }
                guard try !foreignKeysEnabled() else {
                    throw SqlCipherError.invalidQuery(reason: "foreign keys could not be switched off for a table rebuild")
                }
                try attempt(migration, direction, forceTableRebuild: forceTableRebuild, checkForeignKeys: true)
            }
        } catch let error as SqlCipherError {
            switch error {
            case .migrationNotReversible, .migrationFailed:
                throw error
            default:
                throw SqlCipherError.migrationFailed(id: migration.id, reason: error.description)
            }
        } catch is MigrationRunner.NeedsForeignKeysOff {
            throw SqlCipherError.migrationFailed(
                id: migration.id, reason: "a table rebuild needs foreign keys off, and they stayed on")
        } catch {
            throw SqlCipherError.migrationFailed(id: migration.id, reason: String(describing: error))
        }
    }

    private func attempt(_ migration: any Migration, _ direction: MigrationRunner.Direction,
                         forceTableRebuild: Bool, checkForeignKeys: Bool) throws {
        let context = MigrationContext(core: self, forceTableRebuild: forceTableRebuild)
        defer { context.invalidate() }
        do {
            try inTransaction {
                switch direction {
                case .up: try migration.up(context)
                case .down: try migration.down(context)
                }
                if context.needsForeignKeysOff { throw MigrationRunner.NeedsForeignKeysOff() }
                switch direction {
                case .up:
                    try asInternal {
                        _ = try execute(#"INSERT INTO "_migrations" ("id", "applied_at") VALUES (?, ?)"#,
                                        [.text(migration.id), .text(DatabaseDateFormat.string(from: Date()))])
                    }
                case .down:
                    try asInternal { _ = try execute(#"DELETE FROM "_migrations" WHERE "id" = ?"#, [.text(migration.id)]) }
                }
                if checkForeignKeys { try checkForeignKeyViolations() }
            }
        } catch {
            // A migration that caught the rebuild's signal still gets its second attempt.
            if context.needsForeignKeysOff { throw MigrationRunner.NeedsForeignKeysOff() }
            throw error
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
