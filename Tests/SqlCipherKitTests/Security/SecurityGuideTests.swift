import Foundation
import SqlCipherKit
import Testing

/// The example of the DocC article "Security" (Security.md), copied as it stands in the article
/// (checked by `ArticleCodeBlockTests`) and run against a temporary database.
@Suite struct SecurityGuideTests {
    /// Security.md, block 1: a typed passphrase kept as `Data` and cleared once the database is open.
    func open(typed field: String, at path: String) throws -> Database {
        var passphrase = Data(field.utf8)
        defer { passphrase.resetBytes(in: 0..<passphrase.count) }
        let db = try Database(path: path, key: .passphrase(passphrase))
        return db
    }

    @Test func aTypedPassphraseAsBytesOpensTheSameDatabaseAsTheString() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("typed.db")
        let db = try open(typed: "correct horse battery staple", at: path)
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        await db.close()
        let reopened = try Database(path: path, key: "correct horse battery staple")
        #expect(try await reopened.query("SELECT x FROM t")[0].get(0, as: Int.self) == 1)
        await reopened.close()
    }
}
