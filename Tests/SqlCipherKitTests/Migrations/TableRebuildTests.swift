import Foundation
import Synchronization
import Testing
@testable import SqlCipherKit

/// Renaming and dropping columns: natively where SQLite can (4.x), and by the documented table
/// rebuild on SQLite 3.15 (3.4.1) or when forced. Every test runs both ways where both exist.
@Suite struct TableRebuildTests {
    static let parent = TableName("parent")

    /// A parent table with an AUTOINCREMENT key, a CHECK, two indexes (one partial), a trigger and
    /// a child table whose foreign key cascades deletes.
    static let schema = StepMigration("001-schema", up: { ctx in
        try ctx.execute("""
            CREATE TABLE parent(
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                name TEXT NOT NULL CHECK (length(name) > 0),
                note TEXT,
                legacy TEXT DEFAULT 'old',
                code TEXT
            )
            """)
        try ctx.execute("CREATE INDEX parent_by_name ON parent(name)")
        try ctx.execute("CREATE UNIQUE INDEX parent_code ON parent(code) WHERE code IS NOT NULL")
        try ctx.execute("CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id) ON DELETE CASCADE)")
        try ctx.execute("CREATE TABLE log(msg TEXT)")
        try ctx.execute("""
            CREATE TRIGGER parent_renamed AFTER UPDATE OF name ON parent
            BEGIN INSERT INTO log(msg) VALUES ('renamed ' || NEW.name); END
            """)
        try ctx.execute("""
            INSERT INTO parent(name, note, legacy, code) VALUES ('a', 'n1', 'x', 'A'), ('b', 'n2', 'y', NULL),
                ('c', 'n3', 'z', 'C')
            """)
        try ctx.execute("DELETE FROM parent WHERE id = 3")
        try ctx.execute("INSERT INTO child(parent_id) VALUES (1), (2), (2)")
        try ctx.execute("CREATE TABLE notes(body TEXT, extra TEXT)")
        try ctx.execute("INSERT INTO notes VALUES ('one', 1), ('two', 2), ('three', 3)")
        try ctx.execute("DELETE FROM notes WHERE body = 'one'")
    })

    func expectSchemaIntact(_ db: Database, nameColumn: String) async throws {
        #expect(try await db.builderSchemaNames("index") == ["parent_by_name", "parent_code"])
        #expect(try await db.builderSchemaNames("trigger") == ["parent_renamed"])
        // Every child row survived: the rebuild's DROP TABLE did not cascade.
        #expect(try await db.builderScalarInt("SELECT count(*) FROM child") == 3)
        #expect(try await db.query("PRAGMA foreign_key_check").isEmpty)
        #expect(try await db.builderScalarInt("PRAGMA foreign_keys") == 1)
        // The AUTOINCREMENT counter survived: id 3 was used and deleted, so the next is 4.
        try await db.execute("INSERT INTO parent(\(nameColumn)) VALUES ('d')")
        #expect(try await db.builderScalarInt("SELECT max(id) FROM parent") == 4)
        // The trigger still fires, with the current column name.
        try await db.execute("UPDATE parent SET \(nameColumn) = 'aa' WHERE id = 1")
        #expect(try await db.query("SELECT msg FROM log").map { $0["msg"] } == [.text("renamed aa")])
        // The CHECK still holds.
        await #expect(throws: SqlCipherError.self) {
            try await db.execute("UPDATE parent SET \(nameColumn) = '' WHERE id = 1")
        }
        // Indexes are used and the partial unique index still constrains.
        await #expect(throws: SqlCipherError.self) {
            try await db.execute("UPDATE parent SET code = 'A' WHERE id = 2")
        }
        let plan = try await db.query("EXPLAIN QUERY PLAN SELECT * FROM parent WHERE \(nameColumn) = 'b'")
        #expect(plan.contains { ($0["detail"].flatMap { String.fromDatabaseValue($0) } ?? "").contains("parent_by_name") })
    }

    @Test(arguments: [false, true])
    func dropColumnKeepsDataIndexesTriggersAndKeys(forceTableRebuild: Bool) async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let drop = StepMigration("002-drop", foreignKeyChecks: .deferred, up: { ctx in
            try ctx.execute(AlterTable(Self.parent, dropColumn: "legacy"))
            try ctx.execute(AlterTable(TableName("notes"), dropColumn: "extra"))
        })
        try await db.migrate([Self.schema, drop], forceTableRebuild: forceTableRebuild)
        #expect(try await db.builderColumns("parent") == ["id", "name", "note", "code"])
        let rows = try await db.query("SELECT id, name, note, code FROM parent ORDER BY id")
        #expect(rows.map { $0.values.map { $0 } } == [
            [.integer(1), .text("a"), .text("n1"), .text("A")],
            [.integer(2), .text("b"), .text("n2"), .null],
        ])
        // Rowids of a table without INTEGER PRIMARY KEY are kept.
        let notes = try await db.query("SELECT rowid, * FROM notes ORDER BY rowid")
        #expect(notes.map { $0.values.map { $0 } } == [[.integer(2), .text("two")], [.integer(3), .text("three")]])
        try await expectSchemaIntact(db, nameColumn: "name")
    }

    @Test(arguments: [false, true])
    func renameColumnRewritesIndexesTriggersAndChecks(forceTableRebuild: Bool) async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let rename = StepMigration("002-rename", foreignKeyChecks: .deferred, up: { ctx in
            try ctx.execute(AlterTable(Self.parent, renameColumn: "name", to: "title"))
        }, down: { ctx in
            try ctx.execute(AlterTable(Self.parent, renameColumn: "title", to: "name"))
        })
        try await db.migrate([Self.schema, rename], forceTableRebuild: forceTableRebuild)
        #expect(try await db.builderColumns("parent") == ["id", "title", "note", "legacy", "code"])
        #expect(try await db.query("SELECT title FROM parent ORDER BY id").map { $0["title"] } == [.text("a"), .text("b")])
        try await expectSchemaIntact(db, nameColumn: "title")

        try await db.rollback(to: "002-rename", using: [Self.schema, rename], forceTableRebuild: forceTableRebuild)
        #expect(try await db.builderColumns("parent") == ["id", "name", "note", "legacy", "code"])
        #expect(try await db.builderSchemaNames("index") == ["parent_by_name", "parent_code"])
        #expect(try await db.builderScalarInt("SELECT count(*) FROM child") == 3)
    }

    @Test(arguments: [false, true])
    func unsafeDropsAreRefusedAndChangeNothing(forceTableRebuild: Bool) async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.migrate([Self.schema], forceTableRebuild: forceTableRebuild)
        let before = try await db.query("SELECT sql FROM sqlite_master ORDER BY name")
        // Indexed, primary key, used in a trigger, referenced by a foreign key, used in a partial index.
        for column in ["name", "id", "code"] {
            let drop = StepMigration("002-drop-\(column)", foreignKeyChecks: .deferred, up: { ctx in
                try ctx.execute(AlterTable(Self.parent, dropColumn: column))
            })
            await #expect(throws: SqlCipherError.self, "\(column)") {
                try await db.migrate([Self.schema, drop], forceTableRebuild: forceTableRebuild)
            }
        }
        #expect(try await db.query("SELECT sql FROM sqlite_master ORDER BY name").map { $0["sql"] } == before.map { $0["sql"] })
        #expect(try await db.appliedMigrations() == ["001-schema"])
        #expect(try await db.builderScalarInt("PRAGMA foreign_keys") == 1)
        #expect(try await db.builderScalarInt("SELECT count(*) FROM child") == 3)
    }

    @Test(arguments: [false, true])
    func triggerUsingAKeywordNamedColumnBlocksTheDrop(forceTableRebuild: Bool) async throws {
        // The scan skips unquoted keywords, so only the final compile of the triggers catches this.
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let schema = StepMigration("001", up: { ctx in
            try ctx.execute("CREATE TABLE kv(id INTEGER PRIMARY KEY, key TEXT, value TEXT)")
            try ctx.execute("CREATE TABLE audit(k TEXT)")
            try ctx.execute("CREATE TRIGGER kv_added AFTER INSERT ON kv BEGIN INSERT INTO audit VALUES (NEW.key); END")
            try ctx.execute("INSERT INTO kv(key, value) VALUES ('a', 'b')")
        })
        let drop = StepMigration("002", foreignKeyChecks: .deferred, up: { ctx in
            try ctx.execute(AlterTable(TableName("kv"), dropColumn: "key"))
        })
        await #expect(throws: SqlCipherError.self) {
            try await db.migrate([schema, drop], forceTableRebuild: forceTableRebuild)
        }
        #expect(try await db.builderColumns("kv") == ["id", "key", "value"])
        #expect(try await db.appliedMigrations() == ["001"])
    }

    @Test func rebuildRefusesARenameItCannotRewrite() async throws {
        // A bare column name in a trigger body might belong to any table of the statement; the
        // rebuild refuses rather than guess. (Native RENAME COLUMN parses the trigger and succeeds.)
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let trigger = StepMigration("002-trigger", up: { ctx in
            try ctx.execute("CREATE TRIGGER copy_note AFTER INSERT ON parent BEGIN UPDATE parent SET code = note WHERE id = NEW.id; END")
        })
        let rename = StepMigration("003-rename", foreignKeyChecks: .deferred, up: { ctx in
            try ctx.execute(AlterTable(Self.parent, renameColumn: "note", to: "remark"))
        })
        do {
            try await db.migrate([Self.schema, trigger, rename], forceTableRebuild: true)
            Issue.record("expected a refusal")
        } catch let SqlCipherError.migrationFailed(id, reason) {
            #expect(id == "003-rename")
            #expect(reason.contains("trigger \"copy_note\""))
        }
        #expect(try await db.builderColumns("parent").contains("note"))
        #expect(try await db.appliedMigrations() == ["001-schema", "002-trigger"])
    }

    @Test(arguments: [ForeignKeyChecks.immediate, .deferred])
    func upRunsOnceInEitherMode(foreignKeyChecks: ForeignKeyChecks) async throws {
        // A forced rebuild in the deferred migration, none in the immediate one (which would
        // refuse it): neither runs its `up` a second time.
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let calls = CallCounter()
        let once = StepMigration("002", foreignKeyChecks: foreignKeyChecks, up: { ctx in
            calls.increment()
            try ctx.execute("INSERT INTO log(msg) VALUES ('before')")
            if foreignKeyChecks == .deferred { try ctx.execute(AlterTable(Self.parent, dropColumn: "legacy")) }
            try ctx.execute("INSERT INTO log(msg) VALUES ('after')")
        })
        try await db.migrate([Self.schema, once], forceTableRebuild: true)
        #expect(calls.value == 1)
        #expect(try await db.query("SELECT msg FROM log").map { $0["msg"] } == [.text("before"), .text("after")])
        #expect(try await db.builderColumns("parent").contains("legacy") == (foreignKeyChecks == .immediate))
        #expect(try await db.appliedMigrations() == ["001-schema", "002"])
        #expect(try await db.builderScalarInt("PRAGMA foreign_keys") == 1)
        #expect(try await db.builderScalarInt("SELECT count(*) FROM child") == 3)
    }

    @Test func rebuildInAnImmediateMigrationFailsOnceWithWhatToDeclare() async throws {
        // On 3.4.1 every DROP COLUMN is a rebuild; forced on 4.6.1. A migration that catches the
        // refusal fails with it all the same, and nothing of it is applied.
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let calls = CallCounter()
        let immediate = StepMigration("002-drop-legacy", up: { ctx in
            calls.increment()
            try ctx.execute("INSERT INTO log(msg) VALUES ('before')")
            try? ctx.execute(AlterTable(Self.parent, dropColumn: "legacy"))
        })
        do {
            try await db.migrate([Self.schema, immediate], forceTableRebuild: true)
            Issue.record("expected a refusal")
        } catch let SqlCipherError.migrationFailed(id, reason) {
            #expect(id == "002-drop-legacy")
            #expect(reason.contains("foreignKeyChecks = ForeignKeyChecks.deferred"))
        }
        #expect(calls.value == 1)
        #expect(try await db.appliedMigrations() == ["001-schema"])
        #expect(try await db.builderColumns("parent").contains("legacy"))
        #expect(try await db.builderScalarInt("SELECT count(*) FROM log") == 0)
        #expect(try await db.builderScalarInt("PRAGMA foreign_keys") == 1)

        // The same for a `down`: an immediate rollback that needs a rebuild is refused.
        let addThenDrop = StepMigration("002-add", up: { ctx in
            try ctx.execute(AlterTable(Self.parent, addColumn: "extra", .text))
        }, down: { ctx in
            try ctx.execute(AlterTable(Self.parent, dropColumn: "extra"))
        })
        try await db.migrate([Self.schema, addThenDrop], forceTableRebuild: true)
        await #expect(throws: SqlCipherError.self) {
            try await db.rollback(to: "002-add", using: [Self.schema, addThenDrop], forceTableRebuild: true)
        }
        #expect(try await db.appliedMigrations() == ["001-schema", "002-add"])
        #expect(try await db.builderColumns("parent").contains("extra"))
    }

    /// The seed README's `AddDiscountColumn` declares no `foreignKeyChecks`, and its `down` drops a
    /// column: on 3.4.1 (and forced on 4.6.1) every such rebuild was refused while foreign keys were
    /// on, so the README's rollback failed. A table that no foreign key references is rebuilt in an
    /// immediate migration now; one that any foreign key references, its own included, is not.
    @Test func aTableNoForeignKeyReferencesIsRebuiltInAnImmediateMigration() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let products = MigrationRunnerTests.products
        let create = MigrationRunnerTests.createProducts
        // As the seed README writes it: no foreignKeyChecks declared (MigrationRunnerTests' own
        // addDiscount declares .deferred).
        let addDiscount = StepMigration("002-add-discount", up: { ctx in
            try ctx.execute(AlterTable(products, addColumn: "discount", .real, .default(0.0)))
        }, down: { ctx in
            try ctx.execute(AlterTable(products, dropColumn: "discount"))
        })
        let migrations = [create, addDiscount]
        try await db.migrate(migrations, forceTableRebuild: true)
        try await db.execute("INSERT INTO products(name, price, discount) VALUES ('Widget', 9.99, 1.5)")
        try await db.rollback(to: "002-add-discount", using: migrations, forceTableRebuild: true)
        #expect(try await db.builderColumns("products") == ["id", "name", "price"])
        #expect(try await db.query("SELECT id, name FROM products").map { $0["name"] } == [.text("Widget")])
        #expect(try await db.appliedMigrations() == ["001-create-products"])
        #expect(try await db.builderScalarInt("PRAGMA foreign_keys") == 1)

        // A table that references another (and is referenced by none) is rebuilt too, its rows
        // checked against its own foreign key as they are copied.
        let other = try builderTestDatabase(dir, "schema.db")
        let dropFromChild = StepMigration("002-child-extra", up: { ctx in
            try ctx.execute(AlterTable(TableName("child"), addColumn: "extra", .text))
            try ctx.execute(AlterTable(TableName("child"), dropColumn: "extra"))
        })
        try await other.migrate([Self.schema, dropFromChild], forceTableRebuild: true)
        #expect(try await other.builderColumns("child") == ["id", "parent_id"])
        #expect(try await other.builderScalarInt("SELECT count(*) FROM child") == 3)
        #expect(try await other.foreignKeys(of: "child").map(\.table) == ["parent"])

        // Referenced by another table ("parent", by "child") or by itself: refused, naming it.
        let selfReferencing = StepMigration("003-tree", up: { ctx in
            try ctx.execute("CREATE TABLE tree(id INTEGER PRIMARY KEY, up INTEGER REFERENCES tree(id) ON DELETE CASCADE, note TEXT)")
            try ctx.execute("INSERT INTO tree VALUES (1, NULL, 'root'), (2, 1, 'leaf')")
        })
        let dropTreeNote = StepMigration("004-tree-note", up: { ctx in
            try ctx.execute(AlterTable(TableName("tree"), dropColumn: "note"))
        })
        let dropParentNote = StepMigration("004-parent-note", up: { ctx in
            try ctx.execute(AlterTable(Self.parent, dropColumn: "note"))
        })
        for (migration, child) in [(dropTreeNote, "tree"), (dropParentNote, "child")] {
            do {
                try await other.migrate([Self.schema, dropFromChild, selfReferencing, migration], forceTableRebuild: true)
                Issue.record("expected a refusal of \(migration.id)")
            } catch let SqlCipherError.migrationFailed(id, reason) {
                #expect(id == migration.id)
                #expect(reason.contains("a foreign key of table \"\(child)\" references it"), "\(reason)")
                #expect(reason.contains("ForeignKeyChecks.deferred"))
            }
        }
        #expect(try await other.builderScalarInt("SELECT count(*) FROM tree") == 2)
        #expect(try await other.builderColumns("tree").contains("note"))
    }

    @Test func cascadeHappensInAnImmediateMigration() async throws {
        // Foreign keys stay on: deleting a parent deletes its children, as in the app.
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let delete = StepMigration("002-delete-b", up: { ctx in
            try ctx.execute("DELETE FROM parent WHERE id = 2")
        })
        try await db.migrate([Self.schema, delete])
        #expect(try await db.builderScalarInt("SELECT count(*) FROM child") == 1)
        #expect(try await db.appliedMigrations() == ["001-schema", "002-delete-b"])
    }

    @Test func orphanIsRefusedInADeferredMigration() async throws {
        // Foreign keys off: the same delete cascades nothing and leaves orphans, which the check
        // before the commit reports with its own type; the migration is rolled back.
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let delete = StepMigration("002-delete-b", foreignKeyChecks: .deferred, up: { ctx in
            try ctx.execute("DELETE FROM parent WHERE id = 2")
        })
        do {
            try await db.migrate([Self.schema, delete])
            Issue.record("expected a foreign-key violation")
        } catch let SqlCipherError.foreignKeyViolation(table, _, parent) {
            #expect(table == "child")
            #expect(parent == "parent")
        }
        #expect(try await db.builderScalarInt("SELECT count(*) FROM parent") == 2)
        #expect(try await db.builderScalarInt("SELECT count(*) FROM child") == 3)
        #expect(try await db.appliedMigrations() == ["001-schema"])
        #expect(try await db.builderScalarInt("PRAGMA foreign_keys") == 1)
    }

    @Test func foreignKeyViolationInARebuildMigrationRollsBack() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let orphan = StepMigration("002", foreignKeyChecks: .deferred, up: { ctx in
            try ctx.execute(AlterTable(Self.parent, dropColumn: "legacy"))
            // With foreign keys off for the rebuild, only the check before commit can catch this.
            try ctx.execute("INSERT INTO child(parent_id) VALUES (999)")
        })
        await #expect(throws: SqlCipherError.foreignKeyViolation(table: "child", rowid: 4, parent: "parent")) {
            try await db.migrate([Self.schema, orphan], forceTableRebuild: true)
        }
        #expect(try await db.builderColumns("parent").contains("legacy"))
        #expect(try await db.builderScalarInt("SELECT count(*) FROM child") == 3)
        #expect(try await db.builderScalarInt("PRAGMA foreign_keys") == 1)
    }

    /// `INTEGER PRIMARY KEY DESC` is not the rowid (https://sqlite.org/lang_createtable.html#rowid):
    /// the rebuild keeps the table's separate rowids too. (Read from the declared type alone, the
    /// key looked like the rowid and the rows were renumbered 1, 2.)
    @Test func rebuildKeepsTheRowidBesideAnIntegerPrimaryKeyDesc() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let schema = StepMigration("001", up: { ctx in
            try ctx.execute("CREATE TABLE stamps(id INTEGER PRIMARY KEY DESC, label TEXT, extra TEXT)")
            try ctx.execute("INSERT INTO stamps(rowid, id, label, extra) VALUES (10, 1, 'a', 'x'), (20, 2, 'b', 'y')")
        })
        let drop = StepMigration("002", foreignKeyChecks: .deferred, up: { ctx in
            try ctx.execute(AlterTable(TableName("stamps"), dropColumn: "extra"))
        })
        try await db.migrate([schema, drop], forceTableRebuild: true)
        #expect(try await db.builderColumns("stamps") == ["id", "label"])
        let rows = try await db.query("SELECT rowid, id, label FROM stamps ORDER BY rowid")
        #expect(rows.map { $0.get(0, as: Int.self) } == [10, 20])
        #expect(rows.map { $0.get(1, as: Int.self) } == [1, 2])
    }

    @Test func renameTableAndRenameColumnWithChildReferences() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let renameTable = StepMigration("002", up: { ctx in
            try ctx.execute(AlterTable(Self.parent, renameTo: "owners"))
        })
        try await db.migrate([Self.schema, renameTable])
        // Renaming a referenced table updates the child's foreign key (foreign keys are on).
        let childSQL = try await db.query("SELECT sql FROM sqlite_master WHERE name = 'child'")[0].get("sql", as: String.self)
        #expect(childSQL?.contains("owners") == true)
        try await db.execute("DELETE FROM owners WHERE id = 2")
        #expect(try await db.builderScalarInt("SELECT count(*) FROM child") == 1)

        // A child's explicit reference to the column blocks a rebuild rename.
        try await db.execute("CREATE TABLE tagged(code TEXT REFERENCES owners(code))")
        let rename = StepMigration("003", foreignKeyChecks: .deferred, up: { ctx in
            try ctx.execute(AlterTable(TableName("owners"), renameColumn: "code", to: "ref"))
        })
        await #expect(throws: SqlCipherError.self) { try await db.migrate([Self.schema, renameTable, rename], forceTableRebuild: true) }
        #expect(try await db.builderColumns("owners").contains("code"))
    }
}

/// Counts calls from any thread (a migration's closures are `@Sendable`).
final class CallCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.wrappingAdd(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
