import Foundation
import SqlCipherKit
import Testing

/// Every value type round-trips, and `Row.get`/`decode` follow the documented rules.
@Suite struct ValueConversionTests {
    func roundTrip<T: DatabaseValueConvertible & Equatable>(_ value: T, storedAs storage: String? = nil) async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE t(v)")   // no declared type: no affinity conversion
        try await db.execute("INSERT INTO t VALUES (?)", value)
        let row = try await db.query("SELECT v, typeof(v) AS type FROM t")[0]
        #expect(row.get("v", as: T.self) == value, "\(T.self) \(value)")
        #expect(try row.decode("v", as: T.self) == value)
        #expect(row.get(0, as: T.self) == value)
        if let storage { #expect(row.get("type", as: String.self) == storage, "\(T.self) \(value)") }
    }

    @Test func integers() async throws {
        try await roundTrip(0, storedAs: "integer")
        try await roundTrip(Int.max, storedAs: "integer")
        try await roundTrip(Int.min, storedAs: "integer")
        try await roundTrip(Int8.min, storedAs: "integer")
        try await roundTrip(Int16.max, storedAs: "integer")
        try await roundTrip(Int32.min, storedAs: "integer")
        try await roundTrip(Int64.max, storedAs: "integer")
        try await roundTrip(UInt8.max, storedAs: "integer")
        try await roundTrip(UInt16.max, storedAs: "integer")
        try await roundTrip(UInt32.max, storedAs: "integer")
        try await roundTrip(UInt(Int64.max), storedAs: "integer")
        try await roundTrip(UInt64(Int64.max), storedAs: "integer")
        // Beyond Int64: decimal text, never truncated.
        try await roundTrip(UInt64.max, storedAs: "text")
        try await roundTrip(UInt.max, storedAs: "text")
        try await roundTrip(UInt64(Int64.max) + 1, storedAs: "text")
    }

    @Test func floatingPointAndBool() async throws {
        try await roundTrip(1.5, storedAs: "real")
        try await roundTrip(-0.000_001, storedAs: "real")
        try await roundTrip(Double.greatestFiniteMagnitude, storedAs: "real")
        try await roundTrip(Double.infinity, storedAs: "real")
        try await roundTrip(Float(3.25), storedAs: "real")
        try await roundTrip(Float.leastNormalMagnitude, storedAs: "real")
        try await roundTrip(true, storedAs: "integer")
        try await roundTrip(false, storedAs: "integer")
    }

    @Test func nanIsStoredAsNull() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        let row = try await db.query("SELECT ? AS v, typeof(?) AS t", Double.nan, Double.nan)[0]
        #expect(row["v"] == .null)
        #expect(row.get("v", as: Double.self) == nil)
    }

    @Test func textAndBytes() async throws {
        try await roundTrip("", storedAs: "text")
        try await roundTrip("Grüße aus Köln — 日本語 ☕ 🍣", storedAs: "text")
        try await roundTrip("before\u{0}after\u{0}", storedAs: "text")
        try await roundTrip("O'Brien \"quoted\" ; DROP TABLE t; --", storedAs: "text")
        try await roundTrip(Data(), storedAs: "blob")
        try await roundTrip(Data([0, 0, 0]), storedAs: "blob")
        try await roundTrip(Data((0...255).map { UInt8($0) }), storedAs: "blob")
    }

    @Test func embeddedNulIsKeptByteForByte() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        let row = try await db.query("SELECT length(CAST(? AS BLOB)) AS n, hex(?) AS h", "a\u{0}b", "a\u{0}b")[0]
        #expect(row.get("n", as: Int.self) == 3)
        #expect(row.get("h", as: String.self) == "610062")
    }

    @Test func emptyBlobIsNotNull() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        let row = try await db.query("SELECT typeof(?) AS t, length(?) AS n", Data(), Data())[0]
        #expect(row.get("t", as: String.self) == "blob")
        #expect(row.get("n", as: Int.self) == 0)
        #expect(try await db.query("SELECT typeof(?)", "")[0].get(0, as: String.self) == "text")
    }

    @Test func datesAndUUIDs() async throws {
        try await roundTrip(Date(timeIntervalSince1970: 0), storedAs: "text")
        try await roundTrip(Date(timeIntervalSince1970: 1_700_000_000.25), storedAs: "text")
        try await roundTrip(Date(timeIntervalSince1970: -86_400 * 365 * 100 + 0.5), storedAs: "text")
        // Millisecond precision: the stored text keeps the digits a person wrote.
        let memory = try Database(path: ":memory:", rawKey: rawKey())
        let stored = try await memory.query("SELECT ?", Date(timeIntervalSince1970: 1_700_000_000.123))[0]
        #expect(stored.get(0, as: String.self) == "2023-11-14 22:13:20.123")
        let back = try #require(stored.get(0, as: Date.self))
        #expect(abs(back.timeIntervalSince1970 - 1_700_000_000.123) < 0.000_001)
        try await roundTrip(UUID(), storedAs: "text")
        let db = try Database(path: ":memory:", rawKey: rawKey())
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let row = try await db.query("SELECT ? AS d, datetime(?) AS s, ? AS u", date, date, UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)[0]
        #expect(row.get("d", as: String.self) == "2023-11-14 22:13:20.250")
        // SQLite's own date functions read the stored form.
        #expect(row.get("s", as: String.self) == "2023-11-14 22:13:20")
        #expect(row.get("u", as: String.self) == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
    }

    @Test func dateReadsSQLiteFormsAndNumbers() throws {
        let noon = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(Date.fromDatabaseValue(.text("2023-11-14T22:13:20Z")) == noon)
        #expect(Date.fromDatabaseValue(.text("2023-11-14 22:13:20")) == noon)
        #expect(Date.fromDatabaseValue(.text("2023-11-15 00:13:20+02:00")) == noon)
        #expect(Date.fromDatabaseValue(.text("2023-11-14")) == Date(timeIntervalSince1970: 1_699_920_000))
        #expect(Date.fromDatabaseValue(.integer(1_700_000_000)) == noon)
        #expect(Date.fromDatabaseValue(.real(1_700_000_000.5)) == Date(timeIntervalSince1970: 1_700_000_000.5))
        #expect(Date.fromDatabaseValue(.text("yesterday")) == nil)
        #expect(Date.fromDatabaseValue(.text("2023-13-01")) == nil)
        #expect(Date.fromDatabaseValue(.blob(Data())) == nil)
    }

    @Test func uuidReadsTextInEitherCaseAndSixteenByteBlobs() throws {
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        #expect(UUID.fromDatabaseValue(.text("e621e1f8-c36c-495a-93fc-0c247a3e6e5f")) == uuid)
        let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
        #expect(UUID.fromDatabaseValue(.blob(bytes)) == uuid)
        #expect(UUID.fromDatabaseValue(.blob(bytes.dropLast())) == nil)
        #expect(UUID.fromDatabaseValue(.text("not a uuid")) == nil)
    }

    @Test func optionalsAndDatabaseValue() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE t(a, b, c, d, e, f)")
        let none: String? = nil
        try await db.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
                             none, Int?.some(5), nil, DatabaseValue.real(2.5), DatabaseValue.blob(Data([9])), DatabaseValue.null)
        let row = try await db.query("SELECT * FROM t")[0]
        #expect(row["a"] == .null)
        #expect(row.get("a", as: String.self) == nil)
        #expect(row.get("b", as: Int.self) == 5)
        #expect(row["c"] == .null)
        #expect(row.get("d", as: DatabaseValue.self) == .real(2.5))
        #expect(row["e"] == .blob(Data([9])))
        #expect(row["f"]?.isNull == true)
        // An optional type accepts NULL when decoding; a non-optional one reports it.
        #expect(try row.decode("a", as: String?.self) == nil)
        #expect(try row.decode("b", as: Int?.self) == 5)
        #expect(throws: SqlCipherError.typeMismatch(column: "a", stored: "NULL", expected: "String")) {
            try row.decode("a", as: String.self)
        }
        #expect(DatabaseValue.integer(1).storageClass == "integer")
        #expect(DatabaseValue.text("x").databaseValue == .text("x"))
    }

    @Test func conversionRulesAreStrict() throws {
        // Integers: exact values only.
        #expect(Int.fromDatabaseValue(.real(3.0)) == 3)
        #expect(Int.fromDatabaseValue(.real(3.5)) == nil)
        #expect(Int8.fromDatabaseValue(.integer(200)) == nil)
        #expect(UInt.fromDatabaseValue(.integer(-1)) == nil)
        #expect(Int.fromDatabaseValue(.text("12")) == nil)
        #expect(UInt64.fromDatabaseValue(.text("18446744073709551615")) == .max)
        #expect(UInt32.fromDatabaseValue(.text("1")) == nil)
        #expect(Int.fromDatabaseValue(.null) == nil)
        // Reals read integers; text is not a number.
        #expect(Double.fromDatabaseValue(.integer(2)) == 2.0)
        #expect(Double.fromDatabaseValue(.text("2.0")) == nil)
        #expect(Float.fromDatabaseValue(.real(0.1)) == Float(0.1))
        // Bool: zero is false, any other number true; text is not a Bool.
        #expect(Bool.fromDatabaseValue(.integer(2)) == true)
        #expect(Bool.fromDatabaseValue(.real(0)) == false)
        #expect(Bool.fromDatabaseValue(.text("true")) == nil)
        // String reads text only; Data reads blobs and text's UTF-8 bytes.
        #expect(String.fromDatabaseValue(.integer(1)) == nil)
        #expect(String.fromDatabaseValue(.blob(Data("a".utf8))) == nil)
        #expect(Data.fromDatabaseValue(.text("hé")) == Data("hé".utf8))
        #expect(Data.fromDatabaseValue(.integer(1)) == nil)
    }

    @Test func rowGetAndDecode() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        let row = try await db.query("SELECT 1 AS id, 'Ann' AS Name, NULL AS note, 2.5 AS price")[0]
        #expect(row.columnNames == ["id", "Name", "note", "price"])
        #expect(row.count == 4)
        #expect(row.get("id", as: Int.self) == 1)
        #expect(row.get("name", as: String.self) == "Ann")   // ASCII case does not matter
        #expect(row.get("NAME", as: String.self) == "Ann")
        #expect(row.get("missing", as: Int.self) == nil)
        #expect(row.get("note", as: String.self) == nil)
        #expect(row.get("Name", as: Int.self) == nil)
        #expect(row.get(3, as: Double.self) == 2.5)
        #expect(row.get(4, as: Int.self) == nil)
        #expect(row.get(-1, as: Int.self) == nil)
        #expect(row[0] == .integer(1))
        #expect(row["nope"] == nil)
        #expect(Array(row.values) == [.integer(1), .text("Ann"), .null, .real(2.5)])
        #expect(row.description.contains("Name: 'Ann'"))

        #expect(throws: SqlCipherError.columnNotFound(name: "missing", available: ["id", "Name", "note", "price"])) {
            try row.decode("missing", as: Int.self)
        }
        #expect(throws: SqlCipherError.columnIndexOutOfRange(index: 9, count: 4)) { try row.decode(9, as: Int.self) }
        #expect(throws: SqlCipherError.typeMismatch(column: "Name", stored: "text 'Ann'", expected: "Int")) {
            try row.decode("Name", as: Int.self)
        }
        #expect(throws: SqlCipherError.typeMismatch(column: "price", stored: "real 2.5", expected: "Int")) {
            try row.decode("price", as: Int.self)
        }
        #expect(try row.decode("price", as: Double.self) == 2.5)
        let error = SqlCipherError.typeMismatch(column: "Name", stored: "text 'Ann'", expected: "Int")
        #expect(error.description.contains("cannot be read as Int"))
    }

    @Test func duplicateColumnNamesResolveToTheFirst() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        let row = try await db.query("SELECT 1 AS x, 2 AS x")[0]
        #expect(row.get("x", as: Int.self) == 1)
        #expect(row.get(1, as: Int.self) == 2)
    }

    @Test func customConvertibleType() async throws {
        try await roundTrip(Cents(value: 1999), storedAs: "integer")
    }
}
