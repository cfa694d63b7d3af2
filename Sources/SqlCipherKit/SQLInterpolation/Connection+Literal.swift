extension Connection {
    /// Runs one statement written as an ``SQL`` literal; returns the number of rows changed. See
    /// ``DatabaseAccess/execute(literal:)``.
    @discardableResult
    public func execute(literal sql: consuming SQL) throws -> Int {
        try sql.checkPieces()
        let changed = try core.execute(sql.text, binding: sql)
        LiteralValueBuffers.giveBack(&sql.values)
        return changed
    }

    /// Runs one query written as an ``SQL`` literal and returns its rows.
    public func query(literal sql: consuming SQL) throws -> [Row] {
        try sql.checkPieces()
        let rows = try core.query(sql.text, binding: sql)
        LiteralValueBuffers.giveBack(&sql.values)
        return rows
    }

    /// Every row of a query written as an ``SQL`` literal, decoded as `T`.
    public func fetch<T: Decodable>(_ type: T.Type, literal sql: consuming SQL) throws -> [T] {
        try sql.checkPieces()
        let rows = try core.fetch(type, sql: sql.text, binding: sql)
        LiteralValueBuffers.giveBack(&sql.values)
        return rows
    }

    /// A cursor over the rows of a query written as an ``SQL`` literal (see ``Cursor``).
    ///
    /// ```swift
    /// try await db.read { conn in
    ///     let rows = try conn.cursor(literal: "SELECT * FROM \(identifier: table) WHERE day = \(day)")
    ///     while let row = try rows.next() { print(row) }
    /// }
    /// ```
    public func cursor(literal sql: SQL) throws -> Cursor<Row> {
        try Cursor.rows(core.openStatement(.literal(sql.checkedText(), sql)), core: core, body: body)
    }

    /// A cursor that decodes each row of a query written as an ``SQL`` literal as `T`.
    public func cursor<T: Decodable>(_ type: T.Type, literal sql: SQL) throws -> Cursor<T> {
        try Cursor.decoding(core.openStatement(.literal(sql.checkedText(), sql)), core: core, body: body)
    }

    /// Compiles a statement whose text is built with ``SQL``'s identifier interpolations, for
    /// values given at each run as with ``prepare(_:)``.
    ///
    /// ```swift
    /// try await db.transaction { conn in
    ///     let insert = try conn.prepare(literal: "INSERT INTO \(identifier: table)(x, y) VALUES (?, ?)")
    ///     for point in points { try insert.execute(point.x, point.y) }
    /// }
    /// ```
    ///
    /// The values of a prepared statement are given at each run, so the literal here may hold
    /// identifiers, table names and text with `?` or `:name` parameters, but no interpolated
    /// value: one is refused with ``SqlCipherError/invalidQuery(reason:)``.
    public func prepare(literal sql: SQL) throws -> PreparedStatement {
        let text = try sql.checkedText()
        guard sql.values.isEmpty else {
            throw SqlCipherError.invalidQuery(
                reason: "a prepared statement takes its values at each run; write ? in the literal and pass the "
                    + "values to execute(...) instead of interpolating them")
        }
        return try prepare(text)
    }
}
