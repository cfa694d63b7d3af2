import Foundation

/// The checks every SQL text passes before SQLite compiles it, and the statements the authorizer
/// refuses. Both run when a statement is prepared, never when a cached statement is reused: the
/// cache holds only statements whose text passed, and the authorizer also runs when SQLite
/// re-prepares a statement by itself.
extension SQLiteConnection {
    /// Throws ``SqlCipherError/nulCharacterInSQL(sql:offset:)`` when `sql` contains U+0000.
    ///
    /// SQLite reads SQL text only up to the first NUL, whatever length it is given, and reports no
    /// error for the rest: `DELETE FROM t\0 WHERE id = 1` would run `DELETE FROM t`. Called by every
    /// path that hands package-supplied text to `scb_prepare`.
    static func refuseNUL(in sql: String) throws {
        // Native strings are contiguous UTF-8: one memchr, the cost of a cache miss only.
        let offset: Int? = sql.utf8.withContiguousStorageIfAvailable { bytes -> Int? in
            guard let base = bytes.baseAddress, !bytes.isEmpty, let hit = memchr(base, 0, bytes.count) else { return nil }
            return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(hit))
        } ?? sql.utf8.firstIndex(of: 0).map { sql.utf8.distance(from: sql.utf8.startIndex, to: $0) }
        if let offset { throw SqlCipherError.nulCharacterInSQL(sql: sql, offset: offset) }
    }

    /// The typed error for a failed prepare of `sql`: ``SqlCipherError/unsafePragma(name:value:sql:)``
    /// when the authorizer refused a pragma (SQLite then fails with `SQLITE_AUTH`), otherwise
    /// SQLite's own error.
    func prepareError(_ rc: Int32, sql: String) -> SqlCipherError {
        if let refused = changeTracker.refusedPragma {
            changeTracker.refusedPragma = nil
            if rc & 0xFF == Self.sqliteAuth {
                return .unsafePragma(name: refused.name, value: refused.value, sql: sql)
            }
        }
        return error(rc, sql: sql)
    }

    /// `SQLITE_AUTH` (https://sqlite.org/rescode.html#auth).
    static let sqliteAuth: Int32 = 23
    /// `SQLITE_PRAGMA`, the authorizer's action code for a pragma (https://sqlite.org/c3ref/c_alter_table.html).
    static let pragmaAction: Int32 = 19
    /// `SQLITE_DENY` (https://sqlite.org/c3ref/c_deny.html).
    static let deny: Int32 = 1

    /// Whether the authorizer must refuse `PRAGMA <name> = <value>` (`value` nil when the pragma is
    /// only read). SQLCipher encrypts the database, its journals and WAL, but not SQLite's temporary
    /// files (sorter spills, temporary tables and indices, materializations), which Debian's builds
    /// put on disk by default (`SQLITE_TEMP_STORE=1`): the package sets `temp_store = MEMORY` and
    /// refuses every statement that would undo it. Reading either pragma stays allowed.
    ///
    /// Called from the C authorizer on every pragma: it compares bytes in place and allocates nothing.
    static func refusesPragma(_ name: UnsafePointer<CChar>, value: UnsafePointer<CChar>?) -> Bool {
        guard let value else { return false }
        if strcasecmp(name, "temp_store_directory") == 0 { return true }
        guard strcasecmp(name, "temp_store") == 0 else { return false }
        // SQLite's own reading of the value (getTempStore in pragma.c): a leading digit 0-2 is
        // taken as the number, "file" and "memory" by name, anything else as DEFAULT (0).
        let first = UInt8(bitPattern: value.pointee)
        if first >= UInt8(ascii: "0") && first <= UInt8(ascii: "2") { return first != UInt8(ascii: "2") }
        return strcasecmp(value, "memory") != 0
    }
}
