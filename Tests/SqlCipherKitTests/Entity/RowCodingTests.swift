import Foundation
import Testing
@testable import SqlCipherKit

/// Entities that read and write themselves (`RowDecodable`, `RowEncodable`; issue 13 item 3):
/// the same stored columns and the same values as the `Codable` path on every mapped type, through
/// every method that decodes or saves entities.
@Suite struct RowCodingTests {
    enum Color: String, Codable, Sendable, DatabaseValueConvertible { case red, green }
    enum Level: Int, Codable, Sendable, DatabaseValueConvertible { case low = 1, high = 9 }
    /// Codable only: stored as its raw value by both paths (setCodable / decodeCodable).
    enum Shape: String, Codable, Sendable { case round, square }

    /// Every property type the Codable mapping knows, as plain values.
    struct Values: Equatable, Sendable {
        var id: Int?
        var int: Int
        var int8: Int8
        var int16: Int16
        var int32: Int32
        var int64: Int64
        var uint: UInt
        var uint8: UInt8
        var uint16: UInt16
        var uint32: UInt32
        var uint64: UInt64
        var double: Double
        var float: Float
        var bool: Bool
        var string: String
        var data: Data
        var date: Date
        var uuid: UUID
        var color: Color
        var level: Level
        var shape: Shape
        var optionalInt: Int?
        var optionalString: String?
        var optionalDate: Date?
        var optionalUUID: UUID?
        var optionalColor: Color?
        var optionalDouble: Double?
        var value: Cents
        var address: Address
        var optionalAddress: Address?
        var tags: [String]
        var scores: [String: Int]
    }

    /// The Codable path.
    struct ViaCodable: Entity, Equatable {
        static let tableName = TableName("codable")
        static let primaryKey: WritableKeyPath<ViaCodable, Int?> & Sendable = \.id
        var id: Int?
        var int: Int
        var int8: Int8
        var int16: Int16
        var int32: Int32
        var int64: Int64
        var uint: UInt
        var uint8: UInt8
        var uint16: UInt16
        var uint32: UInt32
        var uint64: UInt64
        var double: Double
        var float: Float
        var bool: Bool
        var string: String
        var data: Data
        var date: Date
        var uuid: UUID
        var color: Color
        var level: Level
        var shape: Shape
        var optionalInt: Int?
        var optionalString: String?
        var optionalDate: Date?
        var optionalUUID: UUID?
        var optionalColor: Color?
        var optionalDouble: Double?
        var value: Cents
        var address: Address
        var optionalAddress: Address?
        var tags: [String]
        var scores: [String: Int]

        init(_ v: Values) {
            (id, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64) =
                (v.id, v.int, v.int8, v.int16, v.int32, v.int64, v.uint, v.uint8, v.uint16, v.uint32, v.uint64)
            (double, float, bool, string, data, date, uuid, color, level, shape) =
                (v.double, v.float, v.bool, v.string, v.data, v.date, v.uuid, v.color, v.level, v.shape)
            (optionalInt, optionalString, optionalDate, optionalUUID, optionalColor, optionalDouble) =
                (v.optionalInt, v.optionalString, v.optionalDate, v.optionalUUID, v.optionalColor, v.optionalDouble)
            (value, address, optionalAddress, tags, scores) = (v.value, v.address, v.optionalAddress, v.tags, v.scores)
        }

        var values: Values {
            Values(id: id, int: int, int8: int8, int16: int16, int32: int32, int64: int64, uint: uint, uint8: uint8,
                   uint16: uint16, uint32: uint32, uint64: uint64, double: double, float: float, bool: bool,
                   string: string, data: data, date: date, uuid: uuid, color: color, level: level, shape: shape,
                   optionalInt: optionalInt, optionalString: optionalString, optionalDate: optionalDate,
                   optionalUUID: optionalUUID, optionalColor: optionalColor, optionalDouble: optionalDouble,
                   value: value, address: address, optionalAddress: optionalAddress, tags: tags, scores: scores)
        }
    }

    /// The row path: the same properties, read and written by hand. `decodedByRow` is set only by
    /// `init(row:)`, which proves which path a method took.
    struct ViaRow: Entity, RowCodable, Equatable {
        static let tableName = TableName("row")
        static let primaryKey: WritableKeyPath<ViaRow, Int?> & Sendable = \.id
        var v: Values
        var decodedByRow = false
        var id: Int? {
            get { v.id }
            set { v.id = newValue }
        }

        init(_ v: Values) { self.v = v }

        // Codable is required by Entity; it must never be used for this type.
        init(from decoder: any Decoder) throws {
            throw SqlCipherError.decodingFailed(entity: "ViaRow", column: "", stored: "", expected: "init(row:)")
        }

        func encode(to encoder: any Encoder) throws {
            throw SqlCipherError.encodingFailed(entity: "ViaRow", reason: "encode(to: Encoder) must not be called")
        }

        init(row: Row) throws {
            v = Values(
                id: try row.decode("id"), int: try row.decode("int"), int8: try row.decode("int8"),
                int16: try row.decode("int16"), int32: try row.decode("int32"), int64: try row.decode("int64"),
                uint: try row.decode("uint"), uint8: try row.decode("uint8"), uint16: try row.decode("uint16"),
                uint32: try row.decode("uint32"), uint64: try row.decode("uint64"), double: try row.decode("double"),
                float: try row.decode("float"), bool: try row.decode("bool"), string: try row.decode("string"),
                data: try row.decode("data"), date: try row.decode("date"), uuid: try row.decode("uuid"),
                color: try row.decode("color"), level: try row.decode("level"), shape: try row.decodeCodable("shape"),
                optionalInt: try row.decode("optionalInt"), optionalString: try row.decode("optionalString"),
                optionalDate: try row.decode("optionalDate"), optionalUUID: try row.decode("optionalUUID"),
                optionalColor: try row.decode("optionalColor"), optionalDouble: try row.decode("optionalDouble"),
                value: try row.decode("value"), address: try row.decodeCodable("address"),
                optionalAddress: try row.decodeCodable("optionalAddress"), tags: try row.decodeCodable("tags"),
                scores: try row.decodeCodable("scores"))
            decodedByRow = true
        }

        func encode(to columns: inout EntityColumns) {
            columns.set("id", v.id)
            columns.set("int", v.int)
            columns.set("int8", v.int8)
            columns.set("int16", v.int16)
            columns.set("int32", v.int32)
            columns.set("int64", v.int64)
            columns.set("uint", v.uint)
            columns.set("uint8", v.uint8)
            columns.set("uint16", v.uint16)
            columns.set("uint32", v.uint32)
            columns.set("uint64", v.uint64)
            columns.set("double", v.double)
            columns.set("float", v.float)
            columns.set("bool", v.bool)
            columns.set("string", v.string)
            columns.set("data", v.data)
            columns.set("date", v.date)
            columns.set("uuid", v.uuid)
            columns.set("color", v.color)
            columns.set("level", v.level)
            columns.setCodable("shape", v.shape)
            columns.set("optionalInt", v.optionalInt)
            columns.set("optionalString", v.optionalString)
            columns.set("optionalDate", v.optionalDate)
            columns.set("optionalUUID", v.optionalUUID)
            columns.set("optionalColor", v.optionalColor)
            columns.set("optionalDouble", v.optionalDouble)
            columns.set("value", v.value)
            columns.setCodable("address", v.address)
            columns.setCodable("optionalAddress", v.optionalAddress)
            columns.setCodable("tags", v.tags)
            columns.setCodable("scores", v.scores)
        }

        static func == (lhs: ViaRow, rhs: ViaRow) -> Bool { lhs.v == rhs.v }
    }

    static let columns = [
        "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "double", "float",
        "bool", "string", "data", "date", "uuid", "color", "level", "shape", "optionalInt", "optionalString",
        "optionalDate", "optionalUUID", "optionalColor", "optionalDouble", "value", "address", "optionalAddress",
        "tags", "scores",
    ]

    /// Values at the edges of every mapping: extremes, empties, text beyond Int64, dates outside
    /// the calendar form, nils and somes.
    static let samples: [Values] = [
        Values(id: nil, int: -42, int8: -8, int16: 1600, int32: -32_000, int64: Int64.min, uint: 7, uint8: 255,
               uint16: 65_535, uint32: 4_000_000_000, uint64: UInt64.max, double: 3.141592653589793, float: 1.5,
               bool: true, string: "hé \"'; -- \u{0} 🙂", data: Data([0, 1, 2, 255]),
               date: Date(timeIntervalSince1970: 1_700_000_000.123),
               uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, color: .green, level: .high,
               shape: .square, optionalInt: 3, optionalString: "here", optionalDate: Date(timeIntervalSince1970: 0),
               optionalUUID: UUID(uuidString: "00000000-0000-0000-0000-000000000001"), optionalColor: .red,
               optionalDouble: -0.0, value: Cents(value: 9),
               address: Address(street: "1 Main St", zip: 12345, since: Date(timeIntervalSince1970: 86_400.5)),
               optionalAddress: Address(street: "", zip: 0, since: Date(timeIntervalSince1970: -1)),
               tags: ["a", "b"], scores: ["z": 1, "a": 2]),
        Values(id: nil, int: Int.max, int8: Int8.min, int16: Int16.min, int32: Int32.max, int64: Int64.max,
               uint: UInt(Int64.max) + 1, uint8: 0, uint16: 0, uint32: UInt32.max, uint64: 0,
               double: -.infinity, float: .greatestFiniteMagnitude, bool: false, string: "", data: Data(),
               date: Date(timeIntervalSince1970: 1e12), uuid: UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!,
               color: .red, level: .low, shape: .round, optionalInt: nil, optionalString: nil, optionalDate: nil,
               optionalUUID: nil, optionalColor: nil, optionalDouble: nil, value: Cents(value: Int64.min),
               address: Address(street: "ünï", zip: -1, since: Date(timeIntervalSince1970: -62_167_219_200)),
               optionalAddress: nil, tags: [], scores: [:]),
        Values(id: 77, int: 0, int8: 0, int16: 0, int32: 0, int64: 0, uint: 0, uint8: 1, uint16: 1, uint32: 1,
               uint64: UInt64(Int64.max) + 1, double: .leastNonzeroMagnitude, float: -.infinity, bool: true,
               string: "e\u{301}", data: Data(repeating: 0, count: 300), date: Date(timeIntervalSince1970: -1e300),
               uuid: UUID(uuidString: "00000000-0000-0000-0000-000000000000")!, color: .green, level: .high,
               shape: .round, optionalInt: Int.min, optionalString: "", optionalDate: Date(timeIntervalSince1970: .infinity),
               optionalUUID: nil, optionalColor: .green, optionalDouble: 1e-300, value: Cents(value: 0),
               address: Address(street: "x", zip: 1, since: Date(timeIntervalSince1970: 0)), optionalAddress: nil,
               tags: ["é"], scores: ["": 0]),
    ]

    func makeDatabase(_ dir: TemporaryDirectory) async throws -> Database {
        let db = try builderTestDatabase(dir)
        let list = Self.columns.map { "\"\($0)\"" }.joined(separator: ", ")
        try await db.execute("CREATE TABLE codable(id INTEGER PRIMARY KEY, \(list))")
        try await db.execute("CREATE TABLE row(id INTEGER PRIMARY KEY, \(list))")
        return db
    }

    /// What SQLite stores, with each value's storage class.
    func stored(_ db: Database, _ table: String) async throws -> [[String]] {
        let typed = (["id"] + Self.columns).map { "typeof(\"\($0)\") || ':' || quote(\"\($0)\")" }.joined(separator: ", ")
        return try await db.query("SELECT \(typed) FROM \(table) ORDER BY id").map { row in
            row.values.map { "\($0)" }
        }
    }

    /// Dates read back rounded to the millisecond, by either path: compare what was read.
    func expectSameValues(_ a: [Values], _ b: [Values], _ comment: Comment) {
        #expect(a.count == b.count, comment)
        for (x, y) in zip(a, b) {
            // NaN never appears; -0.0 == 0.0 is fine for Double equality, compare bits too.
            #expect(x == y, comment)
            #expect(x.optionalDouble?.bitPattern == y.optionalDouble?.bitPattern, comment)
        }
    }

    @Test func bothPathsStoreTheSameColumns() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        let viaCodable = try await db.save(Self.samples.map(ViaCodable.init))
        let viaRow = try await db.save(Self.samples.map(ViaRow.init))
        #expect(viaCodable.map(\.id) == viaRow.map(\.id))
        #expect(viaRow.map(\.id) == [1, 2, 77])
        let a = try await stored(db, "codable")
        let b = try await stored(db, "row")
        #expect(a.count == 3)
        #expect(a == b)
        // Saving one at a time, and saving again over the rows (upsert, and the pre-UPSERT path).
        try await db.execute("DELETE FROM row")
        for sample in Self.samples { try await db.save(ViaRow(sample)) }
        try await db.save(viaRow)
        try await db.save(viaRow, strategy: .updateThenInsert)
        #expect(try await stored(db, "row") == a)
    }

    @Test func bothPathsReadTheSameValuesThroughEveryMethod() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        try await db.save(Self.samples.map(ViaCodable.init))
        try await db.execute("INSERT INTO row SELECT * FROM codable")
        let expected = try await db.fetch(ViaCodable.self, orderBy: col("id")).map(\.values)
        #expect(expected.count == 3)

        // Every entry point that decodes rows as a type.
        var results: [(String, [ViaRow])] = []
        results.append(("fetch", try await db.fetch(ViaRow.self, orderBy: col("id"))))
        results.append(("fetch sql", try await db.fetch(ViaRow.self, sql: "SELECT * FROM row ORDER BY id")))
        results.append(("fetch select", try await db.fetch(ViaRow.self, Select(.all).from(TableName("row")).orderBy(col("id")))))
        var one: [ViaRow] = []
        for id in [1, 2, 77] { one.append(try #require(try await db.fetchOne(ViaRow.self, id: id))) }
        results.append(("fetchOne", one))
        results.append(("fetchOne where", [try #require(try await db.fetchOne(ViaRow.self, where: col("id") == 2))]))
        results.append(("row.decode", try await db.query("SELECT * FROM row ORDER BY id").map { try $0.decode(ViaRow.self) }))
        results.append(("cursor", try await db.read { conn in
            let cursor = try conn.cursor(ViaRow.self, sql: "SELECT * FROM row ORDER BY id")
            var all: [ViaRow] = []
            while let next = try cursor.next() { all.append(next) }
            return all
        }))
        results.append(("transaction fetch", try await db.transaction { conn in try conn.fetch(ViaRow.self, orderBy: col("id")) }))
        var streamed: [ViaRow] = []
        for try await entity in db.stream(ViaRow.self, sql: "SELECT * FROM row ORDER BY id", batchSize: 2) {
            streamed.append(entity)
        }
        results.append(("stream", streamed))
        for try await live in db.values(of: .fetch(ViaRow.self, orderBy: col("id"))) {
            results.append(("live fetch", live))
            break
        }
        for try await live in db.values(of: .fetchOne(ViaRow.self, id: 77)) {
            results.append(("live fetchOne", [try #require(live)]))
            break
        }

        for (name, entities) in results {
            #expect(entities.allSatisfy { $0.decodedByRow }, "\(name) did not use init(row:)")
            let values = entities.map(\.v)
            switch name {
            case "fetchOne where": expectSameValues(values, [expected[1]], "\(name)")
            case "live fetchOne": expectSameValues(values, [expected[2]], "\(name)")
            default: expectSameValues(values, expected, "\(name)")
            }
        }
        // And the Codable type reads what the row type wrote.
        try await db.execute("DELETE FROM codable")
        try await db.execute("DELETE FROM row")
        try await db.save(Self.samples.map(ViaRow.init))
        try await db.execute("INSERT INTO codable SELECT * FROM row")
        expectSameValues(try await db.fetch(ViaCodable.self, orderBy: col("id")).map(\.values), expected, "codable reads row")
    }

    @Test func mismatchesAreReportedAlikeByBothPaths() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        try await db.save(ViaCodable(Self.samples[0]))
        let cases: [(column: String, sql: String)] = [
            ("int", "'abc'"), ("int8", "300"), ("double", "x'00'"), ("bool", "'yes'"), ("string", "12"),
            ("date", "'not a date'"), ("uuid", "'nope'"), ("color", "'purple'"), ("level", "5"), ("string", "NULL"),
            ("address", "'{\"street\": 1}'"), ("shape", "'oval'"), ("uint64", "-1"),
        ]
        for item in cases {
            try await db.execute("DELETE FROM row")
            try await db.execute("INSERT INTO row SELECT * FROM codable")
            try await db.execute("UPDATE row SET \"\(item.column)\" = \(item.sql)")
            let viaCodable = try await #require(throws: SqlCipherError.self) {
                _ = try await db.fetch(ViaCodable.self, sql: "SELECT * FROM row")
            }
            let viaRow = try await #require(throws: SqlCipherError.self) {
                _ = try await db.fetch(ViaRow.self, sql: "SELECT * FROM row")
            }
            guard case let .decodingFailed(entityA, columnA, storedA, expectedA) = viaCodable,
                  case let .decodingFailed(entityB, columnB, storedB, expectedB) = viaRow else {
                Issue.record("\(item.column): \(viaCodable) / \(viaRow)")
                continue
            }
            #expect(entityA == "ViaCodable" && entityB == "ViaRow", "\(item.column)")
            #expect(columnA == columnB && columnA == item.column, "\(item.column)")
            #expect(storedA == storedB, "\(item.column)")
            #expect(expectedA == expectedB, "\(item.column)")
        }
        // A missing column names the entity and the column.
        let missing = try await #require(throws: SqlCipherError.self) {
            _ = try await db.fetch(ViaRow.self, sql: "SELECT id FROM codable")
        }
        guard case let .decodingFailed(entity, column, stored, _) = missing else {
            Issue.record("\(missing)")
            return
        }
        #expect(entity == "ViaRow" && column == "int" && stored == "no such column")
    }

    @Test func valuesThatNoColumnHoldsAreRefusedAsByCodable() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        var nan = Self.samples[0]
        nan.double = .nan
        var nanOptional = Self.samples[0]
        nanOptional.optionalDouble = .nan
        var nanFloat = Self.samples[0]
        nanFloat.float = .nan
        for (column, values) in [("double", nan), ("optionalDouble", nanOptional), ("float", nanFloat)] {
            for attempt in [ViaRow(values)] {
                let error = try await #require(throws: SqlCipherError.self) { try await db.save(attempt) }
                guard case let .encodingFailed(entity, reason) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(entity == "ViaRow")
                #expect(reason.contains("\"\(column)\"") && reason.contains("NaN"), "\(reason)")
            }
            await #expect(throws: SqlCipherError.self) { _ = try await db.save(ViaCodable(values)) }
        }
        #expect(try await db.query("SELECT * FROM row").isEmpty)

        // A double optional's .some(nil), through set and setCodable.
        struct Nested: Entity, RowEncodable {
            static let tableName = TableName("nested")
            static let primaryKey: WritableKeyPath<Nested, Int?> & Sendable = \.id
            var id: Int?
            var value: Int??
            var useCodable: Bool
            func encode(to columns: inout EntityColumns) {
                columns.set("id", id)
                if useCodable { columns.setCodable("value", value) } else { columns.set("value", value) }
            }
        }
        try await db.execute("CREATE TABLE nested(id INTEGER PRIMARY KEY, value, useCodable)")
        for useCodable in [false, true] {
            let error = try await #require(throws: SqlCipherError.self) {
                try await db.save(Nested(id: nil, value: .some(nil), useCodable: useCodable))
            }
            guard case let .encodingFailed(_, reason) = error else {
                Issue.record("\(error)")
                continue
            }
            #expect(reason.contains(".some(nil)") && reason.contains("\"value\""), "\(reason)")
            let saved = try await db.save(Nested(id: nil, value: .some(5), useCodable: useCodable))
            #expect(saved.id != nil)
            try await db.save(Nested(id: nil, value: .none, useCodable: useCodable))
        }
        #expect(try await db.query("SELECT value FROM nested ORDER BY id").map { $0[0] } == [.integer(5), .null, .integer(5), .null])
    }

    /// A row entity whose columns change from one entity to the next (an optional column left
    /// out, columns in another order, a column set twice): each layout gets its own statements.
    @Test func changingLayoutsInOneBatch() async throws {
        struct Loose: Entity, RowCodable, Equatable {
            static let tableName = TableName("loose")
            static let primaryKey: WritableKeyPath<Loose, Int?> & Sendable = \.id
            var id: Int?
            var a: Int
            var b: String?
            func encode(to columns: inout EntityColumns) {
                if a % 2 == 0 {
                    columns.set("id", id)
                    columns.set("a", a)
                    if let b { columns.set("b", b) }
                } else {
                    columns.set("b", b)
                    columns.set("a", -1)
                    columns.set("a", a)
                    columns.set("id", id)
                }
            }
            init(id: Int?, a: Int, b: String?) { (self.id, self.a, self.b) = (id, a, b) }
            init(row: Row) throws {
                id = try row.decode("id")
                a = try row.decode("a")
                b = try row.decode("b")
            }
        }
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute("CREATE TABLE loose(id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b TEXT DEFAULT 'default')")
        let batch = [Loose(id: nil, a: 2, b: "x"), Loose(id: nil, a: 4, b: nil), Loose(id: nil, a: 3, b: "y"),
                     Loose(id: nil, a: 5, b: nil), Loose(id: nil, a: 6, b: "z")]
        let saved = try await db.save(batch)
        #expect(saved.map(\.id) == [1, 2, 3, 4, 5])
        let fetched = try await db.fetch(Loose.self, orderBy: col("id"))
        #expect(fetched.map(\.a) == [2, 4, 3, 5, 6])
        #expect(fetched.map(\.b) == ["x", "default", "y", nil, "z"])
    }

    /// The primary key's column must hold the primaryKey property's value, as for Codable.
    @Test func keyColumnMustMatchTheKeyProperty() async throws {
        struct WrongKey: Entity, RowEncodable {
            static let tableName = TableName("wrong")
            static let primaryKey: WritableKeyPath<WrongKey, Int?> & Sendable = \.id
            var id: Int?
            func encode(to columns: inout EntityColumns) { columns.set("id", 99) }
        }
        struct NoKey: Entity, RowEncodable {
            static let tableName = TableName("wrong")
            static let primaryKey: WritableKeyPath<NoKey, Int?> & Sendable = \.id
            var id: Int?
            func encode(to columns: inout EntityColumns) { columns.set("other", 1) }
        }
        struct Throwing: Entity, RowEncodable {
            struct Refused: Error {}
            static let tableName = TableName("wrong")
            static let primaryKey: WritableKeyPath<Throwing, Int?> & Sendable = \.id
            var id: Int?
            func encode(to columns: inout EntityColumns) throws { throw Refused() }
        }
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute("CREATE TABLE wrong(id INTEGER PRIMARY KEY, other)")
        for (attempt, expected) in [("key", "primaryKey"), ("missing", "no column named \"id\""), ("throws", "Refused")] {
            let error = try await #require(throws: SqlCipherError.self) {
                switch attempt {
                case "key": try await db.save(WrongKey(id: 1))
                case "missing": try await db.save(NoKey(id: 1))
                default: try await db.save(Throwing(id: 1))
                }
            }
            guard case let .encodingFailed(_, reason) = error else {
                Issue.record("\(error)")
                continue
            }
            #expect(reason.contains(expected), "\(attempt): \(reason)")
        }
        #expect(try await db.query("SELECT * FROM wrong").isEmpty)
    }

    /// A row kept by init(row:) keeps its values: the buffer is reused only when nobody holds it.
    @Test func aRowKeptByTheEntityKeepsItsValues() async throws {
        struct Keeper: Decodable, RowDecodable, Sendable {
            var row: Row
            init(row: Row) { self.row = row }
            init(from decoder: any Decoder) throws { fatalError("init(row:) is used") }
        }
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute("CREATE TABLE t(a, b)")
        try await db.execute("INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, x'03')")
        for kept in [try await db.fetch(Keeper.self, sql: "SELECT a, b FROM t ORDER BY a"),
                     try await db.read { conn in
                         let cursor = try conn.cursor(Keeper.self, sql: "SELECT a, b FROM t ORDER BY a")
                         var all: [Keeper] = []
                         while let next = try cursor.next() { all.append(next) }
                         return all
                     }] {
            #expect(kept.map { $0.row[0] } == [.integer(1), .integer(2), .integer(3)])
            #expect(kept.map { $0.row[1] } == [.text("one"), .text("two"), .blob(Data([3]))])
        }
    }

    @Test func anEncodeCanBeCheckedWithoutADatabase() throws {
        var columns = EntityColumns()
        ViaRow(Self.samples[1]).encode(to: &columns)
        #expect(Array(columns.columnNames) == ["id"] + Self.columns)
        #expect(columns["id"] == .null)
        #expect(columns["uint"] == .text("9223372036854775808"))
        #expect(columns["color"] == .text("red"))
        #expect(columns["optionalAddress"] == .null)
        #expect(columns["tags"] == .text("[]"))
        #expect(columns["missing"] == nil)
        #expect(columns["Color"] == nil, "names match byte for byte")
    }

    @Test func rawValueEnumsAreConvertible() {
        #expect(Color.green.databaseValue == .text("green"))
        #expect(Color.fromDatabaseValue(.text("red")) == .red)
        #expect(Color.fromDatabaseValue(.text("RED")) == nil)
        #expect(Level.fromDatabaseValue(.integer(9)) == .high)
        #expect(Level.fromDatabaseValue(.real(9.0)) == .high)
        #expect(Level.fromDatabaseValue(.real(9.5)) == nil)
        #expect(Level.fromDatabaseValue(.integer(2)) == nil)
    }
}
