/// SQL written as a string literal whose interpolated values are bound, never spliced into the
/// text.
///
/// ```swift
/// let owner = "Alice'; DROP TABLE notes; --"
/// let since = Date(timeIntervalSinceNow: -86_400)
/// let rows = try await db.query(literal: "SELECT * FROM notes WHERE owner = \(owner) AND created > \(since)")
/// // runs: SELECT * FROM notes WHERE owner = :l1 AND created > :l2   with both values bound
/// ```
///
/// What each interpolation writes:
/// - A value (`\(owner)`, any ``DatabaseValueConvertible``, `nil` included): a placeholder, and the
///   value is bound when the statement runs. The text therefore has one shape whatever the
///   values, and statements of one shape share one compiled statement in the cache.
/// - `\(identifier: name)`: the name as a quoted identifier (`"na""me"`), for table and column
///   names chosen at run time. A name holding a NUL character is refused when the statement runs.
/// - `\(list: ids)`: `(?, ?, ?)` for a sequence of values, with each value bound, for `IN`. An
///   empty sequence writes `(NULL)`, which matches nothing, rather than the invalid `()`.
/// - A builder ``Column``, ``TableName`` or ``SQLExpression``: quoted as the query builder
///   writes it, its literal values bound.
/// - A ``Select``: its text, with its values bound, e.g. as a subquery in parentheses you write
///   (`"… WHERE id IN (\(recent))"`). A ``Param`` in an interpolated template has no way to get
///   a value and is refused with ``SqlCipherError/unboundParameter(name:)``.
/// - Another `SQL`: its text and values, in place. `+` and ``append(_:)`` join pieces the same way.
///
/// The literal text itself is taken as written: a `?` or `:name` in it is a parameter that no
/// value fills, refused when the statement runs
/// (``SqlCipherError/argumentCountMismatch(expected:given:sql:)``); interpolate the value
/// instead. Only ``Connection/prepare(literal:)`` takes `?` in the text, for values bound at
/// each run.
///
/// Run an `SQL` value with the `literal:` methods (`execute(literal:)`, `query(literal:)`,
/// `fetch(_:literal:)`, `stream(literal:)`, `Connection/cursor(literal:)`,
/// ``LiveRequest/query(literal:)``, ``MigrationContext/execute(literal:)``). The label is
/// deliberate: `db.execute("… \(value)")` without it is Swift's ordinary string interpolation,
/// which writes the value into the text.
public struct SQL: Sendable, Hashable, ExpressibleByStringInterpolation, SQLStatement {
    /// One piece of the statement, rendered when it runs (so that an invalid identifier becomes a
    /// thrown error there, not a trap while the literal is built).
    enum Piece: Sendable, Hashable {
        case text(String)
        case value(DatabaseValue)
        case identifier(String)
        case list([DatabaseValue])
        case expression(SQLExpression)
        case table(TableName)
        case select(Select)
    }

    var pieces: [Piece]

    /// SQL text with no values.
    public init(stringLiteral text: String) {
        pieces = [.text(text)]
    }

    /// SQL text with interpolated values, identifiers and builder pieces (see ``SQL``).
    public init(stringInterpolation: StringInterpolation) {
        pieces = stringInterpolation.pieces
    }

    /// Appends another piece of SQL, its values kept in order.
    ///
    /// ```swift
    /// var query: SQL = "SELECT title FROM notes WHERE owner = \(owner)"
    /// if let since { query.append(" AND created > \(since)") }
    /// ```
    public mutating func append(_ other: SQL) {
        pieces.append(contentsOf: other.pieces)
    }

    /// The two pieces of SQL one after the other, their values kept in order.
    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        var joined = lhs
        joined.append(rhs)
        return joined
    }

    /// The statement's text with a placeholder for each value (`:l1`, `:l2`, … in order), and the
    /// values. The same pieces with other values give the same text.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for an identifier that cannot be
    ///   quoted (it holds a NUL character) or a builder piece that cannot be written.
    public func render() throws -> SQLFragment {
        var renderer = SQLRenderer()
        for piece in pieces {
            switch piece {
            case let .text(text):
                renderer.append(text)
            case let .value(value):
                renderer.literal(value)
            case let .identifier(name):
                try renderer.identifier(name)
            case let .list(values):
                guard !values.isEmpty else {
                    renderer.append("(NULL)")
                    continue
                }
                renderer.append("(")
                for (index, value) in values.enumerated() {
                    if index > 0 { renderer.append(", ") }
                    renderer.literal(value)
                }
                renderer.append(")")
            case let .expression(expression):
                try expression.render(into: &renderer)
            case let .table(table):
                try table.render(into: &renderer)
            case let .select(select):
                try select.render(into: &renderer)
            }
        }
        return renderer.fragment
    }

    /// Builds an ``SQL`` value from a string literal with interpolations; see ``SQL`` for what
    /// each interpolation writes.
    public struct StringInterpolation: StringInterpolationProtocol, Sendable {
        var pieces: [Piece] = []

        /// Reserves room for the literal's pieces.
        public init(literalCapacity: Int, interpolationCount: Int) {
            pieces.reserveCapacity(2 * interpolationCount + 1)
        }

        /// Appends literal SQL text, as written.
        public mutating func appendLiteral(_ literal: String) {
            guard !literal.isEmpty else { return }
            pieces.append(.text(literal))
        }

        /// Appends a placeholder for `value`, which is bound when the statement runs (`nil` binds
        /// NULL).
        public mutating func appendInterpolation(_ value: (any DatabaseValueConvertible)?) {
            pieces.append(.value(value?.databaseValue ?? .null))
        }

        /// Appends `name` as a quoted identifier (a table or column name chosen at run time).
        public mutating func appendInterpolation(identifier name: String) {
            pieces.append(.identifier(name))
        }

        /// Appends `(?, ?, …)` with one bound placeholder per value, for `IN`; `(NULL)` when
        /// `values` is empty.
        public mutating func appendInterpolation<Values: Sequence>(list values: Values)
        where Values.Element: DatabaseValueConvertible {
            pieces.append(.list(values.map(\.databaseValue)))
        }

        /// Appends a builder column or expression as the query builder writes it, its values bound.
        public mutating func appendInterpolation(_ expression: some SQLExpressible) {
            pieces.append(.expression(expression.sqlExpression))
        }

        /// Appends a quoted table name (`"name"`, or `"name" AS "alias"`).
        public mutating func appendInterpolation(_ table: TableName) {
            pieces.append(.table(table))
        }

        /// Appends a ``Select`` template's text (without parentheses), its values bound.
        public mutating func appendInterpolation(_ select: Select) {
            pieces.append(.select(select))
        }

        /// Appends another ``SQL`` value's text and values in place.
        public mutating func appendInterpolation(_ sql: SQL) {
            pieces.append(contentsOf: sql.pieces)
        }
    }
}
