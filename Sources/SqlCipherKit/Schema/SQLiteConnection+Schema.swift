import CSqlCipherBridge

/// Schema introspection on one connection: the one implementation behind the methods of
/// ``Connection`` and ``DatabaseAccess``, and what the package's own code (migrations, table
/// rebuilds) reads the schema with.
///
/// Every statement here is prepared outside the statement cache: a pragma's text names the table
/// (its argument cannot be bound), so each table would leave its own entries in the cache and push
/// out the statements the application reuses. Names reach SQL only through
/// ``SQLRenderer/quoteIdentifier(_:)`` (pragma arguments, which cannot be bound: the table-valued
/// `pragma_table_info(?)` needs SQLite 3.16) or as bound values (`sqlite_master` lookups).
extension SQLiteConnection {
    /// Whether the loaded SQLite has `PRAGMA table_xinfo` (3.26.0+), which reports hidden and
    /// generated columns.
    var supportsTableXInfo: Bool { scb_sqlite_version_number() >= 3_026_000 }

    /// Runs one schema statement outside the cache and returns its rows.
    private func schemaRows(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> [Row] {
        let statement = try singleStatement(sql)
        try statement.bind(ArgumentList(arguments))
        return try statement.fetchAll()
    }

    /// The quoted name of `schema` as this connection knows it (`main`, `temp` or an attached
    /// name; ASCII case ignored, as SQLite does).
    /// - Throws: ``SqlCipherError/schemaNotFound(schema:available:)``.
    func quotedSchema(_ schema: String) throws -> String {
        let names = try schemaRows("PRAGMA database_list").compactMap { $0.get(1, as: String.self) }
        if names.contains(where: { SQLTokenizer.sameIdentifier($0, schema) }) || SQLTokenizer.sameIdentifier(schema, "temp") {
            return try SQLRenderer.quoteIdentifier(schema)
        }
        var available = names
        if !available.contains("temp") { available.append("temp") }
        throw SqlCipherError.schemaNotFound(schema: schema, available: available)
    }

    /// The schema table of a schema whose quoted name is `quoted`: the temp schema's is named
    /// `sqlite_temp_master` on every SQLite (SQLite 3.15 fails `temp.sqlite_master` with "no such
    /// table").
    private static func schemaTable(_ schema: String, quoted: String) -> String {
        quoted + (SQLTokenizer.sameIdentifier(schema, "temp") ? ".sqlite_temp_master" : ".sqlite_master")
    }

    /// The schema table of `schema`, qualified, after checking that the connection has `schema`.
    private func schemaTable(_ schema: String) throws -> String {
        Self.schemaTable(schema, quoted: try quotedSchema(schema))
    }

    /// The type (`table` or `view`) of the object named `name` in the schema table `master`, or nil.
    /// Names compare as SQLite compares identifiers: ASCII case ignored (`COLLATE NOCASE`).
    private func objectType(_ name: String, master: String) throws -> String? {
        try schemaRows("SELECT type FROM \(master) WHERE type IN ('table', 'view') AND name = ? COLLATE NOCASE",
                       [.text(name)]).first?.get(0, as: String.self)
    }

    /// The quoted schema and table for a pragma about `table`, after checking that it exists.
    /// - Throws: ``SqlCipherError/schemaNotFound(schema:available:)``,
    ///   ``SqlCipherError/tableNotFound(table:schema:)`` (also for a view unless `allowingView`).
    private func pragmaTarget(_ table: String, schema: String, allowingView: Bool = false) throws -> (schema: String, table: String) {
        let quoted = try quotedSchema(schema)
        let type = try objectType(table, master: Self.schemaTable(schema, quoted: quoted))
        guard type == "table" || (allowingView && type == "view") else {
            throw SqlCipherError.tableNotFound(table: table, schema: schema)
        }
        return (quoted, try SQLRenderer.quoteIdentifier(table))
    }

    func tableExists(_ table: String, schema: String) throws -> Bool {
        try objectType(table, master: schemaTable(schema)) == "table"
    }

    func columns(in table: String, schema: String) throws -> [ColumnInfo] {
        let target = try pragmaTarget(table, schema: schema, allowingView: true)
        do {
            return try columnRows(target)
        } catch SqlCipherError.sqlite(let code, let extended, let message, let sql) where code == 1 {
            // SQLite finds a view's columns by compiling its SELECT, which fails once a table,
            // column or function it names is gone: SQLite's bare "no such table: main.base" names
            // neither the view nor what to do. (A table's columns are read from the schema, not
            // compiled, so SQLITE_ERROR here is the view's.)
            throw SqlCipherError.sqlite(
                code: code, extendedCode: extended,
                message: message + ": the view \(SQLRenderer.visible(table)) no longer compiles, so SQLite cannot tell "
                    + "its columns. Recreate it (DROP VIEW, then CREATE VIEW) over tables, columns and functions that "
                    + "exist, register the function it calls on this connection, or drop it",
                sql: sql)
        }
    }

    /// `table_xinfo` where SQLite has it, else `table_info` with every kind unknown. Both start
    /// with the same six columns: cid, name, type, notnull, dflt_value, pk.
    private func columnRows(_ target: (schema: String, table: String)) throws -> [ColumnInfo] {
        let xinfo = supportsTableXInfo
        let pragma = xinfo ? "table_xinfo" : "table_info"
        return try schemaRows("PRAGMA \(target.schema).\(pragma)(\(target.table))").map { row in
            let kind: ColumnInfo.Kind
            if xinfo {
                switch row.get(6, as: Int.self) ?? 0 {
                case 1: kind = .hidden
                case 2: kind = .generatedVirtual
                case 3: kind = .generatedStored
                default: kind = .ordinary
                }
            } else {
                kind = .unknown
            }
            return ColumnInfo(name: row.get(1, as: String.self) ?? "", declaredType: row.get(2, as: String.self) ?? "",
                              isNotNull: (row.get(3, as: Int.self) ?? 0) != 0, defaultValueSQL: row.get(4, as: String.self),
                              primaryKeyIndex: row.get(5, as: Int.self) ?? 0, kind: kind)
        }
    }

    func indexes(on table: String, schema: String) throws -> [IndexInfo] {
        let target = try pragmaTarget(table, schema: schema)
        return try indexList(target).map { entry in
            let columns = try indexColumns(entry.name, quotedSchema: target.schema).filter(\.isKey).map(\.column)
            return IndexInfo(name: entry.name, isUnique: entry.isUnique, columns: columns, isPartial: entry.isPartial,
                             origin: entry.origin)
        }.sorted { $0.name < $1.name }
    }

    /// The rows of `PRAGMA index_list` (seq, name, unique, origin, partial; all five since 3.8.9).
    private func indexList(_ target: (schema: String, table: String)) throws
        -> [(name: String, isUnique: Bool, origin: IndexInfo.Origin, isPartial: Bool)] {
        try schemaRows("PRAGMA \(target.schema).index_list(\(target.table))").compactMap { row in
            guard let name = row.get(1, as: String.self) else { return nil }
            return (name, (row.get(2, as: Int.self) ?? 0) != 0,
                    IndexInfo.Origin(rawValue: row.get(3, as: String.self) ?? "c") ?? .createIndex,
                    (row.get(4, as: Int.self) ?? 0) != 0)
        }
    }

    /// The rows of `PRAGMA index_xinfo` (seqno, cid, name, desc, coll, key; since 3.9.0): every
    /// column of the index's entries, key columns first, then the rowid (cid -1) or, for a
    /// `WITHOUT ROWID` table, the remaining table columns. An expression column has cid -2.
    private func indexColumns(_ index: String, quotedSchema: String) throws
        -> [(column: IndexInfo.Column, cid: Int, isKey: Bool)] {
        try schemaRows("PRAGMA \(quotedSchema).index_xinfo(\(try SQLRenderer.quoteIdentifier(index)))").map { row in
            let cid = row.get(1, as: Int.self) ?? -2
            let column = IndexInfo.Column(name: cid == -2 ? nil : row.get(2, as: String.self),
                                          isDescending: (row.get(3, as: Int.self) ?? 0) != 0,
                                          collation: row.get(4, as: String.self) ?? "BINARY")
            return (column, cid, (row.get(5, as: Int.self) ?? 0) != 0)
        }
    }

    func primaryKey(of table: String, schema: String) throws -> PrimaryKeyInfo {
        let target = try pragmaTarget(table, schema: schema)
        let columns = try columnRows(target)
        let key = columns.filter { $0.primaryKeyIndex > 0 }.sorted { $0.primaryKeyIndex < $1.primaryKeyIndex }.map(\.name)
        guard !key.isEmpty else {
            let name = ["rowid", "_rowid_", "oid"].first { alias in !columns.contains { SQLTokenizer.sameIdentifier($0.name, alias) } }
            return PrimaryKeyInfo(columns: name.map { [$0] } ?? [], kind: .hiddenRowID)
        }
        // A declared key that is the rowid needs no index; any other key has one of origin "pk",
        // whose entries end with the rowid (cid -1) in a table that has one.
        guard let keyIndex = try indexList(target).first(where: { $0.origin == .primaryKey }) else {
            return PrimaryKeyInfo(columns: key, kind: .rowIDAlias)
        }
        let entries = try indexColumns(keyIndex.name, quotedSchema: target.schema)
        return PrimaryKeyInfo(columns: key, kind: entries.contains { $0.cid == -1 } ? .columns : .withoutRowID)
    }

    func foreignKeys(of table: String, schema: String) throws -> [ForeignKeyInfo] {
        let target = try pragmaTarget(table, schema: schema)
        // id, seq, table, from, to, on_update, on_delete, match
        let rows = try schemaRows("PRAGMA \(target.schema).foreign_key_list(\(target.table))")
        var keys: [Int: (table: String, pairs: [(seq: Int, pair: ForeignKeyInfo.ColumnPair)], onUpdate: String, onDelete: String)] = [:]
        for row in rows {
            let id = row.get(0, as: Int.self) ?? 0
            let pair = ForeignKeyInfo.ColumnPair(from: row.get(3, as: String.self) ?? "", to: row.get(4, as: String.self))
            keys[id, default: (row.get(2, as: String.self) ?? "", [], row.get(5, as: String.self) ?? "",
                               row.get(6, as: String.self) ?? "")].pairs.append((row.get(1, as: Int.self) ?? 0, pair))
        }
        return keys.keys.sorted().map { id in
            let key = keys[id]!
            return ForeignKeyInfo(id: id, table: key.table, columns: key.pairs.sorted { $0.seq < $1.seq }.map(\.pair),
                                  onUpdate: Self.foreignKeyAction(key.onUpdate), onDelete: Self.foreignKeyAction(key.onDelete))
        }
    }

    /// SQLite reports the five actions by their SQL spelling, which are ``ForeignKeyAction``'s raw
    /// values; anything else cannot come from SQLite and reads as its default, `NO ACTION`.
    private static func foreignKeyAction(_ text: String) -> ForeignKeyAction {
        ForeignKeyAction(rawValue: text.uppercased()) ?? .noAction
    }

    func triggers(schema: String) throws -> [TriggerInfo] {
        try schemaRows("SELECT name, tbl_name FROM \(schemaTable(schema)) WHERE type = 'trigger' ORDER BY name")
            .map { TriggerInfo(name: $0.get(0, as: String.self) ?? "", table: $0.get(1, as: String.self) ?? "") }
    }

    func views(schema: String) throws -> [String] {
        try schemaRows("SELECT name FROM \(schemaTable(schema)) WHERE type = 'view' ORDER BY name")
            .compactMap { $0.get(0, as: String.self) }
    }
}
