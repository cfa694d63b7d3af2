/// The arguments of one execution, in whichever form the caller has them: an array of
/// ``DatabaseValue`` or of `(any DatabaseValueConvertible)?` (``ArgumentList``), or the public
/// ``StatementArguments`` (positional or named).
///
/// One protocol lets ``SQLiteConnection/execute(_:binding:)`` and ``Statement/bind(_:)`` check
/// and bind every form with the same code, and lets each form bind without first being converted
/// into a new array of ``DatabaseValue``. (A parameter-pack form was measured and dropped: called
/// across the module boundary without specialization, it bound ten integers more slowly than the
/// existential array does.)
protocol BindableArguments {
    /// Whether there are no arguments (text of several statements runs only without any).
    var isEmpty: Bool { get }
    /// Binds the arguments, after checking that every parameter of `statement` gets one value.
    func bind(to statement: Statement) throws
}

/// A value that an ``ArgumentList`` holds.
protocol StatementArgument {
    /// The value to bind for `arguments[offset]`.
    ///
    /// A static requirement that reads the element itself, rather than a property of the
    /// element: for the existential arguments, `if let value = arguments[offset]` copies the
    /// existential once (through its value witness table), where reading the element and then
    /// unwrapping it copied it twice, a third of the cost of binding an integer.
    static func statementValue(_ arguments: [Self], at offset: Int) -> DatabaseValue
}

extension DatabaseValue: StatementArgument {
    static func statementValue(_ arguments: [DatabaseValue], at offset: Int) -> DatabaseValue {
        arguments[offset]
    }
}

extension Optional: StatementArgument where Wrapped == any DatabaseValueConvertible {
    static func statementValue(_ arguments: [Self], at offset: Int) -> DatabaseValue {
        if let value = arguments[offset] { return value.databaseValue }
        return .null
    }
}

/// Arguments in an array: the `(any DatabaseValueConvertible)?...` of the public API, or
/// ``DatabaseValue``s.
struct ArgumentList<Argument: StatementArgument>: BindableArguments {
    let values: [Argument]

    init(_ values: [Argument]) {
        self.values = values
    }

    var isEmpty: Bool { values.isEmpty }

    func bind(to statement: Statement) throws {
        guard values.count == statement.parameterCount else {
            throw SqlCipherError.argumentCountMismatch(
                expected: statement.parameterCount, given: values.count, sql: statement.sql).redactingSQL()
        }
        try bindCounted(to: statement)
    }

    /// Binds at parameters 1, 2, ...; the caller checked the count.
    func bindCounted(to statement: Statement) throws {
        // One test per execution rather than per value: a tracer that shows arguments keeps them.
        if statement.extensions.capturesArguments {
            for offset in values.indices {
                statement.captureArgument(Argument.statementValue(values, at: offset), at: Int32(truncatingIfNeeded: offset + 1))
            }
        }
        for offset in values.indices {
            try statement.bindValue(Argument.statementValue(values, at: offset), at: Int32(truncatingIfNeeded: offset + 1))
        }
    }

    /// The values to bind, for callers that keep them (a live query re-runs its SQL later).
    var databaseValues: [DatabaseValue] {
        values.indices.map { Argument.statementValue(values, at: $0) }
    }
}
