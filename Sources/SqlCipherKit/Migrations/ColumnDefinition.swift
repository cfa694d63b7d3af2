import Foundation

/// The declared type of a column, which gives it its type affinity
/// (https://sqlite.org/datatype3.html#type_affinity).
public enum ColumnType: String, Sendable, Hashable {
    /// `INTEGER`: a column of this type that is the primary key is the table's rowid.
    case integer = "INTEGER"
    /// `REAL`: floating point.
    case real = "REAL"
    /// `TEXT`: UTF-8 text.
    case text = "TEXT"
    /// `BLOB`: bytes, stored as given.
    case blob = "BLOB"
}

/// What happens to child rows when the parent row they reference is deleted or its key changes
/// (https://sqlite.org/foreignkeys.html#fk_actions).
public enum ForeignKeyAction: String, Sendable, Hashable {
    /// Delete (or update) the child rows too.
    case cascade = "CASCADE"
    /// Set the child's key columns to NULL.
    case setNull = "SET NULL"
    /// Set the child's key columns to their default values.
    case setDefault = "SET DEFAULT"
    /// Refuse the change while child rows exist, even inside a deferred transaction.
    case restrict = "RESTRICT"
    /// The default: the constraint is checked, nothing is changed.
    case noAction = "NO ACTION"
}

/// A constraint on one column of ``CreateTable`` or ``AlterTable``.
///
/// ```swift
/// CreateTable(TableName("orders"))
///     .column("id", .integer, .primaryKey, .autoincrement)
///     .column("code", .text, .notNull, .unique)
///     .column("total", .real, .notNull, .default(0.0))
///     .column("customer_id", .integer, .references(TableName("customers"), onDelete: .cascade))
/// ```
public struct ColumnConstraint: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case primaryKey
        case autoincrement
        case notNull
        case unique
        case defaultValue(DatabaseValue)
        case references(table: String, column: String?, onDelete: ForeignKeyAction?, onUpdate: ForeignKeyAction?)
    }

    let kind: Kind

    /// `PRIMARY KEY`. On an `INTEGER` column the column is the rowid.
    public static let primaryKey = ColumnConstraint(kind: .primaryKey)

    /// `PRIMARY KEY AUTOINCREMENT`: rowids are never reused, even after the largest row is deleted
    /// (https://sqlite.org/autoinc.html). Only for an `INTEGER` column.
    public static let autoincrement = ColumnConstraint(kind: .autoincrement)

    /// `NOT NULL`.
    public static let notNull = ColumnConstraint(kind: .notNull)

    /// `UNIQUE`.
    public static let unique = ColumnConstraint(kind: .unique)

    /// `DEFAULT value`. SQLite does not allow parameters in a schema, so the value is written into
    /// the SQL as a literal: numbers as numbers, text single-quoted with quotes doubled, bytes as
    /// `X'…'`. Text containing NUL cannot be written and is rejected when the statement runs.
    public static func `default`(_ value: some DatabaseValueConvertible) -> ColumnConstraint {
        ColumnConstraint(kind: .defaultValue(value.databaseValue))
    }

    /// `REFERENCES table(column) [ON DELETE action] [ON UPDATE action]`: a foreign key. Without a
    /// column it references the parent's primary key.
    public static func references(_ table: TableName, column: String? = nil, onDelete: ForeignKeyAction? = nil,
                                  onUpdate: ForeignKeyAction? = nil) -> ColumnConstraint {
        ColumnConstraint(kind: .references(table: table.name, column: column, onDelete: onDelete, onUpdate: onUpdate))
    }
}

/// One column of a table: name, type and constraints.
struct ColumnDefinition: Sendable, Hashable {
    let name: String
    let type: ColumnType
    let constraints: [ColumnConstraint]

    /// `"name" TYPE constraints…`
    func render() throws -> String {
        var sql = try SQLRenderer.quoteIdentifier(name) + " " + type.rawValue
        let isAutoincrement = constraints.contains { $0.kind == .autoincrement }
        var wrotePrimaryKey = false
        for constraint in constraints {
            switch constraint.kind {
            case .primaryKey, .autoincrement:
                guard !wrotePrimaryKey else { continue }
                wrotePrimaryKey = true
                sql += isAutoincrement ? " PRIMARY KEY AUTOINCREMENT" : " PRIMARY KEY"
            case .notNull:
                sql += " NOT NULL"
            case .unique:
                sql += " UNIQUE"
            case .defaultValue(let value):
                sql += " DEFAULT " + (try SQLLiteral.render(value))
            case let .references(table, column, onDelete, onUpdate):
                sql += " REFERENCES " + (try SQLRenderer.quoteIdentifier(table))
                if let column { sql += " (" + (try SQLRenderer.quoteIdentifier(column)) + ")" }
                if let onDelete { sql += " ON DELETE " + onDelete.rawValue }
                if let onUpdate { sql += " ON UPDATE " + onUpdate.rawValue }
            }
        }
        return sql
    }
}

/// Values written into schema SQL, where SQLite accepts no parameters.
enum SQLLiteral {
    /// A SQL literal for `value` that reads back as the same value.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for text containing NUL.
    static func render(_ value: DatabaseValue) throws -> String {
        switch value {
        case .null:
            return "NULL"
        case .integer(let int):
            return String(int)
        case .real(let double):
            if double.isNaN { return "NULL" }
            // SQLite reads a literal too large for a double as infinity.
            if double.isInfinite { return double < 0 ? "-1e999" : "1e999" }
            // Swift prints the shortest text that reads back as the same double, always with a
            // `.` or an exponent, so SQLite reads it as a real.
            return "\(double)"
        case .text(let text):
            guard !text.unicodeScalars.contains("\0") else {
                throw SqlCipherError.invalidQuery(
                    reason: "the default text \(SQLRenderer.visible(text)) contains a NUL character, which schema SQL "
                        + "cannot hold; use a default without NUL, or a blob")
            }
            return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data):
            let digits = Array("0123456789ABCDEF".utf8)
            var hex: [UInt8] = []
            hex.reserveCapacity(data.count * 2)
            for byte in data {
                hex.append(digits[Int(byte >> 4)])
                hex.append(digits[Int(byte & 0x0F)])
            }
            return "X'" + String(decoding: hex, as: UTF8.self) + "'"
        }
    }
}
