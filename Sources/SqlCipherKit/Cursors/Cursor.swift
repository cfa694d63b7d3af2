/// Reads a query's result one element at a time, inside the body that opened it.
///
/// Open a cursor from the ``Connection`` of a ``Database/transaction(_:)``,
/// ``Database/savepoint(_:)`` or ``Database/read(_:)`` body: only the current row is held, so a
/// result of any size streams through bounded memory.
///
/// ```swift
/// let total = try await db.read { conn in
///     let cursor = try conn.cursor("SELECT amount FROM payments WHERE year = ?", 2026)
///     var total = 0
///     while let row = try cursor.next() {
///         total += row.get(0, as: Int.self) ?? 0
///     }
///     return total
/// }
///
/// try await db.read { conn in
///     try conn.cursor(Product.self, sql: "SELECT * FROM products ORDER BY name").forEach { product in
///         print(product.name)
///     }
/// }
/// ```
///
/// - Each element is a value of its own (a ``Row`` or a decoded entity): it stays valid after the
///   cursor moves on. A row you let go before calling ``next()`` again leaves its buffer to the
///   next row, so a loop that does not keep rows allocates nothing per row.
/// - A cursor is not a `Sequence`: Swift's `for … in` cannot throw, so an error in the middle of a
///   result would be lost. Use `while let element = try cursor.next()` or ``forEach(_:)``.
/// - The cursor ends with its body: its statement is released when the body returns (or earlier,
///   when the cursor is freed or reaches its end), and any later use throws
///   ``SqlCipherError/connectionNotUsable``. Leaving a loop early is fine.
/// - When the task awaiting the body is cancelled, ``next()`` throws and the body's transaction is
///   rolled back; the call throws `CancellationError`.
/// - The cursor prepares its own statement (not the statement cache's), so the body may run the
///   same SQL again while the cursor is open. Rows written by the same body while a cursor reads
///   the same table may or may not appear in it (https://sqlite.org/isolation.html).
public final class Cursor<Element> {
    // The stored properties are read on every row; the run-time exclusivity checks of class
    // properties would cost more than the row itself. A cursor is used on its body's executor
    // only (it is not Sendable), and nothing it calls re-enters it.
    //
    // ``next()`` is inlinable, so that the caller's compiler specializes it for its element type
    // (a generic class method called across modules otherwise moves every element through
    // value-witness calls); what it touches is therefore visible to other modules, but internal.
    /// The statement, until the result ends or the cursor is released.
    @usableFromInline @exclusivity(unchecked)
    var statement: Statement?
    /// Set when the body that opened the cursor ended (``bodyDidEnd()``): from then on, every
    /// call throws. The body calls back before it returns, so this flag is all ``next()`` asks.
    @usableFromInline @exclusivity(unchecked)
    var bodyEnded = false
    /// Reads the element at the statement's current row (nil for a cursor of rows).
    @usableFromInline @exclusivity(unchecked)
    var read: ((Statement) throws -> Element)?
    /// What a cursor of rows reads its rows with, without a closure call per row.
    @usableFromInline
    let rowState: RowReadState?
    /// Releases what ``read`` built (a decoding context refers back to itself).
    private var release: (() -> Void)?

    init(statement: Statement, core: SQLiteConnection, body: UInt64,
         read: ((Statement) throws -> Element)?, rowState: RowReadState? = nil, release: (() -> Void)? = nil) {
        precondition(read != nil || (rowState != nil && Element.self == Row.self), "a cursor needs a way to read")
        self.statement = statement
        self.read = read
        self.rowState = rowState
        self.release = release
        if core.bodies.isOpen(body) && !core.isClosed {
            core.bodies.register(self, in: body)
        } else {
            bodyEnded = true
        }
    }

    deinit {
        finish()
    }

    /// The next element, or nil at the end of the result (and at every call after it).
    /// - Throws: SQLite's errors; ``SqlCipherError/decodingFailed(entity:column:stored:expected:)``
    ///   for an entity cursor whose row does not fit; ``SqlCipherError/connectionNotUsable`` after
    ///   the body ended.
    @inlinable
    public func next() throws -> Element? {
        if bodyEnded { throw ended() }
        if Element.self == Row.self, let rowState {
            guard statement != nil else { return nil }
            do {
                guard let row = try rowState.nextRow() else {
                    finish()
                    return nil
                }
                // `Element` is `Row`: the cast only renames the type.
                return unsafeBitCast(row, to: Element.self)
            } catch {
                finish()
                throw error
            }
        }
        guard let statement else { return nil }
        do {
            guard try statement.step() else {
                finish()
                return nil
            }
            guard let read else { return nil }
            return try read(statement)
        } catch {
            finish()
            throw error
        }
    }

    /// Calls `body` with each remaining element, in order.
    ///
    /// ```swift
    /// try cursor.forEach { row in print(row) }
    /// ```
    @inlinable
    public func forEach(_ body: (Element) throws -> Void) throws {
        while let element = try next() {
            try body(element)
        }
    }

    /// Releases the statement and returns the error of a use after the body ended.
    @usableFromInline
    func ended() -> SqlCipherError {
        finish()
        return SqlCipherError.connectionNotUsable
    }

    /// Releases the statement now; ``next()`` then returns nil.
    @usableFromInline
    func finish() {
        guard let statement else { return }
        self.statement = nil
        statement.reset()
        release?()
        release = nil
        read = nil
    }
}

extension Cursor: BodyScoped {
    func bodyDidEnd() {
        bodyEnded = true
        finish()
    }
}

/// What a cursor or a row-by-row decode keeps between rows: the result's column table, shared by
/// every row, and the row buffer reused while the caller lets each row go before asking for the
/// next (``Statement/currentRow(reusing:columns:)``).
///
/// A class rather than variables captured by a closure: captured variables are boxes whose every
/// access is checked for exclusivity at run time, twice per row.
@usableFromInline
final class RowReadState {
    @exclusivity(unchecked) var columns: RowColumns?
    @exclusivity(unchecked) var reusable: RowStorage?
    /// The statement of a cursor of rows, for ``nextRow()``; the cursor holds it, and calls
    /// ``nextRow()`` only while it does.
    private unowned(unsafe) let statement: Statement?

    init(statement: Statement? = nil) {
        self.statement = statement
    }

    /// Steps the cursor's statement and returns its next row, or nil at the end.
    @usableFromInline
    func nextRow() throws -> Row? {
        guard let statement, try statement.step() else { return nil }
        return try statement.currentRow(reusing: &reusable, columns: &columns)
    }

    /// The statement's current row, in the reused buffer when it is free.
    @usableFromInline
    func currentRow(of statement: Statement) throws -> Row {
        try statement.currentRow(reusing: &reusable, columns: &columns)
    }
}

extension Cursor where Element == Row {
    /// A cursor of rows over `statement`, ready to step.
    static func rows(_ statement: Statement, core: SQLiteConnection, body: UInt64) -> Cursor<Row> {
        Cursor(statement: statement, core: core, body: body, read: nil, rowState: RowReadState(statement: statement))
    }
}

extension Cursor where Element: Decodable {
    /// A cursor that decodes each row of `statement` as `Element` (through ``RowDecodable`` when
    /// `Element` adopts it).
    /// `release` runs when the cursor finishes, after its statement was reset.
    static func decoding(_ statement: Statement, core: SQLiteConnection, body: UInt64,
                         release: (() -> Void)? = nil) -> Cursor<Element> {
        if let rowType = Element.self as? any RowDecodable.Type {
            return Cursor(statement: statement, core: core, body: body,
                          read: RowDecodableReader.currentRowReader(rowType, as: Element.self), release: release)
        }
        var context: RowDecodingContext?
        return Cursor(statement: statement, core: core, body: body, read: { statement in
            if context == nil {
                context = RowDecodingContext(
                    entityName: String(describing: Element.self), columns: RowColumns(names: statement.columnNames()),
                    statement: statement)
            }
            // Row decoding hot path (once per row): set just above.
            return try RowDecoder.decodeCurrentRow(Element.self, context: context.unsafelyUnwrapped)
        }, release: {
            context?.finish()
            release?()
        })
    }
}
