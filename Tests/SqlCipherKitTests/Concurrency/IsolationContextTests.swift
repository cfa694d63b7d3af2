import Foundation
import SqlCipherKit
import Testing

/// The seed's examples for transactions, savepoints, live queries and migrations, and then every
/// other public API family (SQL literals, backups and conversions, tracing, functions, cursors and
/// prepared statements, schema introspection, FTS5 and JSON, LiveQuery), run from each
/// isolation context by a real executable (Sources/sqlcipherkit-isolation-examples): its
/// top-level `main.swift` is where a non-`@Sendable` body trapped at run time, which no test
/// function can show. The executable is part of the build, so a context in which the examples do
/// not compile fails the build and with it the suite.
@Suite struct IsolationContextTests {
    @Test func theSeedsExamplesRunInEveryContext() async throws {
        let directory = TemporaryDirectory()
        let library = try loadedLibrary().path
        let result = try await runChildOffThePool(productPath("sqlcipherkit-isolation-examples"), [directory.url.path],
                                            environment: ["SQLCIPHERKIT_LIBRARY": library])
        #expect(!result.signaled, "the examples crashed: \(result.stderr)")
        #expect(result.status == 0, "\(result.stderr)")
        let contexts = ["top-level", "main-actor", "actor", "async-function", "detached", "route-handler",
                        "pool-top-level", "pool-main-actor", "pool-actor", "pool-detached", "streams-database",
                        "streams-pool"]
        // Then every other API family (Topics/*.swift), on a Database and a DatabasePool, in each
        // context: top-level code, a @MainActor class, the caller's own actor, Task.detached.
        let topicContexts = ["top-level", "main-actor", "actor", "detached"].flatMap { [$0, "pool-" + $0] }
        let topics = ["literals", "files", "tracing", "functions", "statements", "schema", "search"]
            .flatMap { topic in topicContexts.map { topic + "-" + $0 } }
            // LiveQuery is main-actor isolated: top-level code and the @MainActor class only.
            + ["top-level", "pool-top-level", "main-actor", "pool-main-actor"].map { "live-" + $0 }
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines == (contexts + topics).map { "ok " + $0 })
        // Every context left an encrypted file behind.
        for context in contexts + topics where !context.hasPrefix("streams-") {
            let header = FileManager.default.contents(atPath: directory.path(context + ".db"))?.prefix(16)
            #expect(header != nil && header != Data("SQLite format 3\0".utf8), "\(context).db")
        }
    }

    /// The same calls from a @MainActor method, from this suite's own code: the closures are
    /// main-actor formed, run on the database's executor and hold nested closures.
    @MainActor @Test func aMainActorCallerRunsBodiesWithNestedClosures() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE t(x INTEGER)")
        let values = [1, 2, 3]
        let total = try await db.transaction { conn in
            try values.map { value in try conn.execute("INSERT INTO t VALUES (?)", value) }.reduce(0, +)
        }
        #expect(total == 3)
        let sum = try await db.read { conn in
            try conn.query("SELECT sum(x) FROM t")[0].get(0, as: Int.self)
        }
        #expect(sum == 6)
    }
}
