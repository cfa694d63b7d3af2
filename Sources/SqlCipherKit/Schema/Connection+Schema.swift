extension Connection {
    /// Whether `schema` holds a table named `table` (ASCII case ignored, as SQLite does); false for
    /// a view or an index of that name.
    ///
    /// ```swift
    /// try await db.transaction { conn in
    ///     if try !conn.tableExists("audit") {
    ///         try conn.execute("CREATE TABLE audit(at REAL, what TEXT)")
    ///     }
    /// }
    /// ```
    ///
    /// Virtual tables and SQLite's own tables listed in the schema (`sqlite_sequence`,
    /// `sqlite_stat1`) count as tables; the schema table itself (`sqlite_master`) is not listed in
    /// itself and does not. See <doc:SchemaIntrospection> and https://sqlite.org/schematab.html.
    /// - Parameters:
    ///   - table: The table's name, unquoted (any characters but NUL).
    ///   - schema: `"main"` (the default), `"temp"`, or the name of an attached database.
    /// - Throws: ``SqlCipherError/schemaNotFound(schema:available:)`` for a schema that is not
    ///   attached (a missing table is `false`, not an error).
    public func tableExists(_ table: String, in schema: String = "main") throws -> Bool {
        try core.tableExists(table, schema: schema)
    }

    /// The columns of a table or a view, in declaration order
    /// (https://sqlite.org/pragma.html#pragma_table_xinfo).
    ///
    /// ```swift
    /// let names = try await db.read { conn in
    ///     try conn.columns(in: "notes").map(\.name)   // ["id", "body", "created"]
    /// }
    /// ```
    ///
    /// On SQLite 3.26 and later (SQLCipher 4) this reads `PRAGMA table_xinfo`: every column,
    /// with hidden and generated columns marked in ``ColumnInfo/kind``. SQLCipher 3.4.1's SQLite
    /// 3.15 only has `PRAGMA table_info`: ``ColumnInfo/Kind/unknown`` for every column, and a
    /// virtual table's hidden columns are not in the list.
    /// - Throws: ``SqlCipherError/tableNotFound(table:schema:)`` when `schema` holds no table or
    ///   view named `table`; ``SqlCipherError/schemaNotFound(schema:available:)``.
    public func columns(in table: String, schema: String = "main") throws -> [ColumnInfo] {
        try core.columns(in: table, schema: schema)
    }

    /// The indexes of a table, by name: those made by `CREATE INDEX` and those SQLite made for
    /// `UNIQUE` and `PRIMARY KEY` constraints (https://sqlite.org/pragma.html#pragma_index_list).
    ///
    /// ```swift
    /// let unique = try await db.read { conn in
    ///     try conn.indexes(on: "users").filter(\.isUnique).map(\.name)
    /// }
    /// ```
    ///
    /// An `INTEGER PRIMARY KEY` is the rowid and has no index. An indexed expression is a column
    /// whose ``IndexInfo/Column/name`` is nil.
    /// - Throws: ``SqlCipherError/tableNotFound(table:schema:)`` when `schema` holds no table
    ///   named `table` (a view included); ``SqlCipherError/schemaNotFound(schema:available:)``.
    public func indexes(on table: String, schema: String = "main") throws -> [IndexInfo] {
        try core.indexes(on: table, schema: schema)
    }

    /// What identifies a row of a table: its declared primary key, or the rowid
    /// (https://sqlite.org/lang_createtable.html#rowid).
    ///
    /// ```swift
    /// let key = try await db.read { conn in try conn.primaryKey(of: "notes") }
    /// if key.isRowID { print("rows are identified by \(key.columns)") }
    /// ```
    /// - Throws: ``SqlCipherError/tableNotFound(table:schema:)`` when `schema` holds no table
    ///   named `table` (a view included); ``SqlCipherError/schemaNotFound(schema:available:)``.
    public func primaryKey(of table: String, schema: String = "main") throws -> PrimaryKeyInfo {
        try core.primaryKey(of: table, schema: schema)
    }

    /// The foreign keys of a table, one per `REFERENCES` clause or `FOREIGN KEY` constraint, in
    /// SQLite's order (https://sqlite.org/pragma.html#pragma_foreign_key_list).
    ///
    /// ```swift
    /// let parents = try await db.read { conn in
    ///     try conn.foreignKeys(of: "line_items").map(\.table)   // ["orders"]
    /// }
    /// ```
    ///
    /// They are reported whether or not `PRAGMA foreign_keys` enforces them.
    /// - Throws: ``SqlCipherError/tableNotFound(table:schema:)`` when `schema` holds no table
    ///   named `table` (a view included); ``SqlCipherError/schemaNotFound(schema:available:)``.
    public func foreignKeys(of table: String, schema: String = "main") throws -> [ForeignKeyInfo] {
        try core.foreignKeys(of: table, schema: schema)
    }

    /// The triggers of a schema, by name, with the table each fires on
    /// (https://sqlite.org/schematab.html).
    ///
    /// ```swift
    /// let onNotes = try await db.read { conn in
    ///     try conn.triggers().filter { $0.table == "notes" }.map(\.name)
    /// }
    /// ```
    /// - Throws: ``SqlCipherError/schemaNotFound(schema:available:)``.
    public func triggers(schema: String = "main") throws -> [TriggerInfo] {
        try core.triggers(schema: schema)
    }

    /// The names of the views of a schema, in order (https://sqlite.org/schematab.html).
    ///
    /// ```swift
    /// let views = try await db.read { conn in try conn.views(schema: "archive") }
    /// ```
    ///
    /// ``columns(in:schema:)`` describes a view's columns.
    /// - Throws: ``SqlCipherError/schemaNotFound(schema:available:)``.
    public func views(schema: String = "main") throws -> [String] {
        try core.views(schema: schema)
    }
}
