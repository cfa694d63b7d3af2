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
        // Enforced foreign keys are harmless only for a table that no foreign key references
        // (MigrationContext refuses the others first, with what to declare).
        guard try !connection.foreignKeysEnabled() || connection.tableReferencing(table) == nil else {
            throw refusal("a table rebuild needs foreign keys off while a foreign key references the table; run it from a migration")
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

        // Keep rowids, so that anything that stored them still finds its rows. An INTEGER PRIMARY
        // KEY column is the rowid and is copied as a column; any other rowid table (a declared key
        // that is not the rowid, `INTEGER PRIMARY KEY DESC` included) copies it by name.
        let keyKind = try connection.primaryKey(of: tableName, schema: "main").kind
        let usedNames = parsed.items.compactMap(\.columnName) + newNames
        let rowidAlias = (keyKind == .withoutRowID || keyKind == .rowIDAlias) ? nil
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
            for key in try connection.foreignKeys(of: entry.name, schema: "main")
            where SQLTokenizer.sameIdentifier(key.table, tableName)
                && key.columns.contains(where: { $0.to.map { SQLTokenizer.sameIdentifier($0, column) } ?? false }) {
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
                        // Generated columns cannot be assigned (table_info, on SQLite before 3.26, does not list them).
                        let columns = try connection.columns(in: entry.table, schema: "main")
                            .filter { $0.kind == .ordinary || $0.kind == .unknown }.map(\.name)
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
