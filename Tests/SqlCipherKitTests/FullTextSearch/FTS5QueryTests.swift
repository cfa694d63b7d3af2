import Foundation
import Testing
@testable import SqlCipherKit

/// Ranking, snippets and highlights as builder expressions, and live queries over FTS5 tables.
@Suite struct FTS5QueryTests {
    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func bm25RanksAndItsWeightsAreBound() async throws {
        let t = try await NotesDatabase()
        try await t.add("cipher", "a note about something else entirely, at some length")
        try await t.add("other", "cipher cipher cipher")
        let index = NotesDatabase.index
        let pattern = try #require(FTS5Pattern(matchingAllTokensIn: "cipher"))
        func ranked(_ order: SQLExpression) async throws -> [Int] {
            try await t.db.query(Select(col("rowid")).from(index).where(index.match(pattern)).orderBy(order))
                .compactMap { $0.get(0, as: Int.self) }
        }
        #expect(try await ranked(index.bm25()) == [2, 1])
        // A title match weighted 100 times a body match comes first.
        #expect(try await ranked(index.bm25(weights: 100, 1)) == [1, 2])
        let fragment = try Select(index.bm25(weights: 100, 1).as("score")).from(index).where(index.match(pattern)).render()
        #expect(fragment.sql == #"SELECT bm25("notes_fts"."notes_fts", :l1, :l2) AS "score" FROM "notes_fts" WHERE "notes_fts"."notes_fts" MATCH :l3"#)
        #expect(fragment.literals == [.real(100), .real(1), .text(pattern.rawPattern)])
        let scores = try await t.db.query(Select(index.bm25(weights: 100, 1).as("score")).from(index).where(index.match(pattern)))
        #expect(scores.count == 2)
        #expect(scores.allSatisfy { ($0.get(0, as: Double.self) ?? 0) < 0 })
    }

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func snippetAndHighlightBindTheirTexts() async throws {
        let t = try await NotesDatabase()
        try await t.add("Travel", "The encrypted notebook travels with me across every border and every airport")
        let index = NotesDatabase.index
        let pattern = try #require(FTS5Pattern(matchingAllTokensIn: "notebook"))
        let open = "'); DROP TABLE notes; --<b>", close = "</b>\"", ellipsis = "…'"
        let select = Select(
            index.highlight(column: 1, before: open, after: close).as("marked"),
            index.snippet(column: 1, before: open, after: close, ellipsis: ellipsis, maxTokens: 4).as("excerpt"),
            index.snippet(before: "[", after: "]").as("best"))
            .from(index).where(index.match(pattern))
        let fragment = try select.render()
        #expect(!fragment.sql.contains("DROP"))
        let row = try #require(try await t.db.query(select).first)
        #expect(row.get("marked", as: String.self)
            == "The encrypted \(open)notebook\(close) travels with me across every border and every airport")
        let excerpt = try #require(row.get("excerpt", as: String.self))
        #expect(excerpt.contains("\(open)notebook\(close)") && excerpt.contains(ellipsis) && !excerpt.contains("airport"))
        #expect(row.get("best", as: String.self)?.contains("[notebook]") == true)
        #expect(try await t.db.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) == 1)
        await #expect(throws: SqlCipherError.self) {
            try await t.db.query(Select(index.snippet(before: "", after: "", maxTokens: 65)).from(index))
        }
    }

    /// FTS5 reads a column index as a 32-bit integer and its texts as C text: an index of
    /// `1 << 32 | 1` highlighted column 1, any negative index was snippet's "best column", and a
    /// NUL cut `before` short. Each is refused when the statement renders, before SQLite sees it.
    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func argumentsFTS5WouldReadAsOthersAreRefused() async throws {
        let t = try await NotesDatabase()
        try await t.add("title words", "body words")
        let index = NotesDatabase.index
        let pattern = try #require(FTS5Pattern(matchingAllTokensIn: "words"))
        let refused: [(String, SQLExpression)] = [
            ("highlight 2^32+1", index.highlight(column: (1 << 32) + 1, before: "[", after: "]")),
            ("highlight -1", index.highlight(column: -1, before: "[", after: "]")),
            ("highlight Int.max", index.highlight(column: .max, before: "[", after: "]")),
            ("snippet -5", index.snippet(column: -5, before: "[", after: "]")),
            ("snippet 2^32", index.snippet(column: 1 << 32, before: "[", after: "]")),
            ("highlight NUL before", index.highlight(column: 0, before: "<b\0x>", after: "]")),
            ("highlight NUL after", index.highlight(column: 0, before: "[", after: "\0")),
            ("snippet NUL ellipsis", index.snippet(before: "[", after: "]", ellipsis: ".\0.")),
        ]
        for (label, expression) in refused {
            do {
                _ = try await t.db.query(Select(expression).from(index).where(index.match(pattern)))
                Issue.record("\(label) ran")
            } catch let SqlCipherError.invalidQuery(reason) {
                #expect(reason.contains("out of range") || reason.contains("NUL"), "\(label): \(reason)")
            }
        }
        // The edges that are columns still run: the last possible index gives nothing past the table's columns.
        let edge = try await t.db.query(
            Select(index.highlight(column: 1, before: "[", after: "]"), index.highlight(column: 32_766, before: "[", after: "]"))
                .from(index).where(index.match(pattern)))
        #expect(edge.first?.get(0, as: String.self) == "body [words]")
        let pastTheColumns = edge.first?.get(1, as: String.self) ?? ""
        #expect(pastTheColumns.isEmpty)
    }

    /// `match` on a column of a table that has no full-text index, a `snippet` column past the
    /// table's last, and `bm25` weights that are not finite fail saying what to do: SQLite said only
    /// "unable to use function MATCH in the requested context" and "column index out of range".
    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func searchMistakesSayWhatToDo() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("plain.db"), rawKey: rawKey(4))
        try await db.execute("CREATE TABLE plain(body TEXT); INSERT INTO plain VALUES ('hello world')")
        let pattern = try #require(FTS5Pattern(matchingAllTokensIn: "hello"))
        let error = await #expect(throws: SqlCipherError.self) {
            try await db.query(Select(col("body")).from(TableName("plain")).where(col("body").match(pattern)))
        }
        let message = error?.description ?? ""
        #expect(message.contains("MATCH") && message.contains("CreateFTS5Table"), "\(message)")
        let plain = TableName("plain")
        for select in [Select(col("body")).from(plain).where(plain.match(pattern)),
                       Select(plain.highlight(column: 0, before: "[", after: "]")).from(plain),
                       Select(plain.bm25()).from(plain)] {
            let error = await #expect(throws: SqlCipherError.self) { try await db.query(select) }
            #expect(error?.description.contains("plain is not an FTS5 table") == true, "\(String(describing: error))")
        }
        #expect(try await db.query("SELECT count(*) FROM plain")[0].get(0, as: Int.self) == 1)

        // A snippet column past the table's last: SQLite said only "column index out of range".
        try await db.execute("CREATE VIRTUAL TABLE docs USING fts5(title, body); INSERT INTO docs VALUES ('hello', 'world')")
        let docs = TableName("docs")
        let past = await #expect(throws: SqlCipherError.self) {
            try await db.query(Select(docs.snippet(column: 2, before: "[", after: "]")).from(docs).where(docs.match(pattern)))
        }
        #expect(past?.description.contains("column: nil") == true, "\(String(describing: past))")
        let found = try await db.query(Select(docs.snippet(column: 0, before: "[", after: "]")).from(docs).where(docs.match(pattern)))
        #expect(found.first?.get(0, as: String.self) == "[hello]")

        // Weights that are not finite: NaN was refused as "a comparison with NaN", and an infinite
        // weight ranked every match NULL.
        for weight in [Double.nan, .infinity, -.infinity] {
            let bad = await #expect(throws: SqlCipherError.self) {
                try await db.query(Select(docs.bm25(weights: 1, weight)).from(docs).where(docs.match(pattern)))
            }
            #expect(bad?.description.contains("bm25(weights:)") == true && bad?.description.contains("finite") == true,
                    "\(String(describing: bad))")
        }
        #expect(try await db.query(Select(docs.bm25(weights: 1, 0)).from(docs).where(docs.match(pattern))).count == 1)
        await db.close()
    }

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func aParamPatternRunsOneTemplate() async throws {
        let t = try await NotesDatabase()
        try await t.add("a", "first words")
        try await t.add("b", "second words")
        let index = NotesDatabase.index
        let search = Param<FTS5Pattern>("search")
        let template = Select(col("rowid")).from(index).where(index.match(search)).orderBy(col("rowid"))
        #expect(try await t.db.query(template, search.set(FTS5Pattern(matchingAllTokensIn: "words")!)).count == 2)
        #expect(try await t.db.query(template, arguments: ["search": FTS5Pattern(matchingAllTokensIn: "second")!])
            .compactMap { $0.get(0, as: Int.self) } == [2])
        // A column's MATCH searches that column alone: "a" is a title, not a body.
        let titleA = try #require(FTS5Pattern(matchingAllTokensIn: "a"))
        #expect(try await t.db.query(Select(col("rowid")).from(index).where(col("title").match(titleA))).count == 1)
        #expect(try await t.db.query(Select(col("rowid")).from(index).where(col("body").match(titleA))).isEmpty)
    }

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func aPoolAndAConnectionRunTheSameStatements() async throws {
        let dir = TemporaryDirectory()
        let pool = try DatabasePool(path: dir.path("pool.db"), rawKey: rawKey(6))
        try await pool.migrate([NotesDatabase.migration()])
        try await pool.execute("INSERT INTO notes(title, body) VALUES (?, ?)", "pooled", "searchable through readers")
        let index = NotesDatabase.index
        let pattern = try #require(FTS5Pattern(matchingAllPrefixesIn: "search read"))
        #expect(try await pool.query(Select(col("rowid")).from(index).where(index.match(pattern))).count == 1)
        let found = try await pool.read { conn in
            try conn.query(Select(index.highlight(column: 0, before: "[", after: "]")).from(index).where(index.match(
                FTS5Pattern(matchingAllTokensIn: "pooled")!)))
        }
        #expect(found.first?.get(0, as: String.self) == "[pooled]")
        _ = try await pool.transaction { conn in try conn.execute(FTS5Command.optimize(index)) }
    }

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func liveQueriesSeeWritesThroughTheTriggersAndIntoPlainTables() async throws {
        let t = try await NotesDatabase()
        let db = t.db
        try await db.migrate([
            NotesDatabase.migration(),
            FTSMigration("plain") { ctx in try ctx.execute(CreateFTS5Table(TableName("memos")).column("text")) },
        ])
        let index = NotesDatabase.index, memos = TableName("memos")
        let pattern = try #require(FTS5Pattern(matchingAllTokensIn: "lighthouse"))
        // External content: written through the content table's triggers.
        let notes = LiveRequest(placeholder: [Int]()) { conn in
            try conn.query(Select(col("rowid")).from(index).where(index.match(pattern)).orderBy(col("rowid")))
                .compactMap { $0.get(0, as: Int.self) }
        }
        let plain = LiveRequest(placeholder: [String]()) { conn in
            try conn.query(Select(col("text")).from(memos).where(memos.match(pattern)).orderBy(col("text")))
                .compactMap { $0.get(0, as: String.self) }
        }
        let noteReader = LiveReader(db.values(of: notes))
        let memoReader = LiveReader(db.values(of: plain))
        #expect(try await noteReader.next() == [])
        #expect(try await memoReader.next() == [])

        let id = try await t.add("coast", "the lighthouse keeper")
        #expect(try await noteReader.next() == [id])
        try await db.execute("INSERT INTO memos(text) VALUES ('a lighthouse at dusk')")
        #expect(try await memoReader.next() == ["a lighthouse at dusk"])
        // Another write to each: an update through the triggers, a delete from the plain table.
        try await db.execute("UPDATE notes SET body = 'no more light' WHERE id = ?", id)
        #expect(try await noteReader.next() == [])
        try await db.execute("DELETE FROM memos")
        #expect(try await memoReader.next() == [])
    }
}
