import Foundation
import Testing
@testable import SqlCipherKit

/// Transaction control written by hand inside a body that the package's transaction owns: refused
/// before it runs, in every spelling and through every path; outside a body it works as before.
@Suite struct TransactionControlGuardTests {
    /// Every statement that begins, ends or changes a transaction or savepoint. The package's own
    /// savepoint names are among them: user SQL must not release or roll back those either.
    static let statements = [
        "BEGIN", "begin", "BEGIN DEFERRED", "begin deferred transaction", "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE",
        "COMMIT", "commit transaction", "END", "end transaction", "ROLLBACK", "rollback transaction",
        "ROLLBACK TO sqlcipherkit_sp1", "rollback transaction to savepoint sqlcipherkit_sp1", "ROLLBACK TO mine",
        "SAVEPOINT mine", "savepoint \"sqlcipherkit_sp2\"", "RELEASE sqlcipherkit_sp1", "release savepoint mine",
        "RELEASE mine", "  /* a comment */ COMMIT -- and another", "COMMIT;", "\n\tCOMMIT\n",
    ]

    func filled() async throws -> Database {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
        return db
    }

    func count(_ db: Database) async throws -> Int? {
        try await db.query("SELECT count(*) FROM t").first?.get(0, as: Int.self)
    }

    @Test(arguments: statements)
    func refusedInsideATransactionBody(_ sql: String) async throws {
        let db = try await filled()
        // Warm the statement cache with the same text run by hand outside any body, where it is
        // allowed, so that the body hits a cached statement the authorizer never sees again.
        try await warmCache(db, sql)
        // The body catches the refusal and goes on: both rows commit and the call succeeds.
        try await db.transaction { conn in
            try conn.execute("INSERT INTO t(name) VALUES ('before')")
            #expect(throws: SqlCipherError.transactionControlInBody(sql: sql)) { try conn.execute(sql) }
            #expect(throws: SqlCipherError.transactionControlInBody(sql: sql)) { _ = try conn.query(sql) }
            try conn.execute("INSERT INTO t(name) VALUES ('after')")
        }
        #expect(try await count(db) == 2)
        // The body lets it propagate: the call fails and nothing of the body is committed (the
        // issue's bug was a failure reported for a write that had committed).
        await #expect(throws: SqlCipherError.transactionControlInBody(sql: sql)) {
            try await db.transaction { conn in
                try conn.execute("INSERT INTO t(name) VALUES ('lost')")
                try conn.execute(sql)
            }
        }
        #expect(try await count(db) == 2)
        #expect(try await db.query("SELECT count(*) FROM t WHERE name = 'lost'").first?.get(0, as: Int.self) == 0)
        // Outside a body the same text still runs by hand.
        try await warmCache(db, sql)
    }

    /// Runs `sql` by hand where it is allowed, inside the statements it needs around it.
    func warmCache(_ db: Database, _ sql: String) async throws {
        let lower = sql.lowercased()
        let word = SQLTokenizer.tokenize(sql)?.first?.text.lowercased() ?? ""
        switch word {
        case "begin":
            try await db.execute(sql)
            try await db.execute("ROLLBACK")
        case "commit", "end":
            try await db.execute("BEGIN")
            try await db.execute(sql)
        case "rollback":
            let target = lower.contains("sqlcipherkit_sp1") ? "sqlcipherkit_sp1" : "mine"
            try await db.execute("SAVEPOINT \(target)")
            try await db.execute(sql)
            if lower.contains(" to ") { try await db.execute("RELEASE \(target)") }
        case "savepoint":
            try await db.execute(sql)
            try await db.execute("ROLLBACK")
        case "release":
            let target = lower.contains("sqlcipherkit_sp1") ? "sqlcipherkit_sp1" : "mine"
            try await db.execute("SAVEPOINT \(target)")
            try await db.execute(sql)
        default:
            Issue.record("no warm-up for \(sql)")
        }
        #expect(try await db.query("SELECT 1").count == 1)
    }

    @Test func refusedInSavepointsMigrationsAndScripts() async throws {
        let db = try await filled()
        // db.savepoint, a Connection's nested savepoint, and a transaction inside a hand-written BEGIN.
        await #expect(throws: SqlCipherError.transactionControlInBody(sql: "RELEASE sqlcipherkit_sp1")) {
            try await db.savepoint { conn in try conn.execute("RELEASE sqlcipherkit_sp1") }
        }
        try await db.transaction { conn in
            try conn.savepoint { inner in
                try inner.execute("INSERT INTO t(name) VALUES ('nested')")
                #expect(throws: SqlCipherError.transactionControlInBody(sql: "ROLLBACK TO sqlcipherkit_sp1")) {
                    try inner.execute("ROLLBACK TO sqlcipherkit_sp1")
                }
                #expect(throws: SqlCipherError.transactionControlInBody(sql: "COMMIT")) { try inner.execute("COMMIT") }
            }
        }
        #expect(try await count(db) == 1)
        try await db.execute("BEGIN")
        await #expect(throws: SqlCipherError.transactionControlInBody(sql: "COMMIT")) {
            try await db.transaction { conn in try conn.execute("COMMIT") }
        }
        // Still in the hand-written transaction, which the user ends by hand.
        try await db.execute("INSERT INTO t(name) VALUES ('by hand')")
        try await db.execute("COMMIT")
        #expect(try await count(db) == 2)

        // A script: the statements before the refused one ran (inside the transaction, which then
        // rolls back because the body throws), the refused one and those after it did not.
        let script = "INSERT INTO t(name) VALUES ('script'); COMMIT; INSERT INTO t(name) VALUES ('after')"
        await #expect(throws: SqlCipherError.transactionControlInBody(sql: script)) {
            try await db.transaction { conn in try conn.execute(script) }
        }
        #expect(try await count(db) == 2)

        // A migration's body.
        let migration = StepMigration("commits-by-hand") { ctx in
            _ = try ctx.execute("INSERT INTO t(name) VALUES ('migrated')")
            _ = try ctx.execute("COMMIT")
        }
        let error = await #expect(throws: SqlCipherError.self) { try await db.migrate([migration]) }
        guard case .migrationFailed(_, let reason)? = error else {
            Issue.record("expected migrationFailed, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("transaction { }"), "\(reason)")
        #expect(try await count(db) == 2)
        #expect(try await db.appliedMigrations().isEmpty)
    }

    @Test func thePackagesOwnTransactionsKeepWorking() async throws {
        let db = try await filled()
        // Nested savepoints three deep, a throwing inner one, and the statements the package caches.
        for round in 0..<3 {
            try await db.transaction { conn in
                try conn.execute("INSERT INTO t(name) VALUES (?)", "outer \(round)")
                try conn.savepoint { one in
                    try one.execute("INSERT INTO t(name) VALUES ('one')")
                    try one.savepoint { two in try two.execute("INSERT INTO t(name) VALUES ('two')") }
                    do {
                        try one.savepoint { two in
                            try two.execute("INSERT INTO t(name) VALUES ('undone')")
                            throw CancellationError()
                        }
                    } catch is CancellationError {}
                }
            }
        }
        #expect(try await count(db) == 9)
        // After the bodies, hand-written transactions work again, also with the cached texts.
        try await db.execute("BEGIN IMMEDIATE")
        try await db.execute("SAVEPOINT sqlcipherkit_sp1")
        try await db.execute("INSERT INTO t(name) VALUES ('hand')")
        try await db.execute("RELEASE sqlcipherkit_sp1")
        try await db.execute("COMMIT")
        #expect(try await count(db) == 10)
        // A refused statement leaves no state behind: the next transaction commits normally.
        await #expect(throws: SqlCipherError.self) { try await db.transaction { conn in try conn.execute("ROLLBACK") } }
        try await db.transaction { conn in try conn.execute("INSERT INTO t(name) VALUES ('last')") }
        #expect(try await count(db) == 11)
    }

    @Test func errorMessageSaysWhatToDoInstead() {
        let text = SqlCipherError.transactionControlInBody(sql: "COMMIT").description
        #expect(text.contains("`COMMIT`"))
        #expect(text.contains("not run"))
        #expect(text.contains("Return from the body to commit"))
        #expect(text.contains("savepoint { }"))
    }
}
