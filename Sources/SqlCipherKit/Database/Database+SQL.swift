extension Database {
    /// Runs SQL with `?` positional arguments; returns the number of rows changed
    /// (https://sqlite.org/c3ref/changes.html), 0 for statements that change nothing.
    ///
    /// ```swift
    /// try await db.execute("UPDATE products SET price = ? WHERE id = ?", 39.99, 7)
    /// ```
    ///
    /// Text that holds several statements runs them all when no arguments are given (statements
    /// before a failing one stay applied, as with `sqlite3_exec`; wrap them in ``transaction(_:)``
    /// to make them atomic). With arguments the text must be exactly one statement, and there must
    /// be one argument per parameter.
    /// - Throws: ``SqlCipherError/argumentCountMismatch(expected:given:sql:)``,
    ///   ``SqlCipherError/multipleStatements(sql:)``, ``SqlCipherError/sqlite(code:extendedCode:message:sql:)``.
    @discardableResult
    public func execute(_ sql: String, _ arguments: (any DatabaseValueConvertible)?...) throws -> Int {
        try liveConnection().execute(sql, binding: ArgumentList(arguments))
    }

    /// Runs SQL with an array of arguments; returns the number of rows changed.
    @discardableResult
    public func execute(_ sql: String, arguments: [(any DatabaseValueConvertible)?]) throws -> Int {
        try liveConnection().execute(sql, binding: ArgumentList(arguments))
    }

    /// Runs one query with `?` positional arguments and returns every row.
    ///
    /// ```swift
    /// let rows = try await db.query("SELECT id, name FROM products WHERE price < ? ORDER BY price", 50.0)
    /// let names = rows.compactMap { $0.get("name", as: String.self) }
    /// ```
    public func query(_ sql: String, _ arguments: (any DatabaseValueConvertible)?...) throws -> [Row] {
        try liveConnection().query(sql, binding: ArgumentList(arguments))
    }

    /// Runs one query with an array of arguments and returns every row.
    public func query(_ sql: String, arguments: [(any DatabaseValueConvertible)?]) throws -> [Row] {
        try liveConnection().query(sql, binding: ArgumentList(arguments))
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT` and returns its value; rolls back and rethrows
    /// when `body` (or the commit) throws (https://sqlite.org/lang_transaction.html).
    ///
    /// ```swift
    /// let orderID = try await db.transaction { conn in
    ///     try conn.execute("INSERT INTO orders(customer) VALUES (?)", "Alice")
    ///     let id = conn.lastInsertRowID
    ///     try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
    ///     return id
    /// }
    /// ```
    ///
    /// `IMMEDIATE` takes the write lock at the start, so a transaction never fails half-way with
    /// `SQLITE_BUSY` when it first writes. Inside a transaction opened by hand (`execute("BEGIN")`)
    /// the body runs in a savepoint instead.
    @discardableResult
    public func transaction<T: Sendable>(_ body: (borrowing Connection) throws -> T) throws -> T {
        let core = try liveConnection()
        // A named local, not a temporary: Swift 6.3.1 crashes in release builds (GenericSpecializer,
        // "Cannot initialize a nonCopyable type with a guaranteed value") when the ~Copyable
        // Connection is built inline as the argument.
        return try core.inTransaction {
            let connection = Connection(core)
            return try body(connection)
        }
    }

    /// Runs `body` in a savepoint: a throw undoes only the body's work. Outside a transaction it
    /// behaves like ``transaction(_:)`` with a deferred begin.
    @discardableResult
    public func savepoint<T: Sendable>(_ body: (borrowing Connection) throws -> T) throws -> T {
        let core = try liveConnection()
        // A named local for the same compiler crash as in transaction(_:).
        return try core.inSavepoint {
            let connection = Connection(core)
            return try body(connection)
        }
    }
}
