import Foundation
import SqlCipherKit
import Testing

/// Entity values a column cannot hold (issue 12, item 8). A NaN `Double` was saved as NULL, after
/// which every fetch of the table threw; a double optional's `.some(nil)` came back as `nil`.
/// Both are refused on save with `encodingFailed`, and nothing is written.
@Suite struct NonFiniteValueTests {
    struct Reading: Entity, Equatable {
        static let tableName = TableName("readings")
        static let primaryKey: WritableKeyPath<Reading, Int?> & Sendable = \.id
        var id: Int?
        var value: Double
        var ratio: Float = 1
        var optional: Double?
        var optionalRatio: Float?
        var unit: Unit = Unit(scale: 1)
        var nested: Int?? = nil
    }

    /// A single-value `Codable` wrapper around a `Double`, stored as that number.
    struct Unit: Codable, Equatable {
        var scale: Double
        init(scale: Double) { self.scale = scale }
        init(from decoder: any Decoder) throws { scale = try decoder.singleValueContainer().decode(Double.self) }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(scale)
        }
    }

    func makeDatabase(_ dir: TemporaryDirectory) async throws -> Database {
        let db = try builderTestDatabase(dir)
        try await db.execute("""
            CREATE TABLE readings(id INTEGER PRIMARY KEY, value REAL, ratio REAL, optional REAL, optionalRatio REAL,
                                  unit REAL, nested INTEGER)
            """)
        return db
    }

    static func expectRefusal(_ error: any Error, column: String, _ comment: Comment) {
        guard case let SqlCipherError.encodingFailed(entity, reason) = error else {
            Issue.record("\(comment): \(error)")
            return
        }
        #expect(entity == "Reading", comment)
        #expect(reason.contains("\"\(column)\""), comment)
        #expect(reason.contains("NaN") || reason.contains(".some(nil)"), comment)
    }

    @Test func nanIsRefusedInEveryFloatingPointPosition() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        let cases: [(String, Reading)] = [
            ("value", Reading(id: nil, value: .nan)),
            ("value", Reading(id: nil, value: -.nan)),
            ("value", Reading(id: nil, value: .signalingNaN)),
            ("ratio", Reading(id: nil, value: 1, ratio: .nan)),
            ("optional", Reading(id: nil, value: 1, optional: .nan)),
            ("optionalRatio", Reading(id: nil, value: 1, optionalRatio: .nan)),
            ("unit", Reading(id: nil, value: 1, unit: Unit(scale: .nan))),
        ]
        for (column, reading) in cases {
            do {
                _ = try await db.save(reading)
                Issue.record("\(column): NaN was saved")
            } catch {
                Self.expectRefusal(error, column: column, "\(column)")
            }
            // A batch with one NaN saves nothing.
            do {
                _ = try await db.save([Reading(id: nil, value: 5), reading])
                Issue.record("\(column): a batch with NaN was saved")
            } catch {
                Self.expectRefusal(error, column: column, "batch, \(column)")
            }
        }
        #expect(try await db.count(Reading.self) == 0)
        #expect(try await db.query("SELECT count(*) FROM readings")[0].get(0, as: Int.self) == 0)
    }

    @Test func anUpdateToNaNLeavesTheRowAsItWas() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        var saved = try await db.save(Reading(id: nil, value: 2.5, optional: 4))
        saved.value = .nan
        await #expect(throws: SqlCipherError.self) { _ = try await db.save(saved) }
        saved.value = 2.5
        saved.optional = .nan
        await #expect(throws: SqlCipherError.self) { _ = try await db.save(saved) }
        let fetched = try await db.fetch(Reading.self)
        #expect(fetched == [Reading(id: saved.id, value: 2.5, optional: 4)])
    }

    @Test func infinitiesAndNilAreStoredAndReadBack() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        let readings = [
            Reading(id: nil, value: .infinity, ratio: -.infinity, optional: nil, optionalRatio: .infinity,
                    unit: Unit(scale: -.infinity)),
            Reading(id: nil, value: -0.0, ratio: .leastNonzeroMagnitude, optional: .greatestFiniteMagnitude,
                    optionalRatio: nil, unit: Unit(scale: .ulpOfOne)),
        ]
        let saved = try await db.save(readings)
        let fetched = try await db.fetch(Reading.self, orderBy: col("id"))
        // (-0.0 reads back equal; a REAL column stores whole numbers as integers, so its sign is SQLite's to keep.)
        #expect(fetched == saved)
    }

    @Test func aDoubleOptionalHoldingSomeNilIsRefusedAndTheOtherLevelsRoundTrip() async throws {
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        do {
            _ = try await db.save(Reading(id: nil, value: 1, nested: .some(nil)))
            Issue.record(".some(nil) was saved, and would read back as nil")
        } catch {
            Self.expectRefusal(error, column: "nested", ".some(nil)")
        }
        #expect(try await db.count(Reading.self) == 0)
        let saved = try await db.save([Reading(id: nil, value: 1, nested: nil), Reading(id: nil, value: 2, nested: .some(.some(7)))])
        let fetched = try await db.fetch(Reading.self, orderBy: col("id"))
        #expect(fetched == saved)
        #expect(fetched[0].nested == nil && fetched[1].nested == .some(.some(7)))
    }

    /// An entity with `Decimal` properties, stored as JSON text (a `Decimal` is not a column type).
    struct Ledger: Entity, Equatable {
        struct Line: Codable, Equatable, Sendable {
            var label: String
            var amount: Decimal
        }

        static let tableName = TableName("ledger")
        static let primaryKey: WritableKeyPath<Ledger, Int?> & Sendable = \.id
        var id: Int?
        var total: Decimal = 0
        var optionalTotal: Decimal?
        var line = Line(label: "NaN \" NaN", amount: 1)
        var amounts: [Decimal] = []
    }

    /// The same columns written by a ``RowEncodable`` entity through `setCodable`.
    struct RowLedger: Entity, RowEncodable {
        static let tableName = TableName("ledger")
        static let primaryKey: WritableKeyPath<RowLedger, Int?> & Sendable = \.id
        var id: Int?
        var total: Decimal
        func encode(to columns: inout EntityColumns) {
            columns.set("id", id)
            columns.setCodable("total", total)
        }
    }

    @Test func aDecimalNaNIsRefusedWhereverItIsStoredAsJSON() async throws {
        // JSONEncoder writes a Decimal NaN as a bare NaN, which is not JSON: the save succeeded
        // and every later fetch of the table failed with decodingFailed ('holds text NaN').
        let dir = TemporaryDirectory()
        let db = try builderTestDatabase(dir)
        try await db.execute("CREATE TABLE ledger(id INTEGER PRIMARY KEY, total, optionalTotal, line, amounts)")
        let cases: [(String, Ledger)] = [
            ("total", Ledger(id: nil, total: .nan)),
            ("optionalTotal", Ledger(id: nil, optionalTotal: .nan)),
            ("line", Ledger(id: nil, line: Ledger.Line(label: "x", amount: .nan))),
            ("amounts", Ledger(id: nil, amounts: [1, .nan])),
        ]
        for (column, ledger) in cases {
            for batch in [false, true] {
                do {
                    if batch { _ = try await db.save([Ledger(id: nil), ledger]) } else { _ = try await db.save(ledger) }
                    Issue.record("\(column): a Decimal NaN was saved (batch: \(batch))")
                } catch let SqlCipherError.encodingFailed(entity, reason) {
                    #expect(entity == "Ledger")
                    #expect(reason.contains("\"\(column)\"") && reason.contains("Decimal NaN"), "\(reason)")
                }
            }
        }
        do {
            _ = try await db.save(RowLedger(id: nil, total: .nan))
            Issue.record("setCodable saved a Decimal NaN")
        } catch let SqlCipherError.encodingFailed(_, reason) {
            #expect(reason.contains("\"total\"") && reason.contains("Decimal NaN"), "\(reason)")
        }
        #expect(try await db.query("SELECT count(*) FROM ledger")[0].get(0, as: Int.self) == 0)
        // Finite decimals (and "NaN" inside a string) are stored and read back.
        let finite = Ledger(id: nil, total: Decimal(string: "123456789012345678901234567890.5")!, optionalTotal: -0.001,
                            line: Ledger.Line(label: "NaN \\\" NaN", amount: Decimal.greatestFiniteMagnitude),
                            amounts: [Decimal.leastNonzeroMagnitude, 0])
        let saved = try await db.save(finite)
        #expect(try await db.fetch(Ledger.self) == [saved])
    }

    @Test func rawSQLStillBindsNaNAsNullAsSQLiteDoes() async throws {
        // Only entities refuse NaN: a statement argument is bound the way SQLite binds it (NULL),
        // as the article "Mapping rows and values" states, and the builder refuses it in comparisons (DeepExpressionTests).
        let dir = TemporaryDirectory()
        let db = try await makeDatabase(dir)
        try await db.execute("INSERT INTO readings(value) VALUES (?)", Double.nan)
        #expect(try await db.query("SELECT typeof(value) FROM readings")[0].get(0, as: String.self) == "null")
    }
}
