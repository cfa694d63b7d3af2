import Foundation
import SqlCipherKit
import Testing

/// Runs the examples of the DocC article "SQL interpolation" (SQLInterpolation.md), line for line
/// (checked by `ArticleCodeBlockTests`).
@Suite struct SQLInterpolationGuideTests {
    @Test func theArticlesExamplesRunAsWritten() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("guide.db"), rawKey: rawKey())

        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, owner TEXT, created REAL)")
        let owner = "Alice'; DROP TABLE notes; --"
        let since = Date(timeIntervalSince1970: 0)
        try await db.execute(literal: "INSERT INTO notes(title, owner, created) VALUES (\("Groceries"), \(owner), \(Date()))")
        let rows = try await db.query(literal: "SELECT title FROM notes WHERE owner = \(owner) AND created > \(since)")
        // SELECT title FROM notes WHERE owner = ? AND created > ?, with both values bound

        #expect(rows.map { $0.get("title", as: String.self) } == ["Groceries"])

        let table = "notes"
        let ids = [1, 2, 3]
        let recent = Select(col("id")).from(TableName(table)).where(col("created") > since)
        let picked = try await db.query(literal: """
            SELECT title FROM \(identifier: table)
            WHERE id IN \(list: ids) OR id IN (\(recent))
            ORDER BY \(identifier: "title")
            """)

        #expect(picked.count == 1)

        var query: SQL = "SELECT title FROM notes WHERE owner = \(owner)"
        let search: String? = "Groc%"
        if let search { query.append(" AND title LIKE \(search)") }
        let found = try await db.query(literal: query + " ORDER BY id")

        #expect(found.map { $0.get(0, as: String.self) } == ["Groceries"])
        await db.close()
    }
}
