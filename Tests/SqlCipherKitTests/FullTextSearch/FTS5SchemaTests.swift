import Foundation
import Synchronization
import Testing
@testable import SqlCipherKit

/// `CreateFTS5Table` and `FTS5Command`: what they write, what they create, and their refusal on a
/// library without FTS5.
@Suite struct FTS5SchemaTests {
    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func everyOptionIsWrittenQuoted() throws {
        let statement = CreateFTS5Table(TableName("my \"fts\""), ifNotExists: true)
            .column("ti\"tle")
            .column("path", unindexed: true)
            .tokenizer(.porter(.unicode61(removeDiacritics: .remove)))
            .prefixIndexes(2, 3)
            .externalContent(TableName("it's"), rowid: "doc id", synchronized: false)
            .detail(.column)
        #expect(try statement.render().sql
            == #"CREATE VIRTUAL TABLE IF NOT EXISTS "my ""fts""" USING fts5("ti""tle", "path" UNINDEXED, "#
            + #"tokenize='porter unicode61 remove_diacritics 2', prefix='2 3', content='it''s', content_rowid='doc id', "#
            + #"detail=column)"#)
        #expect(try statement.statements().count == 1)
        #expect(try CreateFTS5Table(TableName("c")).column("x").contentless().tokenizer(.ascii).render().sql
            == #"CREATE VIRTUAL TABLE "c" USING fts5("x", tokenize='ascii', content='')"#)
        #expect(try CreateFTS5Table(TableName("t")).column("x").tokenizer(.trigram()).render().sql
            == #"CREATE VIRTUAL TABLE "t" USING fts5("x", tokenize='trigram case_sensitive 0')"#)
        #expect(FTS5Tokenizer.porter(.porter()) == .porter())
    }

    @Test func tokenizersNameTheSQLiteTheyNeed() {
        #expect(FTS5Tokenizer.trigram().requirement?.sqlite == 3_034_000)
        #expect(FTS5Tokenizer.porter(.unicode61(removeDiacritics: .remove)).requirement?.sqlite == 3_027_000)
        #expect(FTS5Tokenizer.unicode61(removeDiacritics: .removeLegacy).requirement == nil)
        #expect(FTS5Tokenizer.porter(.ascii).requirement == nil)
    }

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func aSynchronizedTableAddsThreeTriggersAndARebuild() throws {
        let fragments = try CreateFTS5Table(TableName("n_fts")).column("body")
            .externalContent(TableName("notes"), rowid: "id").statements()
        #expect(fragments.map(\.sql) == [
            #"CREATE VIRTUAL TABLE "n_fts" USING fts5("body", content='notes', content_rowid='id')"#,
            #"CREATE TRIGGER "__n_fts_ai" AFTER INSERT ON "notes" BEGIN INSERT INTO "n_fts"("rowid", "body") VALUES (new."id", new."body"); END"#,
            #"CREATE TRIGGER "__n_fts_ad" AFTER DELETE ON "notes" BEGIN INSERT INTO "n_fts"("n_fts", "rowid", "body") VALUES ('delete', old."id", old."body"); END"#,
            #"CREATE TRIGGER "__n_fts_au" AFTER UPDATE ON "notes" BEGIN INSERT INTO "n_fts"("n_fts", "rowid", "body") VALUES ('delete', old."id", old."body"); INSERT INTO "n_fts"("rowid", "body") VALUES (new."id", new."body"); END"#,
            #"INSERT INTO "n_fts"("n_fts") VALUES (:l1)"#,
        ])
        #expect(fragments.last?.literals == [.text("rebuild")])
    }

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func badValuesAreRefusedBeforeSQLite() throws {
        #expect(throws: SqlCipherError.self) { try CreateFTS5Table(TableName("t")).render() }
        #expect(throws: SqlCipherError.self) { try CreateFTS5Table(TableName("t")).column("x").prefixIndexes(0).render() }
        #expect(throws: SqlCipherError.self) { try CreateFTS5Table(TableName("t")).column("a\0b").render() }
        #expect(throws: SqlCipherError.self) {
            try CreateFTS5Table(TableName("t")).column("x").externalContent(TableName("a\0b")).render()
        }
    }

    /// FTS5 nests one tokenizer inside another for each `porter` word, recursively, when it
    /// creates the table and whenever a connection opens it: 200,000 words ended the process with
    /// a stack overflow inside SQLite (HostileInputTests runs that one in a child process). A
    /// `tokenize` option of more than 64 words is refused before the statement runs, in every
    /// spelling of the option; 64 still work, and the builder's chains are far shorter.
    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func deepTokenizerChainsAreRefusedBeforeFTS5BuildsThem() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("fts.db"), rawKey: rawKey())
        let long = String(repeating: "porter ", count: 64) + "unicode61"
        for sql in ["CREATE VIRTUAL TABLE f USING fts5(x, tokenize='\(long)')",
                    "create virtual table if not exists main.f using FTS5(x, TOKENIZE = \"\(long)\")",
                    "\u{FEFF}CREATE VIRTUAL TABLE f USING fts5(x, [tokenize]=`\(long)`, prefix='2')"] {
            do {
                try await db.execute(sql)
                Issue.record("ran: \(sql.prefix(60))")
            } catch let SqlCipherError.invalidQuery(reason) {
                #expect(reason.contains("65 words"), "\(reason)")
            }
        }
        #expect(try await db.query("SELECT name FROM sqlite_master WHERE name = 'f'").isEmpty)
        // 64 words, and literals that hold spaces, are fine.
        let most = String(repeating: "porter ", count: 63) + "unicode61"
        try await db.execute("CREATE VIRTUAL TABLE g USING fts5(x, tokenize='\(most)')")
        try await db.execute("CREATE VIRTUAL TABLE h USING fts5(x, tokenize='unicode61 separators '' ,.;:'' tokenchars ''-_''')")
        try await db.execute("INSERT INTO g VALUES ('running fast')")
        #expect(try await db.query("SELECT count(*) FROM g WHERE g MATCH 'run'")[0].get(0, as: Int.self) == 1)
        await db.close()
    }

    /// A file written by another program whose schema already holds an FTS5 table with a deep
    /// tokenizer chain (which the statement guard refuses to create) is not opened by any entry
    /// point that could name the table: FTS5 builds the chain as soon as a statement does, before
    /// the authorizer hears of it, and 100,000 `porter` words ended the process (SIGSEGV, 4.6.1)
    /// on a plain `Database(unencryptedPath:)` query, `encrypt(plaintextAt:)` and
    /// `importPlaintext`. Each now fails with `cannotOpen` naming the table, the file unchanged;
    /// the doctor checks the key but neither counts the table's rows nor runs `integrity_check`
    /// (which opens every FTS5 table), and says so. (200 words here: the
    /// refusal, not the crash, is what changed; the crash itself is in HostileInputTests.)
    @Test func aFileWhoseSchemaHoldsADeepTokenizerChainIsNotOpened() async throws {
        let dir = TemporaryDirectory()
        let chain = String(repeating: "porter ", count: 200) + "unicode61"
        let schema = ["CREATE TABLE notes(x)", "INSERT INTO notes VALUES ('kept')",
                      "CREATE VIRTUAL TABLE deep USING fts5(x, tokenize='\(chain)')"]
        let plain = dir.path("plain.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, plain, schema)
        let before = try Data(contentsOf: URL(fileURLWithPath: plain))
        func expectRefused(_ what: String, _ run: () async throws -> Void) async {
            let error = await #expect(throws: SqlCipherError.self, "\(what)") { try await run() }
            guard case .cannotOpen(_, let reason)? = error else {
                Issue.record("\(what): expected cannotOpen, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("\"deep\"") && reason.contains("tokenize"), "\(what): \(reason)")
        }
        await expectRefused("Database(unencryptedPath:)") { _ = try Database(unencryptedPath: plain) }
        await expectRefused("readOnly") { _ = try Database(unencryptedPath: plain, readOnly: true) }
        await expectRefused("pool") { _ = try DatabasePool(unencryptedPath: plain) }
        await expectRefused("encrypt(plaintextAt:)") {
            try Database.encrypt(plaintextAt: plain, to: dir.path("encrypted.db"), key: "a key")
        }
        await expectRefused("encryptInPlace") { try Database.encryptInPlace(path: plain, key: "a key") }
        let host = try Database(path: dir.path("host.db"), key: "host key")
        await expectRefused("importPlaintext") {
            _ = try await host.importPlaintext(from: plain) { try $0.query("SELECT count(*) FROM plain.notes") }
        }
        #expect(try await host.query("SELECT count(*) FROM sqlite_master")[0].get(0, as: Int.self) == 0)
        await host.close()
        let plainHost = try Database(unencryptedPath: dir.path("plain-host.db"))
        await expectRefused("ATTACH") { try await plainHost.execute("ATTACH DATABASE ? AS other", plain) }
        #expect(try await plainHost.query("PRAGMA database_list").count == 1, "detached again")
        await plainHost.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: plain)) == before)
        #expect(!FileManager.default.fileExists(atPath: dir.path("encrypted.db")))

        guard isSQLCipher4() else { return }
        let keyed = dir.path("keyed.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, keyed, [SqlcipherCLI.keyPragma(passphrase: "k")] + schema)
        await expectRefused("Database(path:key:)") { _ = try Database(path: keyed, key: "k") }
        let result = try runChild(productPath("sqlcipher-doctor"), ["verify", "--json", "--key-env", "K", keyed],
                                  environment: try Linking.childEnvironment(["K": "k"]))
        #expect(!result.signaled, "the doctor crashed: \(result.stderr)")
        let entry = try #require((try Linking.jsonObject(result.stdout)["files"] as? [[String: Any]])?.first)
        #expect(entry["key_accepted"] as? Bool == true, "\(entry)")
        #expect(entry["status"] as? String == "not-verifiable", "\(entry)")
        #expect((entry["error"] as? String ?? "").contains("integrity_check was not run"), "\(entry)")
        let tables = entry["tables"] as? [[String: Any]] ?? []
        #expect(tables.first { $0["name"] as? String == "notes" }?["rows"] as? Int == 1, "\(tables)")
        #expect(tables.first { $0["name"] as? String == "deep" }?["rows"] is NSNull, "\(tables)")
    }

    /// Column names FTS5 refuses are refused before SQLite, saying what to do: `rank` and `rowid`
    /// (SQLite: "reserved fts5 column name"), a name given twice or the table's own name (SQLite:
    /// "vtable constructor failed", naming neither the column nor the cause). The migration that
    /// ran one fails whole, and the names SQLite takes still work. External content whose table
    /// lacks the rowid or a column says what to give `externalContent`.
    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func columnNamesFTS5RefusesAreNamed() async throws {
        let refused: [(CreateFTS5Table, String)] = [
            (CreateFTS5Table(TableName("docs")).column("rank"), "reserves"),
            (CreateFTS5Table(TableName("docs")).column("body").column("ROWID"), "reserves"),
            (CreateFTS5Table(TableName("docs")).column("Docs"), "hidden column of its own name"),
            (CreateFTS5Table(TableName("docs")).column("a").column("b").column("A", unindexed: true), "twice"),
            (CreateFTS5Table(TableName("docs")).column("body").externalContent(TableName("notes")).column("body"), "twice"),
        ]
        for (statement, words) in refused {
            let error = #expect(throws: SqlCipherError.self) { try statement.render() }
            guard case .invalidQuery(let reason)? = error else {
                Issue.record("expected invalidQuery, got \(String(describing: error))")
                continue
            }
            #expect(reason.contains(words) && reason.contains("docs"), "\(reason)")
        }
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("names.db"), rawKey: rawKey(3))
        await #expect(throws: SqlCipherError.self) {
            try await db.migrate([FTSMigration("dup") { ctx in
                try ctx.execute(CreateTable(TableName("kept")).column("a", .text))
                try ctx.execute(CreateFTS5Table(TableName("docs")).column("a").column("a"))
            }])
        }
        let keptExists = try await db.tableExists("kept")
        let docsExists = try await db.tableExists("docs")
        #expect(!keptExists && !docsExists)
        // Names that only look alike are different names to SQLite, and are taken.
        try await db.migrate([FTSMigration("ok") { ctx in
            try ctx.execute(CreateFTS5Table(TableName("docs")).column("é").column("e\u{301}").column("ranks").column("docs2"))
        }])
        #expect(try await db.columns(in: "docs").map(\.name).prefix(4) == ["é", "e\u{301}", "ranks", "docs2"])

        // External content the content table cannot give: SQLite named FTS5's own alias only
        // ("no such column: T.rowid").
        try await db.execute("CREATE TABLE keyed(k TEXT PRIMARY KEY, body TEXT) WITHOUT ROWID; CREATE TABLE plain(id INTEGER PRIMARY KEY, body TEXT)")
        for (id, statement) in [("no-rowid", CreateFTS5Table(TableName("k_fts")).column("body").externalContent(TableName("keyed"))),
                                ("no-column", CreateFTS5Table(TableName("p_fts")).column("title").externalContent(TableName("plain"), rowid: "id", synchronized: false))] {
            let error = await #expect(throws: SqlCipherError.self) {
                try await db.migrate([FTSMigration("ok") { _ in }, FTSMigration(id) { ctx in
                    try ctx.execute(statement)
                    try ctx.execute(FTS5Command.rebuild(statement.table))
                }])
            }
            #expect(error?.description.contains("externalContent(_:rowid:)") == true, "\(String(describing: error))")
        }
        let own = await #expect(throws: SqlCipherError.self) { try await db.query("SELECT T.nope FROM plain AS T") }
        #expect(own?.description.contains("externalContent") == false, "\(String(describing: own))")
        await db.close()
    }

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func theTriggersKeepTheIndexInStepWithItsTable() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("sync.db"), rawKey: rawKey(3))
        // Rows written before the index exists are indexed by its first rebuild.
        try await db.execute("CREATE TABLE \"no tes\"(\"doc id\" INTEGER PRIMARY KEY, \"ti'tle\" TEXT)")
        try await db.execute("INSERT INTO \"no tes\" VALUES (7, 'before the index')")
        let index = TableName("idx \"fts\"")
        try await db.migrate([
            FTSMigration("fts") { ctx in
                try ctx.execute(CreateFTS5Table(index).column("ti'tle").externalContent(TableName("no tes"), rowid: "doc id"))
            },
        ])
        func ids(_ word: String) async throws -> [Int] {
            try await db.query(Select(col("rowid")).from(index).where(index.match(FTS5Pattern(matchingAllTokensIn: word)!))
                .orderBy(col("rowid"))).compactMap { $0.get(0, as: Int.self) }
        }
        #expect(try await ids("before") == [7])
        try await db.execute("INSERT INTO \"no tes\" VALUES (8, 'inserted later')")
        #expect(try await ids("later") == [8])
        try await db.execute("UPDATE \"no tes\" SET \"ti'tle\" = 'changed text' WHERE \"doc id\" = 7")
        #expect(try await ids("before") == [])
        #expect(try await ids("changed") == [7])
        try await db.execute("DELETE FROM \"no tes\" WHERE \"doc id\" = 8")
        #expect(try await ids("later") == [])
        // The index matches its content, and the maintenance commands run through the builder.
        try await db.execute(FTS5Command.integrityCheck(index))
        try await db.execute(FTS5Command.optimize(index))
        try await db.execute(FTS5Command.rebuild(index))
        #expect(try await ids("changed") == [7])
    }

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func contentlessAndOwnContentTables() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("kinds.db"), rawKey: rawKey(4))
        try await db.migrate([
            FTSMigration("fts") { ctx in
                try ctx.execute(CreateFTS5Table(TableName("bare")).column("text").contentless().detail(.none))
                try ctx.execute(CreateFTS5Table(TableName("own")).column("text").column("tag", unindexed: true)
                    .prefixIndexes(2))
                try ctx.execute(CreateFTS5Table(TableName("tri")).column("text").tokenizer(.trigram()))
            },
        ])
        try await db.execute("INSERT INTO bare(rowid, text) VALUES (41, 'secret contentless words')")
        let bare = try await db.query(Select(col("rowid"), col("text")).from(TableName("bare"))
            .where(TableName("bare").match(FTS5Pattern(matchingAllTokensIn: "contentless")!)))
        #expect(bare.count == 1 && bare[0].get(0, as: Int.self) == 41)
        #expect(bare[0].get(1, as: String.self) == nil)   // the text is not stored
        // rebuild has no content to read in a contentless table: SQLite's error, typed.
        await #expect(throws: SqlCipherError.self) { try await db.execute(FTS5Command.rebuild(TableName("bare"))) }

        // detail=none: tokens match; a phrase of several tokens is the table's documented refusal.
        let phrase = try #require(FTS5Pattern(matchingPhrase: "secret contentless"))
        await #expect(throws: SqlCipherError.self) {
            try await db.query(Select(col("rowid")).from(TableName("bare")).where(TableName("bare").match(phrase)))
        }
        #expect(try await db.query(Select(col("rowid")).from(TableName("bare"))
            .where(TableName("bare").match(FTS5Pattern(matchingAllTokensIn: "secret contentless")!))).count == 1)

        try await db.execute("INSERT INTO own(text, tag) VALUES ('alpha beta', 'gamma')")
        let own = TableName("own")
        // An unindexed column is stored, not searched.
        #expect(try await db.query(Select(col("tag")).from(own).where(own.match(FTS5Pattern(matchingAllTokensIn: "gamma")!))).isEmpty)
        #expect(try await db.query(Select(col("tag")).from(own).where(own.match(FTS5Pattern(matchingAllPrefixesIn: "al be")!)))
            .first?.get(0, as: String.self) == "gamma")
        try await db.execute("INSERT INTO tri(text) VALUES ('encrypted notebook')")
        let tri = TableName("tri")
        #expect(try await db.query(Select(col("text")).from(tri)
            .where(tri.match(FTS5Pattern(matchingAllTokensIn: "CRYPT BOOK", tokenizer: .trigram())!))).count == 1)
    }

    @Test(.enabled(if: !libraryHasFTS5(), "the library has FTS5")) func withoutFTS5EveryStatementIsRefusedByName() async throws {
        func expectUnsupported(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
            do {
                try body()
                Issue.record("no error", sourceLocation: sourceLocation)
            } catch let SqlCipherError.unsupported(feature, requires, loaded) {
                #expect(feature.contains("FTS5"), sourceLocation: sourceLocation)
                #expect(requires.contains("FTS5"), sourceLocation: sourceLocation)
                #expect(!loaded.isEmpty, sourceLocation: sourceLocation)
            } catch {
                Issue.record("expected unsupported, got \(error)", sourceLocation: sourceLocation)
            }
        }
        expectUnsupported { _ = try CreateFTS5Table(TableName("t")).column("x").render() }
        expectUnsupported { _ = try FTS5Command.rebuild(TableName("t")).render() }
        expectUnsupported { _ = try FTS5Pattern(rawPattern: "a OR b") }

        // In a migration: refused before anything runs, and the migration's transaction rolls back.
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("old.db"), rawKey: rawKey(5))
        let seen = Mutex<SqlCipherError?>(nil)
        await #expect(throws: SqlCipherError.self) {
            try await db.migrate([
                FTSMigration("fts") { ctx in
                    try ctx.execute(CreateTable(TableName("notes")).column("body", .text))
                    do {
                        try ctx.execute(CreateFTS5Table(TableName("notes_fts")).column("body")
                            .externalContent(TableName("notes")))
                    } catch let error as SqlCipherError {
                        seen.withLock { $0 = error }
                        throw error
                    }
                },
            ])
        }
        guard case .unsupported(let feature, _, _)? = seen.withLock({ $0 }) else {
            Issue.record("expected unsupported, got \(String(describing: seen.withLock { $0 }))")
            return
        }
        #expect(feature.contains("FTS5"))
        #expect(try await db.query("SELECT name FROM sqlite_master WHERE name LIKE 'notes%'").isEmpty)
        // FTS4 stays reachable through raw SQL, unwrapped.
        try await db.execute("CREATE VIRTUAL TABLE old_fts USING fts4(body)")
        try await db.execute("INSERT INTO old_fts(body) VALUES ('still searchable')")
        #expect(try await db.query("SELECT body FROM old_fts WHERE old_fts MATCH ?", "searchable").count == 1)

        // The builder's query pieces refuse by capability even over that FTS4 table (which answers
        // MATCH but has no bm25, snippet or highlight), before SQLite can say "no such function".
        let old = TableName("old_fts")
        let pattern = try #require(FTS5Pattern(matchingAllTokensIn: "searchable"))
        let queries: [(String, Select)] = [
            ("MATCH", Select(col("body")).from(old).where(old.match(pattern))),
            ("MATCH", Select(col("body")).from(old).where(col("body").match(pattern))),
            ("bm25", Select(col("body")).from(old).orderBy(old.bm25())),
            ("snippet", Select(old.snippet(before: "[", after: "]")).from(old)),
            ("highlight", Select(old.highlight(column: 0, before: "[", after: "]")).from(old)),
        ]
        for (piece, query) in queries {
            do {
                _ = try await db.query(query)
                Issue.record("\(piece) ran on a library without FTS5")
            } catch let SqlCipherError.unsupported(feature, requires, _) {
                #expect(feature.contains(piece) && feature.contains("fts5"), "\(feature)")
                #expect(requires.contains("FTS5"))
            }
        }
    }
}
