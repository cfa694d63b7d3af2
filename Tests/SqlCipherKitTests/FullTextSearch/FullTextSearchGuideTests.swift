import Foundation
import Synchronization
import Testing
@testable import SqlCipherKit

/// The examples of the DocC article "Full-text search" (FullTextSearch.md), compiled and run. Each
/// block of the article appears below line for line (indentation aside).
@Suite struct FullTextSearchGuideTests {
    // Block 1.
    struct CreateNotesSearch: Migration {
        let id = "002-notes-search"

        func up(_ ctx: MigrationContext) throws {
            try ctx.execute(
                CreateFTS5Table(TableName("notes_fts"))
                    .column("title")
                    .column("body")
                    .tokenizer(.unicode61(removeDiacritics: .remove))
                    .prefixIndexes(2, 3)
                    .externalContent(TableName("notes"), rowid: "id")
            )
        }
    }

    // Block 2.
    func search(_ searchField: String, in db: Database) async throws -> [Row] {
        let notes = TableName("notes_fts")
        guard let pattern = FTS5Pattern(matchingAllTokensIn: searchField) else { return [] }
        return try await db.query(
            Select(col("rowid"), notes.snippet(column: 1, before: "<b>", after: "</b>").as("excerpt"))
                .from(notes)
                .where(notes.match(pattern))
                .orderBy(notes.bm25(weights: 10, 1))   // a title match counts ten times a body match
                .limit(20)
        )
    }

    func guideDatabase(_ dir: TemporaryDirectory) async throws -> Database {
        let db = try Database(path: dir.path("guide.db"), rawKey: rawKey(8))
        try await db.migrate([
            FTSMigration("001-notes") { ctx in
                try ctx.execute(CreateTable(TableName("notes")).column("id", .integer, .primaryKey)
                    .column("title", .text).column("body", .text))
            },
            CreateNotesSearch(),
        ])
        return db
    }

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func theSearchExamples() async throws {
        let dir = TemporaryDirectory()
        let db = try await guideDatabase(dir)
        try await db.execute("INSERT INTO notes(title, body) VALUES (?, ?)", "Privacy", "our privacy notes")
        try await db.execute("INSERT INTO notes(title, body) VALUES (?, ?)", "Cheese", "ham and cheese, no privacy policy")
        let rows = try await search("privacy \"", in: db)
        #expect(rows.compactMap { $0.get(0, as: Int.self) } == [1, 2])
        #expect(rows[0].get("excerpt", as: String.self) == "our <b>privacy</b> notes")
        #expect(try await search("*** ", in: db).isEmpty)

        // Block 3.
        let privacy = try FTS5Pattern(rawPattern: "title: privacy OR body: (privacy NOT policy)",
                                      columns: ["title", "body"])

        let notes = TableName("notes_fts")
        #expect(try await db.query(Select(col("rowid")).from(notes).where(notes.match(privacy))).count == 1)
        #expect(try await db.query("SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?", privacy).count == 1)

        // Block 5.
        try await db.execute(FTS5Command.optimize(TableName("notes_fts")))        // merge the index after many writes
        try await db.execute(FTS5Command.rebuild(TableName("notes_fts")))         // index the content table again
        try await db.execute(FTS5Command.integrityCheck(TableName("notes_fts")))  // throws if index and content differ

        // Block 6.
        let hasFullTextSearch = try SqlCipherLibrary.shared.capabilities.features.contains(.fts5)
        try SqlCipherLibrary.shared.require(.fts5)   // libraryTooOld(…, missing: ["fts5"]) where it is absent

        #expect(hasFullTextSearch)
    }

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func theLiveExample() async throws {
        let dir = TemporaryDirectory()
        let db = try await guideDatabase(dir)
        let renderings = Mutex<[[Int]]>([])
        @Sendable func render(_ ids: [Int]) { renderings.withLock { $0.append(ids) } }
        let pattern = try #require(FTS5Pattern(matchingAllTokensIn: "harbour"))
        let loop = Task {
            // Block 4.
            let notes = TableName("notes_fts")
            let matches = LiveRequest(placeholder: [Int]()) { conn in
                try conn.query(Select(col("rowid")).from(notes).where(notes.match(pattern)).orderBy(col("rowid")))
                    .compactMap { $0.get(0, as: Int.self) }
            }
            for try await ids in db.values(of: matches) {
                render(ids)
            }
        }
        try await waitUntil { renderings.withLock { $0 } == [[]] }
        try await db.execute("INSERT INTO notes(title, body) VALUES (?, ?)", "Port", "the harbour at night")
        try await waitUntil { renderings.withLock { $0 }.count == 2 }
        #expect(renderings.withLock { $0 }.last == [1])
        loop.cancel()
        try await loop.value
    }
}
