extension DatabaseAccess {
    /// Whether any entity matches `predicate` (any row at all without one).
    ///
    /// ```swift
    /// let taken = try await db.exists(User.self, where: col("email") == email)
    /// ```
    ///
    /// Runs `SELECT * … LIMIT 1`: SQLite stops at the first matching row, where
    /// ``count(_:where:)`` would visit them all.
    public func exists<T: Entity>(_ type: T.Type, where predicate: SQLExpression? = nil) async throws -> Bool {
        try await _withConnection(.read) { try $0.core.exists(type, where: predicate) }
    }

    /// Deletes every row of the entity's table; returns the number of rows deleted.
    ///
    /// ```swift
    /// let removed = try await db.deleteAll(CachedPage.self)
    /// ```
    ///
    /// The explicit way to empty a table: a ``Delete`` without a `where` clause refuses to render
    /// (``SqlCipherError/deleteWithoutWhere(table:)``) so that a forgotten condition cannot delete
    /// every row, and ``delete(_:where:)`` needs a condition. It runs `DELETE FROM table` as
    /// `Delete(table, allRows: true)` does, through the same path as the other deletes: delete
    /// triggers fire and foreign-key actions apply, as for any `DELETE`.
    @discardableResult
    public func deleteAll<T: Entity>(_ type: T.Type) async throws -> Int {
        try await _withConnection(.write) { try $0.core.deleteAll(type) }
    }
}
