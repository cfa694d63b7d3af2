/// A value that ``Statement/bind(_:)`` can bind: a ``DatabaseValue`` as it is, or one of the
/// public API's `(any DatabaseValueConvertible)?` arguments, where nil is NULL.
///
/// One protocol for both lets every raw-SQL entry point hand its arguments straight to the
/// binder, with one argument-count check and one binding loop, instead of first converting the
/// variadic arguments into a new array of ``DatabaseValue``.
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

extension Array where Element: StatementArgument {
    /// The values to bind, for callers that keep them (a live query re-runs its SQL later).
    var statementValues: [DatabaseValue] {
        indices.map { Element.statementValue(self, at: $0) }
    }
}
