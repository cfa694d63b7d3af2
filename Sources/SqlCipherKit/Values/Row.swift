import Foundation

/// One row of a query result.
///
/// ```swift
/// let rows = try await db.query("SELECT id, name FROM products WHERE price < ?", 50.0)
/// for row in rows {
///     let name = row.get("name", as: String.self)          // String?: nil when NULL or not text
///     let id: Int = try row.decode("id", as: Int.self)       // throws with the reason
/// }
/// ```
///
/// Column names match exactly first, then without regard to ASCII case, as SQLite identifiers do.
/// The rows of one result share a single buffer, so a result of many rows costs one allocation
/// for its values.
public struct Row: Sendable, CustomStringConvertible {
    let storage: RowStorage
    let offset: Int

    /// The column names, in result order.
    public var columnNames: [String] { storage.columns.names }

    /// The number of columns.
    public var count: Int { storage.columns.names.count }

    /// The values, in column order.
    public var values: ArraySlice<DatabaseValue> { storage.values[offset..<(offset + count)] }

    /// The value at `index`. Traps when `index` is out of range, like an array; use
    /// ``get(_:as:)-(Int,_)`` for a checked read.
    public subscript(index: Int) -> DatabaseValue {
        precondition(index >= 0 && index < count, "column index \(index) out of range 0..<\(count)")
        return storage.values[offset + index]
    }

    /// The value of the named column, or `nil` when the row has no such column.
    public subscript(name: String) -> DatabaseValue? {
        guard let index = storage.columns.index(of: name) else { return nil }
        return storage.values[offset + index]
    }

    /// The named column converted to `T`, or `nil` when the column is missing, NULL, or not
    /// convertible (see ``DatabaseValueConvertible``).
    public func get<T: DatabaseValueConvertible>(_ name: String, as type: T.Type = T.self) -> T? {
        guard let value = self[name] else { return nil }
        return T.fromDatabaseValue(value)
    }

    /// The column at `index` converted to `T`, or `nil` when the index is out of range, the value
    /// is NULL, or not convertible.
    public func get<T: DatabaseValueConvertible>(_ index: Int, as type: T.Type = T.self) -> T? {
        guard index >= 0 && index < count else { return nil }
        return T.fromDatabaseValue(storage.values[offset + index])
    }

    /// The named column converted to `T`.
    ///
    /// Ask for an optional type (`String?.self`) to accept NULL.
    /// - Throws: ``SqlCipherError/columnNotFound(name:available:)`` or
    ///   ``SqlCipherError/typeMismatch(column:stored:expected:)``.
    public func decode<T: DatabaseValueConvertible>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let index = storage.columns.index(of: name) else {
            throw SqlCipherError.columnNotFound(name: name, available: columnNames)
        }
        return try decode(index, as: type)
    }

    /// The column at `index` converted to `T`.
    /// - Throws: ``SqlCipherError/columnIndexOutOfRange(index:count:)`` or
    ///   ``SqlCipherError/typeMismatch(column:stored:expected:)``.
    public func decode<T: DatabaseValueConvertible>(_ index: Int, as type: T.Type = T.self) throws -> T {
        guard index >= 0 && index < count else {
            throw SqlCipherError.columnIndexOutOfRange(index: index, count: count)
        }
        let value = storage.values[offset + index]
        guard let converted = T.fromDatabaseValue(value) else {
            throw SqlCipherError.typeMismatch(
                column: columnNames[index], stored: value.kindDescription, expected: String(describing: T.self))
        }
        return converted
    }

    /// The row as `name: value` pairs.
    public var description: String {
        "[" + zip(columnNames, values).map { "\($0): \($1)" }.joined(separator: ", ") + "]"
    }
}

/// Column names of a result, with a lookup table built once per result.
final class RowColumns: Sendable {
    let names: [String]
    private let exact: [String: Int]
    private let folded: [String: Int]

    init(names: [String]) {
        self.names = names
        var exact: [String: Int] = [:]
        var folded: [String: Int] = [:]
        for (index, name) in names.enumerated() {
            if exact[name] == nil { exact[name] = index }
            let key = name.lowercased()
            if folded[key] == nil { folded[key] = index }
        }
        self.exact = exact
        self.folded = folded
    }

    func index(of name: String) -> Int? {
        exact[name] ?? folded[name.lowercased()]
    }
}

/// The values of every row of one result, row after row.
final class RowStorage: Sendable {
    let columns: RowColumns
    let values: [DatabaseValue]

    init(columns: RowColumns, values: [DatabaseValue]) {
        self.columns = columns
        self.values = values
    }

    /// Splits the buffer into rows.
    func rows() -> [Row] {
        let width = columns.names.count
        guard width > 0 else { return [] }
        return stride(from: 0, to: values.count, by: width).map { Row(storage: self, offset: $0) }
    }
}
