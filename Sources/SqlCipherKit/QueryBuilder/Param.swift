/// A named placeholder in a query-builder template, bound when the template runs.
///
/// ```swift
/// let maxPrice = Param<Double>("maxPrice")
/// let cheap = Select(.all).from(TableName("products")).where(col("price") < maxPrice)
/// let rows = try await db.query(cheap, maxPrice.set(50.0))
/// ```
///
/// The template's SQL text contains `:p_maxPrice` whatever value is bound, so it is prepared once.
/// Running a template without binding one of its parameters throws
/// ``SqlCipherError/unboundParameter(name:)``; binding a name the template does not use throws
/// ``SqlCipherError/unknownParameter(name:)``. Names must be ASCII letters, digits and `_`, not
/// starting with a digit. Two `Param`s with the same name are the same parameter.
///
/// Comparing a parameter bound to `nil` with `==` never matches, as in SQL (`x = NULL` is NULL);
/// use ``SQLExpressible/isNull`` for NULL tests.
public struct Param<Value: DatabaseValueConvertible>: Sendable, SQLExpressible {
    /// The parameter's name, without the `:p_` prefix it gets in SQL.
    public let name: String

    /// A parameter called `name`.
    public init(_ name: String) {
        self.name = name
    }

    /// The binding that gives this parameter `value` for one execution.
    public func set(_ value: Value) -> ParameterBinding {
        ParameterBinding(name: name, value: value.databaseValue)
    }

    /// The parameter as an expression.
    public var sqlExpression: SQLExpression { SQLExpression(.parameter(name)) }
}

/// A value for one named parameter of a template, made by ``Param/set(_:)``.
public struct ParameterBinding: Sendable, Hashable, CustomStringConvertible {
    /// The parameter's name, without the `:p_` prefix.
    public let name: String
    /// The value to bind.
    public let value: DatabaseValue

    /// A binding of `value` to the parameter called `name`; ``Param/set(_:)`` is the public way to
    /// make one, typed by the parameter.
    package init(name: String, value: DatabaseValue) {
        self.name = name
        self.value = value
    }

    /// `name = value`.
    public var description: String { "\(name) = \(value)" }
}
