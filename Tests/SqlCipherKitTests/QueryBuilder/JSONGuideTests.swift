import Foundation
import Testing
@testable import SqlCipherKit

/// The examples of the DocC article "Querying JSON" (QueryingJSON.md), compiled and run. Each block
/// of the article appears below line for line (indentation aside).
@Suite struct JSONGuideTests {
    /// The article's notes: Ada's rated 5 and tagged swift and sqlite, Grace's rated 3 and a draft.
    func guideDatabase(_ dir: TemporaryDirectory) async throws -> Database {
        let db = try Database(path: dir.path("guide.db"), rawKey: rawKey(9))
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, meta TEXT, tags TEXT)")
        try await db.execute("INSERT INTO notes(title, meta, tags) VALUES (?, ?, ?)",
                             "Pages", #"{"author": {"name": "Ada"}, "stars": 5, "draft": false}"#, #"["swift", "sqlite"]"#)
        try await db.execute("INSERT INTO notes(title, meta, tags) VALUES (?, ?, ?)",
                             "Compilers", #"{"author": {"name": "Grace"}, "stars": 3, "draft": true}"#, "[]")
        try await db.execute("INSERT INTO notes(title, meta, tags) VALUES (?, ?, ?)",
                             nil as String?, #"{"author": {"name": "Alan"}, "stars": 4}"#, #"["sqlite"]"#)
        return db
    }

    @Test(.enabled(if: libraryHasJSONOperators(), "needs the JSON functions and SQLite 3.38's -> and ->>"))
    func theArticleExamples() async throws {
        let dir = TemporaryDirectory()
        let db = try await guideDatabase(dir)

        // Block 1.
        let notes = TableName("notes")
        let meta = col("meta")
        let rated = try await db.query(
            Select(col("title"), meta.jsonExtract(atPath: "$.author.name").as("author"))
                .from(notes)
                .where(meta.jsonExtract(atPath: "$.stars") >= 4)
                .orderBy(meta.jsonExtract(atPath: "$.stars").descending)
        )
        // SELECT "title", json_extract("meta", :l1) AS "author" FROM "notes"
        //   WHERE json_extract("meta", :l2) >= :l3 ORDER BY json_extract("meta", :l4) DESC
        #expect(rated.map { $0.get("author", as: String.self) } == ["Ada", "Alan"])
        #expect(try Select(col("title"), meta.jsonExtract(atPath: "$.author.name").as("author"))
            .from(notes)
            .where(meta.jsonExtract(atPath: "$.stars") >= 4)
            .orderBy(meta.jsonExtract(atPath: "$.stars").descending).render().sql
            == #"SELECT "title", json_extract("meta", :l1) AS "author" FROM "notes" "#
            + #"WHERE json_extract("meta", :l2) >= :l3 ORDER BY json_extract("meta", :l4) DESC"#)

        // Block 2.
        let byAda = try await db.query(
            Select(meta.jsonRepresentation(atPath: "author").as("author"), meta.jsonValue(atPath: "stars").as("stars"))
                .from(notes)
                .where(meta.jsonRepresentation(atPath: "author").jsonValue(atPath: "name") == "Ada")
        )
        // author: {"name":"Ada"}, stars: 5
        #expect(byAda.count == 1)
        #expect(byAda.first?.get("author", as: String.self) == #"{"name":"Ada"}"#)
        #expect(byAda.first?.get("stars", as: Int.self) == 5)

        // Block 3.
        let tags = JSONEach(notes.col("tags"))
        let aboutSwift = try await db.query(
            Select(notes.col("title")).distinct()
                .from(notes)
                .join(tags, on: tags.value == "swift")
        )
        // SELECT DISTINCT "notes"."title" FROM "notes"
        //   INNER JOIN json_each("notes"."tags") ON "json_each"."value" = :l1
        #expect(aboutSwift.map { $0.get(0, as: String.self) } == ["Pages"])
        #expect(try Select(notes.col("title")).distinct().from(notes).join(tags, on: tags.value == "swift").render().sql
            == #"SELECT DISTINCT "notes"."title" FROM "notes" INNER JOIN json_each("notes"."tags") ON "json_each"."value" = :l1"#)

        // Block 4.
        let wanted = "sqlite"
        let tagged = try await db.query(
            literal: "SELECT title FROM notes WHERE \(wanted) IN (\(Select(tags.value).from(tags))) ORDER BY title"
        )
        #expect(tagged.map { $0.get(0, as: String.self) } == [nil, "Pages"])

        // Block 5.
        let members = JSONEach(SQLExpression.value(#"{"a": 1, "b": [2, 3]}"#))
        let kinds = try await db.query(Select(members.key, members.type).from(members).orderBy(members.key))
        // ("a", "integer"), ("b", "array")
        #expect(kinds.map { [$0.get(0, as: String.self), $0.get(1, as: String.self)] }
            == [["a", "integer"], ["b", "array"]])

        // Block 6.
        try await db.execute(Update(notes).set(col("title"), to: meta.jsonExtract(atPath: "$.author.name")).where(col("title") == nil))
        try await db.execute(Delete(notes).where(meta.jsonExtract(atPath: "$.draft") == true))
        let stars = try await db.query(literal: "SELECT title FROM notes WHERE \(meta.jsonExtract(atPath: "$.stars")) > \(3)")
        #expect(Set(stars.compactMap { $0.get(0, as: String.self) }) == ["Pages", "Alan"])
        #expect(try await db.query(literal: "SELECT count(*) FROM notes")[0].get(0, as: Int.self) == 2)

        // Block 7.
        let library = try SqlCipherLibrary.shared
        let hasOperators = library.capabilities.features.contains(.jsonOperators)   // false on 3.4.1
        let author = hasOperators ? meta.jsonValue(atPath: "author") : meta.jsonExtract(atPath: "$.author")
        // try library.require(.json) throws SqlCipherError.libraryTooOld where JSON is missing
        #expect(hasOperators)
        #expect(try Select(author).render().sql == #"SELECT "meta" ->> :l1"#)
    }

    @Test(.enabled(if: !libraryHasJSON(), "a library without the JSON functions (SQLCipher 3.4.1)"))
    func theLastExampleChoosesJSONExtractAndRequireRefuses() throws {
        let meta = col("meta")
        // Block 7.
        let library = try SqlCipherLibrary.shared
        let hasOperators = library.capabilities.features.contains(.jsonOperators)   // false on 3.4.1
        let author = hasOperators ? meta.jsonValue(atPath: "author") : meta.jsonExtract(atPath: "$.author")
        // try library.require(.json) throws SqlCipherError.libraryTooOld where JSON is missing
        #expect(!hasOperators)
        #expect(throws: SqlCipherError.self) { try Select(author).render() }
        #expect { try library.require(.json) } throws: { error in
            guard case SqlCipherError.libraryTooOld(_, _, let missing) = error else { return false }
            return missing == ["json"]
        }
    }
}
