import Foundation
import Testing
@testable import SqlCipherKit

/// SQLite lets most keywords serve as names (`TRIGGER`, `BEGIN`, `CASE`, `END` are all valid column
/// aliases and trigger names), so a statement boundary can never be decided by counting them: a
/// script whose first statement merely *names* a column `trigger` or `begin` must still have the
/// key of its later `ATTACH … KEY` masked.
@Suite struct KeywordNamesRedactionTests {
    static let secret = "Yx9HiddenPass"

    @Test(arguments: [
        "SELECT 1 AS trigger, 2 AS begin; ATTACH 'o.db' AS o KEY 'Yx9HiddenPass'",
        "SELECT 1 AS trigger, 2 AS \"case\"; PRAGMA rekey = 'Yx9HiddenPass'",
        "CREATE TRIGGER begin AFTER INSERT ON a BEGIN SELECT 1; END; ATTACH 'o.db' AS o KEY 'Yx9HiddenPass'",
        "SELECT 1 AS trigger, 2 AS begin; VACUUM INTO 'file:o.db?key=Yx9HiddenPass'",
    ])
    func keysAfterKeywordsUsedAsNamesAreMasked(_ sql: String) {
        let shown = SQLRedaction.text(of: sql)
        #expect(!shown.contains(Self.secret), "\(shown)")
        #expect(SQLRedaction.hidesArguments(of: sql))
    }

    /// The same script through the public API: the error for a script given arguments keeps the
    /// script's text, and every way of printing it must be free of the key.
    @Test func errorForAScriptWithKeywordNamesHoldsNoKey() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("main.db"), key: "main passphrase", cipher: fastCipher)
        defer { Task { await db.close() } }
        let sql = "SELECT ? AS trigger, 2 AS begin; ATTACH '\(dir.path("o.db"))' AS o KEY '\(Self.secret)'"
        do {
            _ = try await db.execute(sql, 1)
            Issue.record("a script with arguments ran")
        } catch {
            guard case SqlCipherError.multipleStatements = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            var dumped = ""
            dump(error, to: &dumped)
            let shown = [String(describing: error), String(reflecting: error), error.localizedDescription, dumped]
                .joined(separator: "\n")
            #expect(!shown.contains(Self.secret), "\(shown)")
        }
    }

    /// Trace events of such a script, run as a script, with arguments shown: no key either.
    @Test func traceEventsOfAScriptWithKeywordNamesHoldNoKey() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("main.db"), key: "main passphrase", cipher: fastCipher)
        let recorder = TraceRecorder()
        _ = try await recorder.attach(to: db, options: TraceOptions(includeArguments: true))
        let file = dir.path("o.db")
        try await db.execute("SELECT 1 AS trigger, 2 AS begin; ATTACH '\(file)' AS o KEY '\(Self.secret)'; DETACH o")
        try await db.execute("SELECT 1 AS trigger, 2 AS \"case\"; ATTACH '\(file)' AS o KEY [\(Self.secret)]; DETACH o")
        let events = recorder.userEvents
        #expect(events.count >= 2)
        #expect(keyLeaks(in: events, passphrases: [Self.secret], rawKeys: []) == [], "\(events.map(\.sql))")
        await db.close()
    }
}
