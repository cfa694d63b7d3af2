import Foundation

/// A SQL function written in Swift: a scalar function, or an aggregate over a group of rows
/// (``DatabaseAggregate``). Add it to a database with ``Database/add(function:)``.
///
/// ```swift
/// let slug = DatabaseFunction("slug", deterministic: true) { (title: String) in
///     title.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(separator: "-")
/// }
/// try await db.add(function: slug)
/// let rows = try await db.query("SELECT id FROM posts WHERE slug(title) = ?", "hello-world")
/// ```
///
/// - Arguments and the result use the package's value conversions (``DatabaseValueConvertible``):
///   a typed closure receives its arguments converted as `Row.get` converts columns, and an
///   argument that does not convert (text for an `Int`, NULL for a non-optional) fails the call
///   with ``SqlCipherError/functionFailed(name:message:sql:)``. Take an optional to accept NULL,
///   or ``DatabaseValue`` to accept anything.
/// - A Swift error thrown by the closure fails the statement the same way, with the error's
///   description as SQLite's message; SQLite undoes what the statement had changed.
/// - The closure runs on the connection's thread, inside `sqlite3_step`, and receives no
///   connection: it cannot run SQL on the database that calls it, and must not wait for anything
///   that needs that database (an `await db...` from another task would wait for the very
///   statement that is calling the function).
/// - A name that SQLite already defines (`lower`, `count`, `json_extract`, ...) or that starts with
///   `sqlcipher` is refused (``SqlCipherError/registrationFailed(name:reason:)``): the package's own
///   checks and conversions count on those functions, and an index or view built with the
///   built-in would silently change meaning.
public struct DatabaseFunction: Sendable {
    /// The name SQL calls the function by (compared without regard to ASCII case).
    public let name: String
    /// The number of arguments, or nil for any number (SQLite's `-1`).
    public let argumentCount: Int?
    /// Whether the function always returns the same result for the same arguments and has no side
    /// effect (`SQLITE_DETERMINISTIC`): SQLite may then compute it once per statement for constant
    /// arguments, and lets indexes, `CHECK` constraints and generated columns use it.
    public let isDeterministic: Bool
    /// Whether the database's schema (triggers, views, `CHECK` and `DEFAULT` expressions, indexes on
    /// expressions, generated columns) may call the function. Off by default: a database file made
    /// by someone else could otherwise make every `INSERT` of yours call the function with
    /// arguments of its choosing. Only set it for functions without side effects that reveal
    /// nothing beyond their result (`SQLITE_INNOCUOUS`); functions without it are
    /// `SQLITE_DIRECTONLY`, and the package enforces that on SQLite versions that predate the flag.
    public let isAllowedInSchema: Bool

    enum Body: Sendable {
        case scalar(@Sendable ([DatabaseValue]) throws -> DatabaseValue)
        case aggregate(@Sendable () -> any AggregateAccumulator)
    }

    let body: Body

    /// A scalar function of typed arguments: their number is the closure's.
    ///
    /// ```swift
    /// DatabaseFunction("plus", deterministic: true) { (a: Int, b: Int) in a + b }
    /// DatabaseFunction("initial") { (name: String?) in name?.first.map(String.init) }   // NULL in, NULL out
    /// ```
    /// - Parameters:
    ///   - name: The SQL name; 1 to 255 bytes of UTF-8 without NUL.
    ///   - deterministic: See ``isDeterministic``.
    ///   - allowedInSchema: See ``isAllowedInSchema``.
    ///   - function: The body. Its arguments and result are ``DatabaseValueConvertible``.
    public init<each Argument: DatabaseValueConvertible, Result: DatabaseValueConvertible>(
        _ name: String, deterministic: Bool = false, allowedInSchema: Bool = false,
        _ function: @escaping @Sendable (repeat each Argument) throws -> Result
    ) {
        var count = 0
        for _ in repeat (each Argument).self { count += 1 }
        self.name = name
        self.argumentCount = count
        self.isDeterministic = deterministic
        self.isAllowedInSchema = allowedInSchema
        let functionName = name
        self.body = .scalar { [count] values in
            // SQLite checks the count of a function of fixed arity before calling it.
            guard values.count == count else {
                throw FunctionArgumentCountError(function: functionName, expected: count, given: values.count)
            }
            var position = 0
            func argument<T: DatabaseValueConvertible>(_ type: T.Type) throws -> T {
                defer { position += 1 }
                return try DatabaseFunction.convert(values[position], to: type, position: position, function: functionName)
            }
            return try function(repeat try argument((each Argument).self)).databaseValue
        }
    }

    /// A scalar function of raw values, with a fixed number of arguments or any number (nil).
    ///
    /// ```swift
    /// DatabaseFunction("coalesce_text", argumentCount: nil) { values in
    ///     values.first { !$0.isNull }.map { "\($0)" }
    /// }
    /// ```
    public init<Result: DatabaseValueConvertible>(
        _ name: String, argumentCount: Int?, deterministic: Bool = false, allowedInSchema: Bool = false,
        _ function: @escaping @Sendable ([DatabaseValue]) throws -> Result
    ) {
        self.name = name
        self.argumentCount = argumentCount
        self.isDeterministic = deterministic
        self.isAllowedInSchema = allowedInSchema
        self.body = .scalar { try function($0).databaseValue }
    }

    /// An aggregate function: each group of rows gets a new `Aggregate`, whose
    /// ``DatabaseAggregate/step(_:)`` receives each row's arguments and whose
    /// ``DatabaseAggregate/result()`` is the group's value.
    ///
    /// ```swift
    /// try await db.add(function: DatabaseFunction("median", argumentCount: 1, aggregate: Median.self))
    /// ```
    public init<Aggregate: DatabaseAggregate>(
        _ name: String, argumentCount: Int?, deterministic: Bool = false, allowedInSchema: Bool = false,
        aggregate: Aggregate.Type
    ) {
        self.name = name
        self.argumentCount = argumentCount
        self.isDeterministic = deterministic
        self.isAllowedInSchema = allowedInSchema
        self.body = .aggregate { AggregateBox<Aggregate>() }
    }

    /// The function's identity in SQLite.
    var key: FunctionKey { FunctionKey(name: name, argumentCount: Int32(clamping: argumentCount ?? -1)) }

    /// `value`, argument `position` (0-based) of `function`, as `T`.
    /// - Throws: ``FunctionArgumentError`` when it does not convert.
    static func convert<T: DatabaseValueConvertible>(_ value: DatabaseValue, to type: T.Type, position: Int,
                                                     function: String) throws -> T {
        if let converted = T.fromDatabaseValue(value) { return converted }
        throw FunctionArgumentError(function: function, position: position + 1, value: value,
                                    expected: String(describing: T.self))
    }
}

/// An argument of a typed ``DatabaseFunction`` that does not convert to the closure's type.
struct FunctionArgumentError: Error, CustomStringConvertible {
    let function: String
    let position: Int
    let value: DatabaseValue
    let expected: String

    var description: String {
        "argument \(position) of \(function)() is \(value.kindDescription), which cannot be read as \(expected)"
            + (value.isNull ? " (take an optional to accept NULL)" : "")
    }
}

/// A call with another number of arguments than the function takes (SQLite refuses those before
/// the call; this is the package's own check behind it).
struct FunctionArgumentCountError: Error, CustomStringConvertible {
    let function: String
    let expected: Int
    let given: Int

    var description: String {
        "\(function)() takes \(expected) argument(s), not \(given)"
    }
}
