import Foundation
import SqlCipherKit
import Testing

/// Transaction bodies written the way users write them, and the spellings the article
/// "Transactions and savepoints" gives for a one-line body in a `Void` closure: that this file compiles is the test.
@Suite struct TransactionBodyInferenceTests {
    static func singleExpressionFunction(_ db: Database) async throws {
        try await db.transaction { conn in try conn.execute("INSERT INTO t(x) VALUES (1)") }
    }

    static func multiStatementFunction(_ db: Database) async throws {
        try await db.transaction { conn in
            try conn.execute("INSERT INTO t(x) VALUES (2)")
            try conn.execute("INSERT INTO t(x) VALUES (3)")
        }
    }

    static func savepointFunction(_ db: Database) async throws {
        try await db.savepoint { conn in try conn.execute("INSERT INTO t(x) VALUES (4)") }
    }

    @Test func voidContextBodiesCompileAndRun() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("t.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE t(x)")
        try await Self.singleExpressionFunction(db)
        try await Self.multiStatementFunction(db)
        try await Self.savepointFunction(db)
        let task = Task { try await db.transaction { conn in try conn.execute("INSERT INTO t(x) VALUES (5)") } }
        #expect(try await task.value == 1)
        // A one-line body in a closure that must return Void (a `Task<Void, _>`, a SwiftUI
        // `.task { }`, a stored `() async throws -> Void`): `{ conn in try conn.execute(…) }`
        // alone does not compile there ("conflicting arguments to generic parameter 'T' ('Void'
        // vs. 'Int')"); the guide's spellings, each of which does:
        let discarded: @Sendable () async throws -> Void = {
            try await db.transaction { conn in _ = try conn.execute("INSERT INTO t(x) VALUES (6)") }
        }
        try await discarded()
        let typed: @Sendable () async throws -> Void = {
            try await db.transaction { conn -> Void in try conn.execute("INSERT INTO t(x) VALUES (7)") }
        }
        try await typed()
        let voidTask = Task<Void, any Error> {
            try await db.savepoint { conn in _ = try conn.execute("INSERT INTO t(x) VALUES (8)") }
        }
        try await voidTask.value
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 8)

        // The guide's and GettingStarted's example, as written there.
        try await db.execute("CREATE TABLE drafts(x); INSERT INTO drafts VALUES (1)")
        let guideTask = Task<Void, any Error> {
            try await db.transaction { conn in _ = try conn.execute("DELETE FROM drafts") }
        }
        try await guideTask.value
        #expect(try await db.query("SELECT count(*) FROM drafts")[0].get(0, as: Int.self) == 0)
    }
}
