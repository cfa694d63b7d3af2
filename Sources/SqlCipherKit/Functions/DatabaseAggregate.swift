/// The state of an aggregate SQL function over one group of rows, such as `sum` or `group_concat`.
///
/// ```swift
/// struct Median: DatabaseAggregate {
///     var values: [Double] = []
///     mutating func step(_ arguments: [DatabaseValue]) throws {
///         if let value = Double.fromDatabaseValue(arguments[0]) { values.append(value) }
///     }
///     func result() -> Double? {
///         let sorted = values.sorted()
///         guard !sorted.isEmpty else { return nil }
///         let middle = sorted.count / 2
///         return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
///     }
/// }
/// try await db.add(function: DatabaseFunction("median", argumentCount: 1, aggregate: Median.self))
/// let median = try await db.query("SELECT median(price) FROM products")[0].get(0, as: Double.self)
/// ```
///
/// SQLite creates one value with `init()` for each group (also for an empty one, whose result is
/// then the value's ``result()`` without any step), calls ``step(_:)`` once per row with that row's
/// arguments, and reads ``result()`` at the end. An error thrown by either fails the statement
/// with ``SqlCipherError/functionFailed(name:message:sql:)``. The value lives on the connection's
/// thread for the duration of one statement; it must be `Sendable` only because its type is
/// stored with the database's other definitions.
public protocol DatabaseAggregate: Sendable {
    /// The type of the aggregate's value.
    associatedtype Result: DatabaseValueConvertible

    /// An empty aggregate, for a new group.
    init()

    /// Adds one row's arguments (as many as the function's `argumentCount`, or any number when it
    /// is nil).
    mutating func step(_ arguments: [DatabaseValue]) throws

    /// The group's value.
    func result() throws -> Result
}

/// An aggregate's state behind a type-erased box, which the C callbacks keep in SQLite's
/// aggregate context between rows.
protocol AggregateAccumulator: AnyObject {
    func step(_ arguments: [DatabaseValue]) throws
    func result() throws -> DatabaseValue
}

final class AggregateBox<Aggregate: DatabaseAggregate>: AggregateAccumulator {
    private var state = Aggregate()

    func step(_ arguments: [DatabaseValue]) throws {
        try state.step(arguments)
    }

    func result() throws -> DatabaseValue {
        try state.result().databaseValue
    }
}
