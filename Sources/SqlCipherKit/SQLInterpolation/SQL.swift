/// SQL written as a string literal whose interpolated values are bound, never spliced into the
/// text.
///
/// ```swift
/// let owner = "Alice'; DROP TABLE notes; --"
/// let since = Date(timeIntervalSinceNow: -86_400)
/// let rows = try await db.query(literal: "SELECT * FROM notes WHERE owner = \(owner) AND created > \(since)")
/// // runs: SELECT * FROM notes WHERE owner = ? AND created > ?   with both values bound
/// ```
///
/// What each interpolation writes:
/// - A value (`\(owner)`, any ``DatabaseValueConvertible``, `nil` included): a `?`, and the
///   value is bound at that position when the statement runs. The text therefore has one shape whatever the
///   values, and statements of one shape share one compiled statement in the cache.
/// - `\(identifier: name)`: the name as a quoted identifier (`"na""me"`), for table and column
///   names chosen at run time. A name holding a NUL character is refused when the statement runs.
/// - `\(list: ids)`: `(?, ?, ?)` for a sequence of values, with each value bound, for `IN`. An
///   empty sequence writes `()`, SQLite's empty list: `x IN ()` is false and `x NOT IN ()` true
///   (`(NULL)` would make `NOT IN` false too).
/// - A builder ``Column``, ``TableName``, ``SQLExpression`` or ``JSONEach``: quoted as the query
///   builder writes it, its literal values bound.
/// - A ``Select``: its text, with its values bound, e.g. as a subquery in parentheses you write
///   (`"… WHERE id IN (\(recent))"`). A ``Param`` in an interpolated template has no way to get
///   a value and is refused with ``SqlCipherError/unboundParameter(name:)``.
/// - Another `SQL`: its text and values, in place. `+` and ``append(_:)`` join pieces the same way.
///
/// The literal text itself is taken as written, and a parameter in it (`?`, `?2`, `:name`) is
/// refused when the statement runs (``SqlCipherError/argumentCountMismatch(expected:given:sql:)``
/// or ``SqlCipherError/invalidQuery(reason:)``): interpolate the value instead. Only ``Connection/prepare(literal:)`` takes `?` in the text, for values bound at
/// each run.
///
/// Run an `SQL` value with the `literal:` methods (`execute(literal:)`, `query(literal:)`,
/// `fetch(_:literal:)`, `stream(literal:)`, `Connection/cursor(literal:)`,
/// ``LiveRequest/query(literal:)``, ``MigrationContext/execute(literal:)``). The label is
/// deliberate: `db.execute("… \(value)")` without it is Swift's ordinary string interpolation,
/// which writes the value into the text.
public struct SQL: Sendable, Hashable, ExpressibleByStringInterpolation, SQLStatement {
    /// The text, with a `?` for each value.
    @usableFromInline var text: String
    /// The values, in the order of their `?`.
    @usableFromInline var values: [DatabaseValue]
    /// Why a piece could not be written (an identifier with a NUL, a builder piece that does not
    /// render), thrown when the statement runs rather than trapping while the literal is built.
    @usableFromInline var failure: Failure?

    /// A piece that could not be written; all failures compare equal, as they all refuse to run.
    /// A class, so that a literal is three words whatever the size of an error: literals are
    /// built, copied and dropped at every statement, and a failure is rare.
    @usableFromInline
    final class Failure: Sendable, Hashable {
        let error: SqlCipherError
        init(error: SqlCipherError) { self.error = error }
        @usableFromInline static func == (lhs: Failure, rhs: Failure) -> Bool { true }
        @usableFromInline func hash(into hasher: inout Hasher) {}
    }

    /// SQL text with no values.
    ///
    /// The text is a literal written in the source (a `StaticString`), as every piece of an `SQL`
    /// value is: text built at run time enters only through the interpolations, which bind values
    /// and quote identifiers. Run SQL text held in a `String` with the methods that take one
    /// (``DatabaseAccess/execute(_:_:)-(String,_)``).
    public init(stringLiteral text: StaticString) {
        self.text = text.sqlText
        values = []
    }

    /// SQL text with interpolated values, identifiers and builder pieces (see ``SQL``).
    @inlinable
    public init(stringInterpolation: consuming StringInterpolation) {
        // A literal whose interpolations are all values has one text per place in the source:
        // it is found by the literal's pieces rather than written again at every statement.
        // The shape is passed in place (`inout`): passed by value, it was copied once more for
        // the call, in 16-byte loads from the word-sized stores that noted it, which the
        // processor cannot forward (nanoseconds per statement).
        text = stringInterpolation.shape.isRecording
            ? LiteralTextCache.text(for: &stringInterpolation.shape) : stringInterpolation.text
        // Moved out rather than copied: copying retained the values and the failure, and
        // dropping the interpolation then released them again, at every statement.
        var values: [DatabaseValue] = []
        swap(&values, &stringInterpolation.values)
        self.values = values
        failure = stringInterpolation.failure.take()
    }

    /// Appends another piece of SQL, its values kept in order.
    ///
    /// ```swift
    /// var query: SQL = "SELECT title FROM notes WHERE owner = \(owner)"
    /// if let since { query.append(" AND created > \(since)") }
    /// ```
    public mutating func append(_ other: SQL) {
        text += other.text
        values += other.values
        if failure == nil { failure = other.failure }
    }

    /// The two pieces of SQL one after the other, their values kept in order.
    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        var joined = lhs
        joined.append(rhs)
        return joined
    }

    /// The statement's text, with a `?` for each value, and the values in order. The same pieces
    /// with other values give the same text.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for an identifier that cannot be
    ///   quoted (it holds a NUL character) or a builder piece that cannot be written, and
    ///   ``SqlCipherError/unboundParameter(name:)`` for a ``Param`` in an interpolated piece.
    public func render() throws -> SQLFragment {
        SQLFragment(sql: try checkedText(), literals: values, parameterNames: [])
    }

    /// The text, or the failure of a piece.
    func checkedText() throws -> String {
        try checkPieces()
        return text
    }

    /// Throws the failure of a piece, if one could not be written. For the hot paths, which then
    /// pass ``text`` borrowed: ``checkedText()`` hands out a copy, one retain and release more
    /// per statement.
    func checkPieces() throws {
        if let failure { throw failure.error }
    }

    /// Builds an ``SQL`` value from a string literal with interpolations; see ``SQL`` for what
    /// each interpolation writes.
    ///
    /// While every interpolation is a value, the interpolation only notes where the literal's
    /// pieces of text are in the program (`LiteralShape`) and collects the values: the text,
    /// the same at every run of that line, is then taken from `LiteralTextCache`. The other
    /// interpolations write their text as they come.
    ///
    /// The initialiser, the value and piece appends and ``SQL/init(stringInterpolation:)`` are
    /// inlinable, so a literal is built in the caller's frame: with each piece a constant there,
    /// noting it is one store, and the interpolation is not copied from one function to the next
    /// (three copies of its state per statement when these were calls). Only taking a values
    /// array (`LiteralValueBuffers`), the table lookup and the paths that write text stay calls
    /// into the package.
    public struct StringInterpolation: StringInterpolationProtocol, Sendable {
        /// The literal's text pieces are `StaticString`s: constants of the program, which is what
        /// lets a literal's shape stand for its text.
        public typealias StringLiteralType = StaticString

        /// The text written so far, once the literal is no longer a plain shape.
        @usableFromInline var text = ""
        /// The values, in the order of their `?`.
        @usableFromInline var values: [DatabaseValue] = []
        /// The pieces so far, while the literal is a plain shape.
        @usableFromInline var shape = LiteralShape()
        @usableFromInline var failure: Failure?
        /// The room the text needs, should it be written.
        @usableFromInline let textCapacity: Int

        /// Reserves room for the literal's values (the calling thread's spare array when it has the
        /// room, see `LiteralValueBuffers`) and notes the room its text needs, should it be
        /// written.
        ///
        /// The counts are the compiler's estimates for a literal in the source; code that calls
        /// this itself may pass anything, so they are taken as hints and bounded (a negative or
        /// huge count reserves less, and the buffers grow as pieces come).
        @inlinable
        public init(literalCapacity: Int, interpolationCount: Int) {
            let interpolations = Swift.min(Swift.max(interpolationCount, 0), Self.reservationLimit)
            LiteralValueBuffers.take(capacity: interpolations, into: &values)
            textCapacity = Swift.min(Swift.max(literalCapacity, 0), Self.reservationLimit) + 2 * interpolations
        }

        /// The most either count reserves up front.
        @inlinable static var reservationLimit: Int { 1 << 16 }

        /// Appends literal SQL text, as written.
        @inlinable
        public mutating func appendLiteral(_ literal: StaticString) {
            if shape.isRecording, shape.record(literal) { return }
            writeLiteral(literal)
        }

        /// Writes a piece of literal text once the literal is no longer a plain shape.
        @usableFromInline
        mutating func writeLiteral(_ literal: StaticString) {
            writeText()
            text += literal.sqlText
        }

        /// Appends a `?` for `value`, which is bound when the statement runs.
        @inlinable
        public mutating func appendInterpolation<Value: DatabaseValueConvertible>(_ value: Value) {
            values.append(value.databaseValue)
            appendPlaceholder()
        }

        /// Appends a `?` for `value`, which is bound when the statement runs (`nil` binds NULL).
        public mutating func appendInterpolation(_ value: (any DatabaseValueConvertible)?) {
            values.append(value?.databaseValue ?? .null)
            appendPlaceholder()
        }

        /// Notes or writes the `?` of a value just appended to ``values``.
        @inlinable
        mutating func appendPlaceholder() {
            if shape.isRecording, shape.recordValue() { return }
            writePlaceholder()
        }

        /// Writes a `?` once the literal is no longer a plain shape.
        @usableFromInline
        mutating func writePlaceholder() {
            writeText()
            text += "?"
        }

        /// Appends `name` as a quoted identifier (a table or column name chosen at run time).
        public mutating func appendInterpolation(identifier name: String) {
            write { try $0.identifier(name) }
        }

        /// Appends `(?, ?, …)` with one bound value per element, for `IN`; `()` when `values` is
        /// empty, which SQLite reads as the empty list (`x IN ()` is false, `x NOT IN ()` true).
        public mutating func appendInterpolation<Values: Sequence>(list values: Values)
        where Values.Element: DatabaseValueConvertible {
            writeText()
            var first = true
            for value in values {
                text += first ? "(?" : ", ?"
                first = false
                self.values.append(value.databaseValue)
            }
            text += first ? "()" : ")"
        }

        /// Appends a builder column or expression as the query builder writes it, its values bound.
        public mutating func appendInterpolation(_ expression: some SQLExpressible) {
            let expression = expression.sqlExpression
            write { try expression.render(into: &$0) }
        }

        /// Appends a quoted table name (`"name"`, or `"name" AS "alias"`).
        public mutating func appendInterpolation(_ table: TableName) {
            write { try table.render(into: &$0) }
        }

        /// Appends a ``JSONEach`` source, `json_each(…)` with its alias, for a `FROM` or a `JOIN`
        /// you write; its path is bound.
        ///
        /// ```swift
        /// let tags = JSONEach(col("tags")).as("t")
        /// let rows = try await db.query(literal: "SELECT DISTINCT \(tags.value) FROM notes, \(tags)")
        /// ```
        public mutating func appendInterpolation(_ each: JSONEach) {
            write { try each.render(into: &$0) }
        }

        /// Appends a ``Select`` template's text (without parentheses), its values bound.
        public mutating func appendInterpolation(_ select: Select) {
            write { try select.render(into: &$0) }
        }

        /// Appends another ``SQL`` value's text and values in place.
        public mutating func appendInterpolation(_ sql: SQL) {
            writeText()
            text += sql.text
            values += sql.values
            if failure == nil { failure = sql.failure }
        }

        /// Ends the shape: writes the pieces noted so far into ``text``, which the rest of the
        /// literal extends.
        private mutating func writeText() {
            guard shape.isRecording else { return }
            text.reserveCapacity(textCapacity)
            shape.write(into: &text)
            shape.stopRecording()
        }

        /// Writes a builder piece with `?` for its values; a piece that cannot be written is
        /// kept as the failure the statement throws when it runs.
        private mutating func write(_ piece: (inout SQLRenderer) throws -> Void) {
            writeText()
            var renderer = SQLRenderer(positional: true)
            do {
                try piece(&renderer)
                text += renderer.sql
                values += renderer.literals
            } catch {
                if failure == nil {
                    failure = Failure(error: error as? SqlCipherError
                        ?? .invalidQuery(reason: "a piece of the SQL literal could not be written: \(error)"))
                }
            }
        }
    }
}

/// An ``SQL`` literal binds its own values, by position: one per anonymous `?` the literal wrote.
/// A parameter the literal's text spelled itself (`?1`, `:name`) would share or miss an index, so
/// the statement is refused when it has one. The literal is passed to the connection as its own
/// arguments, so that its values are not copied at every statement.
extension SQL: BindableArguments {
    var isEmpty: Bool { values.isEmpty }

    func bind(to statement: Statement) throws {
        if let name = statement.firstNamedParameter {
            throw SqlCipherError.invalidQuery(
                reason: "the SQL literal's text holds the parameter \(name); a literal binds only its interpolated "
                    + "values, so interpolate the value instead")
        }
        try ArgumentList(values).bind(to: statement)
    }
}

/// An ``SQL`` value prints as a trace event shows a statement: its text through the package's one
/// SQL redaction, and its values unless the statement is one whose values can be key material
/// (`"ATTACH \(path) AS archive KEY \(passphrase)"` prints `ATTACH ? AS archive KEY '***'` and no
/// values). `print`, string interpolation, `dump` and `String(reflecting:)` all go through it.
extension SQL: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The text with a `?` for each value, redacted where it names a key, then the values
    /// (left out for an `ATTACH`, a `VACUUM` or a key pragma, whose values can be a key).
    ///
    /// ```swift
    /// let query: SQL = "SELECT * FROM notes WHERE owner = \(owner)"
    /// print(query)   // SELECT * FROM notes WHERE owner = ?  ['alice']
    /// ```
    public var description: String { SQLRedaction.line(text, values: values) }

    /// The same text as ``description``.
    public var debugDescription: String { description }

    /// The redacted text and the values as ``description`` shows them, so that `dump` shows no key.
    public var customMirror: Mirror {
        Mirror(self, children: ["text": SQLRedaction.text(of: text), "values": SQLRedaction.mirrored(values, of: text)],
               displayStyle: .struct)
    }
}
