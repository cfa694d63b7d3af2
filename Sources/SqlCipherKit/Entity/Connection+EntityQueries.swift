extension EntityStatements {
    /// `SELECT * FROM table [WHERE …] LIMIT 1`, as run by `exists(_:where:)`: SQLite stops at the
    /// first matching row.
    static func exists<T: Entity>(_ type: T.Type, where predicate: SQLExpression?) -> Select {
        fetch(type, where: predicate, orderBy: [], limit: 1)
    }

    /// `DELETE FROM table`, with no condition: the one template of the package that deletes every
    /// row, made explicitly with `allRows: true` (a ``Delete`` without `where` refuses to render).
    static func deleteAll<T: Entity>(_ type: T.Type) -> Delete {
        Delete(T.tableName, allRows: true)
    }
}

extension SQLiteConnection {
    func exists<T: Entity>(_ type: T.Type, where predicate: SQLExpression?) throws -> Bool {
        try !query(EntityStatements.exists(type, where: predicate).render(), []).isEmpty
    }

    func deleteAll<T: Entity>(_ type: T.Type) throws -> Int {
        try execute(EntityStatements.deleteAll(type).render(), [])
    }
}

extension Connection {
    /// Whether any entity matches `predicate` (any row at all without one). See
    /// ``DatabaseAccess/exists(_:where:)``.
    ///
    /// ```swift
    /// try await db.transaction { conn in
    ///     if try !conn.exists(Product.self, where: col("name") == "Widget") {
    ///         try conn.save(Product(id: nil, name: "Widget", price: 9.99))
    ///     }
    /// }
    /// ```
    public func exists<T: Entity>(_ type: T.Type, where predicate: SQLExpression? = nil) throws -> Bool {
        try core.exists(type, where: predicate)
    }

    /// Deletes every row of the entity's table; returns the number of rows deleted. See
    /// ``DatabaseAccess/deleteAll(_:)``.
    ///
    /// ```swift
    /// try await db.transaction { conn in
    ///     try conn.deleteAll(CachedPage.self)
    ///     try conn.save(freshPages)
    /// }
    /// ```
    @discardableResult
    public func deleteAll<T: Entity>(_ type: T.Type) throws -> Int {
        try core.deleteAll(type)
    }
}
