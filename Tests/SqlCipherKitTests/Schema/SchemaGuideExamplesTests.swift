import Foundation
import SqlCipherKit
import Testing

/// Runs the examples of the DocC article "Schema introspection" (SchemaIntrospection.md), each
/// with the setup it assumes (checked by `ArticleCodeBlockTests`).
@Suite struct SchemaGuideExamplesTests {
    @Test func overview() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("guide.db"), rawKey: rawKey())
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

        if try await !db.tableExists("notes") {
            try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        }
        let columns = try await db.columns(in: "notes")
        print(columns.map(\.name))            // ["id", "body"]
        print(columns[1].isNotNull)           // true
        let key = try await db.primaryKey(of: "notes")
        print(key.columns, key.kind)          // ["id"] rowIDAlias

        #expect(printed == [#"["id", "body"]"#, "true", #"["id"] rowIDAlias"#])

        let (indexes, foreignKeys) = try await db.read { conn in
            (try conn.indexes(on: "notes"), try conn.foreignKeys(of: "notes"))
        }
        #expect(indexes.isEmpty && foreignKeys.isEmpty)
        await db.close()
    }

    @Test func writableColumns() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("guide.db"), rawKey: rawKey())
        if sqliteVersionIsAtLeast(3_031_000) {
            try await db.execute("CREATE TABLE boxes(w INT, h INT, area INT AS (w * h))")
        } else {
            try await db.execute("CREATE TABLE boxes(w INT, h INT)")
        }

        let writable = try await db.columns(in: "boxes").filter { column in
            column.kind == .ordinary || column.kind == .unknown
        }

        #expect(writable.map(\.name) == ["w", "h"])
        await db.close()
    }

    @Test func attachedSchema() async throws {
        let dir = TemporaryDirectory()
        let archivePath = dir.path("archive.db")
        let archivePassphrase = "archive passphrase"
        let archive = try Database(path: archivePath, key: archivePassphrase)
        try await archive.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); CREATE VIEW bodies AS SELECT body FROM notes")
        await archive.close()
        let db = try Database(path: dir.path("guide.db"), rawKey: rawKey())

        try await db.execute("ATTACH ? AS archive KEY ?", archivePath, archivePassphrase)
        let archived = try await db.columns(in: "notes", schema: "archive")
        let archiveViews = try await db.views(schema: "archive")

        #expect(archived.map(\.name) == ["id", "body"])
        #expect(archiveViews == ["bodies"])
        await db.close()
    }
}
