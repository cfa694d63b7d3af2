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
    /// the table's columns in order (missing ones are 1.0), bound as values; a weight that is not
    /// finite makes the statement throw ``SqlCipherError/invalidQuery(reason:)``.
    ///
    /// ```swift
    /// Select(.all).from(notes).where(notes.match(pattern)).orderBy(notes.bm25(weights: 10, 1))
    /// ```
    public func bm25(weights: Double...) -> SQLExpression {
        // A NaN was refused as "a comparison with NaN" (the literal's own check), and an infinite
        // weight made every rank NULL, which orders the matches arbitrarily.
        if let bad = weights.first(where: { !$0.isFinite }) {
            return SQLExpression(.invalid(
                reason: "bm25(weights:) holds \(bad); FTS5 weighs each column by a finite number (1 by default, 0 to "
                    + "leave a column out of the rank); give finite weights", identity: 0))
        }
        let arguments = [fullTextColumn] + weights.map { SQLExpression.literal($0) }
        return SQLExpression(.function(.bm25, arguments.map(\.node)), over: fullTextColumn, arguments)
    }

    /// `snippet(…)`: a short excerpt of a matching row around its matches, each match between
    /// `before` and `after`, cut parts shown by `ellipsis`
    /// (https://sqlite.org/fts5.html#the_snippet_function). `column` is the index of the column to
    /// take it from (0 for the first), nil for the best one; `maxTokens` is 1...64. The texts are
    /// bound values.
    ///
    /// A negative `column`, one past SQLite's limit of 32,767 columns, or a text holding a NUL
    /// character (FTS5 reads these texts only up to their first NUL) is refused with
    /// ``SqlCipherError/invalidQuery(reason:)`` when the statement renders. A `column` past the
    /// table's last column makes the query fail with SQLite's "column index out of range".
    public func snippet(column: Int? = nil, before: String, after: String, ellipsis: String = "…",
                        maxTokens: Int = 15) -> SQLExpression {
        guard (1...64).contains(maxTokens) else {
            return SQLExpression(.invalid(
                reason: "snippet(maxTokens: \(maxTokens)) is out of range; FTS5 takes 1 to 64 tokens", identity: 0))
        }
        if let reason = Self.auxiliaryRefusal("snippet", column: column,
                                                texts: [("before", before), ("after", after), ("ellipsis", ellipsis)]) {
            return SQLExpression(.invalid(reason: reason, identity: 0))
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
    ///
    /// A negative `column`, one past SQLite's limit of 32,767 columns, or a text holding a NUL
    /// character (FTS5 reads these texts only up to their first NUL) is refused with
    /// ``SqlCipherError/invalidQuery(reason:)`` when the statement renders. A `column` past the
    /// table's last column gives an empty result: SQLite's `highlight` does not report it.
    public func highlight(column: Int, before: String, after: String) -> SQLExpression {
        if let reason = Self.auxiliaryRefusal("highlight", column: column, texts: [("before", before), ("after", after)]) {
            return SQLExpression(.invalid(reason: reason, identity: 0))
        }
        let arguments: [SQLExpression] = [fullTextColumn, .literal(column), .literal(before), .literal(after)]
        return SQLExpression(.function(.highlight, arguments.map(\.node)), over: fullTextColumn, arguments)
    }

    /// Why `snippet` or `highlight` cannot take these arguments, or nil when it can. FTS5 reads a
    /// column index as a 32-bit integer (`1 << 32` is column 0, and any negative index is
    /// `snippet`'s "best column") and its texts as C text, which ends at the first NUL: each of
    /// those would quietly run another call than the one written.
    static func auxiliaryRefusal(_ function: String, column: Int?, texts: [(String, String)]) -> String? {
        if let column, !(0..<32_767).contains(column) {
            return "\(function)(column: \(column)) is out of range; give the index of one of the FTS5 table's "
                + "columns, 0 for the first" + (function == "snippet" ? ", or nil for the best one" : "")
        }
        for (name, text) in texts where text.utf8.contains(0) {
            return "\(function)(\(name): \(SQLRenderer.visible(text))) holds a NUL character, and FTS5 reads it only "
                + "up to its first NUL; remove the NUL"
        }
        return nil
    }
}

extension Column {
    /// `"column" MATCH :pattern`: the rows whose column `column` of an FTS5 table matches
    /// `pattern` (the same as a column filter `column: (…)` in the pattern).
    public func match(_ pattern: FTS5Pattern) -> SQLExpression {
        .compare(.match, sqlExpression, .literal(pattern))
    }
}
