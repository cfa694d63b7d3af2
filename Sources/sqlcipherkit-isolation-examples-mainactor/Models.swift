import Foundation
import SqlCipherKit

// The seed's types in a module whose default isolation is the main actor (Swift 6.2's
// `.defaultIsolation(MainActor.self)`, as new app templates set it). There every declaration
// without isolation of its own is @MainActor, and so are the conformances it declares, unless the
// protocol requires Sendable: `Entity` and `Migration` do, so their conformances are nonisolated
// and the seed's types need nothing. A row type declared `Decodable, Sendable` is different: its
// `Decodable` conformance is main-actor isolated, and the database decodes rows on its own
// executor, so the compiler refuses it ("main actor-isolated conformance of 'CustomerOrders' to
// 'Decodable' cannot satisfy conformance requirement for a 'Sendable' type parameter"). Write
// `nonisolated struct`, or mark the one conformance `nonisolated`; both are below. The seed's own
// types are in SeedTypes.swift, the same file as the other examples executable's.

/// The `Decodable, Sendable` row type for `fetch(_:sql:)` of the article "Isolation and cancellation", made nonisolated as a whole.
nonisolated struct CustomerOrders: Decodable, Sendable {
    var name: String
    var orders: Int
}

/// The same with only the conformance nonisolated (SE-0470): the type's other members stay on
/// the main actor.
struct CustomerName: nonisolated Decodable, Sendable {
    var name: String
}

/// What every context must find after running the examples; throws with the first difference.
func verify(_ db: some DatabaseAccess, context: String) async throws {
    func expect(_ condition: Bool, _ what: String) throws {
        if !condition { throw ExampleFailure(context: context, what: what) }
    }
    let items = try await db.fetch(LineItem.self, orderBy: col("id"))
    try expect(items.map(\.sku) == ["A-1", "B-2", "C-3"], "line items \(items.map(\.sku))")
    let alice = try await db.fetch(CustomerOrders.self, sql: "SELECT name, orders FROM customers WHERE name = ?", "Alice")
    try expect(alice.first?.orders == 1, "Alice's order count")
    let names = try await db.query("SELECT name FROM customers ORDER BY name").compactMap { $0.get("name", as: String.self) }
    try expect(names == ["Alice", "Bob", "Dave"], "customers \(names)")
    let decoded = try await db.fetch(CustomerName.self, sql: "SELECT name FROM customers ORDER BY name").map(\.name)
    try expect(decoded == names, "decoded customers \(decoded)")
    try expect(try await db.appliedMigrations() == ["000-create-orders", "001-create-products"], "migrations after rollback")
    let columns = try await db.query("PRAGMA table_info(products)").compactMap { $0.get("name", as: String.self) }
    try expect(!columns.contains("discount"), "discount column after rollback")
}

/// The value of a closure `LiveRequest` (the `PriceRange` of the article "Live queries"). The
/// database compares each new result with the last one on its own executor, so the `Equatable`
/// conformance must not be main-actor isolated: declared `struct PriceRange: Equatable, Sendable`
/// here, `LiveRequest(placeholder:_:)` does not compile ("main actor-isolated conformance of
/// 'PriceRange' to 'Equatable' cannot satisfy conformance requirement for a 'Sendable' type
/// parameter").
nonisolated struct PriceRange: Equatable, Sendable {
    var lowest: Double
    var highest: Double
}

/// A `Codable` value stored inside an entity (as JSON) that is `Equatable` too. The entity's
/// conformances are nonisolated (``Entity`` requires `Sendable`), so its synthesized `==` is
/// nonisolated and needs this type's `==` to be: declared without `nonisolated`, `Contact` below
/// does not compile ("main actor-isolated conformance of 'Address' to 'Equatable' cannot be used
/// in nonisolated context").
nonisolated struct Address: Codable, Equatable, Sendable {
    var street: String
    var city: String
}

/// An entity with the value above, an optional, an enum, a date and a UUID key; it needs nothing
/// itself.
struct Contact: Entity, Equatable {
    enum Kind: String, Codable { case person, company }

    static let tableName = TableName("contacts")
    static let primaryKey: WritableKeyPath<Contact, UUID> & Sendable = \.id

    var id: UUID
    var kind: Kind
    var address: Address?
    var added: Date
}
