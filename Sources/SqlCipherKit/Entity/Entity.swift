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
/// Columns are the entity's coding keys. Values map to columns as follows (see `docs/guide.md`):
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
/// | any other `Codable` (struct, array, dictionary) | JSON text, keys sorted, dates as above |
///
/// The primary key is the property at ``primaryKey``, stored in the column ``primaryKeyColumn``
/// (`"id"` unless the entity says otherwise). An `Int?` (or other integer) key that is nil when
/// saving is assigned by SQLite, which requires an `INTEGER PRIMARY KEY` column. `String` and
/// `UUID` keys must be set by the caller.
public protocol Entity: Codable, Sendable {
    /// The type of the primary key.
    associatedtype ID: DatabaseValueConvertible & Hashable

    /// The table the entity is stored in.
    static var tableName: TableName { get }

    /// The property holding the primary key; nil for an integer key not yet assigned.
    static var primaryKey: WritableKeyPath<Self, ID?> & Sendable { get }

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
