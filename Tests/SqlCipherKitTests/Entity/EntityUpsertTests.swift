import Foundation
import SqlCipherKit
import Testing

/// `save(_:onConflict:)`: insert or update by a UNIQUE column, without a fetch first, on both
/// SQLCipher 4 (SQLite 3.46) and 3.4.1 (SQLite 3.15, no `ON CONFLICT … DO UPDATE`).
@Suite struct EntityUpsertTests {
    struct Label: Entity, Equatable {
        static let tableName = TableName("tags")
        static let primaryKey: WritableKeyPath<Label, Int?> & Sendable = \.id
        var id: Int?
        var name: String
        var color: String?
    }

    struct Seat: Entity, Equatable {
        static let tableName = TableName("seats")
        static let primaryKey: WritableKeyPath<Seat, String> & Sendable = \.code
        static let primaryKeyColumn = "code"
        var code: String
        var row: Int
        var number: Int
        var holder: String
    }

    func makeDatabase(_ dir: TemporaryDirectory) async throws -> Database {
        let db = try Database(path: dir.path("upsert.db"), rawKey: rawKey())
        try await db.execute("""
            CREATE TABLE tags(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, color TEXT);
            CREATE TABLE seats(code TEXT PRIMARY KEY NOT NULL, row INTEGER NOT NULL, number INTEGER NOT NULL,
                               holder TEXT NOT NULL, UNIQUE(row, number));
            CREATE TABLE deleted(id INTEGER);
            CREATE TRIGGER tags_deleted AFTER DELETE ON tags BEGIN INSERT INTO deleted VALUES (old.id); END;
            """)
        return db
    }

    @Test func theGuideExampleUpdatesInPlace() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        try await db.save(Label(id: nil, name: "later", color: nil))
        let red = try await db.save(Label(id: nil, name: "urgent", color: "red"), onConflict: "name")
        let orange = try await db.save(Label(id: nil, name: "urgent", color: "orange"), onConflict: "name")
        #expect(red.id == 2)
        #expect(orange == Label(id: 2, name: "urgent", color: "orange"))
        #expect(try await db.fetch(Label.self, orderBy: col("id")) == [
            Label(id: 1, name: "later", color: nil), Label(id: 2, name: "urgent", color: "orange"),
        ])
        // Updated in place: the row was never deleted.
        #expect(try await db.query("SELECT count(*) FROM deleted")[0].get(0, as: Int.self) == 0)
        // A key set in the entity gives way to the found row's key.
        let renamedKey = try await db.save(Label(id: 99, name: "later", color: "grey"), onConflict: "name")
        #expect(renamedKey.id == 1)
        #expect(try await db.count(Label.self) == 2)
        await db.close()
    }

    @Test func severalColumnsAndCallerKeysInATransaction() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        let saved = try await db.transaction { conn in
            try conn.save(Seat(code: "A1", row: 1, number: 1, holder: "ann"), onConflict: "row", "number")
            return try conn.save(Seat(code: "ignored", row: 1, number: 1, holder: "bob"), onConflict: "row", "number")
        }
        #expect(saved == Seat(code: "A1", row: 1, number: 1, holder: "bob"))
        try await db.save(Seat(code: "A2", row: 1, number: 2, holder: "cy"), onConflict: "row", "number")
        #expect(try await db.fetch(Seat.self, orderBy: col("code")).map(\.holder) == ["bob", "cy"])
        await db.close()
    }

    @Test func columnsThatCannotIdentifyOneRowAreRefused() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        try await db.save(Seat(code: "A1", row: 1, number: 1, holder: "ann"))
        try await db.save(Seat(code: "A2", row: 1, number: 2, holder: "ann"))
        let notUnique = try await #require(throws: SqlCipherError.self) {
            try await db.save(Seat(code: "X", row: 9, number: 9, holder: "ann"), onConflict: "holder")
        }
        #expect(notUnique.description.contains("more than one row of seats"))
        let key = try await #require(throws: SqlCipherError.self) {
            try await db.save(Seat(code: "A1", row: 9, number: 9, holder: "z"), onConflict: "code")
        }
        #expect(key.description.contains("primary key's column"))
        let unknown = try await #require(throws: SqlCipherError.self) {
            try await db.save(Seat(code: "A1", row: 9, number: 9, holder: "z"), onConflict: "seat")
        }
        #expect(unknown.description.contains("no column named \"seat\""))
        // Nothing was written by the refused calls.
        #expect(try await db.fetch(Seat.self, orderBy: col("code")).map(\.code) == ["A1", "A2"])
        await db.close()
    }
}
