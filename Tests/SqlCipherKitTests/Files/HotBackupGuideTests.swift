import Foundation
import SqlCipherKit
import Synchronization
import Testing

/// Runs the example of the DocC article "Hot backup" (HotBackup.md) line for line (checked by
/// `ArticleCodeBlockTests`).
@Suite struct HotBackupGuideTests {
    @Test func theArticlesExampleRunsAsWritten() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("live.db"), key: "live passphrase")
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
        try await db.execute("INSERT INTO notes(body) VALUES ('kept')")
        let backupPath = dir.path("backup.db")
        let printed = Mutex<[String]>([])
        @Sendable func print(_ text: String) { printed.withLock { $0.append(text) } }

        try await db.backup(to: backupPath, key: "backup passphrase") { progress in
            print("\(progress.completed) of \(progress.total) pages")
        }
        let copy = try Database(path: backupPath, key: "backup passphrase", readOnly: true)

        #expect(try await copy.query("SELECT body FROM notes")[0].get(0, as: String.self) == "kept")
        let lines = printed.withLock { $0 }
        #expect(lines.first?.hasPrefix("0 of ") == true && lines.count >= 2)
        await copy.close()
        await db.close()
    }
}
