import Foundation
import Synchronization
import Testing
@testable import SqlCipherKit

/// What the guide's `render` calls received.
final class GuideRenderings: Sendable {
    private let values = Mutex<[String]>([])

    func append(_ value: some Sendable) {
        let text = String(describing: value)
        values.withLock { $0.append(text) }
    }

    var all: [String] { values.withLock { $0 } }
}

/// The examples of the DocC article "Live queries" (LiveQueries.md), compiled and run. Each block
/// of the article appears below line for line (indentation aside), which `ArticleCodeBlockTests`
/// checks.
@Suite struct LiveQueriesGuideTests {
    // Block 1.
    struct Product: Entity {
        static let tableName = TableName("products")
        static let primaryKey: WritableKeyPath<Product, Int?> & Sendable = \.id

        var id: Int?
        var name: String
        var price: Double
    }

    @Test func theAsyncSequenceExample() async throws {
        let t = try await LiveTestDatabase()
        let db = t.db
        let renderings = GuideRenderings()
        @Sendable func render(_ value: some Sendable) { renderings.append(value) }
        try await db.save(Product(id: nil, name: "Kettle", price: 30))

        let loop = Task {
            // Block 2.
            let cheap = LiveRequest<[Product]>.fetch(Product.self, where: col("price") < 50.0,
                                                     orderBy: col("name").ascending)
            for try await products in db.values(of: cheap) {
                render(products.map(\.name))
            }
        }
        try await waitUntil { renderings.all == [#"["Kettle"]"#] }
        try await db.save([Product(id: nil, name: "Anvil", price: 500), Product(id: nil, name: "Cup", price: 5)])
        try await waitUntil { renderings.all.count == 2 }
        #expect(renderings.all.last == #"["Cup", "Kettle"]"#)
        loop.cancel()
        try await loop.value
        #expect(await db.liveObservationCount == 0)
    }

    @Test func theCancellationExample() async throws {
        let t = try await LiveTestDatabase()
        let db = t.db
        let renderings = GuideRenderings()
        @Sendable func render(_ value: some Sendable) { renderings.append(value) }

        // Block 3.
        let watcher = Task {
            for try await stockValue in db.values(of: .total(Product.self, col("price"))) {
                render("stock value: \(stockValue)")
            }
        }
        try await db.save(Product(id: nil, name: "Widget", price: 9.99))
        watcher.cancel()   // the loop ends, and the observation is removed

        try await watcher.value
        #expect(await db.liveObservationCount == 0)
        // Whatever arrived before the cancellation was a real state of the table.
        #expect(renderings.all.allSatisfy { $0 == "stock value: 0.0" || $0 == "stock value: 9.99" })
    }

    // Block 4, first half.
    struct PriceRange: Equatable, Sendable {
        var lowest: Double
        var highest: Double
    }

    @Test func theClosureExample() async throws {
        let t = try await LiveTestDatabase()
        let db = t.db
        let renderings = GuideRenderings()
        @Sendable func render(_ value: some Sendable) { renderings.append(value) }

        let loop = Task {
            // Block 4, second half.
            let range = LiveRequest(placeholder: PriceRange?.none) { conn in
                let row = try conn.query("SELECT min(price) AS lo, max(price) AS hi FROM products")[0]
                guard let lowest = row.get("lo", as: Double.self), let highest = row.get("hi", as: Double.self) else {
                    return nil
                }
                return PriceRange(lowest: lowest, highest: highest)
            }
            for try await range in db.values(of: range) {
                render(range.map { "from \($0.lowest) to \($0.highest)" } ?? "no products")
            }
        }
        try await waitUntil { renderings.all == ["no products"] }
        try await db.save([Product(id: nil, name: "a", price: 1), Product(id: nil, name: "b", price: 60)])
        try await waitUntil { renderings.all.count == 2 }
        #expect(renderings.all.last == "from 1.0 to 60.0")
        loop.cancel()
        try await loop.value
    }

    @MainActor @Test func theObservableObjectExample() async throws {
        let t = try await LiveTestDatabase()
        let db = t.db
        let renderings = GuideRenderings()
        func render(_ value: some Sendable) { renderings.append(value) }
        try await db.save(Product(id: nil, name: "Lamp", price: 20))

        // Block 5.
        let products = LiveQuery(.fetch(Product.self, orderBy: col("name").ascending), database: db)
        // products.value is [] (the placeholder) until the first fetch completes.
        if let error = products.phase.error {
            render("Couldn't load products: \(error)")
            products.retry()
        } else if products.phase.isLoading {
            render("Loading…")
        } else {
            render(products.value.map(\.name))
        }

        #expect(renderings.all == ["Loading…"])
        try await waitOnMain { !products.phase.isLoading }
        #expect(products.value.map(\.name) == ["Lamp"])
    }
}
