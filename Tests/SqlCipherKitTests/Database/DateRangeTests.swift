import Foundation
import Testing
@testable import SqlCipherKit

/// Dates the calendar text cannot hold (years before 0000 or after 9999, beyond Int64
/// milliseconds, infinities, NaN): binding them must never trap, and what is stored reads back as
/// the same `Date` (article "Raw SQL and values", "Dates outside the years 0000 to 9999").
@Suite struct DateRangeTests {
    static let outside: [Double] = [
        1e300, -1e300, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 9.3e15, -9.3e15,
        1e20, 253_402_300_800, -62_167_219_200.001, 253_402_300_799.9996, .infinity, -.infinity,
    ]

    @Test(arguments: outside)
    func outOfCalendarDatesRoundTripThroughRawSQL(_ seconds: Double) async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE t(v)")
        let date = Date(timeIntervalSince1970: seconds)
        try await db.execute("INSERT INTO t(v) VALUES (?)", date)
        let row = try await db.query("SELECT v, typeof(v) AS type FROM t")[0]
        #expect(row["type"] == .text("text"))
        #expect(row["v"] == .text(String(seconds)))
        let back = try #require(row.get("v", as: Date.self))
        #expect(back.timeIntervalSince1970.bitPattern == seconds.bitPattern)
    }

    @Test func nanDateIsStoredAsNanAndReadsBackAsNan() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE t(v)")
        try await db.execute("INSERT INTO t(v) VALUES (?)", Date(timeIntervalSince1970: .nan))
        let row = try await db.query("SELECT v FROM t")[0]
        #expect(row["v"] == .text("nan"))
        #expect(try #require(row.get("v", as: Date.self)).timeIntervalSince1970.isNaN)
    }

    @Test func calendarSpanKeepsItsTextUpToTheLastMillisecond() {
        #expect(DatabaseDateFormat.string(from: Date(timeIntervalSince1970: 253_402_300_799.999)) == "9999-12-31 23:59:59.999")
        #expect(DatabaseDateFormat.string(from: Date(timeIntervalSince1970: -62_167_219_200)) == "0000-01-01 00:00:00.000")
        #expect(DatabaseDateFormat.string(from: Date(timeIntervalSince1970: 0)) == "1970-01-01 00:00:00.000")
        // The first instant after the span, and one that would round up into year 10000.
        #expect(DatabaseDateFormat.string(from: Date(timeIntervalSince1970: 253_402_300_800)) == "253402300800.0")
        #expect(DatabaseDateFormat.string(from: Date(timeIntervalSince1970: 253_402_300_799.9996)) == "253402300799.9996")
    }

    @Test func numbersInsideTheSpanAreStillNotDates() {
        // Only the writer's own out-of-span output reads as seconds: "2024" is not a date.
        for text in ["2024", "0", "1700000000", "-5", "1e5", "253402300799.999", "1.5", "infinite", "nan ", "0x10", ""] {
            #expect(Date.fromDatabaseValue(.text(text)) == nil, "\(text)")
        }
        #expect(Date.fromDatabaseValue(.text("1e+300")) == Date(timeIntervalSince1970: 1e300))
        #expect(Date.fromDatabaseValue(.text("-inf")) == Date(timeIntervalSince1970: -.infinity))
    }

    struct Event: Entity, Equatable {
        static let tableName = TableName("events")
        static let primaryKey: WritableKeyPath<Event, Int?> & Sendable = \.id
        var id: Int?
        var at: Date
        var also: [Date]
    }

    @Test func entitiesWithFarDatesSaveAndFetch() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE events(id INTEGER PRIMARY KEY, at TEXT NOT NULL, also TEXT NOT NULL)")
        let far = Date(timeIntervalSince1970: 1e300)
        let saved = try await db.save(Event(at: far, also: [Date(timeIntervalSince1970: -1e18), far]))
        let id = try #require(saved.id)
        let fetched = try #require(try await db.fetchOne(Event.self, id: id))
        #expect(fetched == saved)
        // The query builder binds the same text, so equality finds the row.
        #expect(try await db.count(Event.self, where: col("at") == far) == 1)
    }
}
