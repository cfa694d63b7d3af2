import Foundation
import SqlCipherKit
import Testing

/// The README's quick start, compiled and run as written (only the path differs).
@Suite struct ReadmeExampleTests {
    @Test func quickStartRuns() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path("store.db")
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

        let db = try Database(path: path, key: "correct horse battery staple")
        try await db.execute("CREATE TABLE IF NOT EXISTS notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        try await db.execute("INSERT INTO notes(body) VALUES (?)", "hello, encrypted world")

        let rows = try await db.query("SELECT id, body FROM notes ORDER BY id")
        for row in rows {
            print(row.get("id", as: Int.self) ?? 0, row.get("body", as: String.self) ?? "")
        }

        let count = try await db.transaction { conn in
            try conn.execute("INSERT INTO notes(body) VALUES (?)", "written atomically")
            return try conn.query("SELECT count(*) AS n FROM notes")[0].get("n", as: Int.self) ?? 0
        }
        await db.close()

        #expect(printed == ["1 hello, encrypted world"])
        #expect(count == 2)
        #expect(DatabaseFileInspector.inspect(path).kind == .encrypted)
        #expect(!Linking.anyFileContains(Linking.databaseFiles(path), "hello, encrypted world"))
    }
}
