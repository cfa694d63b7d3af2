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

    init(_ core: SQLiteConnection) {
        self.core = core
    }

    /// Runs SQL with `?` arguments; returns the number of rows changed. See ``Database/execute(_:_:)-(String,_)``.
    @discardableResult
    public func execute(_ sql: String, _ arguments: (any DatabaseValueConvertible)?...) throws -> Int {
        try core.execute(sql, binding: ArgumentList(arguments))
    }

    /// Runs SQL with an array of arguments; returns the number of rows changed.
    @discardableResult
    public func execute(_ sql: String, arguments: [(any DatabaseValueConvertible)?]) throws -> Int {
        try core.execute(sql, binding: ArgumentList(arguments))
    }

    /// Runs a query with `?` arguments and returns its rows. See ``Database/query(_:_:)-(String,_)``.
    public func query(_ sql: String, _ arguments: (any DatabaseValueConvertible)?...) throws -> [Row] {
        try core.query(sql, binding: ArgumentList(arguments))
    }

    /// Runs a query with an array of arguments and returns its rows.
    public func query(_ sql: String, arguments: [(any DatabaseValueConvertible)?]) throws -> [Row] {
        try core.query(sql, binding: ArgumentList(arguments))
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
    @discardableResult
    public func savepoint<T>(_ body: (borrowing Connection) throws -> T) throws -> T {
        try core.inSavepoint { try body(self) }
    }

    /// The rowid of the last row inserted on this connection (https://sqlite.org/c3ref/last_insert_rowid.html).
    public var lastInsertRowID: Int64 { core.lastInsertRowID }
}
