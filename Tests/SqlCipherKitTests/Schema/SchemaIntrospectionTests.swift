import Foundation
import SqlCipherKit
import Testing

/// Schema introspection (`tableExists`, `columns`, `indexes`, `primaryKey`, `foreignKeys`,
/// `triggers`, `views`) on both libraries: every field of every result, the SQLite 3.15 gaps,
/// attached encrypted schemas, hostile names, and the three ways in (Database, DatabasePool,
/// Connection inside a body).
@Suite struct SchemaIntrospectionTests {
    /// What `ColumnInfo.kind` is on the loaded library: the given kind where SQLite has
    /// `PRAGMA table_xinfo` (3.26+), `.unknown` on SQLCipher 3.4.1's SQLite 3.15.
    func kind(_ kind: ColumnInfo.Kind) -> ColumnInfo.Kind {
        sqliteVersionIsAtLeast(3_026_000) ? kind : .unknown
    }

    func database(_ dir: TemporaryDirectory, _ name: String = "schema.db") throws -> Database {
        try Database(path: dir.path(name), rawKey: rawKey())
    }

    static let hex = rawKey(2).map { String(format: "%02x", $0) }.joined()

    /// Creates an encrypted database (another key) holding one table, index, trigger and view.
    func makeArchive(_ path: String) async throws {
        let archive = try Database(path: path, rawKey: rawKey(2))
        try await archive.execute("""
            CREATE TABLE old_notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL, year INT DEFAULT 2020);
            CREATE INDEX old_by_year ON old_notes(year);
            CREATE VIEW old_bodies AS SELECT body FROM old_notes;
            CREATE TRIGGER old_touch AFTER UPDATE ON old_notes BEGIN SELECT 1; END;
            """)
        await archive.close()
        let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16)
        #expect(header != Data("SQLite format 3\0".utf8), "the attached database is encrypted")
    }

    // MARK: Columns

    @Test func columnsReportEveryField() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        try await db.execute("""
            CREATE TABLE people(
                id INTEGER PRIMARY KEY,
                name VARCHAR(20) NOT NULL DEFAULT 'nobody',
                score REAL DEFAULT 1.5,
                born TEXT DEFAULT CURRENT_TIMESTAMP,
                misc)
            """)
        let columns = try await db.columns(in: "people")
        #expect(columns == [
            ColumnInfo(name: "id", declaredType: "INTEGER", isNotNull: false, defaultValueSQL: nil, primaryKeyIndex: 1,
                       kind: kind(.ordinary)),
            ColumnInfo(name: "name", declaredType: "VARCHAR(20)", isNotNull: true, defaultValueSQL: "'nobody'",
                       primaryKeyIndex: 0, kind: kind(.ordinary)),
            ColumnInfo(name: "score", declaredType: "REAL", isNotNull: false, defaultValueSQL: "1.5", primaryKeyIndex: 0,
                       kind: kind(.ordinary)),
            ColumnInfo(name: "born", declaredType: "TEXT", isNotNull: false, defaultValueSQL: "CURRENT_TIMESTAMP",
                       primaryKeyIndex: 0, kind: kind(.ordinary)),
            ColumnInfo(name: "misc", declaredType: "", isNotNull: false, defaultValueSQL: nil, primaryKeyIndex: 0,
                       kind: kind(.ordinary)),
        ])
        // A view has columns too.
        try await db.execute("CREATE VIEW named AS SELECT name AS who FROM people")
        #expect(try await db.columns(in: "named").map(\.name) == ["who"])
        await db.close()
    }

    /// Generated columns (SQLite 3.31+) are listed with their kind; `PRAGMA table_info` alone would
    /// leave them out.
    @Test(.enabled(if: sqliteVersionIsAtLeast(3_031_000))) func generatedColumnsOnSQLCipher4() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        try await db.execute("""
            CREATE TABLE boxes(w INT NOT NULL, h INT NOT NULL,
                area INT GENERATED ALWAYS AS (w * h) VIRTUAL,
                label TEXT AS ('box ' || w || 'x' || h) STORED)
            """)
        let columns = try await db.columns(in: "boxes")
        #expect(columns.map(\.name) == ["w", "h", "area", "label"])
        #expect(columns.map(\.kind) == [.ordinary, .ordinary, .generatedVirtual, .generatedStored])
        #expect(columns[2] == ColumnInfo(name: "area", declaredType: "INT", isNotNull: false, defaultValueSQL: nil,
                                         primaryKeyIndex: 0, kind: .generatedVirtual))
        await db.close()
    }

    /// The hidden columns of a virtual table: marked `.hidden` where `table_xinfo` exists; on
    /// SQLite 3.15 they are not in the list and every kind is `.unknown`.
    @Test func hiddenColumnsOfAVirtualTable() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        try await db.execute("CREATE VIRTUAL TABLE docs USING fts4(body)")
        let columns = try await db.columns(in: "docs")
        if sqliteVersionIsAtLeast(3_026_000) {
            #expect(columns.map(\.name) == ["body", "docs", "docid", "__langid"])
            #expect(columns.map(\.kind) == [.ordinary, .hidden, .hidden, .hidden])
        } else {
            #expect(columns == [ColumnInfo(name: "body", declaredType: "", isNotNull: false, defaultValueSQL: nil,
                                           primaryKeyIndex: 0, kind: .unknown)])
        }
        #expect(try await db.tableExists("docs"))
        await db.close()
    }

    /// A column and an index added after a first look are seen by the next one.
    @Test func answersFollowSchemaChanges() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        try await db.execute("CREATE TABLE t(a)")
        #expect(try await db.columns(in: "t").map(\.name) == ["a"])
        #expect(try await db.indexes(on: "t").isEmpty)
        try await db.execute("ALTER TABLE t ADD COLUMN b TEXT; CREATE INDEX t_b ON t(b)")
        #expect(try await db.columns(in: "t").map(\.name) == ["a", "b"])
        #expect(try await db.indexes(on: "t").map(\.name) == ["t_b"])
        await db.close()
    }

    // MARK: Keys and indexes

    @Test func primaryKeysOfEveryKind() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        try await db.execute("""
            CREATE TABLE alias(id INTEGER PRIMARY KEY, v);
            CREATE TABLE hidden(v);
            CREATE TABLE taken(rowid TEXT, v);
            CREATE TABLE unnamed(ROWID, _rowid_, Oid);
            CREATE TABLE named(code TEXT PRIMARY KEY, v);
            CREATE TABLE descending(id INTEGER PRIMARY KEY DESC, v);
            CREATE TABLE pairs(a TEXT NOT NULL, b INT NOT NULL, c, PRIMARY KEY (b, a)) WITHOUT ROWID;
            """)
        #expect(try await db.primaryKey(of: "alias") == PrimaryKeyInfo(columns: ["id"], kind: .rowIDAlias))
        #expect(try await db.primaryKey(of: "hidden") == PrimaryKeyInfo(columns: ["rowid"], kind: .hiddenRowID))
        #expect(try await db.primaryKey(of: "taken") == PrimaryKeyInfo(columns: ["_rowid_"], kind: .hiddenRowID))
        #expect(try await db.primaryKey(of: "unnamed") == PrimaryKeyInfo(columns: [], kind: .hiddenRowID),
                "columns take all three names of the rowid")
        #expect(try await db.primaryKey(of: "named") == PrimaryKeyInfo(columns: ["code"], kind: .columns))
        // INTEGER PRIMARY KEY DESC is not the rowid (https://sqlite.org/lang_createtable.html#rowid).
        #expect(try await db.primaryKey(of: "descending") == PrimaryKeyInfo(columns: ["id"], kind: .columns))
        let pairs = try await db.primaryKey(of: "pairs")
        #expect(pairs == PrimaryKeyInfo(columns: ["b", "a"], kind: .withoutRowID))
        #expect(!pairs.isRowID && !pairs.tableHasRowID)
        #expect(try await db.primaryKey(of: "alias").isRowID)
        #expect(try await db.primaryKey(of: "named").tableHasRowID)

        // The positions in the composite key, from the columns.
        #expect(try await db.columns(in: "pairs").map(\.primaryKeyIndex) == [2, 1, 0])
        // The WITHOUT ROWID table's key is its index of origin pk.
        #expect(try await db.indexes(on: "pairs") == [
            IndexInfo(name: "sqlite_autoindex_pairs_1", isUnique: true,
                      columns: [.init(name: "b", isDescending: false, collation: "BINARY"),
                                .init(name: "a", isDescending: false, collation: "BINARY")],
                      isPartial: false, origin: .primaryKey),
        ])
        await db.close()
    }

    /// Unique constraints, partial indexes, expressions (a nil name), DESC and collations.
    @Test func indexesReportEveryField() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        try await db.execute("""
            CREATE TABLE tasks(id INTEGER PRIMARY KEY, owner TEXT, title TEXT, done INT, code TEXT UNIQUE);
            CREATE INDEX open_by_owner ON tasks(owner, lower(title) DESC) WHERE done = 0;
            CREATE UNIQUE INDEX by_title ON tasks(title COLLATE NOCASE);
            """)
        let indexes = try await db.indexes(on: "tasks")
        #expect(indexes == [
            IndexInfo(name: "by_title", isUnique: true,
                      columns: [.init(name: "title", isDescending: false, collation: "NOCASE")],
                      isPartial: false, origin: .createIndex),
            IndexInfo(name: "open_by_owner", isUnique: false,
                      columns: [.init(name: "owner", isDescending: false, collation: "BINARY"),
                                .init(name: nil, isDescending: true, collation: "BINARY")],
                      isPartial: true, origin: .createIndex),
            IndexInfo(name: "sqlite_autoindex_tasks_1", isUnique: true,
                      columns: [.init(name: "code", isDescending: false, collation: "BINARY")],
                      isPartial: false, origin: .uniqueConstraint),
        ])
        await db.close()
    }

    @Test func foreignKeysAreGroupedWithTheirActions() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        try await db.execute("""
            CREATE TABLE slots(order_id INTEGER, position INTEGER, PRIMARY KEY (order_id, position));
            CREATE TABLE owners(id INTEGER PRIMARY KEY);
            CREATE TABLE lines(
                order_id INTEGER, n INTEGER,
                owner INTEGER REFERENCES owners ON UPDATE SET NULL ON DELETE RESTRICT,
                FOREIGN KEY (order_id, n) REFERENCES slots(order_id, position) ON DELETE CASCADE ON UPDATE SET DEFAULT);
            """)
        let keys = try await db.foreignKeys(of: "lines")
        #expect(keys.count == 2)
        let composite = try #require(keys.first { $0.table == "slots" })
        #expect(composite.columns == [.init(from: "order_id", to: "order_id"), .init(from: "n", to: "position")])
        #expect(composite.onDelete == .cascade && composite.onUpdate == .setDefault)
        let single = try #require(keys.first { $0.table == "owners" })
        #expect(single.columns == [.init(from: "owner", to: nil)], "no parent column named: the parent's key")
        #expect(single.onUpdate == .setNull && single.onDelete == .restrict)
        #expect(Set(keys.map(\.id)).count == 2)
        #expect(try await db.foreignKeys(of: "owners").isEmpty)
        // Reported whether or not enforcement is on.
        try await db.execute("CREATE TABLE plain(x REFERENCES owners(id))")
        #expect(try await db.foreignKeys(of: "plain") == [
            ForeignKeyInfo(id: 0, table: "owners", columns: [.init(from: "x", to: "id")], onUpdate: .noAction,
                           onDelete: .noAction),
        ])
        await db.close()
    }

    @Test func triggersAndViews() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        #expect(try await db.triggers().isEmpty)
        #expect(try await db.views().isEmpty)
        try await db.execute("""
            CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
            CREATE VIEW recent AS SELECT * FROM notes ORDER BY id DESC LIMIT 10;
            CREATE VIEW bodies AS SELECT body FROM notes;
            CREATE TRIGGER notes_touch AFTER UPDATE ON notes BEGIN SELECT 1; END;
            CREATE TRIGGER recent_insert INSTEAD OF INSERT ON recent BEGIN INSERT INTO notes(body) VALUES (new.body); END;
            """)
        #expect(try await db.views() == ["bodies", "recent"])
        #expect(try await db.triggers() == [TriggerInfo(name: "notes_touch", table: "notes"),
                                            TriggerInfo(name: "recent_insert", table: "recent")])
        // A view is not a table.
        #expect(try await !db.tableExists("recent"))
        await db.close()
    }

    // MARK: Missing tables and schemas

    /// `tableExists` answers false; every question about one table throws `tableNotFound`; a view
    /// answers `columns` only.
    @Test func missingTablesAndViews() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        try await db.execute("CREATE TABLE Present(a); CREATE VIEW seen AS SELECT a FROM Present")
        #expect(try await !db.tableExists("absent"))
        #expect(try await db.tableExists("PRESENT"), "names compare as SQLite compares them: ASCII case ignored")
        let missing = SqlCipherError.tableNotFound(table: "absent", schema: "main")
        await #expect(throws: missing) { try await db.columns(in: "absent") }
        await #expect(throws: missing) { try await db.indexes(on: "absent") }
        await #expect(throws: missing) { try await db.primaryKey(of: "absent") }
        await #expect(throws: missing) { try await db.foreignKeys(of: "absent") }
        let view = SqlCipherError.tableNotFound(table: "seen", schema: "main")
        await #expect(throws: view) { try await db.indexes(on: "seen") }
        await #expect(throws: view) { try await db.primaryKey(of: "seen") }
        await #expect(throws: view) { try await db.foreignKeys(of: "seen") }
        #expect(try await db.columns(in: "seen").map(\.name) == ["a"])
        #expect(missing.description.contains("tableExists"))
        // SQLite's own tables count when the schema lists them; the schema table itself does not.
        try await db.execute("CREATE TABLE counted(id INTEGER PRIMARY KEY AUTOINCREMENT)")
        #expect(try await db.tableExists("sqlite_sequence"))
        #expect(try await !db.tableExists("sqlite_master"))
        await db.close()
    }

    /// The columns of a view whose table, column or function is gone: SQLite compiles the view to
    /// find them and fails with a bare "no such table: main.base", which named neither the view
    /// nor what to do. The error now names the view and the remedies; the other views still answer.
    @Test func aViewThatNoLongerCompilesIsNamedWithTheRemedy() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        try await db.execute("""
            CREATE TABLE base(id INTEGER PRIMARY KEY, x, y);
            CREATE VIEW "lost table" AS SELECT x FROM base;
            CREATE VIEW lost_column AS SELECT y FROM base;
            CREATE TABLE other(a);
            CREATE VIEW fine AS SELECT a FROM other;
            """)
        #expect(try await db.columns(in: "lost table").map(\.name) == ["x"])
        try await db.execute("ALTER TABLE base RENAME TO base2")
        try await db.execute("CREATE TABLE base(id INTEGER PRIMARY KEY, x)")
        try await db.execute("DROP TABLE base2")
        for (view, missing) in [("lost_column", "y"), ("lost table", nil)] {
            if missing == nil { try await db.execute("DROP TABLE base") }
            let error = await #expect(throws: SqlCipherError.self) { try await db.columns(in: view) }
            guard case .sqlite(let code, _, _, _)? = error else {
                Issue.record("expected SQLite's error, got \(String(describing: error))")
                continue
            }
            #expect(code == 1)
            let message = error?.description ?? ""
            #expect(message.contains("the view \"\(view)\"") && message.contains("DROP VIEW"), "\(message)")
        }
        #expect(try await db.columns(in: "fine").map(\.name) == ["a"])
        #expect(try await db.views() == ["fine", "lost table", "lost_column"])
        try await db.read { conn in
            let error = #expect(throws: SqlCipherError.self) { try conn.columns(in: "lost_column") }
            #expect(error?.description.contains("no longer compiles") == true)
        }
        await db.close()
    }

    @Test func aSchemaThatIsNotAttachedIsATypedError() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        try await db.execute("CREATE TABLE t(a)")
        let error = await #expect(throws: SqlCipherError.self) { try await db.columns(in: "t", schema: "nowhere") }
        guard case let .schemaNotFound(schema, available)? = error else {
            Issue.record("expected schemaNotFound, got \(String(describing: error))")
            return
        }
        #expect(schema == "nowhere" && available.contains("main") && available.contains("temp"))
        #expect(error?.description.contains("ATTACH") == true)
        for call in [{ _ = try await db.tableExists("t", in: "nowhere") }, { _ = try await db.triggers(schema: "nowhere") },
                     { _ = try await db.views(schema: "nowhere") }, { _ = try await db.indexes(on: "t", schema: "nowhere") }] {
            await #expect(throws: SqlCipherError.schemaNotFound(schema: "nowhere", available: available)) { try await call() }
        }
        // The temp schema is always there.
        let (inTemp, inMain, key) = try await db.transaction { conn in
            try conn.execute("CREATE TEMP TABLE scratch(x INTEGER PRIMARY KEY)")
            return try (conn.tableExists("scratch", in: "temp"), conn.tableExists("scratch"),
                        conn.primaryKey(of: "scratch", schema: "TEMP").kind)
        }
        #expect(inTemp && !inMain && key == .rowIDAlias)
        await db.close()
    }

    // MARK: Attached schemas and hostile names

    @Test func anAttachedEncryptedSchema() async throws {
        let dir = TemporaryDirectory()
        try await makeArchive(dir.path("archive.db"))
        let db = try database(dir)
        try await db.execute("ATTACH '\(dir.path("archive.db"))' AS arch KEY 'x''\(Self.hex)'''")
        #expect(try await db.tableExists("old_notes", in: "arch"))
        #expect(try await !db.tableExists("old_notes"))
        #expect(try await db.columns(in: "old_notes", schema: "arch") == [
            ColumnInfo(name: "id", declaredType: "INTEGER", isNotNull: false, defaultValueSQL: nil, primaryKeyIndex: 1,
                       kind: kind(.ordinary)),
            ColumnInfo(name: "body", declaredType: "TEXT", isNotNull: true, defaultValueSQL: nil, primaryKeyIndex: 0,
                       kind: kind(.ordinary)),
            ColumnInfo(name: "year", declaredType: "INT", isNotNull: false, defaultValueSQL: "2020", primaryKeyIndex: 0,
                       kind: kind(.ordinary)),
        ])
        #expect(try await db.indexes(on: "old_notes", schema: "ARCH").map(\.name) == ["old_by_year"])
        #expect(try await db.primaryKey(of: "old_notes", schema: "arch").kind == .rowIDAlias)
        #expect(try await db.foreignKeys(of: "old_notes", schema: "arch").isEmpty)
        #expect(try await db.views(schema: "arch") == ["old_bodies"])
        #expect(try await db.triggers(schema: "arch") == [TriggerInfo(name: "old_touch", table: "old_notes")])
        #expect(try await db.views().isEmpty)
        #expect(try await db.triggers().isEmpty)
        await #expect(throws: SqlCipherError.schemaNotFound(schema: "archive", available: ["main", "arch", "temp"])) {
            try await db.views(schema: "archive")
        }
        await #expect(throws: SqlCipherError.tableNotFound(table: "old_notes", schema: "main")) {
            try await db.columns(in: "old_notes")
        }
        await db.close()
    }

    /// Quotes, spaces, SQL fragments and unicode in table, column, index, trigger, view and schema
    /// names arrive as names.
    @Test func hostileNames() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        let table = "we\"ird 'tab); DROP TABLE x; --"
        let column = "col \"ü😀\" 'q'"
        let q = { (name: String) in "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        try await db.execute("""
            CREATE TABLE x(a);
            CREATE TABLE \(q(table))(\(q(column)) TEXT PRIMARY KEY DEFAULT 'it''s', \(q("ref")) REFERENCES \(q(table)));
            CREATE INDEX \(q("idx \"😀\"")) ON \(q(table))(\(q(column)) DESC);
            CREATE VIEW \(q("v'iew \" ß")) AS SELECT * FROM \(q(table));
            CREATE TRIGGER \(q("tr\"ig")) AFTER DELETE ON \(q(table)) BEGIN SELECT 1; END;
            """)
        #expect(try await db.tableExists(table))
        #expect(try await db.columns(in: table) == [
            ColumnInfo(name: column, declaredType: "TEXT", isNotNull: false, defaultValueSQL: "'it''s'", primaryKeyIndex: 1,
                       kind: kind(.ordinary)),
            ColumnInfo(name: "ref", declaredType: "", isNotNull: false, defaultValueSQL: nil, primaryKeyIndex: 0,
                       kind: kind(.ordinary)),
        ])
        #expect(try await db.indexes(on: table).map(\.name) == ["idx \"😀\"", "sqlite_autoindex_\(table)_1"])
        #expect(try await db.indexes(on: table)[0].columns == [.init(name: column, isDescending: true, collation: "BINARY")])
        #expect(try await db.primaryKey(of: table) == PrimaryKeyInfo(columns: [column], kind: .columns))
        #expect(try await db.foreignKeys(of: table).map(\.table) == [table])
        #expect(try await db.views() == ["v'iew \" ß"])
        #expect(try await db.triggers() == [TriggerInfo(name: "tr\"ig", table: table)])
        #expect(try await db.tableExists("x"), "nothing was dropped")
        // SQLite folds ASCII case only: other letters compare exactly.
        #expect(try await db.tableExists(table.uppercased()))
        try await db.execute("CREATE TABLE \(q("ärger"))(a)")
        #expect(try await db.tableExists("ÄRGER") == false)
        #expect(try await db.tableExists("äRGER"))
        await #expect(throws: SqlCipherError.self) { try await db.columns(in: "nul\0name") }

        // An attached schema with a hostile name.
        try await makeArchive(dir.path("archive.db"))
        let schema = "ar\"ch 'ü"
        try await db.execute("ATTACH '\(dir.path("archive.db"))' AS \(q(schema)) KEY 'x''\(Self.hex)'''")
        #expect(try await db.tableExists("old_notes", in: schema))
        #expect(try await db.columns(in: "old_notes", schema: schema).count == 3)
        #expect(try await db.indexes(on: "old_notes", schema: schema).map(\.name) == ["old_by_year"])
        #expect(try await db.views(schema: schema) == ["old_bodies"])
        await db.close()
    }

    /// A name an error repeats is shown with its control characters visible and cut after 200
    /// characters, as SQL text is cut after 1,000: a missing table named by a megabyte of text made
    /// a megabyte-long message, and a NUL or a newline in a name went into the message as is.
    /// The error's associated values keep the whole name.
    @Test func errorsShowNamesVisiblyAndCut() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        let long = String(repeating: "n", count: 1_000_000)
        let tooLong = await #expect(throws: SqlCipherError.tableNotFound(table: long, schema: "main")) {
            try await db.columns(in: long)
        }
        let description = tooLong?.description ?? ""
        #expect(description.count < 1_000 && description.contains("(999800 more characters)"), "\(description.prefix(400))")
        let schema = await #expect(throws: SqlCipherError.self) { try await db.views(schema: long + "\0") }
        #expect((schema?.description.count ?? .max) < 1_000)
        let odd = await #expect(throws: SqlCipherError.self) { try await db.primaryKey(of: "a\0b\nc") }
        #expect(odd?.description.contains(#""a\u{0}b\u{a}c""#) == true, "\(String(describing: odd))")
        #expect(odd?.description.contains("\0") == false)
        // The same cut for an identifier an SQL literal cannot quote.
        let identifier = await #expect(throws: SqlCipherError.self) {
            try await db.query(literal: "SELECT * FROM \(identifier: long + "\0")")
        }
        #expect((identifier?.description.count ?? .max) < 1_000)
        await db.close()
    }

    // MARK: The ways in

    /// A pool answers from a reader; attached schemas need `prepareConnection` there, so that the
    /// reader has them too.
    @Test func fromADatabasePool() async throws {
        let dir = TemporaryDirectory()
        try await makeArchive(dir.path("archive.db"))
        let archivePath = dir.path("archive.db")
        var configuration = DatabaseConfiguration()
        configuration.prepareConnection = { conn in
            try conn.execute("ATTACH '\(archivePath)' AS arch KEY 'x''\(Self.hex)'''")
        }
        let pool = try DatabasePool(path: dir.path("pool.db"), rawKey: rawKey(), configuration: configuration)
        try await pool.execute("CREATE TABLE pairs(a TEXT, b TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID")
        #expect(try await pool.tableExists("pairs"))
        #expect(try await pool.primaryKey(of: "pairs") == PrimaryKeyInfo(columns: ["a", "b"], kind: .withoutRowID))
        #expect(try await pool.columns(in: "pairs").map(\.primaryKeyIndex) == [1, 2])
        #expect(try await pool.indexes(on: "pairs").map(\.origin) == [.primaryKey])
        #expect(try await pool.foreignKeys(of: "pairs").isEmpty)
        #expect(try await pool.views(schema: "arch") == ["old_bodies"])
        #expect(try await pool.triggers(schema: "arch").map(\.name) == ["old_touch"])
        #expect(try await pool.columns(in: "old_notes", schema: "arch").map(\.name) == ["id", "body", "year"])
        await pool.close()
    }

    /// Inside a `read` body (several answers from one snapshot) and inside a transaction, where the
    /// body's own uncommitted schema changes are seen.
    @Test func fromInsideBodies() async throws {
        let dir = TemporaryDirectory()
        let db = try database(dir)
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        let (names, key, exists) = try await db.read { conn in
            (try conn.columns(in: "notes").map(\.name), try conn.primaryKey(of: "notes"), try conn.tableExists("notes"))
        }
        #expect(names == ["id", "body"] && key.kind == .rowIDAlias && exists)
        let (tagsExists, actions, partial) = try await db.transaction { conn in
            try conn.execute("CREATE TABLE tags(note INTEGER REFERENCES notes(id) ON DELETE CASCADE, tag TEXT)")
            try conn.execute("CREATE INDEX tags_by_tag ON tags(tag) WHERE tag IS NOT NULL")
            return (try conn.tableExists("tags"), try conn.foreignKeys(of: "tags").map(\.onDelete),
                    try conn.indexes(on: "tags").map(\.isPartial))
        }
        #expect(tagsExists && actions == [.cascade] && partial == [true])

        let pool = try DatabasePool(path: dir.path("pool.db"), rawKey: rawKey())
        try await pool.execute("CREATE TABLE t(a INTEGER PRIMARY KEY)")
        #expect(try await pool.read { conn in try conn.primaryKey(of: "t").kind } == .rowIDAlias)
        await pool.close()
        await db.close()
    }
}
