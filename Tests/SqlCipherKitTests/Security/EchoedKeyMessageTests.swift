import Foundation
import SqlCipherKit
import Testing

/// SQLite's error messages echo names from the statement: `no such column: …`, `no such
/// collation sequence: …`, `near "…"`. When the statement carries a key, the echoed name can be
/// the key, spaces and all; no rendering of the error may show it.
@Suite struct EchoedKeyMessageTests {
    static let secret = "Qw8 spaced secret"

    @Test(arguments: [
        "ATTACH '%@' AS o KEY (SELECT [Qw8 spaced secret])",
        "ATTACH '%@' AS o KEY 'k' COLLATE [Qw8 spaced secret]",
        "ATTACH '%@' AS o KEY (SELECT `Qw8 spaced secret`)",
        "ATTACH '%@' AS o KEY (SELECT 1 FROM [Qw8 spaced secret])",
        "ATTACH '%@' AS o KEY [Qw8 spaced secret](1)",
        "ATTACH '%@' AS o KEY 'a' 'Qw8 spaced secret'",
        "ATTACH '%@' AS o KEY x'Qw8 spaced secret'",
        "VACUUM INTO 'file:%@?key=Qw8 spaced secret' || [Qw8 spaced secret]",
    ])
    func anEchoedKeyIsNotShown(_ template: String) async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("main.db"), key: "main passphrase", cipher: fastCipher)
        let sql = template.replacingOccurrences(of: "%@", with: dir.path("o.db"))
        do {
            try await db.execute(sql)
            _ = try? await db.execute("DETACH o")
        } catch {
            var dumped = ""
            dump(error, to: &dumped)
            let shown = [String(describing: error), String(reflecting: error), error.localizedDescription, dumped]
                .joined(separator: "\n")
            #expect(!shown.contains(Self.secret), "\(shown)")
        }
        await db.close()
    }
}
