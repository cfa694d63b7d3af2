import Foundation
import SqlCipherKit
import Testing

/// Reads that must be exact or nil (issue 12, item 8): `get(as: Float.self)` of 1e300 was
/// infinity, and text that is not valid UTF-8 read as `Data` came back with U+FFFD in place of
/// its bytes. Every numeric conversion is checked for values outside the target's range or not
/// representable in it.
@Suite struct LossyReadTests {
    /// One stored value, read from a real row of the loaded library.
    func read<T: DatabaseValueConvertible>(_ sql: String, as type: T.Type, _ db: Database) async throws -> T? {
        try await db.query(sql)[0].get(0, as: T.self)
    }

    @Test func aFloatIsNilWhenTheStoredNumberIsOutsideItsRange() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        #expect(try await read("SELECT 1e300", as: Float.self, db) == nil)
        #expect(try await read("SELECT -1e300", as: Float.self, db) == nil)
        #expect(try await read("SELECT 3.5e38", as: Float.self, db) == nil)
        #expect(try await read("SELECT 1e-300", as: Float.self, db) == nil)
        #expect(try await read("SELECT 1e300", as: Float?.self, db) == nil)
        #expect(try await read("SELECT 9e999", as: Float.self, db) == .infinity)
        #expect(try await read("SELECT -9e999", as: Float.self, db) == -.infinity)
        #expect(try await read("SELECT 3.4e38", as: Float.self, db) == Float(3.4e38))
        #expect(try await read("SELECT 0.1", as: Float.self, db) == Float(0.1))
        #expect(try await read("SELECT 0.0", as: Float.self, db) == 0)
        #expect(try await read("SELECT 9223372036854775807", as: Float.self, db) == Float(Int64.max))
        let row = try await db.query("SELECT 1e300 AS v")[0]
        #expect(throws: SqlCipherError.self) { try row.decode("v", as: Float.self) }
        #expect(Float.fromDatabaseValue(.real(Double(Float.leastNonzeroMagnitude))) == .leastNonzeroMagnitude)
        #expect(Float.fromDatabaseValue(.real(-0.0))?.sign == .minus)
    }

    @Test func aDoubleIsNilForAnIntegerItCannotHoldExactly() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        #expect(try await read("SELECT 9007199254740992", as: Double.self, db) == 9_007_199_254_740_992)
        #expect(try await read("SELECT 9007199254740993", as: Double.self, db) == nil)
        #expect(try await read("SELECT 9223372036854775807", as: Double.self, db) == nil)
        #expect(try await read("SELECT -9223372036854775807 - 1", as: Double.self, db) == -9_223_372_036_854_775_808)
        #expect(try await read("SELECT 1e308", as: Double.self, db) == 1e308)
    }

    @Test func integersAreNilOutsideTheirRangeOrWithAFraction() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        let integer = 0, real = 1
        // (sql value, [Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64] readable?)
        let cases: [(String, Int, [Bool])] = [
            ("127", integer, [true, true, true, true, true, true, true, true]),
            ("128", integer, [false, true, true, true, true, true, true, true]),
            ("-129", integer, [false, true, true, true, false, false, false, false]),
            ("256", integer, [false, true, true, true, false, true, true, true]),
            ("65536", integer, [false, false, true, true, false, false, true, true]),
            ("-1", integer, [true, true, true, true, false, false, false, false]),
            ("4294967296", integer, [false, false, false, true, false, false, false, true]),
            ("-2147483649", integer, [false, false, false, true, false, false, false, false]),
            ("(-9223372036854775807 - 1)", integer, [false, false, false, true, false, false, false, false]),
            ("127.0", real, [true, true, true, true, true, true, true, true]),
            ("127.5", real, [false, false, false, false, false, false, false, false]),
            ("-0.5", real, [false, false, false, false, false, false, false, false]),
            ("9.3e18", real, [false, false, false, false, false, false, false, true]),
            ("1.8446744073709552e19", real, [false, false, false, false, false, false, false, false]),
            ("9e999", real, [false, false, false, false, false, false, false, false]),
            ("-9e999", real, [false, false, false, false, false, false, false, false]),
        ]
        for (value, kind, readable) in cases {
            let row = try await db.query("SELECT \(value) AS v, typeof(\(value)) AS t")[0]
            #expect(row.get("t", as: String.self) == (kind == integer ? "integer" : "real"), "\(value)")
            let got = [row.get("v", as: Int8.self) != nil, row.get("v", as: Int16.self) != nil,
                       row.get("v", as: Int32.self) != nil, row.get("v", as: Int64.self) != nil,
                       row.get("v", as: UInt8.self) != nil, row.get("v", as: UInt16.self) != nil,
                       row.get("v", as: UInt32.self) != nil, row.get("v", as: UInt64.self) != nil]
            #expect(got == readable, "\(value)")
            #expect((row.get("v", as: Int.self) != nil) == readable[3], "\(value) as Int")
            #expect((row.get("v", as: UInt.self) != nil) == readable[7], "\(value) as UInt")
        }
    }

    @Test func unsignedTextIsReadOnlyInTheFormItIsWritten() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        #expect(try await read("SELECT '18446744073709551615'", as: UInt64.self, db) == .max)
        #expect(try await read("SELECT '9223372036854775808'", as: UInt.self, db) == 9_223_372_036_854_775_808)
        for text in ["+18446744073709551615", "018446744073709551615", " 18446744073709551615", "18446744073709551616",
                     "-0", "1e3", "0x10", ""] {
            #expect(try await read("SELECT '\(text)'", as: UInt64.self, db) == nil, "\(text)")
        }
        #expect(try await read("SELECT '5'", as: Int.self, db) == nil)
    }

    @Test func boolKeepsSQLitesTruthRule() async throws {
        // Documented: zero is false, any other number true, as SQL's WHERE reads it.
        #expect(Bool.fromDatabaseValue(.integer(2)) == true)
        #expect(Bool.fromDatabaseValue(.integer(0)) == false)
        #expect(Bool.fromDatabaseValue(.real(-0.0)) == false)
        #expect(Bool.fromDatabaseValue(.real(0.5)) == true)
        #expect(Bool.fromDatabaseValue(.text("1")) == nil)
    }

    @Test func textThatIsNotUTF8ReadsBackAsItsExactBytes() async throws {
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT)")
        let samples: [[UInt8]] = [[0xFF], [0xC3, 0x28], [0x61, 0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF0, 0x9F, 0x98],
                                  [0x80, 0x61, 0x00, 0x62], [0xC0, 0xAF]]
        for (id, bytes) in samples.enumerated() {
            // CAST makes SQLite store the bytes as text, as C code binding text would.
            try await db.execute("INSERT INTO t(id, s) VALUES (?, CAST(? AS TEXT))", id, Data(bytes))
        }
        let rows = try await db.query("SELECT s, typeof(s) AS t FROM t ORDER BY id")
        for (row, bytes) in zip(rows, samples) {
            #expect(row.get("t", as: String.self) == "text")
            #expect(row.get("s", as: Data.self) == Data(bytes), "\(bytes)")
            #expect(try row.decode("s", as: Data?.self) == Data(bytes), "\(bytes)")
            #expect(row.get("s", as: String.self) == nil, "\(bytes) read as String would have to be altered")
            #expect(row["s"] == .blob(Data(bytes)))
        }
        // Entities read the same bytes.
        struct Item: Entity {
            static let tableName = TableName("t")
            static let primaryKey: WritableKeyPath<Item, Int?> & Sendable = \.id
            var id: Int?
            var s: Data
        }
        let items = try await db.fetch(Item.self, orderBy: col("id"))
        #expect(items.map(\.s) == samples.map { Data($0) })
        // Valid UTF-8 stays text, including NUL and characters beyond the BMP.
        try await db.execute("INSERT INTO t(id, s) VALUES (100, ?)", "a\u{0}é🍣")
        let valid = try await db.query("SELECT s FROM t WHERE id = 100")[0]
        #expect(valid["s"] == .text("a\u{0}é🍣"))
        #expect(valid.get("s", as: Data.self) == Data("a\u{0}é🍣".utf8))
    }
}
