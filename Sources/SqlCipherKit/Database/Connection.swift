/// The database as seen from inside a transaction or savepoint body.
///
/// ```swift
/// let total = try await db.transaction { conn in
///     try conn.execute("UPDATE accounts SET balance = balance - ? WHERE id = ?", 10, 1)
///     try conn.execute("UPDATE accounts SET balance = balance + ? WHERE id = ?", 10, 2)
///     return try conn.query("SELECT sum(balance) AS s FROM accounts")[0].get("s", as: Int.self)
/// }
/// ```
///
/// A `Connection` is non-copyable and is lent to the body (`borrowing`), so it cannot be stored
/// or outlive the body: the compiler rejects any attempt. It has the same raw-SQL methods as
/// ``Database``, and reads see the body's own uncommitted writes.
public struct Connection: ~Copyable {
    let core: SQLiteConnection
    /// The body this connection was lent to: cursors opened through it end with that body.
    let body: UInt64

    init(_ core: SQLiteConnection, body: UInt64) {
        self.core = core
        self.body = body
    }

    /// Runs SQL with `?` arguments; returns the number of rows changed. See ``Database/execute(_:_:)-(String,_)``.
    @discardableResult
    public func execute(_ sql: String, _ arguments: (any DatabaseValueConvertible)?...) throws -> Int {
        try core.execute(sql, binding: ArgumentList(arguments))
    }

    /// Runs SQL with its values given as one ``StatementArguments`` (positional or named);
    /// returns the number of rows changed.
    @discardableResult
    public func execute(_ sql: String, arguments: StatementArguments) throws -> Int {
        try core.execute(sql, binding: arguments)
    }

    /// Runs a query with `?` arguments and returns its rows. See ``Database/query(_:_:)-(String,_)``.
    public func query(_ sql: String, _ arguments: (any DatabaseValueConvertible)?...) throws -> [Row] {
        try core.query(sql, binding: ArgumentList(arguments))
    }

    /// Runs a query with its values given as one ``StatementArguments`` (positional or named)
    /// and returns its rows.
    public func query(_ sql: String, arguments: StatementArguments) throws -> [Row] {
        try core.query(sql, binding: arguments)
    }

    /// Runs `body` in a savepoint: when it throws, only its own work is undone and the error is
    /// rethrown; the enclosing transaction goes on. Savepoints nest to any depth
    /// (https://sqlite.org/lang_savepoint.html).
    ///
    /// ```swift
    /// try await db.transaction { conn in
    ///     try conn.execute("INSERT INTO log(msg) VALUES ('kept')")
    ///     try? conn.savepoint { conn in
    ///         try conn.execute("INSERT INTO log(msg) VALUES ('undone')")
    ///         throw CancellationError()
    ///     }
    /// }
    /// ```
    ///
    /// Unlike the bodies of ``Database``, this body runs right here, on the executor that already
    /// runs the enclosing body, so it need not be `@Sendable`: it may change the enclosing body's
    /// local variables.
    @discardableResult
    public func savepoint<T>(_ body: (borrowing Connection) throws -> T) throws -> T {
        try core.inSavepoint { try core.lend(body) }
    }

    /// A cursor over the rows of a query with `?` arguments: rows are read one at a time as you
    /// call ``Cursor/next()``, so a result of any size needs the memory of one row.
    ///
    /// ```swift
    /// try await db.read { conn in
    ///     let cursor = try conn.cursor("SELECT id, body FROM notes ORDER BY id")
    ///     while let row = try cursor.next() {
    ///         print(row.get("body", as: String.self) ?? "")
    ///     }
    /// }
    /// ```
    ///
    /// The cursor lives until this body ends (see ``Cursor``).
    /// - Throws: ``SqlCipherError/multipleStatements(sql:)``,
    ///   ``SqlCipherError/argumentCountMismatch(expected:given:sql:)`` and SQLite's errors.
    public func cursor(_ sql: String, _ arguments: (any DatabaseValueConvertible)?...) throws -> Cursor<Row> {
        try cursor(sql, arguments: StatementArguments(arguments))
    }

    /// A cursor over the rows of a query with its values given as one ``StatementArguments``
    /// (positional or named).
    public func cursor(_ sql: String, arguments: StatementArguments) throws -> Cursor<Row> {
        try Cursor.rows(core.openStatement(.sql(sql, arguments)), core: core, body: body)
    }

    /// A cursor over the rows of a ``Select`` template.
    public func cursor(_ select: Select, _ bindings: ParameterBinding...) throws -> Cursor<Row> {
        try Cursor.rows(core.openStatement(.select(select, bindings)), core: core, body: body)
    }

    /// A cursor that decodes each row of a raw SQL query as `T` (an ``Entity`` or any `Decodable`
    /// type): columns `T` does not read are ignored.
    ///
    /// ```swift
    /// try await db.read { conn in
    ///     let products = try conn.cursor(Product.self, sql: "SELECT * FROM products WHERE price < ?", 10.0)
    ///     while let product = try products.next() { print(product.name) }
    /// }
    /// ```
    public func cursor<T: Decodable>(_ type: T.Type, sql: String,
                                     _ arguments: (any DatabaseValueConvertible)?...) throws -> Cursor<T> {
        try Cursor.decoding(core.openStatement(.sql(sql, StatementArguments(arguments))), core: core, body: body)
    }

    /// A cursor that decodes each row of a ``Select`` template as `T`.
    public func cursor<T: Decodable>(_ type: T.Type, _ select: Select,
                                     _ bindings: ParameterBinding...) throws -> Cursor<T> {
        try Cursor.decoding(core.openStatement(.select(select, bindings)), core: core, body: body)
    }

    /// The rowid of the last row inserted on this connection (https://sqlite.org/c3ref/last_insert_rowid.html).
    public var lastInsertRowID: Int64 { core.lastInsertRowID }
}

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
