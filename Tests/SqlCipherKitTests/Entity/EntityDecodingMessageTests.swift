import Foundation
import SqlCipherKit
import Testing

@Suite struct EntityDecodingMessageTests {
    struct Paint: Entity {
        static let tableName = TableName("paints")
        static let primaryKey: WritableKeyPath<Paint, Int?> & Sendable = \.id
        var id: Int?
        var color: String
    }

    /// A row without the property's column: the message says the column is missing and how to
    /// read such rows, not that the column "holds no such column".
    @Test func aMissingColumnIsNamedAsMissing() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("p.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE paints(id INTEGER PRIMARY KEY, color TEXT)")
        try await db.execute("INSERT INTO paints(color) VALUES ('red')")
        let error = try await #require(throws: SqlCipherError.self) {
            try await db.fetch(Paint.self, sql: "SELECT id FROM paints")
        }
        guard case .decodingFailed(_, let column, _, _) = error else {
            Issue.record("expected decodingFailed, got \(error)")
            return
        }
        #expect(column == "color")
        #expect(!error.description.contains("holds no such column"))
        #expect(error.description.hasPrefix("Cannot decode Paint: the row has no column \"color\" (expected String)."))
        #expect(error.description.contains("make the property optional"))
        await db.close()
    }
}
