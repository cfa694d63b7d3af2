import CSqlCipherBridge

/// A statement compiled once inside a body and run many times with typed arguments.
///
/// ```swift
/// try await db.transaction { conn in
///     let insert = try conn.prepare("INSERT INTO points(x, y, label) VALUES (?, ?, ?)")
///     for point in points {
///         try insert.execute(point.x, point.y, point.label)
///     }
/// }
///
/// let names = try await db.read { conn in
///     let byOwner = try conn.prepare("SELECT name FROM pets WHERE owner = ? ORDER BY name")
///     return try owners.map { owner in try byOwner.query(owner).map { $0.get(0, as: String.self) ?? "" } }
/// }
/// ```
///
/// Arguments are bound without existential boxes: ``execute(_:)`` and the other methods take a
/// parameter pack of ``DatabaseValueConvertible`` values and are inlined into the caller, whose
/// compiler specializes the binding for the argument types (an `Int` binds with one library call).
/// Pass `nil` as a typed optional (`Int?.none`) or as ``DatabaseValue/null``; a bare `nil` has no
/// type to bind. For values known only at run time, or named parameters (`:name`), use
/// ``execute(arguments:)`` and ``query(arguments:)`` with a ``StatementArguments``.
///
/// A prepared statement belongs to the body whose connection prepared it:
/// - It is non-copyable and not `Sendable`, so it cannot be copied, stored in a collection,
///   captured by an escaping closure or sent to another task or actor: the compiler refuses.
/// - Once that body has ended, every method throws ``SqlCipherError/connectionNotUsable``, and
///   its compiled statement is released with the body. (A lifetime tied to the body at compile
///   time needs the `~Escapable` lifetime annotations that Swift 6.3 offers only as an
///   experimental feature.)
/// - Everything a statement run through ``Connection/execute(_:_:)-(String,_)`` goes through applies to each
///   execution: the SQL guards (a refused statement, such as `PRAGMA key`, throws already in
///   ``Connection/prepare(_:)``), the refusal of writes in ``Database/read(_:)`` and on read-only
///   databases, cancellation, and live-query tracking.
/// - While a ``cursor(_:)`` of the statement is open, later executions use a second compiled copy,
///   so they never reset the cursor's rows under it.
public struct PreparedStatement: ~Copyable {
    @usableFromInline let compiled: CompiledStatement

    init(core: SQLiteConnection, body: UInt64, sql: String) throws {
        compiled = try CompiledStatement(core: core, body: body, sql: sql)
    }

    deinit {
        compiled.release()
    }

    /// The SQL text the statement was prepared from.
    public var sql: String { compiled.sql }

    /// The number of parameters (`?`, `?NNN`, `:name`) the statement takes.
    public var parameterCount: Int { compiled.parameterCount }

    /// Runs the statement with `values` bound to its parameters, in order; returns the number of
    /// rows changed (0 for a statement that does not write).
    ///
    /// ```swift
    /// let changed = try update.execute(newPrice, productID)
    /// ```
    /// - Throws: ``SqlCipherError/argumentCountMismatch(expected:given:sql:)``,
    ///   ``SqlCipherError/connectionNotUsable`` after the body ended,
    ///   ``SqlCipherError/readOnlyViolation(sql:)`` for a write inside ``Database/read(_:)``, and
    ///   SQLite's errors (a constraint, for example).
    @inlinable @discardableResult
    public func execute<each Value: DatabaseValueConvertible>(_ values: repeat each Value) throws -> Int {
        let statement = try bound(repeat each values)
        return try compiled.run(statement)
    }

    /// Runs the statement with its values given as one ``StatementArguments`` (positional or
    /// named); returns the number of rows changed.
    @discardableResult
    public func execute(arguments: StatementArguments) throws -> Int {
        let statement = try bound(arguments: arguments)
        return try compiled.run(statement)
    }

    /// Runs the query with `values` bound to its parameters and returns its rows.
    ///
    /// ```swift
    /// let rows = try byOwner.query("Alice")
    /// ```
    @inlinable
    public func query<each Value: DatabaseValueConvertible>(_ values: repeat each Value) throws -> [Row] {
        let statement = try bound(repeat each values)
        return try compiled.rows(statement)
    }

    /// Runs the query with its values given as one ``StatementArguments`` (positional or named)
    /// and returns its rows.
    public func query(arguments: StatementArguments) throws -> [Row] {
        let statement = try bound(arguments: arguments)
        return try compiled.rows(statement)
    }

    /// Runs the query and decodes every row as `T` (an ``Entity``, a ``RowDecodable`` type or any
    /// `Decodable` type whose properties are columns of the result).
    ///
    /// ```swift
    /// let cheap = try byMaxPrice.fetch(Product.self, 10.0)
    /// ```
    @inlinable
    public func fetch<T: Decodable, each Value: DatabaseValueConvertible>(
        _ type: T.Type, _ values: repeat each Value
    ) throws -> [T] {
        let statement = try bound(repeat each values)
        return try compiled.decode(type, statement)
    }

    /// A cursor over the rows of the query with `values` bound: rows are read one at a time, in
    /// one reused buffer while you let each row go (see ``Cursor``).
    ///
    /// ```swift
    /// let cursor = try byOwner.cursor("Alice")
    /// while let row = try cursor.next() { print(row.get("name", as: String.self) ?? "") }
    /// ```
    ///
    /// The cursor ends with the body the statement was prepared in.
    @inlinable
    public func cursor<each Value: DatabaseValueConvertible>(_ values: repeat each Value) throws -> Cursor<Row> {
        let statement = try bound(repeat each values)
        return compiled.rowCursor(statement)
    }

    /// A cursor that decodes each row of the query as `T`.
    @inlinable
    public func cursor<T: Decodable, each Value: DatabaseValueConvertible>(
        _ type: T.Type, _ values: repeat each Value
    ) throws -> Cursor<T> {
        let statement = try bound(repeat each values)
        return compiled.decodingCursor(type, statement)
    }

    /// The statement, begun for one run with `values` bound: the one place every typed method
    /// binds, inlined and specialized in the caller. A binding that fails leaves the statement
    /// reset for the next run.
    @inlinable @inline(__always)
    func bound<each Value: DatabaseValueConvertible>(_ values: repeat each Value) throws -> Statement {
        let statement = try compiled.begin(argumentCount: PackCount.of(repeat each values))
        do {
            var index: Int32 = 0
            repeat try statement.bindArgument(each values, after: &index)
        } catch {
            compiled.abandon(statement)
            throw error
        }
        return statement
    }

    /// ``bound(_:)`` for arguments given as one value (positional or named); they check their
    /// own count against the statement's parameters.
    func bound(arguments: StatementArguments) throws -> Statement {
        let statement = try compiled.begin(argumentCount: nil)
        do {
            try arguments.bind(to: statement)
        } catch {
            compiled.abandon(statement)
            throw error
        }
        return statement
    }
}

@available(*, unavailable, message: "a prepared statement belongs to the body that prepared it")
extension PreparedStatement: Sendable {}

/// The number of values in a parameter pack, folded to a constant once specialized.
@usableFromInline
enum PackCount {
    @inlinable @inline(__always)
    static func of<each Value>(_ values: repeat each Value) -> Int {
        var count = 0
        for _ in repeat each values { count &+= 1 }
        return count
    }
}

extension Statement {
    /// Binds one typed argument at a 1-based parameter index. Inlined and specialized in the
    /// caller, so an integer goes straight to ``bindInteger(_:at:)``.
    @inlinable @inline(__always)
    func bindArgument<Value: DatabaseValueConvertible>(_ value: Value, after index: inout Int32) throws {
        index &+= 1
        let stored = value.databaseValue
        if case .integer(let integer) = stored {
            try bindInteger(integer, at: index)
        } else {
            try bind(stored, at: index)
        }
    }

    /// Binds an integer at a 1-based parameter index, calling the bridge from the caller's code.
    @inlinable @inline(__always)
    func bindInteger(_ value: Int64, at index: Int32) throws {
        let rc = scb_bind_int64(handle, index, value)
        if rc != 0 { throw bindingError(rc) }
    }

    /// The error of a failed bind.
    @usableFromInline
    func bindingError(_ rc: Int32) -> SqlCipherError {
        connection.error(rc, sql: sql)
    }
}

/// What a ``PreparedStatement`` holds: its compiled statement, the connection and the body it
/// belongs to. A class, because the body must reach it (``BodyScoped``) and its cursors refer
/// back to it; the public struct around it is the non-copyable handle the caller holds.
@usableFromInline
final class CompiledStatement: BodyScoped {
    let core: SQLiteConnection
    let body: UInt64
    let sql: String
    let parameterCount: Int
    /// The compiled statement; nil once the body ended or the handle was released.
    @exclusivity(unchecked)
    private var statement: Statement?
    /// Whether a cursor reads from ``statement`` now: executions then compile a copy.
    @exclusivity(unchecked)
    private var lentToCursor = false

    init(core: SQLiteConnection, body: UInt64, sql: String) throws {
        guard core.bodies.isOpen(body), !core.isClosed else { throw SqlCipherError.connectionNotUsable }
        // The one path that compiles user SQL: the text checks, the authorizer's refusals (a
        // `PRAGMA key` throws here) and the refusal of several statements.
        let statement = try core.singleStatement(sql)
        // A write prepared in a read-only body, or on a read-only database, can never run there:
        // say so now rather than at the first execution (which refuses it too).
        if !statement.isReadOnly {
            if core.scope.refusesWrites { throw SqlCipherError.readOnlyViolation(sql: sql).redactingSQL() }
            if core.refusesWrites { throw SQLiteConnection.readOnlyRefusal(sql: sql) }
        }
        self.core = core
        self.body = body
        self.sql = sql
        self.parameterCount = statement.parameterCount
        self.statement = statement
        core.bodies.register(self, in: body)
    }

    /// Drops the compiled statement: the body ended (or the handle is gone).
    func bodyDidEnd() {
        release()
    }

    /// Drops the compiled statement; a cursor still reading it keeps it until it finishes.
    func release() {
        statement = nil
    }

    /// The statement to bind and run for one execution, after checking that the body is still
    /// running and that the arguments fit (`nil`: the arguments check themselves when bound).
    @usableFromInline
    func begin(argumentCount: Int?) throws -> Statement {
        // The body drops the statement when it ends (bodyDidEnd), before the connection can close.
        guard let statement else { throw SqlCipherError.connectionNotUsable }
        if let argumentCount, argumentCount != parameterCount {
            throw SqlCipherError.argumentCountMismatch(expected: parameterCount, given: argumentCount, sql: sql).redactingSQL()
        }
        // A cursor reads from the compiled statement: a copy of it serves this execution.
        return lentToCursor ? try core.singleStatement(sql) : statement
    }

    /// Resets a statement whose binding failed.
    @usableFromInline
    func abandon(_ statement: Statement) {
        statement.reset()
    }

    /// Runs a bound statement to completion; returns the rows changed.
    @usableFromInline
    func run(_ statement: Statement) throws -> Int {
        defer { statement.reset() }
        try statement.run()
        return statement.isReadOnly ? 0 : core.changes
    }

    /// Every row of a bound statement.
    @usableFromInline
    func rows(_ statement: Statement) throws -> [Row] {
        defer { statement.reset() }
        return try statement.fetchAll()
    }

    /// Every row of a bound statement decoded as `T`.
    @usableFromInline
    func decode<T: Decodable>(_ type: T.Type, _ statement: Statement) throws -> [T] {
        defer { statement.reset() }
        return try RowDecoder.decode(type, statement: statement)
    }

    /// A cursor of rows over a bound statement, which it holds until it finishes.
    @usableFromInline
    func rowCursor(_ statement: Statement) -> Cursor<Row> {
        let lent = lend(statement)
        return Cursor(statement: statement, core: core, body: body, read: nil,
                      rowState: RowReadState(statement: statement), release: lent)
    }

    /// A cursor decoding each row of a bound statement as `T`.
    @usableFromInline
    func decodingCursor<T: Decodable>(_ type: T.Type, _ statement: Statement) -> Cursor<T> {
        let lent = lend(statement)
        return Cursor.decoding(statement, core: core, body: body, release: lent)
    }

    /// Marks the compiled statement as read by a cursor when `statement` is it; returns what the
    /// cursor calls when it finishes.
    private func lend(_ statement: Statement) -> (() -> Void)? {
        guard statement === self.statement else { return nil }
        lentToCursor = true
        return { [weak self] in self?.lentToCursor = false }
    }
}
