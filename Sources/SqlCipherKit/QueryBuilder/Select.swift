/// A `SELECT` template (https://sqlite.org/lang_select.html).
///
/// ```swift
/// let products = TableName("products")
/// let maxPrice = Param<Double>("maxPrice")
/// let cheap = Select(.all)
///     .from(products)
///     .where(col("price") < maxPrice)
///     .orderBy(col("price"))
/// let rows = try await db.query(cheap, maxPrice.set(50.0))
/// // SELECT * FROM "products" WHERE "price" < :p_maxPrice ORDER BY "price"
/// ```
///
/// Every method returns a modified copy, so a template can be stored and extended. Calling
/// ``where(_:)`` or ``having(_:)`` again adds the condition with `AND`.
public struct Select: Sendable, Hashable {
    /// A join kind.
    enum JoinKind: String, Sendable, Hashable {
        case inner = "INNER JOIN"
        case left = "LEFT JOIN"
    }

    /// What `FROM` or a join reads: a table, or the table-valued `json_each`.
    enum Source: Sendable, Hashable {
        case table(TableName)
        case jsonEach(JSONEach)

        func render(into renderer: inout SQLRenderer) throws {
            switch self {
            case .table(let table): try table.render(into: &renderer)
            case .jsonEach(let each): try each.render(into: &renderer)
            }
        }
    }

    struct Join: Sendable, Hashable {
        let kind: JoinKind
        let table: Source
        let condition: SQLExpression
    }

    private(set) var isDistinct = false
    private(set) var columns: [ResultColumn]
    private(set) var source: Source?
    private(set) var joins: [Join] = []
    private(set) var predicate: SQLExpression?
    private(set) var grouping: [SQLExpression] = []
    private(set) var groupPredicate: SQLExpression?
    private(set) var ordering: [OrderingTerm] = []
    private(set) var limitNode: SQLExpression.Node?
    private(set) var offsetNode: SQLExpression.Node?

    /// A template selecting `columns`: `.all`, columns, aliased expressions, aggregates.
    ///
    /// ```swift
    /// Select(col("category"), .count.as("n"), .avg(col("price")))
    /// ```
    public init<each C: SQLSelectable>(_ columns: repeat each C) {
        var list: [ResultColumn] = []
        for column in repeat each columns {
            list.append(column.resultColumn)
        }
        self.columns = list
    }

    /// A template selecting the given result columns.
    public init(columns: [any SQLSelectable]) {
        self.columns = columns.map(\.resultColumn)
    }

    /// `SELECT DISTINCT`: duplicate result rows are returned once.
    public func distinct() -> Select {
        var copy = self
        copy.isDistinct = true
        return copy
    }

    /// `FROM table`.
    public func from(_ table: TableName) -> Select {
        var copy = self
        copy.source = .table(table)
        return copy
    }

    /// `FROM json_each(…)`: one row per element of a JSON array or member of a JSON object
    /// (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// let each = JSONEach(SQLExpression.value(#"{"a": 1, "b": [2, 3]}"#))
    /// Select(each.key, each.type).from(each)   // ("a", "integer"), ("b", "array")
    /// ```
    public func from(_ source: JSONEach) -> Select {
        var copy = self
        copy.source = .jsonEach(source)
        return copy
    }

    /// `INNER JOIN table ON condition`: only rows with a match.
    ///
    /// ```swift
    /// let o = TableName("orders").as("o"), c = TableName("customers").as("c")
    /// Select(o.col("id"), c.col("name")).from(o).join(c, on: o.col("customer_id") == c.col("id"))
    /// ```
    public func join(_ table: TableName, on condition: some SQLExpressible) -> Select {
        var copy = self
        copy.joins.append(Join(kind: .inner, table: .table(table), condition: condition.sqlExpression))
        return copy
    }

    /// `INNER JOIN json_each(…) ON condition`: one row per element of the JSON of each row before it,
    /// when `condition` holds; `SQLExpression.value(true)` keeps every element
    /// (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// let notes = TableName("notes")
    /// let tags = JSONEach(notes.col("tags"))
    /// Select(notes.col("id")).distinct().from(notes).join(tags, on: tags.value == "swift")
    /// // SELECT DISTINCT "notes"."id" FROM "notes" INNER JOIN json_each("notes"."tags") ON "json_each"."value" = :l1
    /// ```
    public func join(_ source: JSONEach, on condition: some SQLExpressible) -> Select {
        var copy = self
        copy.joins.append(Join(kind: .inner, table: .jsonEach(source), condition: condition.sqlExpression))
        return copy
    }

    /// `LEFT JOIN table ON condition`: every row of the left side, with NULLs where nothing matches.
    public func leftJoin(_ table: TableName, on condition: some SQLExpressible) -> Select {
        var copy = self
        copy.joins.append(Join(kind: .left, table: .table(table), condition: condition.sqlExpression))
        return copy
    }

    /// `LEFT JOIN json_each(…) ON condition`: every row of the left side, once with NULLs when its
    /// JSON has no element that matches (an empty array, a NULL column)
    /// (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// let tags = JSONEach(notes.col("tags"))
    /// Select(notes.col("id"), .count(tags.value).as("n")).from(notes)
    ///     .leftJoin(tags, on: SQLExpression.value(true)).groupBy(notes.col("id"))
    /// ```
    public func leftJoin(_ source: JSONEach, on condition: some SQLExpressible) -> Select {
        var copy = self
        copy.joins.append(Join(kind: .left, table: .jsonEach(source), condition: condition.sqlExpression))
        return copy
    }

    /// `WHERE condition`; a second call adds its condition with `AND`.
    public func `where`(_ condition: some SQLExpressible) -> Select {
        var copy = self
        copy.predicate = copy.predicate.map { $0 && condition.sqlExpression } ?? condition.sqlExpression
        return copy
    }

    /// `GROUP BY expressions`.
    public func groupBy(_ expressions: any SQLExpressible...) -> Select {
        var copy = self
        copy.grouping += expressions.map(\.sqlExpression)
        return copy
    }

    /// `HAVING condition`, which filters groups; requires ``groupBy(_:)`` (SQLite before 3.39
    /// rejects `HAVING` without `GROUP BY`). A second call adds its condition with `AND`.
    ///
    /// ```swift
    /// Select(col("category"), .count).from(products).groupBy(col("category")).having(.count > 1)
    /// ```
    public func having(_ condition: some SQLExpressible) -> Select {
        var copy = self
        copy.groupPredicate = copy.groupPredicate.map { $0 && condition.sqlExpression } ?? condition.sqlExpression
        return copy
    }

    /// `ORDER BY terms`: columns, expressions, or `.ascending` / `.descending` terms.
    /// A second call appends its terms.
    public func orderBy(_ terms: any SQLOrderable...) -> Select {
        orderBy(terms)
    }

    /// `ORDER BY terms`, from an array.
    public func orderBy(_ terms: [any SQLOrderable]) -> Select {
        var copy = self
        copy.ordering += terms.map(\.orderingTerm)
        return copy
    }

    /// `LIMIT :l` with a value bound at run time (a negative limit means no limit).
    public func limit(_ count: Int) -> Select {
        var copy = self
        copy.limitNode = .literal(.integer(Int64(count)))
        return copy
    }

    /// `LIMIT :p_name` from a parameter.
    public func limit(_ count: Param<Int>) -> Select {
        var copy = self
        copy.limitNode = count.sqlExpression.node
        return copy
    }

    /// `OFFSET :l`: skip that many rows. Without ``limit(_:)-(Int)`` it renders `LIMIT -1 OFFSET …`,
    /// because SQLite allows `OFFSET` only after `LIMIT`.
    public func offset(_ count: Int) -> Select {
        var copy = self
        copy.offsetNode = .literal(.integer(Int64(count)))
        return copy
    }

    /// `OFFSET :p_name` from a parameter.
    public func offset(_ count: Param<Int>) -> Select {
        var copy = self
        copy.offsetNode = count.sqlExpression.node
        return copy
    }

    /// The SQL text and literals of this template.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for a template that cannot be valid SQL
    ///   (no result column, `HAVING` without `GROUP BY`, an identifier with NUL, a bad parameter name).
    public func render() throws -> SQLFragment {
        var renderer = SQLRenderer()
        try render(into: &renderer)
        return renderer.fragment
    }

    func render(into renderer: inout SQLRenderer) throws {
        typealias P = SQLExpression.Precedence
        guard !columns.isEmpty else {
            throw SqlCipherError.invalidQuery(reason: "a Select has no result column; pass .all or the columns to read")
        }
        if groupPredicate != nil && grouping.isEmpty {
            throw SqlCipherError.invalidQuery(reason: "HAVING needs a GROUP BY; add .groupBy(...) or use .where(...)")
        }
        if !joins.isEmpty && source == nil {
            throw SqlCipherError.invalidQuery(reason: "a join needs a FROM table; add .from(...)")
        }
        renderer.append(isDistinct ? "SELECT DISTINCT " : "SELECT ")
        for (index, column) in columns.enumerated() {
            if index > 0 { renderer.append(", ") }
            try column.render(into: &renderer)
        }
        if let source {
            renderer.append(" FROM ")
            try source.render(into: &renderer)
        }
        for join in joins {
            renderer.append(" \(join.kind.rawValue) ")
            try join.table.render(into: &renderer)
            renderer.append(" ON ")
            try join.condition.node.render(into: &renderer, minimum: P.or)
        }
        if let predicate {
            renderer.append(" WHERE ")
            try predicate.node.render(into: &renderer, minimum: P.or)
        }
        if !grouping.isEmpty {
            renderer.append(" GROUP BY ")
            for (index, expression) in grouping.enumerated() {
                if index > 0 { renderer.append(", ") }
                try expression.node.render(into: &renderer, minimum: P.or)
            }
        }
        if let groupPredicate {
            renderer.append(" HAVING ")
            try groupPredicate.node.render(into: &renderer, minimum: P.or)
        }
        if !ordering.isEmpty {
            renderer.append(" ORDER BY ")
            for (index, term) in ordering.enumerated() {
                if index > 0 { renderer.append(", ") }
                try term.render(into: &renderer)
            }
        }
        if limitNode != nil || offsetNode != nil {
            renderer.append(" LIMIT ")
            if let limitNode {
                try limitNode.render(into: &renderer, minimum: P.atom)
            } else {
                renderer.append("-1")
            }
            if let offsetNode {
                renderer.append(" OFFSET ")
                try offsetNode.render(into: &renderer, minimum: P.atom)
            }
        }
    }
}
