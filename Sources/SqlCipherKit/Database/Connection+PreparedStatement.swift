extension Connection {
    /// Compiles `sql` (one statement) for running many times in this body with typed arguments.
    ///
    /// ```swift
    /// try await db.transaction { conn in
    ///     let insert = try conn.prepare("INSERT INTO readings(sensor, at, value) VALUES (?, ?, ?)")
    ///     for reading in batch {
    ///         try insert.execute(reading.sensor, reading.at, reading.value)
    ///     }
    /// }
    /// ```
    ///
    /// The statement belongs to this body (see ``PreparedStatement``): using it after the body
    /// returned throws ``SqlCipherError/connectionNotUsable``.
    /// - Throws: ``SqlCipherError/emptyStatement(sql:)``, ``SqlCipherError/multipleStatements(sql:)``,
    ///   the SQL guards' refusals (``SqlCipherError/unsafePragma(name:value:sql:)`` for `PRAGMA key`,
    ///   ``SqlCipherError/transactionControlInBody(sql:)`` for `COMMIT`, ...),
    ///   ``SqlCipherError/readOnlyViolation(sql:)`` for a statement that writes inside
    ///   ``Database/read(_:)``, and SQLite's compile errors.
    public func prepare(_ sql: String) throws -> PreparedStatement {
        try PreparedStatement(core: core, body: body, sql: sql)
    }
}
