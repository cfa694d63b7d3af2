/// Something that can be selected: a ``Column``, an ``SQLExpression``, or a ``ResultColumn``
/// such as `.all`, an aggregate or an aliased expression.
///
/// ```swift
/// Select(.all)                                             // SELECT *
/// Select(col("name"), col("price").as("p"))               // SELECT "name", "price" AS "p"
/// Select(.count, .sum(col("price")).as("total"))           // SELECT count(*), sum("price") AS "total"
/// ```
public protocol SQLSelectable: Sendable {
    /// The value as a result column.
    var resultColumn: ResultColumn { get }
}

/// One result column of a ``Select``: `*`, `table.*`, or an expression with an optional alias.
public struct ResultColumn: SQLSelectable, Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case all(table: String?)
        case expression(SQLExpression.Node, alias: String?)
    }

    let kind: Kind

    init(_ kind: Kind) {
        self.kind = kind
    }

    /// The column itself.
    public var resultColumn: ResultColumn { self }

    func render(into renderer: inout SQLRenderer) throws {
        switch kind {
        case .all(let table):
            if let table {
                try renderer.identifier(table)
                renderer.append(".")
            }
            renderer.append("*")
        case let .expression(node, alias):
            try node.render(into: &renderer, minimum: SQLExpression.Precedence.or)
            if let alias {
                renderer.append(" AS ")
                try renderer.identifier(alias)
            }
        }
    }
}

extension SQLSelectable where Self == ResultColumn {
    /// Every column: `*`.
    public static var all: ResultColumn { ResultColumn(.all(table: nil)) }

    /// Every column of one table of a join: `"p".*`.
    public static func all(of table: TableName) -> ResultColumn {
        ResultColumn(.all(table: table.alias ?? table.name))
    }
}

extension SQLSelectable where Self == SQLExpression {
    /// `count(*)`: the number of rows.
    public static var count: SQLExpression { SQLExpression(.aggregate(.count, nil, distinct: false)) }

    /// `count(x)`: the number of rows where `x` is not NULL.
    public static func count(_ expression: some SQLExpressible) -> SQLExpression {
        SQLExpression(.aggregate(.count, expression.sqlExpression.node, distinct: false), over: expression.sqlExpression)
    }

    /// `count(DISTINCT x)`: the number of distinct non-NULL values of `x`.
    public static func count(distinct expression: some SQLExpressible) -> SQLExpression {
        SQLExpression(.aggregate(.count, expression.sqlExpression.node, distinct: true), over: expression.sqlExpression)
    }

    /// `sum(x)`: NULL when no row has a non-NULL `x` (https://sqlite.org/lang_aggfunc.html#sumunc).
    public static func sum(_ expression: some SQLExpressible) -> SQLExpression {
        SQLExpression(.aggregate(.sum, expression.sqlExpression.node, distinct: false), over: expression.sqlExpression)
    }

    /// `total(x)`: like `sum` but a real, and 0.0 when there are no values.
    public static func total(_ expression: some SQLExpressible) -> SQLExpression {
        SQLExpression(.aggregate(.total, expression.sqlExpression.node, distinct: false), over: expression.sqlExpression)
    }

    /// `avg(x)`: the average of the non-NULL values, NULL when there are none.
    public static func avg(_ expression: some SQLExpressible) -> SQLExpression {
        SQLExpression(.aggregate(.avg, expression.sqlExpression.node, distinct: false), over: expression.sqlExpression)
    }

    /// `min(x)` as an aggregate: the smallest non-NULL value.
    public static func min(_ expression: some SQLExpressible) -> SQLExpression {
        SQLExpression(.aggregate(.min, expression.sqlExpression.node, distinct: false), over: expression.sqlExpression)
    }

    /// `max(x)` as an aggregate: the largest non-NULL value.
    public static func max(_ expression: some SQLExpressible) -> SQLExpression {
        SQLExpression(.aggregate(.max, expression.sqlExpression.node, distinct: false), over: expression.sqlExpression)
    }
}
