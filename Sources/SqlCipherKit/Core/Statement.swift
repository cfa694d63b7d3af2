import CSqlCipherBridge
import Foundation

/// A prepared statement of the loaded library (https://sqlite.org/c3ref/stmt.html).
///
/// Owned by one ``SQLiteConnection`` and used only on its isolation domain. Statements are
/// prepared with `sqlite3_prepare_v2`/`v3`, so SQLite re-prepares them by itself after a schema
/// change (https://sqlite.org/c3ref/prepare.html); column names are read at each execution for
/// the same reason.
final class Statement {
    let handle: OpaquePointer
    let sql: String
    /// Whether the SQL text holds more statements after this one.
    let hasTrailingStatements: Bool
    /// The number of parameters (`?`, `?NNN`, `:name`).
    let parameterCount: Int
    unowned let connection: SQLiteConnection
    /// What live queries know about this statement (Statement+Observation.swift).
    var observation = StatementObservation()

    init(handle: OpaquePointer, sql: String, hasTrailingStatements: Bool, connection: SQLiteConnection) {
        self.handle = handle
        self.sql = sql
        self.hasTrailingStatements = hasTrailingStatements
        self.parameterCount = Int(scb_bind_parameter_count(handle))
        self.connection = connection
    }

    deinit {
        scb_finalize(handle)
    }

    /// Whether the statement leaves the database unchanged (https://sqlite.org/c3ref/stmt_readonly.html).
    var isReadOnly: Bool { scb_stmt_readonly(handle) != 0 }

    /// Binds positional arguments, after checking that there is exactly one per parameter.
    func bind(_ arguments: [DatabaseValue]) throws {
        guard arguments.count == parameterCount else {
            throw SqlCipherError.argumentCountMismatch(expected: parameterCount, given: arguments.count, sql: sql)
        }
        for (offset, value) in arguments.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one value at a 1-based parameter index.
    func bind(_ value: DatabaseValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .null:
            rc = scb_bind_null(handle, index)
        case .integer(let int):
            rc = scb_bind_int64(handle, index, int)
        case .real(let double):
            rc = scb_bind_double(handle, index, double)
        case .text(var text):
            rc = text.withUTF8 { utf8 in
                // A non-null pointer even for "" so SQLite binds an empty text, not NULL.
                utf8.withMemoryRebound(to: CChar.self) { chars in
                    guard let base = chars.baseAddress else { return scb_bind_text(handle, index, "", 0) }
                    return scb_bind_text(handle, index, base, Int32(chars.count))
                }
            }
        case .blob(let data):
            rc = data.withUnsafeBytes { bytes in
                // SQLite binds a NULL pointer as NULL; an empty blob needs a valid pointer.
                var empty: UInt8 = 0
                guard let base = bytes.baseAddress, bytes.count > 0 else {
                    return scb_bind_blob(handle, index, &empty, 0)
                }
                return scb_bind_blob(handle, index, base, Int32(bytes.count))
            }
        }
        guard rc == 0 else { throw connection.error(rc, sql: sql) }
    }

    /// The 1-based index of a named parameter such as `:name`, or nil.
    func parameterIndex(_ name: String) -> Int32? {
        let index = scb_bind_parameter_index(handle, name)
        return index > 0 ? index : nil
    }

    /// The name of the parameter at a 1-based index (`:name`), or nil for `?`.
    func parameterName(at index: Int32) -> String? {
        scb_bind_parameter_name(handle, index).map { String(cString: $0) }
    }

    /// Resets the statement and clears its bindings so that it can be reused from the cache.
    func reset() {
        observation.started = false
        scb_reset(handle)
        scb_clear_bindings(handle)
    }

    /// The result's column names, as of the current preparation.
    func columnNames() -> [String] {
        let count = scb_column_count(handle)
        return (0..<count).map { index in
            scb_column_name(handle, index).map { String(cString: $0) } ?? ""
        }
    }

    /// The value of column `index` of the current row.
    @inline(__always)
    func value(at index: Int32) -> DatabaseValue {
        switch scb_column_type(handle, index) {
        case 1:
            return .integer(scb_column_int64(handle, index))
        case 2:
            return .real(scb_column_double(handle, index))
        case 3:
            guard let text = scb_column_text(handle, index) else { return .text("") }
            let count = Int(scb_column_bytes(handle, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case 4:
            let count = Int(scb_column_bytes(handle, index))
            guard count > 0, let bytes = scb_column_blob(handle, index) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default:
            return .null
        }
    }

    /// Steps once: true when a row is available, false when done.
    @inline(__always)
    func step() throws -> Bool {
        if !observation.started { try connection.statementWillRun(self) }
        let rc = scb_step(handle)
        if rc == 100 { return true }
        if rc == 101 { return false }
        throw connection.error(rc, sql: sql)
    }

    /// Runs the statement to completion and collects every row.
    ///
    /// Column names are read after the first step: a statement whose schema changed is prepared
    /// again inside `sqlite3_step`, so before it the count and names can still be the old ones
    /// (for example `SELECT *` after `ALTER TABLE ... ADD COLUMN`).
    func fetchAll() throws -> [Row] {
        var names: [String]?
        var width: Int32 = 0
        var values: [DatabaseValue] = []
        while try step() {
            if names == nil {
                let current = columnNames()
                names = current
                width = Int32(current.count)
            }
            for index in 0..<width {
                values.append(value(at: index))
            }
        }
        return RowStorage(columns: RowColumns(names: names ?? columnNames()), values: values).rows()
    }

    /// Runs the statement to completion, discarding rows.
    func run() throws {
        while try step() {}
    }
}
