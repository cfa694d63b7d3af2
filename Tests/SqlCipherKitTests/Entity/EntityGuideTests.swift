import Foundation
import SqlCipherKit
import Testing

/// The examples of the DocC articles "Working with entities" and "Row coding", each copied as it
/// stands in its article (checked by `ArticleCodeBlockTests`) and run against a temporary database
/// (``Order`` and ``LineItem`` are the shared fixtures).
@Suite struct EntityGuideTests {
    private func database(_ schema: String) async throws -> (TemporaryDirectory, Database) {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("entities.db"), rawKey: rawKey(8))
        try await db.execute(schema)
        return (dir, db)
    }

    @Test func savingFetchingAndDeleting() async throws {
        let (dir, db) = try await database("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
        var printed: [String] = []
        func print(_ text: String) { printed.append(text) }
        struct Product: Entity, Equatable {
            static let tableName = TableName("products")
            static let primaryKey: WritableKeyPath<Product, Int?> & Sendable = \.id

            var id: Int?
            var name: String
            var price: Double
        }

        var product = Product(id: nil, name: "Widget", price: 9.99)
        product = try await db.save(product)          // product.id == 1, assigned by SQLite

        product.price = 7.49
        try await db.save(product)                    // updates row 1 in place

        let all = try await db.fetch(Product.self)
        let affordable = try await db.fetch(Product.self, where: col("price") <= 10.0,
                                            orderBy: col("price").descending, col("name"), limit: 20)
        if let found = try await db.fetchOne(Product.self, id: 1) {
            print(found.name)
        }
        let howMany = try await db.count(Product.self, where: col("price") < 5.0)
        let anyCheap = try await db.exists(Product.self, where: col("price") < 5.0)     // stops at the first

        let deleted = try await db.delete(Product.self, id: 1)                          // 1
        let expensive = try await db.delete(Product.self, where: col("price") > 100.0)  // 0
        let emptied = try await db.deleteAll(Product.self)                              // every row left
        #expect(!anyCheap && emptied == 0)
        #expect(product == Product(id: 1, name: "Widget", price: 7.49))
        #expect(all == [product])
        #expect(affordable == all)
        #expect(printed == ["Widget"])
        #expect(howMany == 0 && deleted == 1 && expensive == 0)
        _ = dir
    }

    @Test func aKeyTheCallerAssigns() async throws {
        let (dir, db) = try await database("CREATE TABLE tags(name TEXT PRIMARY KEY NOT NULL, color TEXT NOT NULL)")
        struct Tag: Entity {
            static let tableName = TableName("tags")
            static let primaryKey: WritableKeyPath<Tag, String> & Sendable = \.name
            static let primaryKeyColumn = "name"
            var name: String
            var color: String
        }

        try await db.save(Tag(name: "urgent", color: "red"))
        let urgent = try await db.fetchOne(Tag.self, id: "urgent")
        #expect(urgent?.color == "red")
        try await db.save(Tag(name: "urgent", color: "orange"))   // the same key: the row is updated
        #expect(try await db.fetch(Tag.self).map { [$0.name, $0.color] } == [["urgent", "orange"]])
        _ = dir
    }

    @Test func upsertOnAUniqueColumn() async throws {
        let (dir, db) = try await database("CREATE TABLE tags(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, color TEXT)")
        struct Label: Entity {
            static let tableName = TableName("tags")
            static let primaryKey: WritableKeyPath<Label, Int?> & Sendable = \.id
            var id: Int?
            var name: String
            var color: String?
        }
        // tags(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, color TEXT)
        let red = try await db.save(Label(id: nil, name: "urgent", color: "red"), onConflict: "name")
        let orange = try await db.save(Label(id: nil, name: "urgent", color: "orange"), onConflict: "name")
        // orange.id == red.id: the row was updated, not duplicated
        #expect(orange.id == red.id)
        #expect(try await db.count(Label.self) == 1)
        _ = dir
    }

    @Test func codableColumnsAndDecodingErrors() async throws {
        let (dir, db) = try await database("""
            CREATE TABLE contacts(id TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, birthday REAL,
                                  vip INTEGER NOT NULL, address TEXT NOT NULL, tags TEXT NOT NULL)
            """)
        struct Contact: Entity, Equatable {
            enum Kind: String, Codable, Sendable { case person, company }
            struct Address: Codable, Equatable, Sendable {
                var city: String
                var zip: String
            }

            static let tableName = TableName("contacts")
            static let primaryKey: WritableKeyPath<Contact, UUID?> & Sendable = \.id

            var id: UUID?
            var kind: Kind
            var name: String
            var birthday: Date?
            var vip: Bool
            var address: Address
            var tags: [String]
        }

        let contact = Contact(id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"), kind: .company,
                              name: "Acme", birthday: nil, vip: true,
                              address: Contact.Address(city: "Paris", zip: "75001"), tags: ["b2b", "eu"])
        try await db.save(contact)
        let row = try await db.query("SELECT * FROM contacts")[0]
        // id       text    'E621E1F8-C36C-495A-93FC-0C247A3E6E5F'
        // kind     text    'company'
        // birthday NULL
        // vip      integer 1
        // address  text    '{"city":"Paris","zip":"75001"}'
        // tags     text    '["b2b","eu"]'
        #expect(row["id"] == .text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(row["kind"] == .text("company"))
        #expect(row["birthday"] == .null)
        #expect(row["vip"] == .integer(1))
        #expect(row["address"] == .text(#"{"city":"Paris","zip":"75001"}"#))
        #expect(row["tags"] == .text(#"["b2b","eu"]"#))
        #expect(try await db.fetchOne(Contact.self, id: contact.id!) == contact)

        var printed: [String] = []
        func print(_ error: SqlCipherError) { printed.append(error.description) }
        try await db.execute("UPDATE contacts SET kind = 'robot'")
        do {
            _ = try await db.fetch(Contact.self)
        } catch let error as SqlCipherError {
            print(error)   // Cannot decode Contact: column "kind" holds text 'robot', expected Kind.
        }
        #expect(printed == ["Cannot decode Contact: column \"kind\" holds text 'robot', expected Kind."])
        _ = dir
    }

    @Test func handWrittenRowCoding() async throws {
        let (dir, db) = try await database("""
            CREATE TABLE readings(id INTEGER PRIMARY KEY, sensor TEXT NOT NULL, at REAL NOT NULL, value REAL NOT NULL,
                                  unit TEXT NOT NULL, note TEXT, place TEXT NOT NULL);
            CREATE TABLE codable_readings(id INTEGER PRIMARY KEY, sensor TEXT NOT NULL, at REAL NOT NULL,
                                          value REAL NOT NULL, unit TEXT NOT NULL, note TEXT, place TEXT NOT NULL);
            """)
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

        let saved = try await db.save(Reading(id: nil, sensor: UUID(), at: Date(), value: 21.5, unit: .celsius,
                                              note: nil, place: Reading.Place(room: "lab", floor: 2)))
        let readings = try await db.fetch(Reading.self, where: col("value") > 20.0)
        #expect(saved.id == 1)
        #expect(readings.map(\.id) == [saved.id])
        let read = try #require(readings.first)
        #expect(read.sensor == saved.sensor && read.unit == .celsius && read.note == nil)
        #expect(read.place == Reading.Place(room: "lab", floor: 2))
        #expect(abs(read.at.timeIntervalSince(saved.at)) < 0.001)

        // Stored as the Codable mapping stores the same properties.
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
        let codable = CodableReading(id: 1, sensor: saved.sensor, at: read.at, value: 21.5, unit: .celsius, note: nil,
                                     place: saved.place)
        try await db.save(codable)
        let columns = "id, sensor, at, typeof(value), value, unit, typeof(note), place"
        let viaRow = try await db.query("SELECT \(columns) FROM readings").map { Array($0.values) }
        let viaCodable = try await db.query("SELECT \(columns) FROM codable_readings").map { Array($0.values) }
        #expect(viaRow == viaCodable)
        #expect(viaRow.first?[7] == .text(#"{"floor":2,"room":"lab"}"#))
        #expect(try await db.fetchOne(CodableReading.self, id: 1) == codable)
        _ = dir
    }

    @Test func savingAnOrderAndItsLinesInOneTransaction() async throws {
        let (dir, db) = try await database("""
            CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT NOT NULL);
            CREATE TABLE line_items(id INTEGER PRIMARY KEY, orderID INTEGER NOT NULL REFERENCES orders(id), sku TEXT NOT NULL);
            CREATE TABLE customers(name TEXT PRIMARY KEY, orders INTEGER NOT NULL DEFAULT 0);
            INSERT INTO customers(name) VALUES ('Alice');
            """)
        let skus = ["A-1", "B-2"]

        let order = try await db.transaction { conn in
            let order = try conn.save(Order(id: nil, customer: "Alice"))
            try conn.save(skus.map { LineItem(id: nil, orderID: order.id!, sku: $0) })
            try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
            return order
        }

        #expect(order.id == 1)
        #expect(try await db.fetch(LineItem.self, where: col("orderID") == 1).map(\.sku) == skus)
        #expect(try await db.query("SELECT orders FROM customers")[0]["orders"] == .integer(1))
        _ = dir
    }
}
