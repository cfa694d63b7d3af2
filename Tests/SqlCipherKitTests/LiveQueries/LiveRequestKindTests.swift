import Foundation
import Testing
@testable import SqlCipherKit

/// A product of the live-query tests (table `products`, see ``LiveTestDatabase``).
struct LiveProduct: Entity, Equatable {
    static let tableName = TableName("products")
    static let primaryKey: WritableKeyPath<LiveProduct, Int?> & Sendable = \.id

    var id: Int?
    var name: String
    var price: Double
}

/// Every kind of entity request: its placeholder, its first value, and the values that follow.
@Suite struct LiveRequestKindTests {
    @Test func placeholdersAreTheSeedTable() {
        #expect(LiveRequest<[LiveProduct]>.fetch(LiveProduct.self).placeholder == [])
        #expect(LiveRequest<LiveProduct?>.fetchOne(LiveProduct.self, id: 1).placeholder == nil)
        #expect(LiveRequest<Int>.count(LiveProduct.self).placeholder == 0)
        #expect(LiveRequest<Bool>.exists(LiveProduct.self).placeholder == false)
        #expect(LiveRequest<Int?>.sum(LiveProduct.self, col("price"), as: Int.self).placeholder == nil)
        #expect(LiveRequest<Double?>.min(LiveProduct.self, col("price"), as: Double.self).placeholder == nil)
        #expect(LiveRequest<String?>.max(LiveProduct.self, col("name"), as: String.self).placeholder == nil)
        #expect(LiveRequest<Double?>.avg(LiveProduct.self, col("price")).placeholder == nil)
        #expect(LiveRequest<Double>.total(LiveProduct.self, col("price")).placeholder == 0)
    }

    @Test func fetchFollowsItsWhereOrderAndLimit() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.save([LiveProduct(id: nil, name: "b", price: 10), LiveProduct(id: nil, name: "dear", price: 99)])
        let reader = LiveReader(t.db.values(of: .fetch(
            LiveProduct.self, where: col("price") < 50.0, orderBy: col("name").ascending, limit: 2)))
        #expect(try await reader.next()?.map(\.name) == ["b"])
        try await t.db.save(LiveProduct(id: nil, name: "a", price: 20))
        #expect(try await reader.next()?.map(\.name) == ["a", "b"])
        // A third cheap product beyond the limit leaves the first two unchanged.
        let pending = Task { try await reader.next() }
        let before = await t.db.liveTrackingState.fetches
        try await t.db.save(LiveProduct(id: nil, name: "c", price: 30))
        try await waitUntil { await t.db.liveTrackingState.fetches > before }
        try await t.db.execute("UPDATE products SET name = 'aa' WHERE name = 'a'")
        let value = try await pending.value
        #expect(value?.map(\.name) == ["aa", "b"])
        #expect(value?.first == LiveProduct(id: 3, name: "aa", price: 20))
    }

    @Test func fetchOneFollowsItsRow() async throws {
        let t = try await LiveTestDatabase()
        let reader = LiveReader(t.db.values(of: .fetchOne(LiveProduct.self, id: 1)))
        #expect(try await reader.next() == .some(nil))
        try await t.db.save(LiveProduct(id: nil, name: "first", price: 1))
        #expect(try await reader.next() == LiveProduct(id: 1, name: "first", price: 1))
        try await t.db.save(LiveProduct(id: 1, name: "renamed", price: 1))
        #expect(try await reader.next() == LiveProduct(id: 1, name: "renamed", price: 1))
        try await t.db.delete(LiveProduct.self, id: 1)
        #expect(try await reader.next() == .some(nil))
    }

    @Test func countAndExistsFollowTheirPredicate() async throws {
        let t = try await LiveTestDatabase()
        let counts = LiveReader(t.db.values(of: .count(LiveProduct.self, where: col("price") > 5.0)))
        let exists = LiveReader(t.db.values(of: .exists(LiveProduct.self, where: col("price") > 5.0)))
        let all = LiveReader(t.db.values(of: .count(LiveProduct.self)))
        #expect(try await counts.next() == 0)
        #expect(try await exists.next() == false)
        #expect(try await all.next() == 0)
        try await t.db.save([LiveProduct(id: nil, name: "a", price: 10), LiveProduct(id: nil, name: "b", price: 1)])
        #expect(try await counts.next() == 1)
        #expect(try await exists.next() == true)
        #expect(try await all.next() == 2)
        try await t.db.delete(LiveProduct.self, where: col("price") > 5.0)
        #expect(try await counts.next() == 0)
        #expect(try await exists.next() == false)
        #expect(try await all.next() == 1)
    }

    @Test func aggregatesAreNilWithoutRowsAndTotalIsZero() async throws {
        let t = try await LiveTestDatabase()
        let sum = LiveReader(t.db.values(of: .sum(LiveProduct.self, col("price"), as: Double.self)))
        let min = LiveReader(t.db.values(of: .min(LiveProduct.self, col("price"), as: Double.self)))
        let max = LiveReader(t.db.values(of: .max(LiveProduct.self, col("name"), as: String.self)))
        let avg = LiveReader(t.db.values(of: .avg(LiveProduct.self, col("price"))))
        let total = LiveReader(t.db.values(of: .total(LiveProduct.self, col("price"))))
        let cheapSum = LiveReader(t.db.values(of: .sum(LiveProduct.self, col("price"), as: Double.self,
                                                       where: col("price") < 5.0)))
        #expect(try await sum.next() == .some(nil))
        #expect(try await min.next() == .some(nil))
        #expect(try await max.next() == .some(nil))
        #expect(try await avg.next() == .some(nil))
        #expect(try await total.next() == 0)
        #expect(try await cheapSum.next() == .some(nil))

        try await t.db.save([LiveProduct(id: nil, name: "a", price: 2), LiveProduct(id: nil, name: "z", price: 6)])
        #expect(try await sum.next() == 8)
        #expect(try await min.next() == 2)
        #expect(try await max.next() == "z")
        #expect(try await avg.next() == 4)
        #expect(try await total.next() == 8)
        #expect(try await cheapSum.next() == 2)
    }

    @Test func anAggregateTheTypeCannotHoldThrows() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.save(LiveProduct(id: nil, name: "a", price: 1.5))
        let reader = LiveReader(t.db.values(of: .sum(LiveProduct.self, col("price"), as: Int.self)))
        await #expect {
            _ = try await reader.next()
        } throws: { error in
            guard case SqlCipherError.typeMismatch = error else { return false }
            return true
        }
        let whole = LiveReader(t.db.values(of: .sum(LiveProduct.self, col("id"), as: Int.self)))
        #expect(try await whole.next() == 1)
    }

    @Test func entityRequestsCompareByTheirSQLAndValues() {
        #expect(LiveRequest<[LiveProduct]>.fetch(LiveProduct.self, where: col("price") < 50.0)
            == .fetch(LiveProduct.self, where: col("price") < 50.0))
        #expect(LiveRequest<[LiveProduct]>.fetch(LiveProduct.self, where: col("price") < 50.0)
            != .fetch(LiveProduct.self, where: col("price") < 60.0))
        #expect(LiveRequest<Int?>.sum(LiveProduct.self, col("price"), as: Int.self)
            != .max(LiveProduct.self, col("price"), as: Int.self))
    }

    @Test func aBatchSaveIsOneValueAndAFailedOneIsNone() async throws {
        let t = try await LiveTestDatabase()
        try await t.db.execute("CREATE UNIQUE INDEX products_name ON products(name)")
        let reader = LiveReader(t.db.values(of: .fetch(LiveProduct.self, orderBy: col("name"))))
        #expect(try await reader.next() == [])
        let before = await t.db.liveTrackingState.fetches
        try await t.db.save((1...20).map { LiveProduct(id: nil, name: String(format: "p%02d", $0), price: 1) })
        #expect(try await reader.next()?.count == 20)
        #expect(await t.db.liveTrackingState.fetches == before + 1)

        let pending = Task { try await reader.next() }
        // The third one violates the unique index: the whole batch is rolled back.
        await #expect(throws: SqlCipherError.self) {
            try await t.db.save([LiveProduct(id: nil, name: "new1", price: 1), LiveProduct(id: nil, name: "new2", price: 1),
                                 LiveProduct(id: nil, name: "p01", price: 1)])
        }
        try await t.db.execute("DELETE FROM products WHERE name <> 'p01'")
        #expect(try await pending.value?.map(\.name) == ["p01"])
    }
}
