import Foundation
import SqlCipherKit

/// A migration made of one closure, for the crash-test list below.
struct HelperMigration: Migration {
    let id: String
    let foreignKeyChecks: ForeignKeyChecks
    let body: @Sendable (MigrationContext) throws -> Void

    /// Prints `applying ID` first, so that a parent can aim its kill at this migration.
    func up(_ ctx: MigrationContext) throws {
        report("applying \(id)")
        try body(ctx)
    }
}

/// The crash-test migrations: enough rows that a kill lands inside them, a hand-made table
/// rebuild that needs foreign keys off (with them on, its `DROP TABLE` would cascade into the
/// children), a column drop (the package's rebuild on SQLite 3.15, native on later ones) and an
/// update of every row. Their content is deterministic, so two runs of the same prefix give the
/// same schema and rows.
let crashTestMigrations: [any Migration] = [
    HelperMigration(id: "001-tables", foreignKeyChecks: .immediate) { ctx in
        try ctx.execute("""
            CREATE TABLE parent(id INTEGER PRIMARY KEY, name TEXT NOT NULL, legacy TEXT, body TEXT)
            """)
        try ctx.execute("""
            CREATE TABLE child(id INTEGER PRIMARY KEY,
                               parent_id INTEGER NOT NULL REFERENCES parent(id) ON DELETE CASCADE, note TEXT)
            """)
        try ctx.execute("""
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 6000)
            INSERT INTO parent SELECT i, 'name ' || i, 'legacy ' || i, printf('%0300d', i) FROM c
            """)
    },
    HelperMigration(id: "002-children", foreignKeyChecks: .immediate) { ctx in
        try ctx.execute("""
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 12000)
            INSERT INTO child SELECT i, (i + 1) / 2, printf('%0200d', i) FROM c
            """)
        try ctx.execute("CREATE INDEX child_by_parent ON child(parent_id)")
        try ctx.execute("CREATE INDEX parent_by_name ON parent(name)")
    },
    HelperMigration(id: "003-rebuild-parent", foreignKeyChecks: .deferred) { ctx in
        try ctx.execute("""
            CREATE TABLE parent_new(id INTEGER PRIMARY KEY, name TEXT NOT NULL CHECK (length(name) > 0),
                                    body TEXT, legacy TEXT)
            """)
        try ctx.execute("INSERT INTO parent_new SELECT id, name, body, legacy FROM parent")
        try ctx.execute("DROP TABLE parent")
        try ctx.execute("ALTER TABLE parent_new RENAME TO parent")
        try ctx.execute("CREATE INDEX parent_by_name ON parent(name)")
    },
    HelperMigration(id: "004-drop-legacy", foreignKeyChecks: .deferred) { ctx in
        try ctx.execute(AlterTable(TableName("parent"), dropColumn: "legacy"))
    },
    HelperMigration(id: "005-score", foreignKeyChecks: .immediate) { ctx in
        try ctx.execute("ALTER TABLE parent ADD COLUMN score INTEGER")
        try ctx.execute("UPDATE parent SET score = id * 2, body = upper(body) || 'x'")
        try ctx.execute("UPDATE child SET note = 'n' || note")
    },
]

/// Opens PATH (a `Database` or a `DatabasePool`, created if missing), prints `start`, applies the
/// first COUNT of the crash-test migrations (all without COUNT; each prints `applying ID` as it
/// begins), and prints `done`: the parent kills it (SIGKILL) at a moment of its choosing, or lets
/// it run to learn the schema after COUNT.
let migrateRunCommand = HelperCommand(
    name: "migrate-run",
    usage: "migrate-run PATH database|pool pass:<text>|raw:<hex> [COUNT]: applies the crash-test migrations"
) { arguments in
    guard (3...4).contains(arguments.count), ["database", "pool"].contains(arguments[1]) else {
        throw DatabaseHelperError(message: "usage: migrate-run PATH database|pool KEY [COUNT]")
    }
    let (path, kind) = (arguments[0], arguments[1])
    let key = try HelperKey(arguments[2]).requiredKey(by: "migrate-run")
    var list = crashTestMigrations
    if arguments.count == 4 {
        guard let count = Int(arguments[3]), (0...list.count).contains(count) else {
            throw DatabaseHelperError(message: "COUNT is 0...\(list.count)")
        }
        list = Array(list.prefix(count))
    }
    let migrations = list
    try runBlocking {
        if kind == "pool" {
            let pool = try DatabasePool(path: path, key: key)
            report("start")
            try await pool.migrate(migrations)
            await pool.close()
        } else {
            let db = try Database(path: path, key: key)
            report("start")
            try await db.migrate(migrations)
            await db.close()
        }
    }
    report("done")
    return 0
}
