// Reading the schema's stored SQL for ``TableRebuild``: a `CREATE TABLE` statement split into its
// column definitions and constraints, and the references to a column in stored index, trigger
// and view SQL. Both work on the tokens of ``SQLTokenizer`` (SQLTokenizer.swift, beside this file).

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
