/// The name of a table, optionally with an alias for joins.
///
/// ```swift
/// let products = TableName("products")
/// let p = TableName("products").as("p")
/// let select = Select(p.col("name")).from(p)   // SELECT "p"."name" FROM "products" AS "p"
/// ```
///
/// Any string is a valid name: it is always rendered double-quoted, with embedded quotes doubled.
public struct TableName: Sendable, Hashable, CustomStringConvertible {
    /// The table's name as stored in the schema.
    public let name: String
    /// The alias used in a `FROM` or `JOIN` clause, if any.
    public let alias: String?

    /// A table called `name`.
    public init(_ name: String) {
        self.name = name
        self.alias = nil
    }

    private init(name: String, alias: String?) {
        self.name = name
        self.alias = alias
    }

    /// The same table under an alias, for self-joins and shorter qualified columns.
    public func `as`(_ alias: String) -> TableName {
        TableName(name: name, alias: alias)
    }

    /// A column qualified by this table (by its alias when it has one): `"products"."price"`.
    public func col(_ name: String) -> Column {
        Column(name, table: alias ?? self.name)
    }

    /// The name, or `name AS alias`.
    public var description: String {
        alias.map { "\(name) AS \($0)" } ?? name
    }

    /// Renders `"name"` or `"name" AS "alias"`, as in a `FROM` clause.
    func render(into renderer: inout SQLRenderer) throws {
        try renderer.identifier(name)
        if let alias {
            renderer.append(" AS ")
            try renderer.identifier(alias)
        }
    }
}

/// A reference to a column, optionally qualified by a table name or alias.
///
/// Create columns with ``col(_:)`` or ``TableName/col(_:)``; compare them with literals, ``Param``s
/// or other columns to build a ``SQLExpression``:
///
/// ```swift
/// let cheap = col("price") < 10.0              // "price" < :l1
/// let same = col("a", of: "t") == col("b")     // "t"."a" = "b"
/// ```
///
/// `Column` is deliberately not `Equatable`: `col("a") == col("b")` then always means the SQL
/// comparison, never a Swift `Bool`.
public struct Column: Sendable, SQLExpressible, CustomStringConvertible {
    /// The column's name.
    public let name: String
    /// The qualifying table name or alias, if any.
    public let table: String?

    /// A column called `name`, qualified by `table` when given.
    public init(_ name: String, table: String? = nil) {
        self.name = name
        self.table = table
    }

    /// The column as an expression.
    public var sqlExpression: SQLExpression { SQLExpression(.column(table: table, name: name)) }

    /// `table.name` or `name`.
    public var description: String { table.map { "\($0).\(name)" } ?? name }
}

/// A column reference: `col("price")` renders `"price"`.
///
/// ```swift
/// let rows = try await db.query(Select(.all).from(TableName("products")).where(col("price") < 50.0))
/// ```
public func col(_ name: String) -> Column {
    Column(name)
}

/// A column qualified by a table name or alias: `col("price", of: "p")` renders `"p"."price"`.
public func col(_ name: String, of table: String) -> Column {
    Column(name, table: table)
}
