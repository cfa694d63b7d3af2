/// Something that can appear in a SQL expression: a ``Column``, a ``Param``, or an
/// ``SQLExpression`` built from them.
///
/// Every expressible value can also be selected (``SQLSelectable``) and used to order results
/// (``SQLOrderable``).
public protocol SQLExpressible: SQLSelectable, SQLOrderable {
    /// The value as an expression tree.
    var sqlExpression: SQLExpression { get }
}

/// A boolean or scalar SQL expression, kept as a tree and rendered with bound values.
///
/// Build expressions from columns, parameters and literals with the comparison operators
/// (`==`, `!=`, `<`, `<=`, `>`, `>=`), the logical operators (`&&`, `||`, `!`) and the methods
/// ``SQLExpressible/isNull``, ``SQLExpressible/isNotNull``, ``SQLExpressible/in(_:)-([SQLExpressible])``,
/// ``SQLExpressible/like(_:escape:)``, ``SQLExpressible/between(_:and:)-(SQLExpressible,_)``:
///
/// ```swift
/// let name = Param<String>("name")
/// let predicate = (col("price") >= 10 && col("price") < 20) || col("name") == name
/// // ("price" >= :l1 AND "price" < :l2) OR "name" = :p_name
/// ```
///
/// Literal values are bound as parameters (`:l1`, `:l2`, …), never written into the SQL text.
/// Comparing with a literal `nil` renders `IS NULL` (or `IS NOT NULL` for `!=`), because
/// `x = NULL` is never true in SQL.
///
/// Expressions are `Sendable` and `Hashable`: two expressions are equal when they have the same
/// tree, including the same literal values.
public struct SQLExpression: Sendable, Hashable, SQLExpressible, CustomStringConvertible {
    let node: Node

    init(_ node: Node) {
        self.node = node
    }

    /// The expression itself.
    public var sqlExpression: SQLExpression { self }

    /// A literal value, bound as a parameter when the template runs.
    ///
    /// ```swift
    /// Select(SQLExpression.value(42).as("answer"))   // SELECT :l1 AS "answer"
    /// ```
    public static func value(_ value: some DatabaseValueConvertible) -> SQLExpression {
        SQLExpression(.literal(value.databaseValue))
    }

    /// The SQL text of the expression alone (placeholders included), for messages and debugging.
    public var description: String {
        var renderer = SQLRenderer()
        if (try? node.render(into: &renderer)) == nil { return "<invalid expression>" }
        return renderer.sql
    }

    /// Renders the expression into `renderer`.
    func render(into renderer: inout SQLRenderer) throws {
        try node.render(into: &renderer)
    }

    // MARK: Tree

    /// The expression tree. Operators and functions come from closed enums, so no caller-supplied
    /// text ever reaches the SQL except through quoted identifiers and bound values.
    indirect enum Node: Sendable, Hashable {
        case column(table: String?, name: String)
        case literal(DatabaseValue)
        case parameter(String)
        case not(Node)
        case binary(BinaryOperator, Node, Node)
        case isNull(Node, negated: Bool)
        case inList(Node, [Node], negated: Bool)
        case like(Node, pattern: Node, escape: Node?, negated: Bool)
        case between(Node, lower: Node, upper: Node, negated: Bool)
        /// An aggregate call; a nil argument is `*` (only meaningful for `count`).
        case aggregate(AggregateFunction, Node?, distinct: Bool)
    }

    /// Binary operators, with their SQL spelling.
    enum BinaryOperator: String, Sendable, Hashable {
        case equal = "="
        case notEqual = "<>"
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case and = "AND"
        case or = "OR"

        /// SQLite's precedence, higher binds tighter (https://sqlite.org/lang_expr.html#operators).
        var precedence: Int {
            switch self {
            case .or: return Precedence.or
            case .and: return Precedence.and
            case .equal, .notEqual: return Precedence.equality
            case .less, .lessOrEqual, .greater, .greaterOrEqual: return Precedence.comparison
            }
        }

        /// Whether `a op (b op c)` equals `(a op b) op c`, so no parentheses are needed.
        var isAssociative: Bool { self == .and || self == .or }
    }

    /// Aggregate functions available to ``Select`` and ``SQLExpression``.
    enum AggregateFunction: String, Sendable, Hashable {
        case count, sum, min, max, avg, total
    }

    enum Precedence {
        static let or = 1
        static let and = 2
        static let not = 3
        static let equality = 4
        static let comparison = 5
        static let atom = 10
    }
}

extension SQLExpression.Node {
    var precedence: Int {
        switch self {
        case .column, .literal, .parameter, .aggregate: return SQLExpression.Precedence.atom
        case .not: return SQLExpression.Precedence.not
        case .binary(let op, _, _): return op.precedence
        case .isNull, .inList, .like, .between: return SQLExpression.Precedence.equality
        }
    }

    /// Renders `self`, in parentheses when its precedence is below `minimum`.
    func render(into renderer: inout SQLRenderer, minimum: Int) throws {
        if precedence < minimum {
            renderer.append("(")
            try render(into: &renderer)
            renderer.append(")")
        } else {
            try render(into: &renderer)
        }
    }

    func render(into renderer: inout SQLRenderer) throws {
        typealias P = SQLExpression.Precedence
        switch self {
        case let .column(table, name):
            if let table {
                try renderer.identifier(table)
                renderer.append(".")
            }
            try renderer.identifier(name)
        case .literal(let value):
            renderer.literal(value)
        case .parameter(let name):
            try renderer.parameter(name)
        case .not(let operand):
            renderer.append("NOT ")
            try operand.render(into: &renderer, minimum: P.atom)
        case let .binary(op, lhs, rhs):
            try lhs.render(into: &renderer, minimum: op.precedence)
            renderer.append(" \(op.rawValue) ")
            let sameAssociative: Bool
            if case .binary(let inner, _, _) = rhs, inner == op, op.isAssociative {
                sameAssociative = true
            } else {
                sameAssociative = false
            }
            try rhs.render(into: &renderer, minimum: sameAssociative ? op.precedence : op.precedence + 1)
        case let .isNull(operand, negated):
            try operand.render(into: &renderer, minimum: P.comparison)
            renderer.append(negated ? " IS NOT NULL" : " IS NULL")
        case let .inList(operand, values, negated):
            guard !values.isEmpty else {
                // x IN () is false and x NOT IN () is true, even for NULL x
                // (https://sqlite.org/lang_expr.html#the_in_and_not_in_operators).
                renderer.append(negated ? "1" : "0")
                return
            }
            try operand.render(into: &renderer, minimum: P.comparison)
            renderer.append(negated ? " NOT IN (" : " IN (")
            for (index, value) in values.enumerated() {
                if index > 0 { renderer.append(", ") }
                try value.render(into: &renderer, minimum: P.or)
            }
            renderer.append(")")
        case let .like(operand, pattern, escape, negated):
            try operand.render(into: &renderer, minimum: P.comparison)
            renderer.append(negated ? " NOT LIKE " : " LIKE ")
            try pattern.render(into: &renderer, minimum: P.comparison)
            if let escape {
                renderer.append(" ESCAPE ")
                try escape.render(into: &renderer, minimum: P.comparison)
            }
        case let .between(operand, lower, upper, negated):
            try operand.render(into: &renderer, minimum: P.comparison)
            renderer.append(negated ? " NOT BETWEEN " : " BETWEEN ")
            try lower.render(into: &renderer, minimum: P.comparison)
            renderer.append(" AND ")
            try upper.render(into: &renderer, minimum: P.comparison)
        case let .aggregate(function, argument, distinct):
            renderer.append(function.rawValue)
            renderer.append("(")
            if let argument {
                if distinct { renderer.append("DISTINCT ") }
                try argument.render(into: &renderer, minimum: P.or)
            } else {
                renderer.append("*")
            }
            renderer.append(")")
        }
    }
}

// MARK: Default conformances

extension SQLExpressible {
    /// The expression as a result column without an alias.
    public var resultColumn: ResultColumn { ResultColumn(.expression(sqlExpression.node, alias: nil)) }

    /// The expression as an ordering term without an explicit direction (SQLite sorts ascending).
    public var orderingTerm: OrderingTerm { OrderingTerm(sqlExpression, direction: nil) }
}
