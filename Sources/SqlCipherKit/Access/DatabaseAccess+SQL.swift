extension DatabaseAccess {
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
    ///
    /// Cancelling the task that awaits the call interrupts the statement and throws
    /// `CancellationError`; what an interrupted statement had changed is undone by SQLite.
    /// - Throws: ``SqlCipherError/argumentCountMismatch(expected:given:sql:)``,
    ///   ``SqlCipherError/multipleStatements(sql:)``, ``SqlCipherError/sqlite(code:extendedCode:message:sql:)``,
    ///   `CancellationError`.
    @discardableResult
    public func execute(_ sql: String, _ arguments: (any DatabaseValueConvertible)?...) async throws -> Int {
        try await _withConnection(.write) { try $0.core.execute(sql, binding: ArgumentList(arguments)) }
    }

    /// Runs SQL with its values given as one ``StatementArguments``: positional (an array
    /// literal) or named (a dictionary literal); returns the number of rows changed.
    ///
    /// ```swift
    /// try await db.execute("UPDATE products SET price = :price WHERE id = :id", arguments: ["price": 39.99, "id": 7])
    /// ```
    @discardableResult
    public func execute(_ sql: String, arguments: StatementArguments) async throws -> Int {
        try await _withConnection(.write) { try $0.core.execute(sql, binding: arguments) }
    }

    /// Runs one query with `?` positional arguments and returns every row.
    ///
    /// ```swift
    /// let rows = try await db.query("SELECT id, name FROM products WHERE price < ? ORDER BY price", 50.0)
    /// let names = rows.compactMap { $0.get("name", as: String.self) }
    /// ```
    ///
    /// The whole result is built in memory. For large results read rows one at a time with
    /// `db.stream(...)` or a cursor (``Connection``) inside ``read(_:)``.
    public func query(_ sql: String, _ arguments: (any DatabaseValueConvertible)?...) async throws -> [Row] {
        try await _withConnection(.read) { try $0.core.query(sql, binding: ArgumentList(arguments)) }
    }

    /// Runs one query with its values given as one ``StatementArguments`` (positional or named)
    /// and returns every row.
    public func query(_ sql: String, arguments: StatementArguments) async throws -> [Row] {
        try await _withConnection(.read) { try $0.core.query(sql, binding: arguments) }
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
    ///
    /// The body is `@Sendable` because it runs on the database's executor, not the caller's: it may
    /// capture constants and `Sendable` values (a `let` array of entities, an id), but not a
    /// caller's mutable variable or main-actor state. Return what the body computed instead of
    /// writing it to an outer variable. This makes the same code compile and run from a
    /// `@MainActor` method, another actor, `Task.detached` and top-level `main.swift` alike.
    ///
    /// When the task awaiting the call is cancelled, the running statement is interrupted, the
    /// whole transaction is rolled back (even if the body caught the interrupt and went on), and
    /// the call throws `CancellationError`.
    @discardableResult
    public func transaction<T: Sendable>(_ body: @Sendable (borrowing Connection) throws -> T) async throws -> T {
        try await _withConnection(.write) { conn in try conn.core.inTransaction { try conn.core.lend(body) } }
    }

    /// Runs `body` in a savepoint: a throw undoes only the body's work
    /// (https://sqlite.org/lang_savepoint.html).
    ///
    /// Inside a transaction opened by hand (`execute("BEGIN")`) the body is a savepoint of that
    /// transaction. Outside one it is a transaction of its own, begun the way
    /// ``transaction(_:)`` begins one (`BEGIN IMMEDIATE`): it waits up to the busy timeout for the
    /// write lock before the body runs. SQLite's own `SAVEPOINT` outside a transaction begins a
    /// deferred one, which, once it has read, fails at once with `SQLITE_BUSY` at its first write
    /// beside another writer, whatever the busy timeout. On a database opened `readOnly`, which
    /// takes no write lock, the body only reads, in one snapshot. The body is `@Sendable` for the
    /// reason given at ``transaction(_:)``.
    @discardableResult
    public func savepoint<T: Sendable>(_ body: @Sendable (borrowing Connection) throws -> T) async throws -> T {
        try await _withConnection(.write) { conn in
            conn.core.refusesWrites
                ? try conn.core.inSavepoint { try conn.core.lend(body) }
                : try conn.core.inTransaction { try conn.core.lend(body) }
        }
    }

    /// Runs `body` in a read-only transaction: every statement in it sees the same committed state
    /// of the database, and a statement that would write is refused before it runs.
    ///
    /// ```swift
    /// let (count, newest) = try await db.read { conn in
    ///     let count = try conn.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) ?? 0
    ///     let newest = try conn.query("SELECT max(id) FROM notes")[0].get(0, as: Int.self)
    ///     return (count, newest)
    /// }
    /// ```
    ///
    /// The place for cursors over large results (a cursor from the ``Connection``). Runs in a savepoint,
    /// so it nests inside a transaction opened by hand. The body is `@Sendable` for the reason given
    /// at ``transaction(_:)``.
    /// - Throws: ``SqlCipherError/readOnlyViolation(sql:)`` for a statement that writes, what the
    ///   body throws, `CancellationError`.
    @discardableResult
    public func read<T: Sendable>(_ body: @Sendable (borrowing Connection) throws -> T) async throws -> T {
        try await _withConnection(.snapshot) { conn in
            try conn.core.inSavepoint(readOnly: true) { try conn.core.lend(body) }
        }
    }
}
