import Foundation
import SqlCipherKit
import Testing

/// Entities whose key the caller assigns: a non-optional `String`, `UUID` or `Int` key property.
/// That these types compile as entities is half of the test.
@Suite struct CallerKeyedEntityTests {
    struct Tag: Entity, Equatable {
        static let tableName = TableName("tags")
        static let primaryKey: WritableKeyPath<Tag, String> & Sendable = \.name
        static let primaryKeyColumn = "name"
        var name: String
        var color: String
    }

    struct Session: Entity, Equatable {
        static let tableName = TableName("sessions")
        static let primaryKey: WritableKeyPath<Session, UUID> & Sendable = \.id
        var id: UUID
        var user: String
    }

    struct Year: Entity, Equatable {
        static let tableName = TableName("years")
        static let primaryKey: WritableKeyPath<Year, Int> & Sendable = \.id
        var id: Int
        var label: String
    }

    /// A key type of the caller's, adopted with one line.
    struct SKU: DatabaseValueConvertible, Hashable, Codable {
        var code: String
        var databaseValue: DatabaseValue { .text(code) }
        static func fromDatabaseValue(_ value: DatabaseValue) -> SKU? {
            String.fromDatabaseValue(value).map(SKU.init(code:))
        }
    }

    struct Article: Entity, Equatable {
        static let tableName = TableName("articles")
        static let primaryKey: WritableKeyPath<Article, SKU> & Sendable = \.id
        var id: SKU
        var title: String
    }

    func makeDatabase(_ dir: TemporaryDirectory) async throws -> Database {
        let db = try Database(path: dir.path("keys.db"), rawKey: rawKey())
        try await db.execute("""
            CREATE TABLE tags(name TEXT PRIMARY KEY NOT NULL, color TEXT NOT NULL);
            CREATE TABLE sessions(id TEXT PRIMARY KEY NOT NULL, user TEXT NOT NULL);
            CREATE TABLE years(id INTEGER PRIMARY KEY, label TEXT NOT NULL);
            CREATE TABLE articles(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL);
            """)
        return db
    }

    @Test func aStringKeyInsertsUpdatesFetchesAndDeletes() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        let saved = try await db.save(Tag(name: "urgent", color: "red"))
        #expect(saved == Tag(name: "urgent", color: "red"))
        try await db.save(Tag(name: "later", color: "grey"))
        try await db.save(Tag(name: "urgent", color: "orange"))
        #expect(try await db.count(Tag.self) == 2)
        #expect(try await db.fetchOne(Tag.self, id: "urgent") == Tag(name: "urgent", color: "orange"))
        #expect(try await db.delete(Tag.self, id: "later") == 1)
        #expect(try await db.fetch(Tag.self) == [Tag(name: "urgent", color: "orange")])
        await db.close()
    }

    @Test func uuidIntAndOwnKeysWork() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        let id = UUID()
        try await db.save([Session(id: id, user: "ann"), Session(id: UUID(), user: "bob")])
        try await db.save(Session(id: id, user: "ann2"))
        #expect(try await db.fetchOne(Session.self, id: id)?.user == "ann2")
        #expect(try await db.count(Session.self) == 2)

        // An integer key the caller chooses is stored as given, not replaced by a rowid.
        try await db.save(Year(id: 2026, label: "now"))
        try await db.save(Year(id: 1999, label: "then"))
        try await db.save(Year(id: 2026, label: "this year"))
        #expect(try await db.fetch(Year.self, orderBy: col("id")) == [
            Year(id: 1999, label: "then"), Year(id: 2026, label: "this year"),
        ])
        #expect(try await db.delete(Year.self, id: 1999) == 1)

        try await db.save(Article(id: SKU(code: "A-1"), title: "Lamp"))
        #expect(try await db.fetchOne(Article.self, id: SKU(code: "A-1"))?.title == "Lamp")
        #expect(try await db.query("SELECT id FROM articles")[0].get(0, as: String.self) == "A-1")

        // The same inside a transaction, on the Connection.
        try await db.transaction { conn in
            _ = try conn.save(Tag(name: "t", color: "c"))
            #expect(try conn.fetchOne(Tag.self, id: "t")?.color == "c")
            #expect(try conn.delete(Tag.self, id: "t") == 1)
        }
        await db.close()
    }
}

/// The one line the guide gives for a key type of one's own.
extension CallerKeyedEntityTests.SKU: EntityKey {}
