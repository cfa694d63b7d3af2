import Foundation
import Testing
@testable import SqlCipherKit

/// The examples of the DocC articles "Tracing" (TracingStatements.md) and "Custom functions and
/// collations" (FunctionsAndCollations.md), compiled and run. Each block is copied as it stands in
/// its article, inside the setup it assumes, then checked.
@Suite struct GuideExtensionExamplesTests {
    func database() async throws -> Database {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("""
            CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
            CREATE TABLE posts(id INTEGER PRIMARY KEY, title TEXT);
            CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT, price REAL);
            CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO notes(body) VALUES ('first');
            INSERT INTO posts(title) VALUES ('Hello, World!'), ('Other news');
            INSERT INTO products(name, price) VALUES ('Widget', 9.99), ('Gadget', 24.5), ('Bolt', 0.5);
            INSERT INTO people(name) VALUES ('Christopher'), ('Al'), ('Bea');
            """)
        return db
    }

    @Test func tracing() async throws {
        let db = try await database()
        let tracing = try await db.trace { event in
            guard !event.isInternal else { return }
            print(event)   // [writer] 0.084 ms  SELECT body FROM notes WHERE id = ?
        }
        _ = try await db.query("SELECT body FROM notes WHERE id = ?", 1)
        tracing.cancel()
        #expect(!tracing.isActive)
    }

    @Test func tracingAsASequence() async throws {
        let db = try await database()
        let events = try await db.traceEvents(bufferingPolicy: .bufferingNewest(1000))
        let printer = Task {
            for await event in events where event.duration > .milliseconds(50) {
                print("slow:", event.sql, event.duration)
            }
        }
        try await db.execute("UPDATE notes SET body = upper(body)")
        try await db.stopTracing()   // ends the sequence, and every other tracer
        await printer.value
        #expect(try await db.query("SELECT body FROM notes")[0].get(0, as: String.self) == "FIRST")
    }

    @Test func customFunction() async throws {
        let db = try await database()
        let slug = DatabaseFunction("slug", deterministic: true) { (title: String) in
            title.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(separator: "-")
        }
        try await db.add(function: slug)
        let rows = try await db.query("SELECT id FROM posts WHERE slug(title) = ?", "hello-world")
        #expect(rows.map { $0.get(0, as: Int.self) } == [1])
    }

    @Test func aggregate() async throws {
        let db = try await database()
        struct Median: DatabaseAggregate {
            var values: [Double] = []
            mutating func step(_ arguments: [DatabaseValue]) throws {
                if let value = Double.fromDatabaseValue(arguments[0]) { values.append(value) }
            }
            func result() -> Double? {
                let sorted = values.sorted()
                guard !sorted.isEmpty else { return nil }
                let middle = sorted.count / 2
                return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
            }
        }
        try await db.add(function: DatabaseFunction("median", argumentCount: 1, aggregate: Median.self))
        let median = try await db.query("SELECT median(price) FROM products")[0].get(0, as: Double.self)
        #expect(median == 9.99)
    }

    @Test func collation() async throws {
        let db = try await database()
        let byLength = DatabaseCollation("by_length") { left, right in
            left.count != right.count ? (left.count < right.count ? .orderedAscending : .orderedDescending)
                : left < right ? .orderedAscending : left == right ? .orderedSame : .orderedDescending
        }
        try await db.add(collation: byLength)
        try await db.execute("CREATE INDEX people_by_length ON people(name COLLATE by_length)")
        let names = try await db.query("SELECT name FROM people ORDER BY name COLLATE by_length")
        #expect(names.compactMap { $0.get(0, as: String.self) } == ["Al", "Bea", "Christopher"])
    }

    /// The examples of the DocC comments of the new types.
    @Test func docCommentExamples() async throws {
        let db = try await database()
        try await db.add(function: DatabaseFunction("half", deterministic: true) { (x: Double) in x / 2 })
        let rows = try await db.query("SELECT name FROM products WHERE half(price) < ?", 10)
        #expect(rows.count == 2)
        try await db.add(function: DatabaseFunction("plus", deterministic: true) { (a: Int, b: Int) in a + b })
        try await db.add(function: DatabaseFunction("initial") { (name: String?) in name?.first.map(String.init) })
        try await db.add(function: DatabaseFunction("coalesce_text", argumentCount: nil) { values in
            values.first { !$0.isNull }.map { "\($0)" }
        })
        #expect(try await db.query("SELECT plus(1, 2), initial('Zoe'), coalesce_text(NULL, 3)")[0].values
            == [.integer(3), .text("Z"), .text("3")])
        let localized = DatabaseCollation("localized") { $0.localizedStandardCompare($1) }
        try await db.add(collation: localized)
        try await db.execute("CREATE INDEX people_by_name ON people(name COLLATE localized)")
        let people = try await db.query("SELECT name FROM people ORDER BY name COLLATE localized")
        #expect(people.compactMap { $0.get(0, as: String.self) } == ["Al", "Bea", "Christopher"])
    }
}
