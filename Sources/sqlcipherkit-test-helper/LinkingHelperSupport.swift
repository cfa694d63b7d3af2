import CSQLite3
import Foundation
import SqlCipherKit

// Support for the linking scenarios (load-library, linked-sqlite3, already-loaded): plaintext
// work through the linked libsqlite3, and outcomes printed as one JSON object per line.

/// Prints one JSON object as a line. Values are strings, numbers, booleans or arrays of strings.
func reportJSON(_ object: [String: Any]) {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    report(String(decoding: data, as: UTF8.self))
}

/// The case name and fields of a loading error, for the parent test to match exactly.
func loadErrorFields(_ error: any Error) -> [String: Any] {
    var fields: [String: Any] = ["description": "\(error)"]
    guard let error = error as? SqlCipherError else {
        fields["case"] = "notSqlCipherError"
        return fields
    }
    switch error {
    case let .libraryNotFound(searched, package):
        fields.merge(["case": "libraryNotFound", "searched": searched, "package": package]) { $1 }
    case let .notSQLCipher(path, reason):
        fields.merge(["case": "notSQLCipher", "path": path, "reason": reason]) { $1 }
    case let .bindingConflict(path, foreign, checked, symbol, boundTo):
        fields.merge(["case": "bindingConflict", "path": path, "foreign": foreign, "checked": checked,
                      "symbol": symbol, "boundTo": boundTo]) { $1 }
    case let .missingSymbol(path, symbol):
        fields.merge(["case": "missingSymbol", "path": path, "symbol": symbol]) { $1 }
    case let .unsupportedRuntime(reason):
        fields.merge(["case": "unsupportedRuntime", "reason": reason]) { $1 }
    case let .libraryAlreadyLoaded(loaded, requested):
        fields.merge(["case": "libraryAlreadyLoaded", "loaded": loaded, "requested": requested]) { $1 }
    default:
        fields["case"] = Mirror(reflecting: error).children.first?.label ?? "\(error)"
    }
    return fields
}

/// A failed step of a linking command.
struct LinkingHelperError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Plaintext SQLite work through the libsqlite3 this helper links: every call here binds, at
/// link time, to libsqlite3's sqlite3_* functions, never to the SQLCipher the bridge loaded.
enum PlainSQLite {
    /// `sqlite3_libversion()` of the linked libsqlite3.
    static var version: String { String(cString: sqlite3_libversion()) }

    /// Runs SQL (several statements allowed) on `path`; returns the rows of the last statement as
    /// text, or throws with SQLite's result code and message.
    @discardableResult
    static func run(_ path: String, _ sql: String) throws -> [[String]] {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        guard sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(db)
            throw PlainSQLiteError(code: 14, message: message)
        }
        defer { sqlite3_close(db) }
        var rows: [[String]] = []
        var remaining = sql
        while !remaining.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            var statement: OpaquePointer?
            var consumed = 0
            let rc = remaining.withCString { text -> Int32 in
                var tail: UnsafePointer<CChar>?
                let rc = sqlite3_prepare_v2(db, text, -1, &statement, &tail)
                if let tail { consumed = tail - text }
                return rc
            }
            guard rc == SQLITE_OK else { throw PlainSQLiteError(code: rc, message: String(cString: sqlite3_errmsg(db))) }
            remaining = String(decoding: Array(remaining.utf8).dropFirst(consumed), as: UTF8.self)
            guard let statement else { continue }
            defer { sqlite3_finalize(statement) }
            rows = []
            while true {
                let step = sqlite3_step(statement)
                if step == SQLITE_DONE { break }
                guard step == SQLITE_ROW else {
                    throw PlainSQLiteError(code: step, message: String(cString: sqlite3_errmsg(db)))
                }
                rows.append((0..<sqlite3_column_count(statement)).map { column in
                    sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
                })
            }
        }
        return rows
    }
}

/// An error from the linked libsqlite3.
struct PlainSQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    var description: String { "libsqlite3 error \(code): \(message)" }
}

/// Loads `library` (a libcrypto file name, e.g. `libcrypto.so.3`) into the global scope and
/// initialises it with the options a TLS client such as libcurl uses
/// (`OPENSSL_INIT_ADD_ALL_CIPHERS | OPENSSL_INIT_ADD_ALL_DIGESTS | OPENSSL_INIT_LOAD_CONFIG`),
/// which registers `OPENSSL_cleanup` with `atexit` before SqlCipherKit loads its library: the
/// process the exit gate is for (exit-while-reading, exit-during).
func initialiseLibcrypto(_ library: String) throws {
    guard let handle = dlopen(library, RTLD_NOW | RTLD_GLOBAL), let symbol = dlsym(handle, "OPENSSL_init_crypto") else {
        throw DatabaseHelperError(message: "cannot load OPENSSL_init_crypto from \(library)")
    }
    typealias Initialise = @convention(c) (UInt64, UnsafeRawPointer?) -> Int32
    guard unsafeBitCast(symbol, to: Initialise.self)(0x04 | 0x08 | 0x40, nil) == 1 else {
        throw DatabaseHelperError(message: "OPENSSL_init_crypto failed in \(library)")
    }
}
