import Foundation
@testable import SqlCipherKit

/// Whether the loaded library has the FTS5 module (SQLCipher 4.6.1 here; 3.4.1 has none): for
/// `.enabled(if:)` traits, so that each test either runs its search or asserts the typed refusal.
func libraryHasFTS5() -> Bool {
    (try? loadedLibrary())?.capabilities.features.contains(.fts5) ?? false
}

/// A migration made of one closure.
struct FTSMigration: Migration {
    let id: String
    let body: @Sendable (MigrationContext) throws -> Void

    init(_ id: String, _ body: @escaping @Sendable (MigrationContext) throws -> Void) {
        self.id = id
        self.body = body
    }

    func up(_ ctx: MigrationContext) throws { try body(ctx) }
}

/// An encrypted database in a fresh directory with `notes(id, title, body)` and a synchronized
/// external-content index `notes_fts(title, body)`, made by a migration.
struct NotesDatabase {
    let directory: TemporaryDirectory
    let db: Database

    static let notes = TableName("notes")
    static let index = TableName("notes_fts")

    init(_ label: String = #function, tokenizer: FTS5Tokenizer = .unicode61) async throws {
        directory = TemporaryDirectory(label)
        db = try Database(path: directory.path("notes.db"), rawKey: rawKey(9))
        try await db.migrate([Self.migration(tokenizer)])
    }

    /// The migration that makes `notes` and `notes_fts`.
    static func migration(_ tokenizer: FTS5Tokenizer = .unicode61) -> FTSMigration {
        FTSMigration("notes") { ctx in
            try ctx.execute(
                CreateTable(Self.notes)
                    .column("id", .integer, .primaryKey)
                    .column("title", .text, .notNull)
                    .column("body", .text, .notNull))
            try ctx.execute(
                CreateFTS5Table(Self.index).column("title").column("body").tokenizer(tokenizer)
                    .externalContent(Self.notes, rowid: "id"))
        }
    }

    /// Inserts a note; returns its id.
    @discardableResult
    func add(_ title: String, _ body: String) async throws -> Int {
        try await db.execute("INSERT INTO notes(title, body) VALUES (?, ?)", title, body)
        return try await db.query("SELECT max(id) FROM notes")[0].get(0, as: Int.self) ?? -1
    }

    /// The ids of the notes matching `pattern`, ascending.
    func ids(matching pattern: FTS5Pattern) async throws -> [Int] {
        try await db.query(
            Select(col("rowid")).from(Self.index).where(Self.index.match(pattern)).orderBy(col("rowid"))
        ).compactMap { $0.get(0, as: Int.self) }
    }
}
