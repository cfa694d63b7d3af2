import Foundation
import SqlCipherKit
import Synchronization

// The types the topic examples (Topics/*.swift and main.swift) use, declared as a user declares
// them. The same file is compiled by both example executables (the main-actor one through a
// symbolic link), so each type that the database uses on its own executor is `nonisolated`: in
// the module whose default isolation is the main actor it would otherwise be main-actor
// isolated (see that module's Models.swift); here the word changes nothing.

/// A row decoded from an SQL literal's result.
nonisolated struct NoteRow: Decodable, Sendable {
    var id: Int
    var title: String
}

/// A row decoded by prepared statements and cursors.
nonisolated struct StockItem: Decodable, Sendable {
    var id: Int
    var name: String
    var qty: Int
}

/// The median of a group, as the article "Functions and collations" writes it.
nonisolated struct Median: DatabaseAggregate {
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

/// A migration whose statements are SQL literals: a table name as an identifier, a row's value bound.
nonisolated struct CreateTagsTable: Migration {
    let id = "010-create-tags"
    let table: String
    let first: String

    func up(_ ctx: MigrationContext) throws {
        try ctx.execute(literal: "CREATE TABLE \(identifier: table)(name TEXT NOT NULL)")
        try ctx.execute(literal: "INSERT INTO \(identifier: table)(name) VALUES (\(first))")
    }
}

/// The FTS5 table of the article "Full-text search", made by a migration.
nonisolated struct CreateNotesSearch: Migration {
    let id = "020-notes-search"

    func up(_ ctx: MigrationContext) throws {
        try ctx.execute(
            CreateFTS5Table(TableName("notes_fts"))
                .column("title")
                .column("body")
                .tokenizer(.unicode61(removeDiacritics: .remove))
                .prefixIndexes(2, 3)
        )
    }
}

/// What a progress closure records: a Sendable log that touches nothing isolated, which is all a
/// closure the package calls on its own executor may touch.
nonisolated final class ProgressLog: Sendable {
    private let recorded = Mutex<[DatabaseProgress]>([])

    func record(_ progress: DatabaseProgress) {
        recorded.withLock { $0.append(progress) }
    }

    var steps: [DatabaseProgress] { recorded.withLock { $0 } }

    /// At least one report, the last one complete.
    var reachedTheEnd: Bool {
        guard let last = steps.last else { return false }
        return last.completed == last.total
    }
}

/// The statements a trace closure saw.
nonisolated final class TraceLog: Sendable {
    private let recorded = Mutex<[String]>([])

    func record(_ line: String) {
        recorded.withLock { $0.append(line) }
    }

    var lines: [String] { recorded.withLock { $0 } }
}

/// Throws an ``ExampleFailure`` for `context` unless `condition` holds.
func expect(_ condition: Bool, _ context: String, _ what: @autoclosure () -> String) throws {
    if !condition { throw ExampleFailure(context: context, what: what()) }
}

/// Waits on the main actor until `condition` holds (a live query delivered), or fails after 20 s.
@MainActor
func waitUntil(_ context: String, _ what: String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(20)
    while !condition() {
        if ContinuousClock.now > deadline { throw ExampleFailure(context: context, what: "no \(what) after 20 s") }
        try await Task.sleep(for: .milliseconds(5))
    }
}
