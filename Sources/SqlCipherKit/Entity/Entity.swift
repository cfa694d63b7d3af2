import Foundation

/// A `Codable` struct stored as one row of a table, with one-line save, fetch, count and delete.
///
/// ```swift
/// struct Product: Entity {
///     static let tableName = TableName("products")
///     static let primaryKey: WritableKeyPath<Product, Int?> & Sendable = \.id
///
///     var id: Int?
///     var name: String
///     var price: Double
/// }
///
/// var product = try await db.save(Product(id: nil, name: "Widget", price: 9.99))
/// // product.id is now the rowid SQLite assigned
/// let cheap = try await db.fetch(Product.self, where: col("price") <= 10.0, orderBy: col("name"))
/// ```
///
/// Columns are the entity's coding keys. Values map to columns as follows (see <doc:RowCoding>):
///
/// | Swift | column |
/// |---|---|
/// | `Int`, `Int8`…`Int64`, `UInt`…`UInt64` | integer (a `UInt64` above `Int64.max` as decimal text) |
/// | `Double`, `Float` | real; NaN is refused on save (``SqlCipherError/encodingFailed(entity:reason:)``), optional or not |
/// | `Bool` | integer 0 or 1 |
/// | `String` | text |
/// | `Data` | blob |
/// | `Date` | text `YYYY-MM-DD HH:MM:SS.SSS` in UTC |
/// | `UUID` | text, upper case |
/// | `enum` with a raw value | the raw value |
/// | `Optional` | NULL for nil; a double optional holding `.some(nil)` is refused on save |
/// | any ``DatabaseValueConvertible`` | its ``DatabaseValueConvertible/databaseValue`` |
/// | any other `Codable` (struct, array, dictionary, set) | JSON text, keys sorted, a `Set`'s elements in the order of their JSON text, dates as above |
///
/// The primary key is the property at ``primaryKey``, stored in the column ``primaryKeyColumn``
/// (`"id"` unless the entity says otherwise). Its type is either
///
/// - an optional, `Int?` (or another integer): nil until the first save, when SQLite assigns it
///   (which requires an `INTEGER PRIMARY KEY` column); or
/// - the key itself, assigned by the caller: `String`, `UUID`, `Int` and the other integers,
///   `Data`, or a type of yours that adopts ``EntityKey``. Saving such an entity inserts its row or
///   updates the row with that key.
///
/// ```swift
/// struct Tag: Entity {
///     static let tableName = TableName("tags")
///     static let primaryKey: WritableKeyPath<Tag, String> & Sendable = \.name
///     static let primaryKeyColumn = "name"
///     var name: String
///     var color: String
/// }
///
/// try await db.save(Tag(name: "urgent", color: "red"))
/// let urgent = try await db.fetchOne(Tag.self, id: "urgent")
/// ```
///
/// A key property of any other type does not compile: the compiler reports that the type "does
/// not conform to protocol 'EntityKey'". An optional `String` or `UUID` key compiles too, but
/// SQLite assigns only integers: saving one while it is nil throws
/// ``SqlCipherError/encodingFailed(entity:reason:)``.
public protocol Entity: Codable, Sendable {
    /// The type of the primary key, as `fetchOne(_:id:)` and `delete(_:id:)` take it: `Int`
    /// for an `Int?` key property, `String` for a `String` one.
    associatedtype ID: DatabaseValueConvertible & Hashable

    /// The type of the key property: ``ID`` (assigned by the caller) or `ID?` (assigned by SQLite
    /// on the first save when nil).
    associatedtype PrimaryKey: EntityKey where PrimaryKey.Value == ID

    /// The table the entity is stored in.
    static var tableName: TableName { get }

    /// The property holding the primary key: `WritableKeyPath<Self, Int?>` for a key SQLite
    /// assigns, `WritableKeyPath<Self, String>` (or `UUID`, `Int`, …) for one the caller assigns.
    static var primaryKey: WritableKeyPath<Self, PrimaryKey> & Sendable { get }

    /// The name of the primary key's column; `"id"` by default. Declare it when the key's coding
    /// key is something else:
    ///
    /// ```swift
    /// struct Country: Entity {
    ///     static let tableName = TableName("countries")
    ///     static let primaryKey: WritableKeyPath<Country, String?> & Sendable = \.code
    ///     static let primaryKeyColumn = "code"
    ///     var code: String?
    ///     var name: String
    /// }
    /// ```
    static var primaryKeyColumn: String { get }
}

extension Entity {
    /// `"id"`.
    public static var primaryKeyColumn: String { "id" }
}

/// The type of an entity's key property (``Entity/primaryKey``): a key value itself, which the
/// caller assigns, or an optional of one, which SQLite assigns on the first save when it is nil.
///
/// `Optional`, `String`, `UUID`, `Data` and the integer types adopt it. A type of yours that is
/// ``DatabaseValueConvertible`` and `Hashable` adopts it with an empty extension, and the
/// default implementations do the rest:
///
/// ```swift
/// struct SKU: DatabaseValueConvertible, Hashable, Codable { … }
/// extension SKU: EntityKey {}
/// ```
public protocol EntityKey: Sendable {
    /// The key as it is stored and looked up: the type itself for a key the caller assigns, the
    /// wrapped type for an optional.
    associatedtype Value: DatabaseValueConvertible & Hashable = Self

    /// The key, or nil when it is not assigned yet (only an optional is ever nil).
    var entityKeyValue: Value? { get }

    /// The property's value for a key SQLite assigned.
    static func entityKey(assigned value: Value) -> Self
}

extension EntityKey where Self: DatabaseValueConvertible & Hashable, Value == Self {
    /// The key itself: a caller-assigned key is always set.
    @inlinable public var entityKeyValue: Self? { self }

    /// `value` itself.
    @inlinable public static func entityKey(assigned value: Self) -> Self { value }
}

extension Optional: EntityKey where Wrapped: DatabaseValueConvertible & Hashable {
    /// The wrapped key; nil until it is assigned.
    @inlinable public var entityKeyValue: Wrapped? { self }

    /// `.some(value)`.
    @inlinable public static func entityKey(assigned value: Wrapped) -> Wrapped? { value }
}

extension String: EntityKey {}
extension UUID: EntityKey {}
extension Data: EntityKey {}
extension Int: EntityKey {}
extension Int8: EntityKey {}
extension Int16: EntityKey {}
extension Int32: EntityKey {}
extension Int64: EntityKey {}
extension UInt: EntityKey {}
extension UInt8: EntityKey {}
extension UInt16: EntityKey {}
extension UInt32: EntityKey {}
extension UInt64: EntityKey {}
