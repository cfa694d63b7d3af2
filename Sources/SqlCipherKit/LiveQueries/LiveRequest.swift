/// What a live query observes: a read of the database, and the value to show before it first runs.
///
/// Build one with the entity requests, which take the same predicates and orderings as
/// ``Database/fetch(_:where:orderBy:limit:offset:)`` and friends:
///
/// | request | result | placeholder |
/// |---|---|---|
/// | ``fetch(_:where:orderBy:limit:)`` | `[T]` | `[]` |
/// | ``fetchOne(_:id:)`` | `T?` | `nil` |
/// | ``count(_:where:)`` | `Int` | `0` |
/// | ``exists(_:where:)`` | `Bool` | `false` |
/// | ``sum(_:_:as:where:)``, ``min(_:_:as:where:)``, ``max(_:_:as:where:)`` | `V?` | `nil` |
/// | ``avg(_:_:where:)`` | `Double?` | `nil` |
/// | ``total(_:_:where:)`` | `Double` | `0` |
///
/// or from raw SQL (``query(_:_:)``), or from any closure that reads through a ``Connection``
/// (``init(placeholder:_:)``):
///
/// ```swift
/// let cheap = LiveRequest<[Product]>.fetch(Product.self, where: col("price") < 50.0,
///                                          orderBy: col("name").ascending)
/// let names = LiveRequest(placeholder: [String]()) { conn in
///     try conn.query("SELECT name FROM products ORDER BY name").compactMap { $0.get("name", as: String.self) }
/// }
/// for try await products in db.values(of: cheap) { print(products.count) }
/// ```
///
/// The tables a request depends on are not declared: they are the tables its statements read,
/// as SQLite reports them when the statements are compiled. A request must only read; a
/// statement that writes makes the fetch throw ``SqlCipherError/invalidQuery(reason:)``.
///
/// Two requests are equal when they run the same SQL with the same arguments (entity and SQL
/// requests), or when one is a copy of the other (closure requests).
public struct LiveRequest<Value: Sendable>: Sendable, Equatable {
    /// The value a ``LiveQuery`` shows until the first fetch completes.
    public let placeholder: Value
    let fetcher: Fetcher

    enum Fetcher: Sendable {
        /// One query; its raw rows are compared with the previous fetch's before decoding, so an
        /// unchanged result costs no decoding and yields nothing.
        case rows(RowSource, decode: @Sendable ([Row]) throws -> Value)
        /// Any reads; the decoded values are compared.
        case closure(
            @Sendable (borrowing Connection) throws -> Value,
            isEqual: @Sendable (Value, Value) -> Bool,
            identity: RequestIdentity)
    }

    init(placeholder: Value, fetcher: Fetcher) {
        self.placeholder = placeholder
        self.fetcher = fetcher
    }

    /// A request computed by a closure that reads through a ``Connection``; any query can be
    /// observed this way.
    ///
    /// ```swift
    /// let summary = LiveRequest(placeholder: Summary.empty) { conn in
    ///     let rows = try conn.query("SELECT count(*) AS n, max(price) AS top FROM products")
    ///     return Summary(count: rows[0].get("n") ?? 0, top: rows[0].get("top"))
    /// }
    /// ```
    ///
    /// The closure runs on the database actor, inside no transaction of its own (wrap its reads in
    /// `conn.savepoint { ... }` when they must see one snapshot). Its result is compared with the
    /// previous one, and an equal result yields nothing, which is why `Value` must be `Equatable`.
    /// The tables it depends on are those its statements read, found again at each fetch, so a
    /// closure that reads different tables depending on what it finds is observed correctly.
    /// - Parameters:
    ///   - placeholder: The value a ``LiveQuery`` shows before the first fetch.
    ///   - fetch: The read. It must not write.
    public init(placeholder: Value, _ fetch: @escaping @Sendable (borrowing Connection) throws -> Value)
    where Value: Equatable {
        self.init(placeholder: placeholder, fetcher: .closure(fetch, isEqual: { $0 == $1 }, identity: RequestIdentity()))
    }

    /// Whether both requests run the same SQL with the same arguments, or are copies of one
    /// closure request.
    public static func == (lhs: LiveRequest, rhs: LiveRequest) -> Bool {
        switch (lhs.fetcher, rhs.fetcher) {
        case let (.rows(lhsSource, _), .rows(rhsSource, _)):
            return lhsSource == rhsSource
        case let (.closure(_, _, lhsIdentity), .closure(_, _, rhsIdentity)):
            return lhsIdentity === rhsIdentity
        default:
            return false
        }
    }
}

/// Tells copies of one closure request apart from other closure requests.
final class RequestIdentity: Sendable {}

/// The one query of an entity or SQL request.
enum RowSource: Sendable, Hashable {
    /// Raw SQL with its arguments.
    case sql(String, ResolvedArguments)
    /// A query-builder template, rendered by the builder's own renderer at each fetch.
    case select(Select)
    /// An ``SQL`` literal, rendered at each fetch.
    case literal(SQL)

    func rows(on connection: SQLiteConnection) throws -> [Row] {
        switch self {
        case let .sql(sql, arguments):
            return try connection.query(sql, binding: arguments)
        case let .select(select):
            return try connection.query(select.render(), [])
        case let .literal(sql):
            return try connection.query(sql.checkedText(), binding: sql)
        }
    }
}

/// A live request's query prints as every query the caller holds does (Core/SQLTextRendering.swift):
/// the text redacted, the values only where they cannot be key material.
extension RowSource: CustomReflectable {
    var customMirror: Mirror {
        switch self {
        case let .sql(sql, arguments):
            return Mirror(self, children: SQLRedaction.children(sql: sql, arguments: arguments), displayStyle: .enum)
        case let .select(select):
            return Mirror(self, children: ["select": select], displayStyle: .enum)
        case let .literal(sql):
            return Mirror(self, children: ["literal": sql], displayStyle: .enum)
        }
    }
}

extension LiveRequest where Value == [Row] {
    /// A raw SQL query; its rows, placeholder `[]`.
    ///
    /// ```swift
    /// for try await rows in db.values(of: .query("SELECT name FROM products WHERE price < ?", 50.0)) {
    ///     print(rows.compactMap { $0.get("name", as: String.self) })
    /// }
    /// ```
    ///
    /// The query must be a single statement that only reads. A new result is yielded only when its
    /// rows differ from the previous ones.
    public static func query(_ sql: String, _ arguments: (any DatabaseValueConvertible)?...) -> LiveRequest {
        LiveRequest(placeholder: [], fetcher: .rows(.sql(sql, .positional(ArgumentList(arguments).databaseValues)), decode: { $0 }))
    }

    /// A raw SQL query with its values given as one ``StatementArguments`` (positional or named).
    public static func query(_ sql: String, arguments: StatementArguments) -> LiveRequest {
        LiveRequest(placeholder: [], fetcher: .rows(.sql(sql, arguments.resolved), decode: { $0 }))
    }

    /// A query written as an ``SQL`` literal, its interpolated values bound; its rows, placeholder `[]`.
    ///
    /// ```swift
    /// for try await rows in db.values(of: .query(literal: "SELECT title FROM notes WHERE owner = \(owner)")) {
    ///     print(rows.count)
    /// }
    /// ```
    public static func query(literal sql: SQL) -> LiveRequest {
        LiveRequest(placeholder: [], fetcher: .rows(.literal(sql), decode: { $0 }))
    }
}
