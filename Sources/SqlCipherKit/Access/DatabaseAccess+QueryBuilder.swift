extension DatabaseAccess {
    /// Runs a ``Select`` template with values for its parameters and returns the rows.
    ///
    /// ```swift
    /// let maxPrice = Param<Double>("maxPrice")
    /// let cheap = Select(.all).from(TableName("products")).where(col("price") < maxPrice)
    /// let rows = try await db.query(cheap, maxPrice.set(50.0))
    /// ```
    /// - Throws: ``SqlCipherError/unboundParameter(name:)``, ``SqlCipherError/unknownParameter(name:)``,
    ///   ``SqlCipherError/invalidQuery(reason:)`` and SQLite's errors.
    public func query(_ select: Select, _ bindings: ParameterBinding...) async throws -> [Row] {
        try await _withConnection(.read) { try $0.core.query(select.render(), bindings) }
    }

    /// Runs a ``Select`` template with an array of parameter values.
    public func query(_ select: Select, bindings: [ParameterBinding]) async throws -> [Row] {
        try await _withConnection(.read) { try $0.core.query(select.render(), bindings) }
    }

    /// Runs an ``Insert`` template; returns the number of rows inserted (0 when ignored).
    @discardableResult
    public func execute(_ insert: Insert, _ bindings: ParameterBinding...) async throws -> Int {
        try await _withConnection(.write) { try $0.core.execute(insert.render(), bindings) }
    }

    /// Runs an ``Insert`` template with an array of parameter values.
    @discardableResult
    public func execute(_ insert: Insert, bindings: [ParameterBinding]) async throws -> Int {
        try await _withConnection(.write) { try $0.core.execute(insert.render(), bindings) }
    }

    /// Runs an ``Update`` template; returns the number of rows changed.
    ///
    /// ```swift
    /// try await db.execute(updatePrice, newPrice.set(39.99), targetId.set(7))
    /// ```
    @discardableResult
    public func execute(_ update: Update, _ bindings: ParameterBinding...) async throws -> Int {
        try await _withConnection(.write) { try $0.core.execute(update.render(), bindings) }
    }

    /// Runs an ``Update`` template with an array of parameter values.
    @discardableResult
    public func execute(_ update: Update, bindings: [ParameterBinding]) async throws -> Int {
        try await _withConnection(.write) { try $0.core.execute(update.render(), bindings) }
    }

    /// Runs a ``Delete`` template; returns the number of rows deleted.
    /// - Throws: ``SqlCipherError/deleteWithoutWhere(table:)`` for a delete without a condition
    ///   that was not created with `allRows: true`.
    @discardableResult
    public func execute(_ delete: Delete, _ bindings: ParameterBinding...) async throws -> Int {
        try await _withConnection(.write) { try $0.core.execute(delete.render(), bindings) }
    }

    /// Runs a ``Delete`` template with an array of parameter values.
    @discardableResult
    public func execute(_ delete: Delete, bindings: [ParameterBinding]) async throws -> Int {
        try await _withConnection(.write) { try $0.core.execute(delete.render(), bindings) }
    }
}
