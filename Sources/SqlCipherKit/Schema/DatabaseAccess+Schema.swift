/// Schema introspection on ``Database`` and ``DatabasePool``: each method is the ``Connection``
/// method of the same name, run in one ``DatabaseAccess/read(_:)`` (on a pool, on a reader, from a
/// snapshot of the last commit). To read several answers from the same state of the schema, call
/// the ``Connection`` methods inside one `read`. See <doc:SchemaIntrospection>.
extension DatabaseAccess {
    /// Whether `schema` holds a table named `table`. See ``Connection/tableExists(_:in:)``.
    ///
    /// ```swift
    /// if try await !db.tableExists("notes") { try await db.migrate(migrations) }
    /// ```
    public func tableExists(_ table: String, in schema: String = "main") async throws -> Bool {
        try await read { try $0.tableExists(table, in: schema) }
    }

    /// The columns of a table or a view. See ``Connection/columns(in:schema:)``.
    ///
    /// ```swift
    /// let required = try await db.columns(in: "notes").filter { $0.isNotNull && $0.defaultValueSQL == nil }
    /// ```
    public func columns(in table: String, schema: String = "main") async throws -> [ColumnInfo] {
        try await read { try $0.columns(in: table, schema: schema) }
    }

    /// The indexes of a table. See ``Connection/indexes(on:schema:)``.
    ///
    /// ```swift
    /// let partial = try await db.indexes(on: "tasks").filter(\.isPartial)
    /// ```
    public func indexes(on table: String, schema: String = "main") async throws -> [IndexInfo] {
        try await read { try $0.indexes(on: table, schema: schema) }
    }

    /// The primary key of a table, or its rowid. See ``Connection/primaryKey(of:schema:)``.
    ///
    /// ```swift
    /// let key = try await db.primaryKey(of: "pairs")   // .withoutRowID, columns ["a", "b"]
    /// ```
    public func primaryKey(of table: String, schema: String = "main") async throws -> PrimaryKeyInfo {
        try await read { try $0.primaryKey(of: table, schema: schema) }
    }

    /// The foreign keys of a table. See ``Connection/foreignKeys(of:schema:)``.
    ///
    /// ```swift
    /// let cascades = try await db.foreignKeys(of: "line_items").filter { $0.onDelete == .cascade }
    /// ```
    public func foreignKeys(of table: String, schema: String = "main") async throws -> [ForeignKeyInfo] {
        try await read { try $0.foreignKeys(of: table, schema: schema) }
    }

    /// The triggers of a schema. See ``Connection/triggers(schema:)``.
    ///
    /// ```swift
    /// let names = try await db.triggers().map(\.name)
    /// ```
    public func triggers(schema: String = "main") async throws -> [TriggerInfo] {
        try await read { try $0.triggers(schema: schema) }
    }

    /// The names of the views of a schema. See ``Connection/views(schema:)``.
    ///
    /// ```swift
    /// let views = try await db.views()
    /// ```
    public func views(schema: String = "main") async throws -> [String] {
        try await read { try $0.views(schema: schema) }
    }
}
