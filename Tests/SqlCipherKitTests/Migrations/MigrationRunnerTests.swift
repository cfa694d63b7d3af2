import Foundation
import Testing
@testable import SqlCipherKit

@Suite struct MigrationRunnerTests {
    static let products = TableName("products")

    static let createProducts = StepMigration("001-create-products", up: { ctx in
        try ctx.execute(CreateTable(products)
            .column("id", .integer, .primaryKey)
            .column("name", .text, .notNull)
            .column("price", .real, .notNull))
    }, down: { ctx in
        try ctx.execute(DropTable(products))
    })

    // Its down drops a column, a table rebuild on SQLite < 3.35 (or when forced).
    static let addDiscount = StepMigration("002-add-discount", foreignKeyChecks: .deferred, up: { ctx in
        try ctx.execute(AlterTable(products, addColumn: "discount", .real, .default(0.0)))
    }, down: { ctx in
        try ctx.execute(AlterTable(products, dropColumn: "discount"))
    })

    static let seedRows = StepMigration("003-seed", up: { ctx in
        try ctx.execute(Insert(into: products).set(col("name"), to: "Widget").set(col("price"), to: 9.99))
        try ctx.execute(CreateIndex("products_by_name", on: products, columns: "name"))
    }, down: { ctx in
        try ctx.execute(DropIndex("products_by_name"))
        try ctx.execute(Delete(products, allRows: true))
    })

    @Test func forwardThenRepeatedIsANoOp() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let migrations: [any Migration] = [Self.createProducts, Self.addDiscount, Self.seedRows]
        try await db.migrate(migrations)
        #expect(try await db.appliedMigrations() == ["001-create-products", "002-add-discount", "003-seed"])
        #expect(try await db.builderColumns("products") == ["id", "name", "price", "discount"])
        let recorded = try await db.query(#"SELECT "id", "applied_at" FROM "_migrations" ORDER BY rowid"#)
        #expect(recorded.count == 3)
        let appliedAt = try #require(recorded[0].get("applied_at", as: String.self))
        #expect(Date.fromDatabaseValue(.text(appliedAt)) != nil)

        try await db.migrate(migrations)
        try await db.migrate(migrations)
        #expect(try await db.builderScalarInt("SELECT count(*) FROM products") == 1)
        #expect(try await db.query(#"SELECT "applied_at" FROM "_migrations" ORDER BY rowid"#).first?["applied_at"]
            == .text(appliedAt))
        #expect(try await db.builderScalarInt("PRAGMA foreign_keys") == 1)
    }

    @Test func failureStopsWithNothingOfTheFailingMigrationApplied() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let broken = StepMigration("002-broken", up: { ctx in
            try ctx.execute(CreateTable(TableName("half")).column("id", .integer))
            try ctx.execute(Insert(into: Self.products).set(col("name"), to: "partial").set(col("price"), to: 1.0))
            try ctx.execute("INSERT INTO no_such_table VALUES (1)")
        })
        let later = StepMigration("003-later", up: { ctx in
            try ctx.execute(CreateTable(TableName("later")).column("id", .integer))
        })
        do {
            try await db.migrate([Self.createProducts, broken, later])
            Issue.record("expected a failure")
        } catch let SqlCipherError.migrationFailed(id, reason) {
            #expect(id == "002-broken")
            #expect(reason.contains("no_such_table"))
        }
        #expect(try await db.appliedMigrations() == ["001-create-products"])
        #expect(try await db.builderSchemaNames("table") == ["_migrations", "products"])
        #expect(try await db.builderScalarInt("SELECT count(*) FROM products") == 0)

        let fixed = StepMigration("002-broken", up: { ctx in
            try ctx.execute(CreateTable(TableName("half")).column("id", .integer))
        })
        try await db.migrate([Self.createProducts, fixed, later])
        #expect(try await db.appliedMigrations() == ["001-create-products", "002-broken", "003-later"])
    }

    @Test func foreignKeysAreCheckedBeforeCommit() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let schema = StepMigration("001", up: { ctx in
            try ctx.execute("CREATE TABLE parent(id INTEGER PRIMARY KEY)")
            try ctx.execute("""
                CREATE TABLE child(id INTEGER PRIMARY KEY,
                    parent_id INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)
                """)
        })
        // A deferred constraint lets the orphan in until commit; the check before commit stops it.
        let orphan = StepMigration("002-orphan", up: { ctx in
            try ctx.execute("INSERT INTO child(parent_id) VALUES (42)")
        })
        await #expect(throws: SqlCipherError.foreignKeyViolation(table: "child", rowid: 1, parent: "parent")) {
            try await db.migrate([schema, orphan])
        }
        #expect(try await db.appliedMigrations() == ["001"])
        #expect(try await db.builderScalarInt("SELECT count(*) FROM child") == 0)
    }

    @Test func divergentDatabaseIsAnError() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let newer = StepMigration("004-from-a-newer-app", up: { _ in })
        try await db.migrate([Self.createProducts, Self.addDiscount, newer])
        let extra = StepMigration("005-extra", up: { ctx in try ctx.execute("CREATE TABLE extra(x)") })
        await #expect(throws: SqlCipherError.unknownAppliedMigrations(ids: ["004-from-a-newer-app"])) {
            try await db.migrate([Self.createProducts, Self.addDiscount, extra])
        }
        #expect(try await db.builderSchemaNames("table").contains("extra") == false)
        await #expect(throws: SqlCipherError.unknownAppliedMigrations(ids: ["004-from-a-newer-app"])) {
            try await db.rollback(to: "002-add-discount", using: [Self.createProducts, Self.addDiscount])
        }
        #expect(try await db.builderColumns("products").contains("discount"))
    }

    /// A `_migrations` table changed outside the runner: each failed with a bare `typeMismatch`
    /// ('Column "id" holds integer 1, which cannot be read as String.') or SQLite's
    /// `no such column: rowid`, naming neither the table nor what to do; a view failed each
    /// migration, and a trigger that deleted the records had every migration run again each time.
    @Test(arguments: [
        ("CREATE TABLE _migrations(id, applied_at); INSERT INTO _migrations VALUES (1, 'x')", "integer 1"),
        ("CREATE TABLE _migrations(id, applied_at); INSERT INTO _migrations VALUES (NULL, 'x')", "NULL"),
        ("CREATE TABLE _migrations(id, applied_at); INSERT INTO _migrations VALUES (x'3030312d', 'x')", "blob"),
        ("CREATE TABLE _migrations(version INTEGER, applied_at)", "\"version\""),
        ("CREATE TABLE _migrations(id TEXT PRIMARY KEY, applied_at TEXT) WITHOUT ROWID", "WITHOUT ROWID"),
        ("CREATE VIEW _Migrations AS SELECT '001-create-products' AS id, '' AS applied_at", "view"),
        ("""
            CREATE TABLE _migrations(id TEXT PRIMARY KEY NOT NULL, applied_at TEXT NOT NULL);
            CREATE TRIGGER forget AFTER INSERT ON _migrations BEGIN DELETE FROM _migrations; END
            """, "trigger, \"forget\""),
    ])
    func aMigrationsTableChangedOutsideTheRunnerIsRefusedByName(tamper: String, named: String) async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute(tamper)
        func expectRefusal(_ call: String, _ body: () async throws -> Void) async {
            do {
                try await body()
                Issue.record("\(call) accepted the table changed by `\(tamper)`")
            } catch let SqlCipherError.invalidQuery(reason) {
                #expect(reason.contains("\"_migrations\"") && reason.contains(named) && reason.contains("Restore it"),
                        "\(call): \(reason)")
            } catch {
                Issue.record("\(call): \(error)")
            }
        }
        await expectRefusal("migrate") { try await db.migrate([Self.createProducts]) }
        await expectRefusal("appliedMigrations") { _ = try await db.appliedMigrations() }
        await expectRefusal("rollback") { try await db.rollback(to: Self.createProducts.id, using: [Self.createProducts]) }
        #expect(try await db.builderSchemaNames("table").contains("products") == false)
    }

    /// A per-connection pragma set in a migration outlived it: `PRAGMA query_only = ON` failed the
    /// migration ('attempt to write a readonly database' at its record), and every later write of
    /// the database failed too; `recursive_triggers` stayed on after a rollback; `foreign_keys`
    /// was silently a no-op inside the migration's transaction.
    @Test(arguments: [ForeignKeyChecks.immediate, .deferred])
    func aMigrationCannotSetAPerConnectionPragma(foreignKeyChecks: ForeignKeyChecks) async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        // Run once outside a migration first: the text must not come back from the statement cache.
        try await db.execute("PRAGMA recursive_triggers = ON")
        try await db.execute("PRAGMA recursive_triggers = OFF")
        let foreignKeys = try await db.builderScalarInt("PRAGMA foreign_keys")
        for pragma in ["PRAGMA query_only = ON", "PRAGMA recursive_triggers = OFF", "pragma Foreign_Keys=0",
                       "PRAGMA main.cache_size = 10"] {
            let migration = StepMigration("001-pragma", foreignKeyChecks: foreignKeyChecks, up: { ctx in
                try ctx.execute("CREATE TABLE made(x)")
                try ctx.execute(pragma)
            })
            do {
                try await db.migrate([migration])
                Issue.record("\(pragma) ran in a migration")
            } catch let SqlCipherError.migrationFailed(id, reason) {
                #expect(id == "001-pragma")
                #expect(reason.lowercased().contains("pragma") && reason.contains("setting of the connection"), "\(reason)")
            }
            #expect(try await db.appliedMigrations().isEmpty)
            #expect(try await db.builderSchemaNames("table").contains("made") == false)
            #expect(try await db.builderScalarInt("PRAGMA query_only") == 0)
            #expect(try await db.builderScalarInt("PRAGMA foreign_keys") == foreignKeys)
        }
        // Reading one is allowed, and the database still takes writes.
        let reads = StepMigration("002-read", foreignKeyChecks: foreignKeyChecks, up: { ctx in
            _ = try ctx.query("PRAGMA query_only")
            try ctx.execute("CREATE TABLE made(x)")
        })
        try await db.migrate([reads])
        try await db.execute("INSERT INTO made VALUES (1)")
        try await db.execute("PRAGMA recursive_triggers = ON")
    }

    /// An `ATTACH` in a failed migration stayed: the rollback does not undo it, and every retry
    /// of the migration failed with 'database side is already in use'.
    @Test(.enabled(if: isSQLCipher4(), "SQLite 3.15 (SQLCipher 3.4.1) refuses ATTACH inside a transaction, so a migration cannot attach"),
          arguments: [ForeignKeyChecks.immediate, .deferred])
    func aFailedMigrationDetachesWhatItAttached(foreignKeyChecks: ForeignKeyChecks) async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute("ATTACH ':memory:' AS kept")
        let failing = Failing()
        let migration = StepMigration("001-attach", foreignKeyChecks: foreignKeyChecks, up: { ctx in
            try ctx.execute("ATTACH ':memory:' AS side")
            try ctx.execute("CREATE TABLE side.copy(x)")
            try ctx.execute("CREATE TABLE made(x)")
            if failing.value { throw CancellationError() }
        })
        await #expect(throws: SqlCipherError.self) { try await db.migrate([migration]) }
        let schemas = try await db.query("PRAGMA database_list").compactMap { $0.get(1, as: String.self) }
        #expect(schemas == ["main", "kept"])
        failing.value = false
        try await db.migrate([migration])
        #expect(try await db.appliedMigrations() == ["001-attach"])
        #expect(try await db.builderSchemaNames("table").contains("made"))
        // A migration that succeeds keeps what it attached (SQLite cannot detach a schema written
        // in the open transaction); the caller detaches it.
        try await db.execute("DETACH side")
    }

    /// Whether the migration above fails, switched off for its retry.
    final class Failing: @unchecked Sendable {
        var value = true
    }

    @Test func recordsGoToTheMainTableAndEachIdIsListedOnce() async throws {
        let dir = TemporaryDirectory()
        // A TEMP table of the same name took the records (they vanished at close), so the
        // migrations ran again on the next opening and failed: 'table products already exists'.
        do {
            let db = try builderTestDatabase(dir)
            try await db.execute(#"CREATE TEMP TABLE "_migrations" ("id" TEXT PRIMARY KEY NOT NULL, "applied_at" TEXT NOT NULL)"#)
            try await db.migrate([Self.createProducts])
            #expect(try await db.builderScalarInt(#"SELECT count(*) FROM temp."_migrations""#) == 0)
            await db.close()
        }
        let reopened = try builderTestDatabase(dir)
        try await reopened.migrate([Self.createProducts, Self.addDiscount])
        #expect(try await reopened.appliedMigrations() == [Self.createProducts.id, Self.addDiscount.id])
        // A row repeated by hand is listed once, and rolling back removes it.
        try await reopened.execute(#"CREATE TABLE copy AS SELECT * FROM "_migrations""#)
        try await reopened.execute(#"DROP TABLE "_migrations""#)
        try await reopened.execute(#"CREATE TABLE "_migrations" ("id" TEXT NOT NULL, "applied_at" TEXT NOT NULL)"#)
        try await reopened.execute(#"INSERT INTO "_migrations" SELECT * FROM copy UNION ALL SELECT * FROM copy"#)
        #expect(try await reopened.appliedMigrations() == [Self.createProducts.id, Self.addDiscount.id])
        try await reopened.rollback(to: Self.addDiscount.id, using: [Self.createProducts, Self.addDiscount])
        #expect(try await reopened.appliedMigrations() == [Self.createProducts.id])
    }

    @Test(arguments: [false, true])
    func rollbackInReverseOrder(forceTableRebuild: Bool) async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let order = OrderLog()
        let logged: [any Migration] = [Self.createProducts, Self.addDiscount, Self.seedRows].map { migration in
            StepMigration(migration.id, foreignKeyChecks: migration.foreignKeyChecks, up: { try migration.up($0) }, down: { ctx in
                order.append(migration.id)
                try migration.down(ctx)
            })
        }
        try await db.migrate(logged, forceTableRebuild: forceTableRebuild)
        try await db.rollback(to: "002-add-discount", using: logged, forceTableRebuild: forceTableRebuild)
        // Each `down` runs once, the rebuild of 002's included (SQLite < 3.35, or forced).
        #expect(order.ids == ["003-seed", "002-add-discount"])
        #expect(try await db.appliedMigrations() == ["001-create-products"])
        #expect(try await db.builderColumns("products") == ["id", "name", "price"])
        #expect(try await db.builderSchemaNames("index").isEmpty)
        #expect(try await db.builderScalarInt("PRAGMA foreign_keys") == 1)

        await #expect(throws: SqlCipherError.unknownMigration(id: "nope")) {
            try await db.rollback(to: "nope", using: logged)
        }
        await #expect(throws: SqlCipherError.unknownMigration(id: "003-seed")) {
            try await db.rollback(to: "003-seed", using: logged)
        }
        try await db.migrate(logged, forceTableRebuild: forceTableRebuild)
        try await db.rollback(to: "001-create-products", using: logged, forceTableRebuild: forceTableRebuild)
        #expect(try await db.appliedMigrations() == [])
        #expect(try await db.builderSchemaNames("table") == ["_migrations"])
    }

    @Test func irreversibleMigrationStopsTheRollback() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let oneWay = StepMigration("002-one-way", up: { ctx in try ctx.execute("CREATE TABLE one_way(x)") })
        let last = StepMigration("003-last", up: { ctx in try ctx.execute("CREATE TABLE last(x)") },
                                 down: { ctx in try ctx.execute(DropTable(TableName("last"))) })
        let migrations: [any Migration] = [Self.createProducts, oneWay, last]
        try await db.migrate(migrations)
        await #expect(throws: SqlCipherError.migrationNotReversible(id: "002-one-way")) {
            try await db.rollback(to: "001-create-products", using: migrations)
        }
        // 003 was reversed before the runner reached 002; 002 and 001 stay applied.
        #expect(try await db.appliedMigrations() == ["001-create-products", "002-one-way"])
        #expect(try await db.builderSchemaNames("table") == ["_migrations", "one_way", "products"])
    }

    @Test func invalidListsAndTransactionsAreRejected() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        await #expect(throws: SqlCipherError.self) { try await db.migrate([Self.createProducts, Self.createProducts]) }
        await #expect(throws: SqlCipherError.self) { try await db.migrate([StepMigration("", up: { _ in })]) }
        try await db.execute("BEGIN")
        await #expect(throws: SqlCipherError.self) { try await db.migrate([Self.createProducts]) }
        try await db.execute("ROLLBACK")
        #expect(try await db.appliedMigrations() == [])
    }

    @Test func contextIsUnusableAfterItsMigration() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let box = ContextBox()
        try await db.migrate([StepMigration("001", up: { ctx in
            try ctx.execute("CREATE TABLE t(x)")
            box.store(ctx)
        })])
        let failure = try await db.transaction { _ in
            do {
                try box.use()
                return "no error"
            } catch {
                return String(describing: error)
            }
        }
        #expect(failure == SqlCipherError.connectionNotUsable.description)
    }

    @Test func hostileNamesAndDefaultsInSchema() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute("CREATE TABLE canary(x)")
        let table = TableName(#"t"; DROP TABLE canary; --"#)
        let text = "'); DROP TABLE canary; -- ünï 🙂 \"q\""
        try await db.migrate([StepMigration("001", up: { ctx in
            try ctx.execute(CreateTable(table)
                .column("id", .integer, .primaryKey)
                .column("a'b\"c", .text, .default(text))
                .column("n", .integer, .default(-7))
                .column("r", .real, .default(2.5))
                .column("b", .blob, .default(Data([0, 39, 34]))))
            try ctx.execute(CreateIndex("i\"; --", on: table, columns: "a'b\"c"))
            try ctx.execute(Insert(into: table).set(col("id"), to: 1))
        })])
        let row = try #require(try await db.query(Select(.all).from(table)).first)
        #expect(row["a'b\"c"] == .text(text))
        #expect(row["n"] == .integer(-7))
        #expect(row["r"] == .real(2.5))
        #expect(row["b"] == .blob(Data([0, 39, 34])))
        #expect(try await db.builderSchemaNames("table").contains("canary"))
        #expect(try await db.builderSchemaNames("index") == ["i\"; --"])
    }
}

/// Records the order of `down` calls across the migration closures.
final class OrderLog: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ id: String) { lock.withLock { storage.append(id) } }
    var ids: [String] { lock.withLock { storage } }
}

/// Smuggles a context out of its migration to prove it is dead afterwards.
final class ContextBox: @unchecked Sendable {
    private var context: MigrationContext?
    func store(_ context: MigrationContext) { self.context = context }
    func use() throws { try context?.execute("SELECT 1") }
}

/// Two connections migrating one file at once (two processes starting the same app version): the
/// second used to decide what to apply from the list of applied migrations it read before it had
/// the write lock, and ran again a migration the first had applied meanwhile: it failed with
/// `migrationFailed` ("table parent already exists", or a column the migration had dropped)
/// although the file was fully migrated. Each migration is now looked up again in its own
/// transaction, under the write lock, and skipped when another connection applied it.
@Suite(.serialized) struct ConcurrentMigrationTests {
    /// How long a test waits for the migrating call to read its list: only a hang exceeds it. It
    /// was 60 s, and a full run on 3.4.1 ran out of it twice in the same case (rollback, WAL): the
    /// call is a task, and the trace reaches the test through the cooperative pool, both of which
    /// the suite's other process tests can keep busy with their blocking waits on a two-core machine.
    static let hangGuard: DispatchTimeInterval = .seconds(300)

    /// Sequenced: the migrating `Database` has read its list (its trace says so) while another
    /// connection holds the write lock; that connection then applies the migration and commits.
    @Test func aMigrationAppliedByAnotherConnectionMeanwhileIsNotRunAgain() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        let key = rawKey(76)
        let holder = try Database(path: path, rawKey: key)
        try await holder.migrate([])  // creates _migrations, so the migrating call writes nothing before its list
        // The migrating call waits for the holder's write lock up to its busy timeout while this
        // test applies the migration on the holder: long here, so that only a hang exceeds it (the
        // default five seconds passed on a loaded machine, and the migration failed with busy).
        var configuration = DatabaseConfiguration()
        configuration.busyTimeout = .seconds(120)
        let migrating = try Database(path: path, rawKey: key, configuration: configuration)
        let listRead = DispatchSemaphore(value: 0)
        try await migrating.trace { event in
            if event.isInternal && event.sql.contains(#"FROM "main"."_migrations" ORDER BY rowid"#) { listRead.signal() }
        }
        try await holder.execute("BEGIN IMMEDIATE")
        let migration = StepMigration("001-notes", up: { try $0.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY)") })
        let run = Task { try await migrating.migrate([migration]) }
        let read = try await offThePool { listRead.wait(timeout: .now() + Self.hangGuard) == .success }
        try #require(read, "the migrating call did not read its list")
        // The other connection applies the same migration, as another process running it would.
        try await holder.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY)")
        try await holder.execute(#"INSERT INTO "_migrations" ("id", "applied_at") VALUES ('001-notes', 'now')"#)
        try await holder.execute("COMMIT")
        try await run.value
        #expect(try await migrating.appliedMigrations() == ["001-notes"])
        await migrating.close()
        await holder.close()
    }

    /// Two programs with different lists migrate one file at once (two versions of an app, or two
    /// branches): another process (the helper's `migrate-hold`) records a migration this list does
    /// not have while this call waits for the write lock, having read the applied list before. The
    /// call applied its own next migration over the other's (both succeeded, and the file then
    /// opened with neither list), or rolled its migrations back from under the other's. It now
    /// finds the unknown record under the lock and throws `unknownAppliedMigrations`, as it does
    /// when the record was there before it started, with nothing of its own step applied.
    @Test(arguments: ["migrate", "rollback"], [JournalMode.wal, .rollback])
    func aMigrationOfAnotherListRecordedMeanwhileStopsThisOne(action: String, mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db"), go = dir.path("go")
        let key = rawKey(78)
        let ours = ["001-a", "002-ours"].map { id in
            StepMigration(id, up: { try $0.execute("CREATE TABLE \"t_\(id)\"(x)") },
                          down: { try $0.execute("DROP TABLE \"t_\(id)\"") })
        }
        // migrate: 001-a is applied and 002-ours pending; the other program applies 002-theirs.
        // rollback: both are applied, and a newer program applies 003-theirs on top of 002-ours.
        let seed = try Database(path: path, rawKey: key, journalMode: mode)
        try await seed.migrate(action == "migrate" ? [ours[0]] : ours)
        await seed.close()
        let theirs = action == "migrate" ? "001-a,002-theirs" : "001-a,002-ours,003-theirs"
        let held = action == "migrate" ? "002-theirs" : "003-theirs"
        let other = try KillableChild(helperArguments: ["migrate-hold", path, "raw:" + hex(key), theirs, held, go])
        try #require(other.waitForLine(startingWith: "holding") != nil, "\(other.lines) \(other.standardError)")
        // Long: only a hang exceeds it (the call waits for the other's lock until the handshake).
        var configuration = DatabaseConfiguration()
        configuration.busyTimeout = .seconds(120)
        let db = try Database(path: path, rawKey: key, configuration: configuration)
        let listRead = DispatchSemaphore(value: 0)
        try await db.trace { event in
            if event.isInternal && event.sql.contains(#"FROM "main"."_migrations" ORDER BY rowid"#) { listRead.signal() }
        }
        let run = Task {
            if action == "migrate" { try await db.migrate(ours) } else { try await db.rollback(to: "002-ours", using: ours) }
        }
        let read = try await offThePool { listRead.wait(timeout: .now() + Self.hangGuard) == .success }
        try #require(read, "the call did not read its list")
        #expect(FileManager.default.createFile(atPath: go, contents: nil))
        #expect(other.waitForExit() == 0 && other.lines.last == "done", "\(other.lines) \(other.standardError)")
        await #expect(throws: SqlCipherError.unknownAppliedMigrations(ids: [held])) { try await run.value }
        let expected = action == "migrate" ? ["001-a", "002-theirs"] : ["001-a", "002-ours", "003-theirs"]
        #expect(try await db.appliedMigrations() == expected)
        let tables = try await db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 't\\_%' ESCAPE '\\'")
            .compactMap { $0.get(0, as: String.self) }.sorted()
        #expect(tables == expected.map { "t_" + $0 }, "the tables match the records")
        #expect(try await db.verifyIntegrity().isOK)
        await db.close()
    }

    /// Two processes (the helper's `migrate-run`, a `Database` and a `DatabasePool`) apply the same
    /// five migrations to one file at once: both succeed, whoever applies which, and the file holds
    /// each migration once.
    @Test func twoProcessesMigratingAtOnceBothSucceed() async throws {
        for round in 0..<3 {
            let dir = TemporaryDirectory()
            let path = dir.path("shared.db")
            let seed = try Database(path: path, key: "k")
            try await seed.execute("CREATE TABLE seed(x)")
            await seed.close()
            let children = try ["database", "pool"].map {
                try KillableChild(helperArguments: ["migrate-run", path, $0, "pass:k"])
            }
            let statuses = children.map { $0.waitForExit() }
            for (child, status) in zip(children, statuses) {
                #expect(status == 0 && child.lines.last == "done", "round \(round): \(child.lines) \(child.standardError)")
            }
            let applied = children.flatMap { $0.lines.filter { $0.hasPrefix("applying ") } }
            #expect(applied.count == 5, "round \(round): \(applied)")
            let db = try Database(path: path, key: "k")
            #expect(try await db.appliedMigrations().count == 5)
            #expect(try await db.verifyIntegrity().isOK)
            await db.close()
        }
    }
}
