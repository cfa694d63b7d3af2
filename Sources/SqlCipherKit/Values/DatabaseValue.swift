import Foundation

/// A value as SQLite stores it: one of its five storage classes
/// (https://sqlite.org/datatype3.html).
///
/// ```swift
/// try await db.execute("INSERT INTO t(a, b) VALUES (?, ?)", DatabaseValue.null, DatabaseValue.integer(1))
/// let value = rows[0]["a"]   // DatabaseValue?
/// ```
///
/// A stored text whose bytes are not valid UTF-8 (SQLite does not check what other programs
/// store) is read as ``blob(_:)`` of exactly those bytes, since a `String` would have to replace
/// them: read it as `Data` to get it unchanged.
public enum DatabaseValue: Sendable, Hashable, CustomStringConvertible {
    /// SQL NULL.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE 754 double.
    case real(Double)
    /// UTF-8 text; embedded NUL characters are kept.
    case text(String)
    /// Bytes.
    case blob(Data)

    /// Whether this is SQL NULL.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The storage class name SQLite uses in `typeof()`: `null`, `integer`, `real`, `text` or `blob`.
    public var storageClass: String {
        switch self {
        case .null: return "null"
        case .integer: return "integer"
        case .real: return "real"
        case .text: return "text"
        case .blob: return "blob"
        }
    }

    /// A short, readable rendering for messages (long text and blobs are abbreviated).
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value):
            return value.count > 40 ? "'\(value.prefix(40))…' (\(value.utf8.count) bytes)" : "'\(value)'"
        case .blob(let data): return "blob of \(data.count) bytes"
        }
    }

    /// The storage class and value, for error messages: e.g. `text 'abc'`.
    var kindDescription: String {
        switch self {
        case .null: return "NULL"
        default: return "\(storageClass) \(description)"
        }
    }
}

extension DatabaseValue: DatabaseValueConvertible {
    /// The value itself.
    public var databaseValue: DatabaseValue { self }

    /// The value itself; never fails.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> DatabaseValue? { value }
}
