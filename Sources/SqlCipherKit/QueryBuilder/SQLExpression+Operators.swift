// Comparison and logical operators that build SQLExpression trees.
//
// Each comparison has three forms: expression against expression (a column, a Param or another
// expression), expression against a literal value, and literal value against expression. Literal
// values are bound, never written into the SQL text.

// MARK: Comparisons

extension SQLExpression {
    static func compare(_ op: BinaryOperator, _ lhs: SQLExpression, _ rhs: SQLExpression) -> SQLExpression {
        // `x = NULL` is never true in SQL; a literal nil means "is null".
        if op == .equal || op == .notEqual {
            if case .literal(.null) = rhs.node { return SQLExpression(.isNull(lhs.node, negated: op == .notEqual), over: lhs) }
            if case .literal(.null) = lhs.node { return SQLExpression(.isNull(rhs.node, negated: op == .notEqual), over: rhs) }
        }
        return SQLExpression(.binary(op, lhs.node, rhs.node), over: lhs, rhs)
    }

    /// A node directly over `operand`.
    init(_ node: Node, over operand: SQLExpression) {
        self.init(node, depth: operand.depth + 1)
    }

    /// A node directly over `first` and `second`.
    init(_ node: Node, over first: SQLExpression, _ second: SQLExpression) {
        self.init(node, depth: Swift.max(first.depth, second.depth) + 1)
    }

    /// A node directly over `first` and every expression of `rest`.
    init(_ node: Node, over first: SQLExpression, _ rest: [SQLExpression]) {
        self.init(node, depth: rest.reduce(first.depth) { Swift.max($0, $1.depth) } + 1)
    }

    /// A literal value, bound as a parameter.
    ///
    /// SQLite has no NaN: a NaN `Double` or `Float` binds as NULL, and a comparison with it would
    /// silently become `IS NULL` (or `= NULL`, never true). Such a literal is an
    /// ``Node/invalid(reason:identity:)`` node instead, and rendering the query throws
    /// ``SqlCipherError/invalidQuery(reason:)``.
    static func literal<V: DatabaseValueConvertible>(_ value: V) -> SQLExpression {
        let stored = value.databaseValue
        if case .null = stored, isNotANumber(value) {
            return SQLExpression(.invalid(
                reason: "a comparison with NaN (\(V.self)) has no SQL meaning: SQLite stores NaN as NULL, so the "
                    + "query would test for NULL instead. Check for NaN in Swift before building the query",
                identity: 0))
        }
        return SQLExpression(.literal(stored))
    }
}

/// `lhs = rhs` (`IS NULL` when either side is a literal `nil`).
public func == (lhs: some SQLExpressible, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.equal, lhs.sqlExpression, rhs.sqlExpression)
}

/// `lhs = :literal`, or `lhs IS NULL` when `rhs` is nil.
public func == <V: DatabaseValueConvertible>(lhs: some SQLExpressible, rhs: V) -> SQLExpression {
    .compare(.equal, lhs.sqlExpression, .literal(rhs))
}

/// `:literal = rhs`, or `rhs IS NULL` when `lhs` is nil.
public func == <V: DatabaseValueConvertible>(lhs: V, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.equal, .literal(lhs), rhs.sqlExpression)
}

/// `lhs IS NULL`: `col("deleted_at") == nil`.
public func == (lhs: some SQLExpressible, rhs: _OptionalNilComparisonType) -> SQLExpression {
    SQLExpression(.isNull(lhs.sqlExpression.node, negated: false), over: lhs.sqlExpression)
}

/// `lhs <> rhs` (`IS NOT NULL` when either side is a literal `nil`).
public func != (lhs: some SQLExpressible, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.notEqual, lhs.sqlExpression, rhs.sqlExpression)
}

/// `lhs <> :literal`, or `lhs IS NOT NULL` when `rhs` is nil.
public func != <V: DatabaseValueConvertible>(lhs: some SQLExpressible, rhs: V) -> SQLExpression {
    .compare(.notEqual, lhs.sqlExpression, .literal(rhs))
}

/// `:literal <> rhs`, or `rhs IS NOT NULL` when `lhs` is nil.
public func != <V: DatabaseValueConvertible>(lhs: V, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.notEqual, .literal(lhs), rhs.sqlExpression)
}

/// `lhs IS NOT NULL`: `col("deleted_at") != nil`.
public func != (lhs: some SQLExpressible, rhs: _OptionalNilComparisonType) -> SQLExpression {
    SQLExpression(.isNull(lhs.sqlExpression.node, negated: true), over: lhs.sqlExpression)
}

/// `lhs < rhs`.
public func < (lhs: some SQLExpressible, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.less, lhs.sqlExpression, rhs.sqlExpression)
}

/// `lhs < :literal`.
public func < <V: DatabaseValueConvertible>(lhs: some SQLExpressible, rhs: V) -> SQLExpression {
    .compare(.less, lhs.sqlExpression, .literal(rhs))
}

/// `:literal < rhs`.
public func < <V: DatabaseValueConvertible>(lhs: V, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.less, .literal(lhs), rhs.sqlExpression)
}

/// `lhs <= rhs`.
public func <= (lhs: some SQLExpressible, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.lessOrEqual, lhs.sqlExpression, rhs.sqlExpression)
}

/// `lhs <= :literal`.
public func <= <V: DatabaseValueConvertible>(lhs: some SQLExpressible, rhs: V) -> SQLExpression {
    .compare(.lessOrEqual, lhs.sqlExpression, .literal(rhs))
}

/// `:literal <= rhs`.
public func <= <V: DatabaseValueConvertible>(lhs: V, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.lessOrEqual, .literal(lhs), rhs.sqlExpression)
}

/// `lhs > rhs`.
public func > (lhs: some SQLExpressible, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.greater, lhs.sqlExpression, rhs.sqlExpression)
}

/// `lhs > :literal`.
public func > <V: DatabaseValueConvertible>(lhs: some SQLExpressible, rhs: V) -> SQLExpression {
    .compare(.greater, lhs.sqlExpression, .literal(rhs))
}

/// `:literal > rhs`.
public func > <V: DatabaseValueConvertible>(lhs: V, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.greater, .literal(lhs), rhs.sqlExpression)
}

/// `lhs >= rhs`.
public func >= (lhs: some SQLExpressible, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.greaterOrEqual, lhs.sqlExpression, rhs.sqlExpression)
}

/// `lhs >= :literal`.
public func >= <V: DatabaseValueConvertible>(lhs: some SQLExpressible, rhs: V) -> SQLExpression {
    .compare(.greaterOrEqual, lhs.sqlExpression, .literal(rhs))
}

/// `:literal >= rhs`.
public func >= <V: DatabaseValueConvertible>(lhs: V, rhs: some SQLExpressible) -> SQLExpression {
    .compare(.greaterOrEqual, .literal(lhs), rhs.sqlExpression)
}

// MARK: Logic

extension SQLExpression {
    /// `lhs AND rhs`.
    public static func && (lhs: SQLExpression, rhs: SQLExpression) -> SQLExpression {
        SQLExpression(.binary(.and, lhs.node, rhs.node), over: lhs, rhs)
    }

    /// `lhs OR rhs`.
    public static func || (lhs: SQLExpression, rhs: SQLExpression) -> SQLExpression {
        SQLExpression(.binary(.or, lhs.node, rhs.node), over: lhs, rhs)
    }

    /// `NOT operand`.
    public static prefix func ! (operand: SQLExpression) -> SQLExpression {
        SQLExpression(.not(operand.node), over: operand)
    }
}

// MARK: Predicates

extension SQLExpressible {
    /// `self IS NULL`.
    public var isNull: SQLExpression { SQLExpression(.isNull(sqlExpression.node, negated: false), over: sqlExpression) }

    /// `self IS NOT NULL`.
    public var isNotNull: SQLExpression { SQLExpression(.isNull(sqlExpression.node, negated: true), over: sqlExpression) }

    /// `self IN (:l1, :l2, …)`. An empty list is false for every row (rendered `0`).
    ///
    /// ```swift
    /// col("id").in([1, 2, 3])   // "id" IN (:l1, :l2, :l3)
    /// ```
    public func `in`<V: DatabaseValueConvertible>(_ values: [V]) -> SQLExpression {
        inList(values.map { SQLExpression.literal($0) }, negated: false)
    }

    /// `self IN (a, b, …)` for expressions, columns or parameters. An empty list is false.
    public func `in`(_ expressions: [any SQLExpressible]) -> SQLExpression {
        inList(expressions.map(\.sqlExpression), negated: false)
    }

    /// `self NOT IN (:l1, :l2, …)`. An empty list is true for every row (rendered `1`).
    public func notIn<V: DatabaseValueConvertible>(_ values: [V]) -> SQLExpression {
        inList(values.map { SQLExpression.literal($0) }, negated: true)
    }

    /// `self NOT IN (a, b, …)` for expressions, columns or parameters. An empty list is true.
    public func notIn(_ expressions: [any SQLExpressible]) -> SQLExpression {
        inList(expressions.map(\.sqlExpression), negated: true)
    }

    private func inList(_ values: [SQLExpression], negated: Bool) -> SQLExpression {
        let operand = sqlExpression
        return SQLExpression(.inList(operand.node, values.map(\.node), negated: negated), over: operand, values)
    }

    /// `self LIKE :pattern [ESCAPE :escape]` (https://sqlite.org/lang_expr.html#like). SQLite's
    /// LIKE ignores ASCII case; `%` matches any run of characters and `_` any one character.
    ///
    /// ```swift
    /// col("name").like("50\\%%", escape: "\\")   // names starting with "50%"
    /// ```
    public func like(_ pattern: String, escape: Character? = nil) -> SQLExpression {
        let operand = sqlExpression
        return SQLExpression(.like(operand.node, pattern: .literal(.text(pattern)),
                                   escape: escape.map { .literal(.text(String($0))) }, negated: false), over: operand)
    }

    /// `self LIKE pattern` with a pattern from a parameter or another expression.
    public func like(_ pattern: some SQLExpressible) -> SQLExpression {
        let operand = sqlExpression, pattern = pattern.sqlExpression
        return SQLExpression(.like(operand.node, pattern: pattern.node, escape: nil, negated: false), over: operand, pattern)
    }

    /// `self NOT LIKE :pattern [ESCAPE :escape]`.
    public func notLike(_ pattern: String, escape: Character? = nil) -> SQLExpression {
        let operand = sqlExpression
        return SQLExpression(.like(operand.node, pattern: .literal(.text(pattern)),
                                   escape: escape.map { .literal(.text(String($0))) }, negated: true), over: operand)
    }

    /// `self BETWEEN :lower AND :upper` (both ends included).
    public func between<V: DatabaseValueConvertible>(_ lower: V, and upper: V) -> SQLExpression {
        between(SQLExpression.literal(lower), SQLExpression.literal(upper), negated: false)
    }

    /// `self BETWEEN lower AND upper` with bounds from parameters, columns or expressions.
    public func between(_ lower: some SQLExpressible, and upper: some SQLExpressible) -> SQLExpression {
        between(lower.sqlExpression, upper.sqlExpression, negated: false)
    }

    /// `self NOT BETWEEN :lower AND :upper`.
    public func notBetween<V: DatabaseValueConvertible>(_ lower: V, and upper: V) -> SQLExpression {
        between(SQLExpression.literal(lower), SQLExpression.literal(upper), negated: true)
    }

    private func between(_ lower: SQLExpression, _ upper: SQLExpression, negated: Bool) -> SQLExpression {
        let operand = sqlExpression
        return SQLExpression(.between(operand.node, lower: lower.node, upper: upper.node, negated: negated),
                             over: operand, [lower, upper])
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
