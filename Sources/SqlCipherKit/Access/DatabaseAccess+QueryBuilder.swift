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

    /// Runs a ``Select`` template with its parameter values given as one ``StatementArguments``
    /// (a dictionary literal keyed by the ``Param`` names, or built from ``Param/set(_:)`` values).
    public func query(_ select: Select, arguments: StatementArguments) async throws -> [Row] {
        try await _withConnection(.read) { try $0.core.query(select.render(), arguments.templateBindings()) }
    }

    /// Runs an ``Insert``, ``Update`` or ``Delete`` template with values for its ``Param``s;
    /// returns the number of rows it inserted (0 when ignored), changed or deleted.
    ///
    /// ```swift
    /// try await db.execute(updatePrice, newPrice.set(39.99), targetId.set(7))
    /// ```
    /// - Throws: ``SqlCipherError/deleteWithoutWhere(table:)`` for a delete without a condition
    ///   that was not created with `allRows: true`, ``SqlCipherError/unboundParameter(name:)``,
    ///   ``SqlCipherError/unknownParameter(name:)`` and SQLite's errors.
    @discardableResult
    public func execute(_ statement: some DataChangeStatement, _ bindings: ParameterBinding...) async throws -> Int {
        try await _withConnection(.write) { try $0.core.execute(statement.render(), bindings) }
    }

    /// Runs an ``Insert``, ``Update`` or ``Delete`` template with its parameter values given as one
    /// ``StatementArguments`` (a dictionary literal keyed by the ``Param`` names, or built from
    /// ``Param/set(_:)`` values).
    @discardableResult
    public func execute(_ statement: some DataChangeStatement, arguments: StatementArguments) async throws -> Int {
        try await _withConnection(.write) { try $0.core.execute(statement.render(), arguments.templateBindings()) }
    }
}
