import Foundation
import Testing
@testable import SqlCipherKit

/// The examples of the DocC articles' sections "Prepared statements: one compile, many runs"
/// (CursorsAndStreams.md) and "Reading and writing without Codable" (RowCoding.md), compiled and
/// run. Each block is copied as it stands in its article, inside the setup it assumes.
@Suite struct GuideRowCodingExamplesTests {
    struct Product: Entity {
        static let tableName = TableName("products")
        static let primaryKey: WritableKeyPath<Product, Int?> & Sendable = \.id
        var id: Int?
        var name: String
        var price: Double
    }

    // The guide's entity, as it stands there.
    struct Reading: Entity, RowCodable, Equatable {
        enum Unit: String, Codable, DatabaseValueConvertible { case celsius, kelvin }
        struct Place: Codable, Equatable {
            var room: String
            var floor: Int
        }

        static let tableName = TableName("readings")
        static let primaryKey: WritableKeyPath<Reading, Int?> & Sendable = \.id

        var id: Int?
        var sensor: UUID
        var at: Date
        var value: Double
        var unit: Unit
        var note: String?
        var place: Place

        init(id: Int?, sensor: UUID, at: Date, value: Double, unit: Unit, note: String?, place: Place) {
            (self.id, self.sensor, self.at, self.value, self.unit, self.note, self.place) =
                (id, sensor, at, value, unit, note, place)
        }

        init(row: Row) throws {
            id = try row.decode("id")
            sensor = try row.decode("sensor")
            at = try row.decode("at")
            value = try row.decode("value")
            unit = try row.decode("unit")
            note = try row.decode("note")
            place = try row.decodeCodable("place")
        }

        func encode(to columns: inout EntityColumns) {
            columns.set("id", id)
            columns.set("sensor", sensor)
            columns.set("at", at)
            columns.set("value", value)
            columns.set("unit", unit)
            columns.set("note", note)
            columns.setCodable("place", place)
        }
    }

    /// The same entity through Codable, to compare what each path stores.
    struct CodableReading: Entity, Equatable {
        static let tableName = TableName("codable_readings")
        static let primaryKey: WritableKeyPath<CodableReading, Int?> & Sendable = \.id
        var id: Int?
        var sensor: UUID
        var at: Date
        var value: Double
        var unit: Reading.Unit
        var note: String?
        var place: Reading.Place
    }

    func database() async throws -> Database {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("""
            CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL);
            CREATE TABLE payments(amount INTEGER, year INTEGER);
            CREATE TABLE readings(id INTEGER PRIMARY KEY, sensor TEXT, at TEXT, value REAL, unit TEXT, note TEXT,
                                  place TEXT);
            CREATE TABLE codable_readings(id INTEGER PRIMARY KEY, sensor TEXT, at TEXT, value REAL, unit TEXT,
                                          note TEXT, place TEXT);
            INSERT INTO products(name, price) VALUES ('Widget', 9.99), ('Gadget', 24.5), ('Bolt', 0.5);
            """)
        return db
    }

    @Test func preparedStatements() async throws {
        let db = try await database()

        try await db.transaction { conn in
            let insert = try conn.prepare("INSERT INTO payments(amount, year) VALUES (?, ?)")
            for (amount, year) in [(12, 2026), (7, 2026), (30, 2025)] {
                try insert.execute(amount, year)
            }
        }

        let (byYear, rows) = try await db.read { conn in
            let sumForYear = try conn.prepare("SELECT sum(amount) FROM payments WHERE year = ?")
            let byYear = try [2025, 2026].map { year in
                try sumForYear.query(year)[0].get(0, as: Int.self) ?? 0
            }
            let recent = try conn.prepare("SELECT amount, year FROM payments WHERE year >= ? ORDER BY amount")
            var rows: [String] = []
            let cursor = try recent.cursor(2026)
            while let row = try cursor.next() {
                rows.append("\(row.get("year", as: Int.self) ?? 0): \(row.get("amount", as: Int.self) ?? 0)")
            }
            return (byYear, rows)
        }

        let cheap = try await db.read { conn in
            try conn.prepare("SELECT * FROM products WHERE price < ? ORDER BY price").fetch(Product.self, 10.0)
        }

        #expect(byYear == [30, 19])
        #expect(rows == ["2026: 7", "2026: 12"])
        #expect(cheap.map(\.name) == ["Bolt", "Widget"])
        // The guide's claims: a refused statement throws at prepare; a write in read {} too.
        await #expect(throws: SqlCipherError.self) { try await db.transaction { conn in _ = try conn.prepare("PRAGMA key = 'x'") } }
        await #expect(throws: SqlCipherError.transactionControlInBody(sql: "COMMIT")) {
            try await db.transaction { conn in _ = try conn.prepare("COMMIT") }
        }
        await #expect(throws: SqlCipherError.readOnlyViolation(sql: "DELETE FROM payments")) {
            try await db.read { conn in _ = try conn.prepare("DELETE FROM payments") }
        }
    }

    @Test func readingAndWritingWithoutCodable() async throws {
        let db = try await database()

        let saved = try await db.save(Reading(id: nil, sensor: UUID(), at: Date(), value: 21.5, unit: .celsius,
                                              note: nil, place: Reading.Place(room: "lab", floor: 2)))
        let readings = try await db.fetch(Reading.self, where: col("value") > 20.0)

        #expect(saved.id == 1)
        let read = try #require(readings.first)
        #expect(readings.count == 1)
        #expect(read.sensor == saved.sensor && read.unit == .celsius && read.note == nil && read.place == saved.place)
        #expect(abs(read.at.timeIntervalSince(saved.at)) < 0.001)
        // Stored as the Codable mapping stores the same properties.
        let codable = CodableReading(id: 1, sensor: saved.sensor, at: read.at, value: 21.5, unit: .celsius, note: nil,
                                     place: saved.place)
        try await db.save(codable)
        let columns = "id, sensor, at, typeof(value), value, unit, typeof(note), place"
        let viaRow = try await db.query("SELECT \(columns) FROM readings").map { Array($0.values) }
        let viaCodable = try await db.query("SELECT \(columns) FROM codable_readings").map { Array($0.values) }
        #expect(viaRow == viaCodable)
        #expect(viaRow.first?[7] == .text(#"{"floor":2,"room":"lab"}"#))
        #expect(try await db.fetchOne(CodableReading.self, id: 1) == codable)
    }
}
