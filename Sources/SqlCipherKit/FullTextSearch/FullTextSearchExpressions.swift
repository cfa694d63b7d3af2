// The query side of full-text search: `MATCH`, `bm25`, `snippet` and `highlight` as builder
// expressions over an FTS5 table's name. Every text argument and every pattern is a bound value.
// Each renders only on a library with FTS5 (the operator's and the functions' `requiredFeature`):
// elsewhere the statement throws `unsupported` naming the `fts5` capability, even over an FTS4 table.

extension TableName {
    /// The FTS5 table's hidden column of its own name, qualified (`"t"."t"`, or `"a"."t"` under an
    /// alias): what `MATCH` and the auxiliary functions take to name the table.
    var fullTextColumn: SQLExpression { SQLExpression(.column(table: alias ?? name, name: name)) }

    /// `"t"."t" MATCH :pattern`: the rows of this FTS5 table that match `pattern`, which is bound.
    ///
    /// ```swift
    /// let notes = TableName("notes_fts")
    /// let found = Select(col("rowid"), col("title")).from(notes).where(notes.match(pattern)).orderBy(notes.bm25())
    /// ```
    public func match(_ pattern: FTS5Pattern) -> SQLExpression {
        .compare(.match, fullTextColumn, .literal(pattern))
    }

    /// `"t"."t" MATCH :p_name`: a template whose pattern is given when it runs (`param.set(pattern)`).
    public func match(_ pattern: Param<FTS5Pattern>) -> SQLExpression {
        .compare(.match, fullTextColumn, pattern.sqlExpression)
    }

    /// `bm25("t"."t", …)`: the relevance of a matching row, lower is better, so ascending order puts
    /// the best first (https://sqlite.org/fts5.html#the_bm25_function). `weights` are the weights of
    /// the table's columns in order (missing ones are 1.0), bound as values.
    ///
    /// ```swift
    /// Select(.all).from(notes).where(notes.match(pattern)).orderBy(notes.bm25(weights: 10, 1))
    /// ```
    public func bm25(weights: Double...) -> SQLExpression {
        let arguments = [fullTextColumn] + weights.map { SQLExpression.literal($0) }
        return SQLExpression(.function(.bm25, arguments.map(\.node)), over: fullTextColumn, arguments)
    }

    /// `snippet(…)`: a short excerpt of a matching row around its matches, each match between
    /// `before` and `after`, cut parts shown by `ellipsis`
    /// (https://sqlite.org/fts5.html#the_snippet_function). `column` is the index of the column to
    /// take it from (0 for the first), nil for the best one; `maxTokens` is 1...64. The texts are
    /// bound values.
    public func snippet(column: Int? = nil, before: String, after: String, ellipsis: String = "…",
                        maxTokens: Int = 15) -> SQLExpression {
        guard (1...64).contains(maxTokens) else {
            return SQLExpression(.invalid(
                reason: "snippet(maxTokens: \(maxTokens)) is out of range; FTS5 takes 1 to 64 tokens", identity: 0))
        }
        let arguments: [SQLExpression] = [
            fullTextColumn, .literal(column ?? -1), .literal(before), .literal(after), .literal(ellipsis),
            .literal(maxTokens),
        ]
        return SQLExpression(.function(.snippet, arguments.map(\.node)), over: fullTextColumn, arguments)
    }

    /// `highlight(…)`: the whole text of column number `column` (0 for the first) of a matching row,
    /// each match between `before` and `after` (https://sqlite.org/fts5.html#the_highlight_function).
    /// The texts are bound values.
    public func highlight(column: Int, before: String, after: String) -> SQLExpression {
        let arguments: [SQLExpression] = [fullTextColumn, .literal(column), .literal(before), .literal(after)]
        return SQLExpression(.function(.highlight, arguments.map(\.node)), over: fullTextColumn, arguments)
    }
}

extension Column {
    /// `"column" MATCH :pattern`: the rows whose column `column` of an FTS5 table matches
    /// `pattern` (the same as a column filter `column: (…)` in the pattern).
    public func match(_ pattern: FTS5Pattern) -> SQLExpression {
        .compare(.match, sqlExpression, .literal(pattern))
    }
}
