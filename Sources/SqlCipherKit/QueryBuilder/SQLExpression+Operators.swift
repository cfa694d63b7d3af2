// Comparison and logical operators that build SQLExpression trees.
//
// Each comparison has three forms: expression against expression (a column, a Param or another
// expression), expression against a literal value, and literal value against expression. Literal
// values are bound, never written into the SQL text.

// MARK: Comparisons

extension SQLExpression {
    static func compare(_ op: BinaryOperator, _ lhs: Node, _ rhs: Node) -> SQLExpression {
        // `x = NULL` is never true in SQL; a literal nil means "is null".
        if op == .equal || op == .notEqual {
            if case .literal(.null) = rhs { return SQLExpression(.isNull(lhs, negated: op == .notEqual)) }
            if case .literal(.null) = lhs { return SQLExpression(.isNull(rhs, negated: op == .notEqual)) }
        }
        return SQLExpression(.binary(op, lhs, rhs))
    }
}

/// `lhs = rhs` (`IS NULL` when either side is a literal `nil`).
public func == (lhs: some SQLExpressible, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.equal, lhs.sqlExpression.node, rhs.sqlExpression.node)
}

/// `lhs = :literal`, or `lhs IS NULL` when `rhs` is nil.
public func == <V: DatabaseValueConvertible>(lhs: some SQLExpressible, rhs: V) -> SQLExpression {
    .compare(.equal, lhs.sqlExpression.node, .literal(rhs.databaseValue))
}

/// `:literal = rhs`, or `rhs IS NULL` when `lhs` is nil.
public func == <V: DatabaseValueConvertible>(lhs: V, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.equal, .literal(lhs.databaseValue), rhs.sqlExpression.node)
}

/// `lhs IS NULL`: `col("deleted_at") == nil`.
public func == (lhs: some SQLExpressible, rhs: _OptionalNilComparisonType) -> SQLExpression {
    SQLExpression(.isNull(lhs.sqlExpression.node, negated: false))
}

/// `lhs <> rhs` (`IS NOT NULL` when either side is a literal `nil`).
public func != (lhs: some SQLExpressible, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.notEqual, lhs.sqlExpression.node, rhs.sqlExpression.node)
}

/// `lhs <> :literal`, or `lhs IS NOT NULL` when `rhs` is nil.
public func != <V: DatabaseValueConvertible>(lhs: some SQLExpressible, rhs: V) -> SQLExpression {
    .compare(.notEqual, lhs.sqlExpression.node, .literal(rhs.databaseValue))
}

/// `:literal <> rhs`, or `rhs IS NOT NULL` when `lhs` is nil.
public func != <V: DatabaseValueConvertible>(lhs: V, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.notEqual, .literal(lhs.databaseValue), rhs.sqlExpression.node)
}

/// `lhs IS NOT NULL`: `col("deleted_at") != nil`.
public func != (lhs: some SQLExpressible, rhs: _OptionalNilComparisonType) -> SQLExpression {
    SQLExpression(.isNull(lhs.sqlExpression.node, negated: true))
}

/// `lhs < rhs`.
public func < (lhs: some SQLExpressible, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.less, lhs.sqlExpression.node, rhs.sqlExpression.node)
}

/// `lhs < :literal`.
public func < <V: DatabaseValueConvertible>(lhs: some SQLExpressible, rhs: V) -> SQLExpression {
    .compare(.less, lhs.sqlExpression.node, .literal(rhs.databaseValue))
}

/// `:literal < rhs`.
public func < <V: DatabaseValueConvertible>(lhs: V, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.less, .literal(lhs.databaseValue), rhs.sqlExpression.node)
}

/// `lhs <= rhs`.
public func <= (lhs: some SQLExpressible, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.lessOrEqual, lhs.sqlExpression.node, rhs.sqlExpression.node)
}

/// `lhs <= :literal`.
public func <= <V: DatabaseValueConvertible>(lhs: some SQLExpressible, rhs: V) -> SQLExpression {
    .compare(.lessOrEqual, lhs.sqlExpression.node, .literal(rhs.databaseValue))
}

/// `:literal <= rhs`.
public func <= <V: DatabaseValueConvertible>(lhs: V, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.lessOrEqual, .literal(lhs.databaseValue), rhs.sqlExpression.node)
}

/// `lhs > rhs`.
public func > (lhs: some SQLExpressible, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.greater, lhs.sqlExpression.node, rhs.sqlExpression.node)
}

/// `lhs > :literal`.
public func > <V: DatabaseValueConvertible>(lhs: some SQLExpressible, rhs: V) -> SQLExpression {
    .compare(.greater, lhs.sqlExpression.node, .literal(rhs.databaseValue))
}

/// `:literal > rhs`.
public func > <V: DatabaseValueConvertible>(lhs: V, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.greater, .literal(lhs.databaseValue), rhs.sqlExpression.node)
}

/// `lhs >= rhs`.
public func >= (lhs: some SQLExpressible, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.greaterOrEqual, lhs.sqlExpression.node, rhs.sqlExpression.node)
}

/// `lhs >= :literal`.
public func >= <V: DatabaseValueConvertible>(lhs: some SQLExpressible, rhs: V) -> SQLExpression {
    .compare(.greaterOrEqual, lhs.sqlExpression.node, .literal(rhs.databaseValue))
}

/// `:literal >= rhs`.
public func >= <V: DatabaseValueConvertible>(lhs: V, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.greaterOrEqual, .literal(lhs.databaseValue), rhs.sqlExpression.node)
}

// MARK: Logic

extension SQLExpression {
    /// `lhs AND rhs`.
    public static func && (lhs: SQLExpression, rhs: SQLExpression) -> SQLExpression {
        SQLExpression(.binary(.and, lhs.node, rhs.node))
    }

    /// `lhs OR rhs`.
    public static func || (lhs: SQLExpression, rhs: SQLExpression) -> SQLExpression {
        SQLExpression(.binary(.or, lhs.node, rhs.node))
    }

    /// `NOT operand`.
    public static prefix func ! (operand: SQLExpression) -> SQLExpression {
        SQLExpression(.not(operand.node))
    }
}

// MARK: Predicates

extension SQLExpressible {
    /// `self IS NULL`.
    public var isNull: SQLExpression { SQLExpression(.isNull(sqlExpression.node, negated: false)) }

    /// `self IS NOT NULL`.
    public var isNotNull: SQLExpression { SQLExpression(.isNull(sqlExpression.node, negated: true)) }

    /// `self IN (:l1, :l2, …)`. An empty list is false for every row (rendered `0`).
    ///
    /// ```swift
    /// col("id").in([1, 2, 3])   // "id" IN (:l1, :l2, :l3)
    /// ```
    public func `in`<V: DatabaseValueConvertible>(_ values: [V]) -> SQLExpression {
        SQLExpression(.inList(sqlExpression.node, values.map { .literal($0.databaseValue) }, negated: false))
    }

    /// `self IN (a, b, …)` for expressions, columns or parameters. An empty list is false.
    public func `in`(_ expressions: [any SQLExpressible]) -> SQLExpression {
        SQLExpression(.inList(sqlExpression.node, expressions.map { $0.sqlExpression.node }, negated: false))
    }

    /// `self NOT IN (:l1, :l2, …)`. An empty list is true for every row (rendered `1`).
    public func notIn<V: DatabaseValueConvertible>(_ values: [V]) -> SQLExpression {
        SQLExpression(.inList(sqlExpression.node, values.map { .literal($0.databaseValue) }, negated: true))
    }

    /// `self NOT IN (a, b, …)` for expressions, columns or parameters. An empty list is true.
    public func notIn(_ expressions: [any SQLExpressible]) -> SQLExpression {
        SQLExpression(.inList(sqlExpression.node, expressions.map { $0.sqlExpression.node }, negated: true))
    }

    /// `self LIKE :pattern [ESCAPE :escape]` (https://sqlite.org/lang_expr.html#like). SQLite's
    /// LIKE ignores ASCII case; `%` matches any run of characters and `_` any one character.
    ///
    /// ```swift
    /// col("name").like("50\\%%", escape: "\\")   // names starting with "50%"
    /// ```
    public func like(_ pattern: String, escape: Character? = nil) -> SQLExpression {
        SQLExpression(.like(sqlExpression.node, pattern: .literal(.text(pattern)),
                            escape: escape.map { .literal(.text(String($0))) }, negated: false))
    }

    /// `self LIKE pattern` with a pattern from a parameter or another expression.
    public func like(_ pattern: some SQLExpressible) -> SQLExpression {
        SQLExpression(.like(sqlExpression.node, pattern: pattern.sqlExpression.node, escape: nil, negated: false))
    }

    /// `self NOT LIKE :pattern [ESCAPE :escape]`.
    public func notLike(_ pattern: String, escape: Character? = nil) -> SQLExpression {
        SQLExpression(.like(sqlExpression.node, pattern: .literal(.text(pattern)),
                            escape: escape.map { .literal(.text(String($0))) }, negated: true))
    }

    /// `self BETWEEN :lower AND :upper` (both ends included).
    public func between<V: DatabaseValueConvertible>(_ lower: V, and upper: V) -> SQLExpression {
        SQLExpression(.between(sqlExpression.node, lower: .literal(lower.databaseValue),
                               upper: .literal(upper.databaseValue), negated: false))
    }

    /// `self BETWEEN lower AND upper` with bounds from parameters, columns or expressions.
    public func between(_ lower: some SQLExpressible, and upper: some SQLExpressible) -> SQLExpression {
        SQLExpression(.between(sqlExpression.node, lower: lower.sqlExpression.node,
                               upper: upper.sqlExpression.node, negated: false))
    }

    /// `self NOT BETWEEN :lower AND :upper`.
    public func notBetween<V: DatabaseValueConvertible>(_ lower: V, and upper: V) -> SQLExpression {
        SQLExpression(.between(sqlExpression.node, lower: .literal(lower.databaseValue),
                               upper: .literal(upper.databaseValue), negated: true))
    }

    /// The ascending ordering term: `self ASC`.
    public var ascending: OrderingTerm { OrderingTerm(sqlExpression, direction: .ascending) }

    /// The descending ordering term: `self DESC`.
    public var descending: OrderingTerm { OrderingTerm(sqlExpression, direction: .descending) }

    /// The expression as a result column named `alias`: `"price" AS "p"`.
    public func `as`(_ alias: String) -> ResultColumn {
        ResultColumn(.expression(sqlExpression.node, alias: alias))
    }
}
