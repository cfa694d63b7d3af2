/// Something that can order query results: a ``Column``, an ``SQLExpression`` or an
/// ``OrderingTerm`` with an explicit direction.
public protocol SQLOrderable: Sendable {
    /// The value as an ordering term.
    var orderingTerm: OrderingTerm { get }
}

/// One term of an `ORDER BY` clause.
///
/// ```swift
/// Select(.all).from(TableName("products")).orderBy(col("price").descending, col("name"))
/// // SELECT * FROM "products" ORDER BY "price" DESC, "name"
/// ```
public struct OrderingTerm: SQLOrderable, Sendable, Hashable {
    /// A sort direction.
    public enum Direction: String, Sendable, Hashable {
        /// `ASC`: smallest first; NULLs sort first.
        case ascending = "ASC"
        /// `DESC`: largest first; NULLs sort last.
        case descending = "DESC"
    }

    /// The expression sorted by.
    public let expression: SQLExpression
    /// The direction, or nil when none was written (SQLite sorts ascending).
    public let direction: Direction?

    /// A term sorting by `expression` in `direction`.
    public init(_ expression: SQLExpression, direction: Direction?) {
        self.expression = expression
        self.direction = direction
    }

    /// The term itself.
    public var orderingTerm: OrderingTerm { self }

    func render(into renderer: inout SQLRenderer) throws {
        try expression.node.render(into: &renderer, minimum: SQLExpression.Precedence.or)
        if let direction { renderer.append(" \(direction.rawValue)") }
    }
}
