import Foundation
import SqlCipherKit
import Testing

/// Collations written in Swift: ORDER BY, an index sorted by one, text that is not UTF-8,
/// registration failures, replacing and removing.
@Suite struct CollationTests {
    /// Shorter names first, then alphabetical: an order no built-in collation gives.
    static let byLength = DatabaseCollation("by_length") { left, right in
        if left.count != right.count { return left.count < right.count ? .orderedAscending : .orderedDescending }
        return left < right ? .orderedAscending : (left == right ? .orderedSame : .orderedDescending)
    }

    func database(_ directory: TemporaryDirectory) async throws -> Database {
        let db = try Database(path: directory.path("collations.db"), rawKey: rawKey(6))
        try await db.execute("""
            CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO people(name) VALUES ('Christopher'), ('Al'), ('Bea'), ('Dominique'), ('Eve');
            """)
        return db
    }

    func names(_ rows: [Row]) -> [String] { rows.compactMap { $0.get(0, as: String.self) } }

    /// A file made by a program that registers a collation opens and reads without it; a
    /// statement that needs it fails with a typed error, a conversion (whose `sqlcipher_export`
    /// re-runs the schema) says to register it, and registering it works, on 3.4.1 too; then the
    /// export and the backup verify their copies with it.
    @Test func aFileWhoseSchemaNamesAnUnregisteredCollation() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path("made-elsewhere.db")
        let maker = try Database(path: path, rawKey: rawKey(6))
        try await maker.add(collation: Self.byLength)
        try await maker.execute("""
            CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT COLLATE by_length);
            CREATE INDEX people_name ON people(name);
            INSERT INTO people(name) VALUES ('Christopher'), ('Al'), ('Bea');
            """)
        await maker.close()

        let db = try Database(path: path, rawKey: rawKey(6))
        #expect(try await db.query("SELECT count(*) FROM people")[0].get(0, as: Int.self) == 3)
        await #expect {
            _ = try await db.query("SELECT name FROM people ORDER BY name")
        } throws: { error in
            guard case let SqlCipherError.sqlite(_, _, message, _) = error else { return false }
            return message.contains("by_length")
        }
        await #expect {
            try await db.export(to: directory.path("copy.db"), key: .rawKey(rawKey(7)))
        } throws: { error in
            guard case let SqlCipherError.conversionFailed(_, _, reason) = error else { return false }
            return reason.contains("add(collation:)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("copy.db")))
        // SQLite 3.15.2 (3.4.1) lists a collation the schema names in collation_list: that was
        // taken for a built-in, and this registration was refused.
        try await db.add(collation: Self.byLength)
        #expect(names(try await db.query("SELECT name FROM people ORDER BY name")) == ["Al", "Bea", "Christopher"])
        // The copies' verification (quick_check walks the index sorted by the collation) has it too.
        try await db.backup(to: directory.path("pages.db"), key: .rawKey(rawKey(8)))
        try await db.export(to: directory.path("copy.db"), key: .rawKey(rawKey(7)))
        let copy = try Database(path: directory.path("copy.db"), rawKey: rawKey(7))
        try await copy.add(collation: Self.byLength)
        #expect(names(try await copy.query("SELECT name FROM people ORDER BY name")) == ["Al", "Bea", "Christopher"])
    }

    @Test func orderByACollation() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.add(collation: Self.byLength)
        let rows = try await db.query("SELECT name FROM people ORDER BY name COLLATE by_length")
        #expect(names(rows) == ["Al", "Bea", "Eve", "Dominique", "Christopher"])
        let equal = try await db.query("SELECT count(*) FROM people WHERE name = 'Bea' COLLATE BY_LENGTH")
        #expect(equal[0].get(0, as: Int.self) == 1)
    }

    @Test func anIndexSortedByACollation() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.add(collation: Self.byLength)
        try await db.execute("CREATE INDEX people_by_length ON people(name COLLATE by_length)")
        let query = "SELECT name FROM people ORDER BY name COLLATE by_length"
        let plan = try await db.query("EXPLAIN QUERY PLAN " + query).compactMap { $0.get("detail", as: String.self) }
        #expect(plan.contains { $0.contains("people_by_length") }, "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
        try await db.execute("INSERT INTO people(name) VALUES ('Jo'), ('Maximilian')")
        #expect(names(try await db.query(query)) == ["Al", "Jo", "Bea", "Eve", "Dominique", "Maximilian", "Christopher"])
        #expect(try await db.query("PRAGMA integrity_check")[0].get(0, as: String.self) == "ok")
    }

    @Test func textThatIsNotUTF8IsOrderedTotally() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.add(collation: DatabaseCollation("loose") { left, right in
            left.lowercased() < right.lowercased() ? .orderedAscending
                : (left.lowercased() == right.lowercased() ? .orderedSame : .orderedDescending)
        })
        // Two different invalid byte strings that read the same after replacement.
        try await db.execute("""
            CREATE TABLE raw(t TEXT);
            INSERT INTO raw VALUES (CAST(x'41ff' AS TEXT)), (CAST(x'41fe' AS TEXT)), ('a'), (CAST(x'41ff' AS TEXT));
            CREATE INDEX raw_loose ON raw(t COLLATE loose);
            """)
        let ordered = try await db.query("SELECT hex(t) FROM raw ORDER BY t COLLATE loose").compactMap { $0.get(0, as: String.self) }
        #expect(ordered == ["61", "41FE", "41FF", "41FF"])
        #expect(try await db.query("SELECT count(DISTINCT t COLLATE loose) FROM raw")[0].get(0, as: Int.self) == 3)
        #expect(try await db.query("PRAGMA integrity_check")[0].get(0, as: String.self) == "ok")
    }

    @Test func builtInAndInvalidNamesAreRefused() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        for name in ["BINARY", "nocase", "RTrim", "", "sqlcipher_order", "a\u{0}b", String(repeating: "c", count: 300)] {
            await #expect {
                try await db.add(collation: DatabaseCollation(name) { _, _ in .orderedSame })
            } throws: { error in
                guard case SqlCipherError.registrationFailed(let refused, _) = error else { return false }
                return refused == name
            }
        }
        #expect(names(try await db.query("SELECT name FROM people ORDER BY name COLLATE NOCASE LIMIT 1")) == ["Al"])
    }

    @Test func replacingAndRemoving() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.add(collation: Self.byLength)
        try await db.add(collation: DatabaseCollation("BY_LENGTH") { left, right in
            left == right ? .orderedSame : (left > right ? .orderedAscending : .orderedDescending)  // reversed
        })
        let query = "SELECT name FROM people ORDER BY name COLLATE by_length LIMIT 1"
        #expect(names(try await db.query(query)) == ["Eve"])
        try await db.remove(collation: Self.byLength)
        await #expect {
            try await db.query(query)
        } throws: { error in
            guard case SqlCipherError.sqlite(1, _, let message, _) = error else { return false }
            return message.contains("no such collation sequence")
        }
    }
}
