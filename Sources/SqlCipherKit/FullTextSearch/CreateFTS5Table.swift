/// `CREATE VIRTUAL TABLE … USING fts5(…)` (https://sqlite.org/fts5.html), run with
/// ``MigrationContext/execute(_:)`` like ``CreateTable``.
///
/// ```swift
/// try ctx.execute(
///     CreateFTS5Table(TableName("notes_fts"))
///         .column("title")
///         .column("body")
///         .tokenizer(.porter(.unicode61(removeDiacritics: .remove)))
///         .prefixIndexes(2, 3)
///         .externalContent(TableName("notes"), rowid: "id")
/// )
/// ```
///
/// Three kinds of table:
/// - By default the FTS5 table keeps its own copy of the text.
/// - ``externalContent(_:rowid:synchronized:)`` indexes the rows of a regular table, which keeps
///   the only copy. Synchronized (the default), the statement also creates the three triggers that
///   keep the index in step with that table (after insert, delete and update, named
///   `__<fts table>_ai`, `_ad` and `_au`) and indexes the rows already there (`rebuild`), all in
///   the migration's transaction. Without them, the index is yours to keep in step.
/// - ``contentless()`` (`content=''`) keeps the index alone: a match returns row ids, and the
///   columns read as NULL.
///
/// Every identifier is written double-quoted with `"` doubled, and every option value as an SQL
/// string with `'` doubled; the tokenizer is a closed type (``FTS5Tokenizer``), never text.
///
/// On a library without FTS5 (Debian's SQLCipher 3.4.1) running it throws
/// ``SqlCipherError/unsupported(feature:requires:loaded:)`` naming FTS5 before any SQL runs; the
/// same error names a tokenizer the loaded SQLite is too old for (`trigram` needs SQLite 3.34,
/// `remove_diacritics 2` needs 3.27).
/// Dropping the FTS5 table with ``DropTable`` leaves the triggers on the content table: drop them
/// too (`DROP TRIGGER "__notes_fts_ai"`, …), or drop the content table, which drops them.
public struct CreateFTS5Table: Sendable, Hashable {
    /// How much position information the index keeps (https://sqlite.org/fts5.html#the_detail_option).
    public enum Detail: String, Sendable, Hashable {
        /// `detail=full`: every position; phrase and `NEAR` queries work. The default.
        case full
        /// `detail=column`: the columns of each token, not positions; no phrase or `NEAR` queries.
        case column
        /// `detail=none`: the rows of each token only; the smallest index, no phrase, `NEAR` or
        /// column filter queries.
        case none
    }

    enum Content: Sendable, Hashable {
        case own
        case external(TableName, rowid: String, synchronized: Bool)
        case contentless
    }

    struct FTSColumn: Sendable, Hashable {
        let name: String
        let unindexed: Bool
    }

    let table: TableName
    let ifNotExists: Bool
    private(set) var columns: [FTSColumn] = []
    private(set) var tokenizerValue: FTS5Tokenizer?
    private(set) var prefixLengths: [Int] = []
    private(set) var content: Content = .own
    private(set) var detailValue: Detail?

    /// An FTS5 table called `table`; with `ifNotExists`, nothing happens when it already exists
    /// (the triggers of a synchronized table are then created only where missing).
    public init(_ table: TableName, ifNotExists: Bool = false) {
        self.table = table
        self.ifNotExists = ifNotExists
    }

    /// Adds a column. An `unindexed` column is stored and returned but not searched (an id, a path).
    /// With external content, the content table has a column of the same name.
    public func column(_ name: String, unindexed: Bool = false) -> CreateFTS5Table {
        var copy = self
        copy.columns.append(FTSColumn(name: name, unindexed: unindexed))
        return copy
    }

    /// The tokenizer (`tokenize=`); without one, FTS5 uses `unicode61` with `remove_diacritics 1`.
    public func tokenizer(_ tokenizer: FTS5Tokenizer) -> CreateFTS5Table {
        var copy = self
        copy.tokenizerValue = tokenizer
        return copy
    }

    /// Prefix indexes (`prefix='2 3'`) for prefix queries of these lengths in characters (1 to 999),
    /// which make ``FTS5Pattern/init(matchingAllPrefixesIn:tokenizer:)`` fast at the cost of a
    /// larger index.
    public func prefixIndexes(_ lengths: Int...) -> CreateFTS5Table {
        var copy = self
        copy.prefixLengths += lengths
        return copy
    }

    /// Indexes the rows of `contentTable` (`content=`, `content_rowid=`): `rowid` is its integer
    /// primary key. `synchronized` adds the triggers that keep the index in step and indexes the
    /// rows already there.
    public func externalContent(_ contentTable: TableName, rowid: String = "rowid", synchronized: Bool = true)
        -> CreateFTS5Table {
        var copy = self
        copy.content = .external(contentTable, rowid: rowid, synchronized: synchronized)
        return copy
    }

    /// A contentless table (`content=''`): the index alone, whose rows are written with explicit
    /// row ids and whose columns read as NULL.
    public func contentless() -> CreateFTS5Table {
        var copy = self
        copy.content = .contentless
        return copy
    }

    /// How much position information the index keeps (`detail=`).
    public func detail(_ detail: Detail) -> CreateFTS5Table {
        var copy = self
        copy.detailValue = detail
        return copy
    }

    // MARK: Rendering

    /// The `CREATE VIRTUAL TABLE` statement, after checking that the loaded library has FTS5.
    func tableText() throws -> String {
        try SqlCipherLibrary.require(.fts5, for: "CreateFTS5Table(\(table.name))")
        guard !columns.isEmpty else {
            throw SqlCipherError.invalidQuery(reason: "CreateFTS5Table(\(table.name)) has no column; add .column(...)")
        }
        try checkColumnNames()
        var arguments = try columns.map { column in
            try SQLRenderer.quoteIdentifier(column.name) + (column.unindexed ? " UNINDEXED" : "")
        }
        if let tokenizerValue {
            if let requirement = tokenizerValue.requirement {
                try SqlCipherLibrary.shared.require(requirement.feature, sqlite: requirement.sqlite)
            }
            arguments.append("tokenize=" + (try Self.optionString(tokenizerValue.optionValue)))
        }
        if let bad = prefixLengths.first(where: { !(1...999).contains($0) }) {
            throw SqlCipherError.invalidQuery(
                reason: "CreateFTS5Table(\(table.name)).prefixIndexes(\(bad)) is out of range; give lengths from 1 to 999")
        }
        if !prefixLengths.isEmpty {
            arguments.append("prefix=" + (try Self.optionString(prefixLengths.map(String.init).joined(separator: " "))))
        }
        switch content {
        case .own:
            break
        case let .external(contentTable, rowid, _):
            arguments.append("content=" + (try Self.optionString(contentTable.name)))
            if rowid != "rowid" {
                arguments.append("content_rowid=" + (try Self.optionString(rowid)))
            }
        case .contentless:
            arguments.append("content=''")
        }
        if let detailValue { arguments.append("detail=" + detailValue.rawValue) }
        return "CREATE VIRTUAL TABLE " + (ifNotExists ? "IF NOT EXISTS " : "")
            + (try SQLRenderer.quoteIdentifier(table.name)) + " USING fts5(" + arguments.joined(separator: ", ") + ")"
    }

    /// Every statement this value runs, rendered before any runs: the table, then for a
    /// synchronized external-content table its three triggers and the `rebuild` that indexes the
    /// rows already there.
    /// Refuses the column names FTS5 refuses, with what to do: SQLite says only "reserved fts5
    /// column name" or, for a name used twice or the table's own name (FTS5 declares a hidden
    /// column of that name), "vtable constructor failed". Names compare as SQLite compares them,
    /// ASCII letters without regard to case.
    private func checkColumnNames() throws {
        for (offset, column) in columns.enumerated() {
            let shown = SQLRenderer.visible(column.name)
            if SQLTokenizer.sameIdentifier(column.name, "rank") || SQLTokenizer.sameIdentifier(column.name, "rowid") {
                throw SqlCipherError.invalidQuery(
                    reason: "CreateFTS5Table(\(SQLRenderer.visible(table.name))).column(\(shown)): FTS5 reserves the "
                        + "names rank and rowid for its own columns; give the column another name")
            }
            if SQLTokenizer.sameIdentifier(column.name, table.name) {
                throw SqlCipherError.invalidQuery(
                    reason: "CreateFTS5Table(\(SQLRenderer.visible(table.name))).column(\(shown)): FTS5 gives the "
                        + "table a hidden column of its own name (the one MATCH searches); give the column another name")
            }
            if columns[..<offset].contains(where: { SQLTokenizer.sameIdentifier($0.name, column.name) }) {
                throw SqlCipherError.invalidQuery(
                    reason: "CreateFTS5Table(\(SQLRenderer.visible(table.name))) has the column \(shown) twice (names "
                        + "differing only in ASCII case are one name); add each column once")
            }
        }
    }

    func statements() throws -> [SQLFragment] {
        var fragments = [SQLFragment(schemaText: try tableText())]
        guard case let .external(contentTable, rowid, true) = content else { return fragments }
        let fts = try SQLRenderer.quoteIdentifier(table.name)
        let source = try SQLRenderer.quoteIdentifier(contentTable.name)
        let names = try columns.map { try SQLRenderer.quoteIdentifier($0.name) }
        let key = try SQLRenderer.quoteIdentifier(rowid)
        let targets = (["\"rowid\""] + names).joined(separator: ", ")
        func values(_ row: String) -> String { ([key] + names).map { "\(row).\($0)" }.joined(separator: ", ") }
        let insert = "INSERT INTO \(fts)(\(targets)) VALUES (\(values("new")));"
        let delete = "INSERT INTO \(fts)(\(fts), \(targets)) VALUES ('delete', \(values("old")));"
        let create = "CREATE TRIGGER " + (ifNotExists ? "IF NOT EXISTS " : "")
        for (suffix, event, body) in [("ai", "INSERT", insert), ("ad", "DELETE", delete), ("au", "UPDATE", delete + " " + insert)] {
            let name = try SQLRenderer.quoteIdentifier("__\(table.name)_\(suffix)")
            fragments.append(SQLFragment(schemaText: "\(create)\(name) AFTER \(event) ON \(source) BEGIN \(body) END"))
        }
        fragments.append(try FTS5Command.rebuild(table).render())
        return fragments
    }

    /// `value` as an SQL string literal (`'…'`, `'` doubled), the form FTS5 reads option values in.
    static func optionString(_ value: String) throws -> String {
        guard !value.unicodeScalars.contains("\0") else {
            throw SqlCipherError.invalidQuery(
                reason: "the FTS5 option value \(SQLRenderer.visible(value)) contains a NUL character; use a name without NUL")
        }
        return "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

extension CreateFTS5Table: SchemaStatement {
    /// The `CREATE VIRTUAL TABLE` statement's text, with no values to bind. For a synchronized
    /// external-content table, ``MigrationContext/execute(_:)`` also runs the triggers and the first
    /// `rebuild` that this text leaves out.
    /// - Throws: ``SqlCipherError/unsupported(feature:requires:loaded:)`` on a library without FTS5;
    ///   ``SqlCipherError/invalidQuery(reason:)`` for a table without columns, a prefix length out of
    ///   range or a name with NUL.
    public func render() throws -> SQLFragment { SQLFragment(schemaText: try tableText()) }
}

extension CreateFTS5Table: MultipleSchemaStatements {}

/// A schema statement that runs as several SQL statements, all rendered before the first runs.
protocol MultipleSchemaStatements: SchemaStatement {
    func statements() throws -> [SQLFragment]
}
