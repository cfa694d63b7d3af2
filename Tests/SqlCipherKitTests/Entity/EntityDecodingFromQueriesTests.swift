import Foundation
import SqlCipherKit
import Testing

/// Entities fetched with hand-written SQL: values that do not fit the property throw a typed
/// error instead of trapping.
@Suite("Entities decoded from any query")
struct EntityDecodingFromQueriesTests: InterruptibleDatabaseFixture {
    struct Narrow: Decodable, Sendable { let x: Int8 }
    struct Unsigned: Decodable, Sendable { let x: UInt }
    struct Whole: Decodable, Sendable { let x: Int }
    struct Nested: Decodable, Sendable {
        struct Inner: Decodable, Sendable { let a: Int }
        let x: Inner
    }
    struct Listed: Decodable, Sendable { let x: [Int] }
    struct Flag: Decodable, Sendable { let x: Bool }
    struct Stamp: Decodable, Sendable { let x: Date }
    struct Small: Decodable, Sendable { let x: Float }
    struct Named: Decodable, Sendable { let x: String }
    enum Kind: String, Decodable, Sendable { case a }
    struct Kinded: Decodable, Sendable { let x: Kind }

    func expectThrows<T: Decodable & Sendable>(_ type: T.Type, _ sql: String, _ db: Database) async {
        await #expect(throws: (any Error).self, "\(T.self) from \(sql)") { _ = try await db.fetch(type, sql: sql) }
        await #expect(throws: (any Error).self, "\(T.self) row.decode from \(sql)") {
            _ = try await db.query(sql).map { try $0.decode(type) }
        }
        await #expect(throws: (any Error).self, "\(T.self) stream from \(sql)") {
            for try await _ in db.stream(type, sql: sql) {}
        }
        await #expect(throws: (any Error).self, "\(T.self) cursor from \(sql)") {
            try await db.read { conn in try conn.cursor(type, sql: sql).forEach { _ in } }
        }
    }

    /// Held: values that do not fit throw instead of trapping.
    @Test func decodingValuesThatDoNotFitThrows() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        await expectThrows(Narrow.self, "SELECT 1000 AS x", db)
        await expectThrows(Unsigned.self, "SELECT -1 AS x", db)
        await expectThrows(Whole.self, "SELECT 1e300 AS x", db)
        await expectThrows(Whole.self, "SELECT 'abc' AS x", db)
        await expectThrows(Whole.self, "SELECT NULL AS x", db)
        await expectThrows(Whole.self, "SELECT 1 AS y", db)
        await expectThrows(Nested.self, "SELECT 1 AS x", db)
        await expectThrows(Listed.self, "SELECT 'not json' AS x", db)
        await expectThrows(Flag.self, "SELECT 'maybe' AS x", db)
        await expectThrows(Stamp.self, "SELECT 'not a date' AS x", db)
        await expectThrows(Small.self, "SELECT 1e300 AS x", db)
        await expectThrows(Named.self, "SELECT x'fffe' AS x", db)
        await expectThrows(Kinded.self, "SELECT 'b' AS x", db)
        await expectThrows(Whole.self, "SELECT 9.5 AS x", db)
        // Duplicate column names: decoding picks one, or refuses; never traps.
        _ = try? await db.fetch(Whole.self, sql: "SELECT 1 AS x, 2 AS x")
    }
}
