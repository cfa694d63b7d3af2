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
    private enum State {
        case open(Statement)
        case finished
    }

    private var state: State
    private let core: SQLiteConnection
    private let body: UInt64
    /// Reads the element at the statement's current row.
    private var read: ((Statement) throws -> Element)?
    /// Releases what ``read`` built (a decoding context refers back to itself).
    private var release: (() -> Void)?

    init(statement: Statement, core: SQLiteConnection, body: UInt64,
         read: @escaping (Statement) throws -> Element, release: (() -> Void)? = nil) {
        self.state = .open(statement)
        self.core = core
        self.body = body
        self.read = read
        self.release = release
        core.bodies.register(self, in: body)
    }

    deinit {
        finish()
    }

    /// The next element, or nil at the end of the result (and at every call after it).
    /// - Throws: SQLite's errors; ``SqlCipherError/decodingFailed(entity:column:stored:expected:)``
    ///   for an entity cursor whose row does not fit; ``SqlCipherError/connectionNotUsable`` after
    ///   the body ended.
    public func next() throws -> Element? {
        guard core.bodies.isOpen(body), !core.isClosed else {
            finish()
            throw SqlCipherError.connectionNotUsable
        }
        guard case .open(let statement) = state, let read else { return nil }
        do {
            guard try statement.step() else {
                finish()
                return nil
            }
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
    public func forEach(_ body: (Element) throws -> Void) throws {
        while let element = try next() {
            try body(element)
        }
    }

    /// Releases the statement now; ``next()`` then returns nil.
    private func finish() {
        guard case .open(let statement) = state else { return }
        state = .finished
        statement.reset()
        release?()
        release = nil
        read = nil
    }
}

extension Cursor: BodyScoped {
    func bodyDidEnd() {
        finish()
    }
}

extension Cursor where Element == Row {
    /// A cursor of rows over `statement`, ready to step.
    static func rows(_ statement: Statement, core: SQLiteConnection, body: UInt64) -> Cursor<Row> {
        var columns: RowColumns?
        var reusable: RowStorage?
        return Cursor(statement: statement, core: core, body: body, read: { statement in
            // The column table is shared by every row of the result, and the row's buffer is
            // reused while the caller lets each row go before asking for the next.
            try statement.currentRow(reusing: &reusable, columns: &columns)
        })
    }
}

extension Cursor where Element: Decodable {
    /// A cursor that decodes each row of `statement` as `Element` (through ``RowDecodable`` when
    /// `Element` adopts it).
    static func decoding(_ statement: Statement, core: SQLiteConnection, body: UInt64) -> Cursor<Element> {
        if let rowType = Element.self as? any RowDecodable.Type {
            return Cursor(statement: statement, core: core, body: body,
                          read: RowDecodableReader.currentRowReader(rowType, as: Element.self))
        }
        var context: RowDecodingContext?
        return Cursor(statement: statement, core: core, body: body, read: { statement in
            if context == nil {
                context = RowDecodingContext(
                    entityName: String(describing: Element.self), columns: RowColumns(names: statement.columnNames()),
                    statement: statement)
            }
            return try RowDecoder.decodeCurrentRow(Element.self, context: context.unsafelyUnwrapped)
        }, release: { context?.finish() })
    }
}
