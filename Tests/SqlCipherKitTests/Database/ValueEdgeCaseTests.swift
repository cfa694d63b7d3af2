import Foundation
import SqlCipherKit
import Testing

/// Values at the edges of their types: impossible dates, numeric text, reals at integer edges,
/// odd UUIDs and enums, non-finite numbers in JSON, column defaults, blobs past Int32.max.
@Suite("Values at the edges")
struct ValueEdgeCaseTests: OneRowDatabaseFixture {
    /// DEFECT: calendar text that names no real instant must not be rolled over into another date
    /// ("exact or nil"): 30 February is not 1 March.
    @Test func impossibleCalendarTextIsNotADate() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        for text in ["2024-02-30", "2023-02-29 00:00:00", "2024-13-01", "2024-00-10", "2024-01-32",
                     "2024-01-01 24:00:00", "2024-01-01 23:60:00", "2024-01-01 23:59:61",
                     "2024-01-01 12:00:00+25:00", "2024-01-01T12:00:00+01:75"] {
            let date = try await read(db, "'\(text)'", as: Date.self)
            #expect(date == nil, "'\(text)' read as \(String(describing: date))")
        }
        // Held: the valid forms still read.
        #expect(try await read(db, "'2024-02-29 23:59:59.999'", as: Date.self) != nil)
        #expect(try await read(db, "'2024-02-29T12:00:00+05:30'", as: Date.self) != nil)
    }

    /// Held: text is never read as an integer, whatever SQLite's own `CAST` would make of it, and
    /// the decimal text form of `UInt64` is exact.
    @Test func numericTextIsReadExactlyOrNotAtAll() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        for text in ["  12", "12 ", "0x10", "1e3", "-0", "+5", "12abc", "٣"] {
            #expect(try await read(db, "'\(text)'", as: Int.self) == nil, "Int from '\(text)'")
            #expect(try await read(db, "'\(text)'", as: Int64.self) == nil, "Int64 from '\(text)'")
            #expect(try await read(db, "'\(text)'", as: Double.self) == nil, "Double from '\(text)'")
            #expect(try await read(db, "'\(text)'", as: Bool.self) == nil, "Bool from '\(text)'")
        }
        for text in ["18446744073709551616", "+18446744073709551615", " 18446744073709551615",
                     "018446744073709551615", "0x8000000000000000", "1.8446744073709552e19", "-18446744073709551615",
                     "99999999999999999999999"] {
            #expect(try await read(db, "'\(text)'", as: UInt64.self) == nil, "UInt64 from '\(text)'")
            #expect(try await read(db, "'\(text)'", as: UInt.self) == nil, "UInt from '\(text)'")
        }
        #expect(try await read(db, "'18446744073709551615'", as: UInt64.self) == UInt64.max)
        // A UInt64 above Int64.max round-trips through a parameter.
        try await db.execute("CREATE TABLE u(v)")
        try await db.execute("INSERT INTO u VALUES (?)", UInt64.max - 1)
        #expect(try await db.query("SELECT v FROM u")[0].get(0, as: UInt64.self) == UInt64.max - 1)
    }

    /// Held: reals at the edges of every integer type are nil, never a trap or a clamp.
    @Test func realsAtIntegerEdges() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        #expect(try await read(db, "9223372036854775807.0", as: Int.self) == nil)  // 2^63 as a double
        #expect(try await read(db, "9223372036854775807.0", as: Int64.self) == nil)
        #expect(try await read(db, "-9223372036854775808.0", as: Int64.self) == Int64.min)
        #expect(try await read(db, "18446744073709551616.0", as: UInt64.self) == nil)
        #expect(try await read(db, "2147483648.0", as: Int32.self) == nil)
        #expect(try await read(db, "-2147483649.0", as: Int32.self) == nil)
        #expect(try await read(db, "4294967296.0", as: UInt32.self) == nil)
        #expect(try await read(db, "-1.0", as: UInt8.self) == nil)
        #expect(try await read(db, "-0.0", as: UInt8.self) == 0)
        #expect(try await read(db, "1e308 * 10", as: Int.self) == nil)  // +inf
        #expect(try await read(db, "-1e308 * 10", as: Int.self) == nil)  // -inf
        #expect(try await read(db, "9007199254740993", as: Double.self) == nil)  // 2^53 + 1
        #expect(try await read(db, "9223372036854775807", as: Float.self) != nil)  // rounds, in range
        #expect(try await read(db, "3.4028235677973366e38", as: Float.self) == nil)  // rounds to +inf
        #expect(try await read(db, "1e-50", as: Float.self) == nil)  // would become 0
        #expect(try await read(db, "1e308 * 10", as: Float.self) == .infinity)  // an infinity stays one
        #expect(try await read(db, "1e308 * 10", as: Double.self) == .infinity)
    }

    /// Held: UUIDs and enums of odd shapes are nil or a typed error.
    enum Level: Int, Codable, Sendable { case low = 1 }
    struct Leveled: Decodable, Sendable { let v: Level }
    @Test func oddUUIDsAndEnums() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        #expect(try await read(db, "'{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}'", as: UUID.self) == nil)
        #expect(try await read(db, "'E621E1F8C36C495A93FC0C247A3E6E5F'", as: UUID.self) == nil)
        #expect(try await read(db, "x'00112233445566778899aabbccddee'", as: UUID.self) == nil)  // 15 bytes
        #expect(try await read(db, "'e621e1f8-c36c-495a-93fc-0c247a3e6e5f'", as: UUID.self) != nil)
        for sql in ["SELECT 1.5 AS v", "SELECT '1' AS v", "SELECT 2 AS v", "SELECT NULL AS v", "SELECT x'01' AS v"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") { _ = try await db.fetch(Leveled.self, sql: sql) }
        }
        #expect(try await db.fetch(Leveled.self, sql: "SELECT 1.0 AS v").first?.v == .low)
    }

    /// An entity whose nested (JSON) property holds NaN or an infinity: a typed error and
    /// nothing written, or an exact round trip. Never a foreign error type, a NULL, or a table
    /// that no longer decodes.
    struct Inner: Codable, Equatable, Sendable { var weights: [Double]; var scale: Float }
    struct Sample: Entity, Equatable {
        static let tableName = TableName("samples")
        static let primaryKey: WritableKeyPath<Sample, Int?> & Sendable = \.id
        var id: Int?
        var inner: Inner
        var list: [Double]
        var maybe: [Double?]?
    }

    @Test func nonFiniteNumbersInsideJSONPropertiesAreTypedErrorsOrExact() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("CREATE TABLE samples(id INTEGER PRIMARY KEY, inner TEXT, list TEXT, maybe TEXT)")
        let hostile: [Sample] = [
            Sample(id: nil, inner: Inner(weights: [1, .nan], scale: 1), list: [], maybe: nil),
            Sample(id: nil, inner: Inner(weights: [], scale: .nan), list: [], maybe: nil),
            Sample(id: nil, inner: Inner(weights: [], scale: 1), list: [.infinity], maybe: nil),
            Sample(id: nil, inner: Inner(weights: [-.infinity], scale: .infinity), list: [], maybe: nil),
            Sample(id: nil, inner: Inner(weights: [], scale: 1), list: [], maybe: [nil, .nan]),
        ]
        for sample in hostile {
            do {
                let saved = try await db.save(sample)
                let back = try await db.fetchOne(Sample.self, id: try #require(saved.id))
                // Accepted: must read back exactly (NaN compares unequal, so NaN can never be accepted).
                #expect(back == saved, "\(sample) did not round-trip: \(String(describing: back))")
            } catch let error as SqlCipherError {
                guard case .encodingFailed = error else {
                    Issue.record("\(sample): unexpected \(error)")
                    continue
                }
            } catch {
                Issue.record("\(sample): an untyped error \(type(of: error)): \(error)")
            }
        }
        // Whatever was accepted, the table still decodes as a whole.
        _ = try await db.fetch(Sample.self)
    }

    /// Held: a DEFAULT at the edges of the value space is written as a literal that reads back the
    /// same value, with the same storage class.
    @Test func columnDefaultsAtTheEdges() async throws {
        struct M: Migration {
            let id = "edges"
            func up(_ ctx: MigrationContext) throws {
                try ctx.execute(CreateTable(TableName("d"))
                    .column("id", .integer, .primaryKey)
                    .column("small", .integer, .default(Int64.min))
                    .column("smallAny", .blob, .default(Int64.min))
                    .column("big", .integer, .default(Int64.max))
                    .column("inf", .real, .default(Double.infinity))
                    .column("tiny", .real, .default(Double.leastNonzeroMagnitude))
                    .column("quote", .text, .default("it's -- /* */ ; DROP TABLE t"))
                    .column("raw", .blob, .default(Data([0, 0x27, 0xFF]))))
            }
        }
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.migrate([M()])
        try await db.execute("INSERT INTO d(id) VALUES (1)")
        let row = try await db.query("SELECT * FROM d")[0]
        #expect(row["small"] == .integer(Int64.min))
        #expect(row["smallAny"] == .integer(Int64.min))
        #expect(row["big"] == .integer(Int64.max))
        #expect(row["inf"] == .real(.infinity))
        #expect(row["tiny"] == .real(.leastNonzeroMagnitude))
        #expect(row["quote"] == .text("it's -- /* */ ; DROP TABLE t"))
        #expect(row["raw"] == .blob(Data([0, 0x27, 0xFF])))
        #expect(try await values(db) == [1])
    }

    /// Held: more than `Int32.max` bytes through a parameter, a builder value, an entity
    /// property, a passphrase and a rekey is `SQLITE_TOOBIG`, never a trap. `Data(count:)` is
    /// zero-filled lazily, so this costs little memory.
    struct Holder: Entity {
        static let tableName = TableName("holder")
        static let primaryKey: WritableKeyPath<Holder, Int?> & Sendable = \.id
        var id: Int?
        var payload: Data
    }

    @Test func moreThanInt32MaxBytesIsTooBigEverywhere() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("CREATE TABLE holder(id INTEGER PRIMARY KEY, payload BLOB)")
        let big = Data(count: Int(Int32.max) + 1)
        func isTooBig(_ error: any Error) -> Bool {
            if case SqlCipherError.sqlite(code: 18, _, _, _) = error { return true }
            return false
        }
        let e1 = await #expect(throws: SqlCipherError.self) { _ = try await db.execute("INSERT INTO holder(payload) VALUES (?)", big) }
        #expect(e1.map(isTooBig) == true, "\(String(describing: e1))")
        let e2 = await #expect(throws: SqlCipherError.self) { _ = try await db.save(Holder(id: nil, payload: big)) }
        #expect(e2.map(isTooBig) == true, "\(String(describing: e2))")
        let e3 = await #expect(throws: SqlCipherError.self) { try await db.rekey(.passphrase(big)) }
        #expect(e3.map(isTooBig) == true, "\(String(describing: e3))")
        let e4 = #expect(throws: SqlCipherError.self) { _ = try Database(path: directory.path("b.db"), key: .passphrase(big)) }
        #expect(e4.map(isTooBig) == true, "\(String(describing: e4))")
        #expect(try await values(db) == [1])
        #expect(try await db.query("SELECT count(*) FROM holder")[0].get(0, as: Int.self) == 0)
    }
}
