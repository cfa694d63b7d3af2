import Foundation
import SqlCipherKit
import Testing

extension IsolationContextTests {
    /// The seed's examples, and every other API family, in a module built with `.defaultIsolation(MainActor.self)` (Swift 6.2,
    /// as new app templates are): Sources/sqlcipherkit-isolation-examples-mainactor. Its types
    /// are declared as the article "Isolation and cancellation" says ("Which isolation context"); that it builds is half of
    /// the test, that every context runs to the end against the loaded library is the other.
    @Test func theSeedsExamplesRunInADefaultMainActorModule() async throws {
        let directory = TemporaryDirectory()
        let library = try loadedLibrary().path
        let result = try await runChildOffThePool(productPath("sqlcipherkit-isolation-examples-mainactor"), [directory.url.path],
                                            environment: ["SQLCIPHERKIT_LIBRARY": library])
        #expect(!result.signaled, "the examples crashed: \(result.stderr)")
        #expect(result.status == 0, "\(result.stderr)")
        let seed = ["default-main-actor", "default-main-actor-class", "default-main-actor-pool"]
        // Every other API family (Topics/*.swift): top-level code, then an unannotated class, each
        // on a Database and a DatabasePool.
        let topicContexts = ["default-main-actor", "default-main-actor-pool", "default-main-actor-class",
                             "default-main-actor-class-pool"]
        let topics = ["literals", "files", "tracing", "functions", "statements", "schema", "search", "live"]
            .flatMap { topic in topicContexts.map { topic + "-" + $0 } }
        // Then the user's own types that the database compares or decodes off the main actor.
        let contexts = seed + topics + ["types-default-main-actor"]
        #expect(result.stdout.split(separator: "\n").map(String.init) == contexts.map { "ok " + $0 })
        for context in contexts {
            let header = FileManager.default.contents(atPath: directory.path(context + ".db"))?.prefix(16)
            #expect(header != nil && header != Data("SQLite format 3\0".utf8), "\(context).db")
        }
    }
}
