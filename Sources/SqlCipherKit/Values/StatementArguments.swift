/// The values bound to a statement's parameters, given as one argument: an array literal for the
/// positional parameters (`?`), a dictionary literal for the named ones (`:name`, `@name`,
/// `$name`, and a template's ``Param``s).
///
/// ```swift
/// // Positional: one value per `?`, in order.
/// try await db.execute("INSERT INTO notes(title, owner) VALUES (?, ?)", arguments: ["Groceries", 42])
///
/// // Named: a key matches `:owner`, `@owner` or `$owner` in the SQL text.
/// let mine = try await db.query("SELECT title FROM notes WHERE owner = :owner", arguments: ["owner": 42])
///
/// // Built at run time.
/// let values: [(any DatabaseValueConvertible)?] = titles.map { $0 }
/// let placeholders = Array(repeating: "?", count: values.count).joined(separator: ", ")
/// let rows = try await db.query("SELECT * FROM notes WHERE title IN (\(placeholders))",
///                               arguments: StatementArguments(values))
///
/// // A query-builder template: the names of its Params.
/// let maxPrice = Param<Double>("maxPrice")
/// let cheap = Select(.all).from(TableName("products")).where(col("price") < maxPrice)
/// let rows2 = try await db.query(cheap, arguments: ["maxPrice": 50.0])
/// ```
///
/// The methods that take values one by one (`db.execute(sql, 39.99, 7)`,
/// `db.query(select, maxPrice.set(50.0))`) remain the shortest form when the values are known
/// where the call is written; `arguments:` is the one form for everything else, in place of an
/// array overload and a dictionary overload of each method.
///
/// The values are bound, never written into the SQL text, so a value cannot change what the
/// statement does and statements that differ only in their values share one compiled statement.
///
/// Every parameter gets exactly one value:
/// - Positional: the number of values must equal the number of parameters, else
///   ``SqlCipherError/argumentCountMismatch(expected:given:sql:)``.
/// - Named: a key the statement does not use throws ``SqlCipherError/unknownParameter(name:)``,
///   a parameter without a key throws ``SqlCipherError/unboundParameter(name:)`` (also for a `?`
///   in the same text: positional and named values are not mixed), and two keys naming one
///   parameter (`"id"` and `":id"`) throw ``SqlCipherError/invalidQuery(reason:)``.
/// - A query-builder template takes named values only: positional values for one throw
///   ``SqlCipherError/invalidQuery(reason:)``.
///
/// The arguments are kept in memory only as long as the value lives; they are never part of an
/// error's message or a ``TraceEvent`` unless a tracer asked for arguments
/// (``TraceOptions/includeArguments``).
public struct StatementArguments: Sendable, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    /// Positional values, kept as the caller's existentials (each is converted when it is bound,
    /// the same path as the variadic methods), or named values, converted once.
    enum Values: Sendable {
        case positional([(any DatabaseValueConvertible)?])
        case named([ParameterBinding])
    }

    let values: Values

    /// Positional values, one per `?` in order: for a list built at run time whose values may be
    /// of different types (`nil` binds NULL).
    public init(_ values: [(any DatabaseValueConvertible)?]) {
        self.values = .positional(values)
    }

    /// Positional values of one type, one per `?` in order.
    ///
    /// ```swift
    /// let ids = [3, 5, 8]
    /// let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
    /// let rows = try await db.query("SELECT * FROM notes WHERE id IN (\(marks))", arguments: StatementArguments(ids))
    /// ```
    public init<Values: Sequence>(_ values: Values) where Values.Element: DatabaseValueConvertible {
        self.values = .positional(values.map { $0 })
    }

    /// Named values from ``Param/set(_:)`` calls: for a template's values chosen at run time.
    ///
    /// ```swift
    /// var values = [maxPrice.set(50.0)]
    /// if let category { values.append(categoryParam.set(category)) }
    /// let rows = try await db.query(template, arguments: StatementArguments(values))
    /// ```
    public init(_ bindings: [ParameterBinding]) {
        self.values = .named(bindings)
    }

    /// Positional values, one per `?` in order: `arguments: ["Groceries", 42, nil]`.
    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
        self.values = .positional(elements)
    }

    /// Named values: `arguments: ["owner": 42, "since": cutoff]`. A key without a prefix matches
    /// `:key`, `@key` or `$key` in SQL text; a key with one of those prefixes matches only that
    /// spelling. A duplicate key is refused when the statement runs.
    public init(dictionaryLiteral elements: (String, (any DatabaseValueConvertible)?)...) {
        self.values = .named(elements.map { ParameterBinding(name: $0.0, value: $0.1?.databaseValue ?? .null) })
    }

    /// Whether there are no values at all (text of several statements runs only without values).
    var isEmpty: Bool {
        switch values {
        case let .positional(values): values.isEmpty
        case let .named(bindings): bindings.isEmpty
        }
    }

    /// The values for a query-builder template, which binds by name.
    func templateBindings() throws -> [ParameterBinding] {
        switch values {
        case let .named(bindings):
            return bindings
        case let .positional(values):
            guard values.isEmpty else {
                throw SqlCipherError.invalidQuery(
                    reason: "a query-builder template binds its values by name, but \(values.count) positional "
                        + "value(s) were given; pass Param.set(_:) values or a dictionary such as [\"maxPrice\": 50.0]")
            }
            return []
        }
    }
}

extension StatementArguments: BindableArguments {
    func bind(to statement: Statement) throws {
        switch values {
        case let .positional(values):
            try ArgumentList(values).bind(to: statement)
        case let .named(bindings):
            try statement.bind(named: bindings)
        }
    }
}

/// ``StatementArguments`` with every value converted: the form kept by a request that is compared
/// with others and run again later (a live query's SQL), where the caller's existentials could
/// neither be compared nor hashed.
enum ResolvedArguments: Sendable, Hashable, BindableArguments {
    case positional([DatabaseValue])
    case named([ParameterBinding])

    var isEmpty: Bool {
        switch self {
        case let .positional(values): values.isEmpty
        case let .named(bindings): bindings.isEmpty
        }
    }

    func bind(to statement: Statement) throws {
        switch self {
        case let .positional(values):
            try ArgumentList(values).bind(to: statement)
        case let .named(bindings):
            try statement.bind(named: bindings)
        }
    }
}

extension StatementArguments {
    /// The arguments with their values converted (see ``ResolvedArguments``).
    var resolved: ResolvedArguments {
        switch values {
        case let .positional(values): .positional(ArgumentList(values).databaseValues)
        case let .named(bindings): .named(bindings)
        }
    }
}
