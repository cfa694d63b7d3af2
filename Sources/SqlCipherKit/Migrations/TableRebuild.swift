/// Renames or drops a column by rebuilding its table, for SQLite versions without
/// `ALTER TABLE … RENAME COLUMN` (3.25) or `DROP COLUMN` (3.35), following
/// https://sqlite.org/lang_altertable.html#otheralter:
///
/// 1. read the table's `CREATE TABLE` statement and those of its indexes and triggers;
/// 2. check that the change is safe (the same refusals as SQLite's own `DROP COLUMN`), and rewrite
///    the column's name where it can be rewritten exactly;
/// 3. create the new table under a temporary name and copy every row, rowids included;
/// 4. drop the old table and rename the new one (with `legacy_alter_table` on where it exists, so
///    that SQLite 3.26+ leaves other tables' references alone);
/// 5. create the indexes and triggers again and restore the `AUTOINCREMENT` counter;
/// 6. compile every view and every trigger's statement to prove the schema is whole.
///
/// It must run inside a transaction with foreign-key enforcement off (the migration runner arranges
/// both); any failure rolls the whole migration back.
struct TableRebuild {
    enum Change: Sendable, Hashable {
        case renameColumn(String, to: String)
        case dropColumn(String)

        var column: String {
            switch self {
            case .renameColumn(let name, _), .dropColumn(let name): return name
            }
        }
    }

    typealias Token = SQLTokenizer.Token
    typealias Replacement = (start: Int, end: Int, text: String)

    let connection: SQLiteConnection
    let table: String
    let change: Change

    struct SchemaEntry {
        let type: String
        let name: String
        let table: String
        let sql: String?
    }

    func run() throws {
        guard connection.isInTransaction else {
            throw refusal("a table rebuild must run inside a transaction; run it from a migration")
        }
        guard try !connection.foreignKeysEnabled() else {
            throw refusal("a table rebuild needs foreign keys off; run it from a migration")
        }
        let entries = try schema()
        guard let entry = entries.first(where: { $0.type == "table" && SQLTokenizer.sameIdentifier($0.name, table) }),
              let createSQL = entry.sql else {
            throw refusal("there is no table \"\(table)\"")
        }
        let tableName = entry.name
        let parsed = try ParsedTable(sql: createSQL, refusal: refusal)
        let column = change.column
        guard let target = parsed.columnIndex(column) else {
            throw refusal("table \"\(tableName)\" has no column \"\(column)\"")
        }
        let columnName = parsed.items[target].columnName ?? column

        var tableRewrites: [Replacement] = []
        var keptItems = parsed.items
        switch change {
        case .dropColumn:
            try checkDrop(parsed, target: target, column: columnName, tableName: tableName)
            keptItems.remove(at: target)
        case .renameColumn(_, let newName):
            if let other = parsed.columnIndex(newName), other != target {
                throw refusal("table \"\(tableName)\" already has a column \"\(newName)\"")
            }
            let quoted = try SQLRenderer.quoteIdentifier(newName)
            let nameToken = parsed.tokens[parsed.items[target].first]
            tableRewrites.append((nameToken.start, nameToken.end, quoted))
            for item in parsed.items {
                for index in parsed.references(in: item, to: columnName, table: tableName, includeKeywords: false) {
                    tableRewrites.append((parsed.tokens[index].start, parsed.tokens[index].end, quoted))
                }
            }
        }

        let recreate = try dependentStatements(entries, tableName: tableName, column: columnName)
        try checkForeignKeysOfOtherTables(entries, tableName: tableName, column: columnName)

        // Columns to copy: every remaining real column (generated columns compute themselves).
        var oldNames: [String] = []
        var newNames: [String] = []
        for item in keptItems where !item.isGenerated {
            guard let name = item.columnName else { continue }
            oldNames.append(name)
            if case let .renameColumn(_, newName) = change, SQLTokenizer.sameIdentifier(name, columnName) {
                newNames.append(newName)
            } else {
                newNames.append(name)
            }
        }
        guard !oldNames.isEmpty else {
            throw refusal("\"\(columnName)\" is the only column of \"\(tableName)\"; a table needs at least one column")
        }

        // Keep rowids, so that anything that stored them still finds its rows.
        let info = try connection.query("PRAGMA table_info(\(try SQLRenderer.quoteIdentifier(tableName)))")
        let keyTypes = info.filter { ($0.get(5, as: Int.self) ?? 0) > 0 }.map { ($0.get(2, as: String.self) ?? "").uppercased() }
        let hasIntegerPrimaryKey = keyTypes == ["INTEGER"]
        let usedNames = parsed.items.compactMap(\.columnName) + newNames
        let rowidAlias = (parsed.withoutRowID || hasIntegerPrimaryKey) ? nil
            : ["rowid", "_rowid_", "oid"].first { alias in !usedNames.contains { SQLTokenizer.sameIdentifier($0, alias) } }

        var temporary = "sqlcipherkit_rebuild_" + tableName
        while entries.contains(where: { SQLTokenizer.sameIdentifier($0.name, temporary) }) { temporary += "_" }
        let quotedTemporary = try SQLRenderer.quoteIdentifier(temporary)
        let quotedTable = try SQLRenderer.quoteIdentifier(tableName)
        let body = keptItems.map { parsed.text(of: $0, applying: tableRewrites) }.joined(separator: ", ")
        let createNew = "CREATE TABLE \(quotedTemporary) (\(body))\(parsed.tail)"

        let hasSequence = entries.contains { $0.type == "table" && $0.name == "sqlite_sequence" }
        let sequence = hasSequence
            ? try connection.query("SELECT seq FROM sqlite_sequence WHERE name = ?", [.text(tableName)]).first?
                .get(0, as: Int64.self)
            : nil

        try connection.execute(createNew)
        var targetColumns = try newNames.map { try SQLRenderer.quoteIdentifier($0) }
        var sourceColumns = try oldNames.map { try SQLRenderer.quoteIdentifier($0) }
        if let rowidAlias {
            targetColumns.insert(rowidAlias, at: 0)
            sourceColumns.insert(rowidAlias, at: 0)
        }
        try connection.execute("INSERT INTO \(quotedTemporary) (\(targetColumns.joined(separator: ", "))) "
            + "SELECT \(sourceColumns.joined(separator: ", ")) FROM \(quotedTable)")
        try connection.execute("DROP TABLE \(quotedTable)")
        try renameTable(from: quotedTemporary, to: quotedTable)
        for sql in recreate {
            try connection.execute(sql)
        }
        if let sequence {
            let updated = try connection.execute(
                "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", [.integer(sequence), .text(tableName)])
            if updated == 0 {
                try connection.execute(
                    "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", [.text(tableName), .integer(sequence)])
            }
        }
        try validateSchema(tableName: tableName)
    }

    // MARK: Schema

    private func schema() throws -> [SchemaEntry] {
        try connection.query("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid").map {
            SchemaEntry(type: $0.get(0, as: String.self) ?? "", name: $0.get(1, as: String.self) ?? "",
                        table: $0.get(2, as: String.self) ?? "", sql: $0.get(3, as: String.self))
        }
    }

    private func refusal(_ reason: String) -> SqlCipherError {
        let action: String
        switch change {
        case let .renameColumn(name, newName): action = "rename column \"\(name)\" of \"\(table)\" to \"\(newName)\""
        case let .dropColumn(name): action = "drop column \"\(name)\" of \"\(table)\""
        }
        return SqlCipherError.invalidQuery(reason: "cannot \(action) by rebuilding the table: \(reason)")
    }

    private func checkDrop(_ parsed: ParsedTable, target: Int, column: String, tableName: String) throws {
        let item = parsed.items[target]
        let definition = parsed.tokens[item.first...item.last]
        if definition.contains(where: { $0.isKeyword("PRIMARY") }) { throw refusal("it is the PRIMARY KEY") }
        if definition.contains(where: { $0.isKeyword("UNIQUE") }) { throw refusal("it has a UNIQUE constraint") }
        if definition.contains(where: { $0.isKeyword("REFERENCES") }) { throw refusal("it is a foreign key") }
        for (index, other) in parsed.items.enumerated() where index != target {
            if !parsed.references(in: other, to: column, table: tableName, includeKeywords: true).isEmpty {
                let what = other.columnName.map { "the definition of column \"\($0)\"" } ?? "a table constraint"
                throw refusal("it is used by \(what)")
            }
        }
    }

    /// The `CREATE` statements of the table's indexes and triggers (rewritten for a rename), after
    /// checking that no index, trigger or view depends on the column in a way that would break.
    private func dependentStatements(_ entries: [SchemaEntry], tableName: String, column: String) throws -> [String] {
        var statements: [String] = []
        let newName: String?
        if case let .renameColumn(_, name) = change { newName = name } else { newName = nil }
        let quotedNew = try newName.map { try SQLRenderer.quoteIdentifier($0) }
        for entry in entries {
            guard let sql = entry.sql, entry.type == "index" || entry.type == "trigger" || entry.type == "view" else {
                continue
            }
            guard let tokens = SQLTokenizer.tokenize(sql) else {
                throw refusal("the SQL of \(entry.type) \"\(entry.name)\" cannot be read")
            }
            let onTable = SQLTokenizer.sameIdentifier(entry.table, tableName)
            switch entry.type {
            case "index" where onTable:
                guard let references = SchemaScan.indexReferences(tokens, column: column, table: tableName,
                                                                  includeKeywords: newName == nil) else {
                    throw refusal("the SQL of index \"\(entry.name)\" cannot be read")
                }
                if let quotedNew {
                    statements.append(SQLTokenizer.rewrite(sql, references.map { (tokens[$0].start, tokens[$0].end, quotedNew) }))
                } else if !references.isEmpty {
                    throw refusal("it is indexed by \"\(entry.name)\"; drop the index first")
                } else {
                    statements.append(sql)
                }
            case "trigger":
                guard let scan = SchemaScan.triggerReferences(tokens, column: column, table: tableName, onTable: onTable) else {
                    throw refusal("the SQL of trigger \"\(entry.name)\" cannot be read")
                }
                if onTable {
                    if !scan.other.isEmpty || (quotedNew == nil && !scan.rewritable.isEmpty) {
                        throw refusal("trigger \"\(entry.name)\" uses it; drop the trigger first and create it again "
                            + "afterwards")
                    }
                    if let quotedNew {
                        statements.append(SQLTokenizer.rewrite(sql, scan.rewritable.map { (tokens[$0].start, tokens[$0].end, quotedNew) }))
                    } else {
                        statements.append(sql)
                    }
                } else if scan.mentionsTable && !scan.other.isEmpty {
                    throw refusal("trigger \"\(entry.name)\" may use it; drop the trigger first and create it again "
                        + "afterwards")
                }
            case "view":
                if SchemaScan.viewMentions(tokens, column: column, table: tableName) {
                    throw refusal("view \"\(entry.name)\" may use it; drop the view first and create it again afterwards")
                }
            default:
                continue
            }
        }
        return statements
    }

    private func checkForeignKeysOfOtherTables(_ entries: [SchemaEntry], tableName: String, column: String) throws {
        for entry in entries where entry.type == "table" && !SQLTokenizer.sameIdentifier(entry.name, tableName) {
            let keys = try connection.query("PRAGMA foreign_key_list(\(try SQLRenderer.quoteIdentifier(entry.name)))")
            for key in keys {
                guard let parent = key["table"].flatMap({ String.fromDatabaseValue($0) }),
                      SQLTokenizer.sameIdentifier(parent, tableName),
                      let target = key["to"].flatMap({ String.fromDatabaseValue($0) }),
                      SQLTokenizer.sameIdentifier(target, column) else { continue }
                throw refusal("a foreign key of table \"\(entry.name)\" references it")
            }
        }
    }

    private func renameTable(from temporary: String, to quotedTable: String) throws {
        // SQLite 3.26+ rewrites other tables' references on a rename unless legacy_alter_table is on;
        // here the references must keep naming the original table. Older SQLite has no such pragma
        // (and returns no row), and with foreign keys off does not rewrite them.
        let legacy = try connection.query("PRAGMA legacy_alter_table").first?.get(0, as: Int.self)
        // The package's own statements (asPackage): a pool refuses the pragma as raw SQL.
        if legacy == 0 { _ = try connection.asPackage { try connection.execute("PRAGMA legacy_alter_table = ON") } }
        do {
            try connection.execute("ALTER TABLE \(temporary) RENAME TO \(quotedTable)")
        } catch {
            if legacy == 0 { _ = connection.asPackage { try? connection.execute("PRAGMA legacy_alter_table = OFF") } }
            throw error
        }
        if legacy == 0 { _ = try connection.asPackage { try connection.execute("PRAGMA legacy_alter_table = OFF") } }
    }

    /// Compiles a read of the table, of every view, and a statement for every trigger's event, so a
    /// reference the rebuild broke surfaces now, inside the migration's transaction.
    private func validateSchema(tableName: String) throws {
        try connection.compileOnly("SELECT * FROM \(try SQLRenderer.quoteIdentifier(tableName))")
        for entry in try schema() {
            guard let sql = entry.sql else { continue }
            do {
                switch entry.type {
                case "view":
                    try connection.compileOnly("SELECT * FROM \(try SQLRenderer.quoteIdentifier(entry.name))")
                case "trigger":
                    guard let tokens = SQLTokenizer.tokenize(sql), let event = SchemaScan.triggerEvent(tokens) else { continue }
                    let target = try SQLRenderer.quoteIdentifier(entry.table)
                    switch event {
                    case "INSERT":
                        try connection.compileOnly("INSERT INTO \(target) DEFAULT VALUES")
                    case "DELETE":
                        try connection.compileOnly("DELETE FROM \(target)")
                    default:
                        let columns = try connection.query("PRAGMA table_info(\(target))").compactMap { $0.get(1, as: String.self) }
                        let assignments = try columns.map { name -> String in
                            let quoted = try SQLRenderer.quoteIdentifier(name)
                            return "\(quoted) = \(quoted)"
                        }
                        if !assignments.isEmpty {
                            try connection.compileOnly("UPDATE \(target) SET \(assignments.joined(separator: ", "))")
                        }
                    }
                default:
                    continue
                }
            } catch let SqlCipherError.sqlite(_, _, message, _) {
                throw refusal("afterwards \(entry.type) \"\(entry.name)\" no longer compiles (\(message)); drop it "
                    + "first and create it again afterwards")
            }
        }
    }
}

/// A parsed `CREATE TABLE` statement: its column definitions and table constraints.
struct ParsedTable {
    struct Item {
        /// Token indices, inclusive.
        let first: Int
        let last: Int
        /// The column's name, or nil for a table constraint.
        let columnName: String?
        /// Whether the column is generated (`AS (…)`), so it cannot be copied into.
        let isGenerated: Bool
    }

    let sql: String
    let tokens: [SQLTokenizer.Token]
    let items: [Item]
    /// The text after the closing parenthesis, such as ` WITHOUT ROWID`.
    let tail: String
    let withoutRowID: Bool

    private static let constraintKeywords: Set<String> = ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"]

    init(sql: String, refusal: (String) -> SqlCipherError) throws {
        guard let tokens = SQLTokenizer.tokenize(sql), tokens.count > 3, tokens[0].isKeyword("CREATE") else {
            throw refusal("its CREATE TABLE statement cannot be read")
        }
        if tokens[1].isKeyword("VIRTUAL") { throw refusal("it is a virtual table") }
        guard let open = tokens.firstIndex(where: { $0.isSymbol("(") }),
              let close = SQLTokenizer.closingParenthesis(tokens, from: open),
              !tokens[..<open].contains(where: { $0.isKeyword("AS") }) else {
            throw refusal("it was created with CREATE TABLE … AS SELECT, which has no column definitions to change")
        }
        var items: [Item] = []
        var start = open + 1
        var depth = 0
        for index in (open + 1)..<close {
            if tokens[index].isSymbol("(") { depth += 1 }
            if tokens[index].isSymbol(")") { depth -= 1 }
            if depth == 0 && tokens[index].isSymbol(",") {
                guard index > start else { throw refusal("its CREATE TABLE statement cannot be read") }
                items.append(Self.item(tokens, start, index - 1))
                start = index + 1
            }
        }
        guard close > start else { throw refusal("its CREATE TABLE statement cannot be read") }
        items.append(Self.item(tokens, start, close - 1))
        self.sql = sql
        self.tokens = tokens
        self.items = items
        let bytes = Array(sql.utf8)
        self.tail = String(decoding: bytes[tokens[close].end...], as: UTF8.self)
        let after = tokens[(close + 1)...]
        self.withoutRowID = zip(after, after.dropFirst()).contains { $0.isKeyword("WITHOUT") && $1.isKeyword("ROWID") }
    }

    private static func item(_ tokens: [SQLTokenizer.Token], _ first: Int, _ last: Int) -> Item {
        let head = tokens[first]
        let isConstraint = head.kind == .word && constraintKeywords.contains(head.text.uppercased())
        var generated = false
        var depth = 0
        for index in first...last {
            let token = tokens[index]
            if token.isSymbol("(") { depth += 1 }
            if token.isSymbol(")") { depth -= 1 }
            if depth == 0 && (token.isKeyword("GENERATED")
                              || (token.isKeyword("AS") && index < last && tokens[index + 1].isSymbol("("))) {
                generated = true
            }
        }
        return Item(first: first, last: last, columnName: isConstraint ? nil : head.identifier, isGenerated: generated)
    }

    /// The index of the item defining column `name`.
    func columnIndex(_ name: String) -> Int? {
        items.firstIndex { item in item.columnName.map { SQLTokenizer.sameIdentifier($0, name) } ?? false }
    }

    /// The item's text, with the replacements that fall inside it applied.
    func text(of item: Item, applying replacements: [TableRebuild.Replacement]) -> String {
        let start = tokens[item.first].start
        let end = tokens[item.last].end
        let bytes = Array(sql.utf8)[start..<end]
        let inside = replacements.filter { $0.start >= start && $0.end <= end }
            .map { (start: $0.start - start, end: $0.end - start, text: $0.text) }
        return SQLTokenizer.rewrite(String(decoding: bytes, as: UTF8.self), inside)
    }

    /// Token indices in `item` (after a column's own name) that refer to column `column` of this
    /// table: in column lists of `PRIMARY KEY`, `UNIQUE`, `FOREIGN KEY` and self-references, and
    /// in `CHECK` and generated-column expressions. References to other tables' columns are left out.
    func references(in item: Item, to column: String, table: String, includeKeywords: Bool) -> [Int] {
        var result: [Int] = []
        var index = item.first + (item.columnName == nil ? 0 : 1)
        while index <= item.last {
            let token = tokens[index]
            let opensGroup = index < item.last && tokens[index + 1].isSymbol("(")
            if token.isKeyword("CONSTRAINT") || token.isKeyword("COLLATE") {
                index += 2
                continue
            }
            if token.isKeyword("REFERENCES") {
                var parentIndex = index + 1
                if parentIndex + 1 <= item.last && tokens[parentIndex + 1].isSymbol(".") { parentIndex += 2 }
                guard parentIndex <= item.last else { break }
                let open = parentIndex + 1
                if open <= item.last, tokens[open].isSymbol("("),
                   let close = SQLTokenizer.closingParenthesis(tokens, from: open) {
                    if tokens[parentIndex].names(table) {
                        result += SchemaScan.listElements(tokens, open: open, close: close).filter { tokens[$0].names(column) }
                    }
                    index = close + 1
                } else {
                    index = parentIndex + 1
                }
                continue
            }
            if opensGroup, let close = SQLTokenizer.closingParenthesis(tokens, from: index + 1) {
                if token.isKeyword("KEY") || token.isKeyword("UNIQUE") {
                    result += SchemaScan.listElements(tokens, open: index + 1, close: close).filter { tokens[$0].names(column) }
                } else if token.isKeyword("CHECK") || token.isKeyword("AS") {
                    result += SchemaScan.expressionReferences(tokens, (index + 2)..<close, column: column, table: table,
                                                              includeKeywords: includeKeywords)
                }
                index = close + 1
                continue
            }
            if token.isSymbol("("), let close = SQLTokenizer.closingParenthesis(tokens, from: index) {
                index = close + 1
                continue
            }
            index += 1
        }
        return result
    }
}

/// Finds column references in stored index, trigger and view SQL.
enum SchemaScan {
    /// The first token of each comma-separated element of the group between `open` and `close`.
    static func listElements(_ tokens: [SQLTokenizer.Token], open: Int, close: Int) -> [Int] {
        var result: [Int] = []
        var expectElement = true
        var depth = 0
        for index in (open + 1)..<close {
            let token = tokens[index]
            if expectElement && depth == 0 { result.append(index) }
            expectElement = false
            if token.isSymbol("(") { depth += 1 }
            if token.isSymbol(")") { depth -= 1 }
            if depth == 0 && token.isSymbol(",") { expectElement = true }
        }
        return result
    }

    /// Identifier tokens in `range` naming `column`, unqualified or qualified by `table`; function
    /// names, collation names, other tables' columns and (unless `includeKeywords`) unquoted
    /// keywords are not references.
    static func expressionReferences(_ tokens: [SQLTokenizer.Token], _ range: Range<Int>, column: String,
                                     table: String, includeKeywords: Bool) -> [Int] {
        var result: [Int] = []
        for index in range {
            let token = tokens[index]
            guard token.kind == .word || token.kind == .quotedIdentifier, token.names(column) else { continue }
            if token.kind == .word && !includeKeywords && SQLTokenizer.keywords.contains(token.text.uppercased()) { continue }
            if index + 1 < tokens.count && tokens[index + 1].isSymbol("(") { continue }
            if index > 0 && tokens[index - 1].isKeyword("COLLATE") { continue }
            if index >= 2 && tokens[index - 1].isSymbol(".") && !tokens[index - 2].names(table) { continue }
            result.append(index)
        }
        return result
    }

    /// References to `column` in `CREATE INDEX … ON table (…) [WHERE …]`, or nil when unreadable.
    static func indexReferences(_ tokens: [SQLTokenizer.Token], column: String, table: String,
                                includeKeywords: Bool) -> [Int]? {
        guard let on = tokens.firstIndex(where: { $0.isKeyword("ON") }) else { return nil }
        var open = on + 2
        if open < tokens.count && tokens[open].isSymbol(".") { open += 2 }
        guard open < tokens.count, tokens[open].isSymbol("("),
              let close = SQLTokenizer.closingParenthesis(tokens, from: open) else { return nil }
        var result = Set(listElements(tokens, open: open, close: close).filter { tokens[$0].names(column) })
        result.formUnion(expressionReferences(tokens, (open + 1)..<close, column: column, table: table,
                                              includeKeywords: includeKeywords))
        result.formUnion(expressionReferences(tokens, (close + 1)..<tokens.count, column: column, table: table,
                                              includeKeywords: includeKeywords))
        return result.sorted()
    }

    struct TriggerScan {
        /// References that can be renamed exactly: `NEW.c`, `OLD.c`, `table.c`, `UPDATE OF c`.
        var rewritable: [Int] = []
        /// Other tokens naming the column: bare names whose table only a full parse could tell.
        var other: [Int] = []
        /// Whether the trigger's body names the table at all.
        var mentionsTable = false
    }

    /// The index of the token after the object's name in `CREATE … TRIGGER|VIEW [IF NOT EXISTS] [schema.]name`.
    private static func afterName(_ tokens: [SQLTokenizer.Token], keyword: String) -> Int? {
        guard var index = tokens.firstIndex(where: { $0.isKeyword(keyword) }) else { return nil }
        index += 1
        if index + 2 < tokens.count && tokens[index].isKeyword("IF") { index += 3 }
        if index + 1 < tokens.count && tokens[index + 1].isSymbol(".") { index += 2 }
        return index + 1 <= tokens.count ? index + 1 : nil
    }

    /// References to `column` of `table` in a trigger, or nil when unreadable. `onTable` says
    /// whether the trigger belongs to `table` (so `NEW.c` and `OLD.c` are its columns).
    static func triggerReferences(_ tokens: [SQLTokenizer.Token], column: String, table: String,
                                  onTable: Bool) -> TriggerScan? {
        guard let start = afterName(tokens, keyword: "TRIGGER"),
              let on = tokens[start...].firstIndex(where: { $0.isKeyword("ON") }) else { return nil }
        var scan = TriggerScan()
        if let of = tokens[start..<on].firstIndex(where: { $0.isKeyword("OF") }), onTable {
            var expectElement = true
            for index in (of + 1)..<on {
                if expectElement && tokens[index].names(column) { scan.rewritable.append(index) }
                expectElement = tokens[index].isSymbol(",")
            }
        }
        var body = on + 2
        if body < tokens.count && tokens[body].isSymbol(".") { body += 2 }
        guard body <= tokens.count else { return nil }
        for index in body..<tokens.count {
            let token = tokens[index]
            guard token.kind == .word || token.kind == .quotedIdentifier else { continue }
            if token.names(table) { scan.mentionsTable = true }
            guard token.names(column) else { continue }
            if token.kind == .word && SQLTokenizer.keywords.contains(token.text.uppercased()) { continue }
            if index + 1 < tokens.count && tokens[index + 1].isSymbol("(") { continue }
            if index >= 2 && tokens[index - 1].isSymbol(".") {
                let qualifier = tokens[index - 2]
                let isRowAlias = qualifier.kind == .word && ["NEW", "OLD"].contains(qualifier.text.uppercased())
                if isRowAlias {
                    if onTable { scan.rewritable.append(index) }
                } else if qualifier.names(table) {
                    if onTable { scan.rewritable.append(index) } else { scan.other.append(index) }
                }
                continue
            }
            scan.other.append(index)
        }
        return scan
    }

    /// Whether a view names `table` and a token that may be its column `column`.
    static func viewMentions(_ tokens: [SQLTokenizer.Token], column: String, table: String) -> Bool {
        guard let start = afterName(tokens, keyword: "VIEW"), start < tokens.count else { return true }
        let body = tokens[start...]
        let mentionsTable = body.contains { ($0.kind == .word || $0.kind == .quotedIdentifier) && $0.names(table) }
        let mentionsColumn = body.contains {
            ($0.kind == .word || $0.kind == .quotedIdentifier) && $0.names(column)
                && !($0.kind == .word && SQLTokenizer.keywords.contains($0.text.uppercased()))
        }
        return mentionsTable && mentionsColumn
    }

    /// `INSERT`, `UPDATE` or `DELETE`: the event a trigger fires on.
    static func triggerEvent(_ tokens: [SQLTokenizer.Token]) -> String? {
        guard let start = afterName(tokens, keyword: "TRIGGER"),
              let on = tokens[start...].firstIndex(where: { $0.isKeyword("ON") }) else { return nil }
        return tokens[start..<on].first { $0.isKeyword("INSERT") || $0.isKeyword("UPDATE") || $0.isKeyword("DELETE") }?
            .text.uppercased()
    }
}
