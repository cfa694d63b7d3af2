extension DatabaseAccess {
    /// Runs one statement written as an ``SQL`` literal, its interpolated values bound; returns the
    /// number of rows changed.
    ///
    /// ```swift
    /// try await db.execute(literal: "UPDATE notes SET title = \(title) WHERE id = \(id)")
    /// try await db.execute(literal: "DELETE FROM \(identifier: table) WHERE id IN \(list: ids)")
    /// ```
    ///
    /// The statement goes through every check raw SQL goes through (<doc:RawSQLGuards>), and
    /// cancellation works as for ``execute(_:_:)-(String,_)``.
    /// - Throws: ``SqlCipherError/multipleStatements(sql:)`` for text of several statements with
    ///   values,
    ///   ``SqlCipherError/argumentCountMismatch(expected:given:sql:)`` for a `?` in the text,
    ///   ``SqlCipherError/invalidQuery(reason:)`` for an identifier that cannot be quoted, and
    ///   SQLite's errors.
    @discardableResult
    public func execute(literal sql: SQL) async throws -> Int {
        try await _withConnection(.write) { try $0.core.execute(sql.checkedText(), binding: sql) }
    }

    /// Runs one query written as an ``SQL`` literal and returns every row.
    ///
    /// ```swift
    /// let rows = try await db.query(literal: "SELECT title FROM notes WHERE owner = \(owner) ORDER BY \(identifier: sortColumn)")
    /// ```
    public func query(literal sql: SQL) async throws -> [Row] {
        try await _withConnection(.read) { try $0.core.query(sql.checkedText(), binding: sql) }
    }

    /// Every row of a query written as an ``SQL`` literal, decoded as `T` (an ``Entity`` or any
    /// `Decodable` type): columns `T` does not read are ignored.
    ///
    /// ```swift
    /// let mine = try await db.fetch(Note.self, literal: "SELECT * FROM notes WHERE owner = \(owner)")
    /// ```
    public func fetch<T: Decodable & Sendable>(_ type: T.Type, literal sql: SQL) async throws -> [T] {
        try await _withConnection(.read) { try $0.core.fetch(type, sql: sql.checkedText(), binding: sql) }
    }

    /// The rows of a query written as an ``SQL`` literal, read in batches of `batchSize` as the
    /// loop asks for them (see ``DatabaseStream``).
    ///
    /// ```swift
    /// for try await row in db.stream(literal: "SELECT * FROM events WHERE day = \(day)") { try handle(row) }
    /// ```
    public func stream(literal sql: SQL, batchSize: Int = 256) -> DatabaseStream<Row> {
        DatabaseStream(source: StreamSource(self), query: Result { .literal(try sql.checkedText(), sql) },
                       batchSize: max(1, batchSize), transform: { $0 })
    }

    /// The rows of a query written as an ``SQL`` literal decoded as `T`, read in batches.
    public func stream<T: Decodable & Sendable>(_ type: T.Type, literal sql: SQL,
                                                batchSize: Int = 256) -> DatabaseStream<T> {
        DatabaseStream(source: StreamSource(self), query: Result { .literal(try sql.checkedText(), sql) },
                       batchSize: max(1, batchSize), transform: { try RowDecoder.decode(type, rows: $0) })
    }
}
