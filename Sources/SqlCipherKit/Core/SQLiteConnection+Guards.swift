import CSqlCipherBridge
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
        if let offset { throw SqlCipherError.nulCharacterInSQL(sql: sql, offset: offset).redactingSQL() }
    }

    /// The typed error for a failed prepare of `sql`: the refusal the authorizer recorded when
    /// SQLite failed with `SQLITE_AUTH` (see ``error(_:sql:)``), otherwise SQLite's own error.
    func prepareError(_ rc: Int32, sql: String) -> SqlCipherError {
        error(rc, sql: sql)
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
    /// `writable_schema` may be read and turned off, never on: with it, `UPDATE sqlite_master` can
    /// leave one malformed schema entry, after which no key opens the file again (all its rows are
    /// lost; https://sqlite.org/pragma.html#pragma_writable_schema).
    ///
    /// Called from the C authorizer on every pragma: it compares bytes in place and allocates nothing.
    static func refusesPragma(_ name: UnsafePointer<CChar>, value: UnsafePointer<CChar>?) -> Bool {
        guard let value else { return false }
        if strcasecmp(name, "writable_schema") == 0 {
            return strcmp(value, "0") != 0 && strcasecmp(value, "off") != 0 && strcasecmp(value, "no") != 0
                && strcasecmp(value, "false") != 0
        }
        if strcasecmp(name, "temp_store_directory") == 0 { return true }
        guard strcasecmp(name, "temp_store") == 0 else { return false }
        // SQLite's own reading of the value (getTempStore in pragma.c): a leading digit 0-2 is
        // taken as the number, "file" and "memory" by name, anything else as DEFAULT (0).
        let first = UInt8(bitPattern: value.pointee)
        if first >= UInt8(ascii: "0") && first <= UInt8(ascii: "2") { return first != UInt8(ascii: "2") }
        return strcasecmp(value, "memory") != 0
    }
}

extension SQLiteConnection {
    /// The pragmas whose setting lives in one connection, not in the file
    /// (https://sqlite.org/pragma.html): set as raw SQL on a ``DatabasePool``, each would reach
    /// whichever connection ran the call. `temp_store` is not here: it is refused everywhere.
    /// `defer_foreign_keys` is not either: it lasts one transaction, which runs on one connection.
    static let perConnectionPragmas: [StaticString] = [
        "analysis_limit", "automatic_index", "busy_timeout", "cache_size", "cache_spill", "case_sensitive_like",
        "cell_size_check", "checkpoint_fullfsync", "count_changes", "empty_result_callbacks", "foreign_keys",
        "full_column_names", "fullfsync", "ignore_check_constraints", "journal_size_limit", "legacy_alter_table",
        "locking_mode", "mmap_size", "query_only", "read_uncommitted", "recursive_triggers",
        "reverse_unordered_selects", "secure_delete", "short_column_names", "synchronous", "threads",
        "trusted_schema", "wal_autocheckpoint",
    ]

    /// Whether `name` is one of ``perConnectionPragmas`` (compared in place, as SQLite compares
    /// pragma names: without regard to ASCII case).
    static func isPerConnectionPragma(_ name: UnsafePointer<CChar>) -> Bool {
        perConnectionPragmas.contains { known in
            known.withUTF8Buffer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { strcasecmp(name, $0.baseAddress!) == 0 }
            }
        }
    }
}

// MARK: - Raw SQL that would defeat the encryption, and transaction control inside a body

/// What a statement is, as far as the guards care, learned from the authorizer while it compiled.
enum StatementGuardKind: UInt8 {
    case ordinary
    /// `BEGIN`, `COMMIT`/`END`, `ROLLBACK`, `SAVEPOINT`, `RELEASE`, `ROLLBACK TO`.
    case transactionControl
    /// `ATTACH`: the key it attaches with is only known once it ran.
    case attach
}

/// The per-connection state of the SQL guards. The authorizer reaches it through the connection's
/// ``ChangeTracker`` (its context pointer), so it lives there; it is a class so that the C
/// callback can update it while Swift code that started the compile holds no access to it.
final class SQLGuard {
    /// Whether the connection's main database is encrypted (a key was given at open). Decides
    /// whether `page_size` may be set and which databases `ATTACH` may add.
    var isEncrypted = false
    /// Whether `VACUUM INTO` writes a copy this database's settings open: true unless the database
    /// is encrypted and was opened with non-default ``CipherSettings``.
    var allowsVacuumInto = true
    /// Whose SQL runs now and what it may do (ConnectionScope.swift): the guards read it here,
    /// in the authorizer, and on the statement path.
    let scope = ConnectionScope()
    /// Set when the authorizer allowed something in the current compile only because the package
    /// runs it: such a statement is never cached, so user SQL of the same text cannot reuse it.
    var bypassed = false
    /// What the current compile reported (reset before each compile the package starts).
    var kind = StatementGuardKind.ordinary
    /// What the authorizer refused in the compile that just failed, for a typed error.
    var refused: Refusal?
    /// When the user's `ATTACH` running now started, on the clock the kernel stamps files with
    /// (`CLOCK_REALTIME_COARSE`): a refused attachment removes the empty file it created.
    var attachStarted: timespec?
    /// A database that ``SQLiteConnection/attachDidRun(_:)`` could not detach again; while it is
    /// set, every statement is refused.
    var unsafeAttachment: (schema: String, path: String, encrypted: Bool)?
    /// The schema of the plaintext file that ``SQLiteConnection/withPlaintextAttached(_:as:_:)``
    /// attached: every action on it but a read is refused while it is set.
    var readOnlySchema: String?
    /// Lower-cased names of the SQL functions added without `allowedInSchema`
    /// (SQLiteConnection+Functions.swift), on SQLite before 3.30 only: a trigger or view that calls
    /// one is refused (so is a common table expression, which the authorizer cannot tell apart).
    var directOnlyFunctions: Set<String> = []

    enum Refusal {
        case pragma(name: String, value: String)
        case function(name: String)
        case perConnectionPragma(name: String)
        case transactionControl
        case attachment(schema: String, path: String, encrypted: Bool)
        case functionInSchema(name: String)
        case plaintextWrite(schema: String)

        /// The typed error for a statement `sql` refused this way.
        func error(sql: String) -> SqlCipherError {
            unredactedError(sql: sql).redactingSQL()
        }

        private func unredactedError(sql: String) -> SqlCipherError {
            switch self {
            case let .pragma(name, value): return .unsafePragma(name: name, value: value, sql: sql)
            case let .function(name): return .unsafeFunction(name: name, sql: sql)
            case let .perConnectionPragma(name): return .perConnectionPragma(name: name, sql: sql)
            case .transactionControl: return .transactionControlInBody(sql: sql)
            case let .attachment(schema, path, encrypted):
                return .unsafeAttach(schema: schema, path: path, encrypted: encrypted, sql: sql).redactingSQL()
            case let .functionInSchema(name): return .functionNotAllowedInSchema(name: name, sql: sql)
            case let .plaintextWrite(schema): return .plaintextAttachmentWrite(schema: schema, sql: sql)
            }
        }
    }

    /// Clears what the previous compile recorded; called right before a compile of user text.
    func willCompile() {
        kind = .ordinary
        bypassed = false
        refused = nil
    }
}

extension SQLiteConnection {
    /// Authorizer action codes (https://sqlite.org/c3ref/c_alter_table.html).
    static let transactionAction: Int32 = 22
    static let attachAction: Int32 = 24
    static let functionAction: Int32 = 31
    static let savepointAction: Int32 = 32
    static let readAction: Int32 = 20

    /// The authorizer's answer (`SQLITE_OK` or `SQLITE_DENY`) for one action of a compile, and what
    /// it learns about the statement on the way. Runs for every action of every compile (cache
    /// misses, SQLite's own re-preparations, nested statements of `VACUUM` and `sqlcipher_export`):
    /// ordinary actions cost one switch.
    ///
    /// `context` is the innermost trigger, view or common table expression the action comes from
    /// (nil for the statement's own SQL): before SQLite 3.30, a function added without
    /// `allowedInSchema` is refused there (``SQLGuard/directOnlyFunctions`` is empty from 3.30 on,
    /// where SQLite refuses it by itself with `SQLITE_DIRECTONLY`, and allows it in a `WITH` clause).
    ///
    /// `database` is the schema the action is on (nil for actions on none): while a plaintext file
    /// is attached for reading (``SQLGuard/readOnlySchema``), any action on its schema but a read
    /// (an insert, update, delete, create, drop, alter, pragma) is refused, so nothing of the
    /// encrypted database can be written to it.
    static func authorize(_ sqlGuard: SQLGuard, action: Int32, first: UnsafePointer<CChar>?,
                          second: UnsafePointer<CChar>?, database: UnsafePointer<CChar>? = nil,
                          context: UnsafePointer<CChar>? = nil) -> Int32 {
        if let attachment = sqlGuard.unsafeAttachment {
            sqlGuard.refused = .attachment(schema: attachment.schema, path: attachment.path, encrypted: attachment.encrypted)
            return deny
        }
        if let schema = sqlGuard.readOnlySchema, let database, action != readAction,
           strcasecmp(database, schema) == 0 {
            sqlGuard.refused = .plaintextWrite(schema: schema)
            return deny
        }
        switch action {
        case pragmaAction:
            guard let first else { return 0 }
            if refusesPragma(first, value: second) {
                sqlGuard.refused = .pragma(name: String(cString: first), value: second.map { String(cString: $0) } ?? "")
                return deny
            }
            let scope = sqlGuard.scope
            if second != nil, scope.isPooled, isPerConnectionPragma(first) {
                if scope.refusesPerConnectionPragmas {
                    sqlGuard.refused = .perConnectionPragma(name: String(cString: first))
                    return deny
                }
                // Never cached: user SQL of the same text must be judged again.
                sqlGuard.bypassed = true
            }
            guard CipherPragmaRule.refuses(first, value: second, encrypted: sqlGuard.isEncrypted) else { return 0 }
            if scope.isPackage {
                sqlGuard.bypassed = true
                return 0
            }
            sqlGuard.refused = .pragma(name: String(cString: first), value: second.map { String(cString: $0) } ?? "")
            return deny
        case functionAction:
            // The function's name is the second argument (https://sqlite.org/c3ref/c_alter_table.html).
            if !sqlGuard.directOnlyFunctions.isEmpty, context != nil, let second,
               sqlGuard.directOnlyFunctions.contains(FunctionKey.fold(String(cString: second))) {
                sqlGuard.refused = .functionInSchema(name: String(cString: second))
                return deny
            }
            guard let second, strncasecmp(second, "sqlcipher", 9) == 0 else { return 0 }
            if sqlGuard.scope.isPackage {
                sqlGuard.bypassed = true
                return 0
            }
            sqlGuard.refused = .function(name: String(cString: second))
            return deny
        case transactionAction, savepointAction:
            sqlGuard.kind = .transactionControl
            // A compile inside a body is refused here; a cached statement is checked again when it
            // runs (statementWillRun), because the same text is allowed outside a body.
            if sqlGuard.scope.refusesTransactionControl {
                sqlGuard.refused = .transactionControl
                return deny
            }
            return 0
        case attachAction:
            sqlGuard.kind = .attach
            return 0
        default:
            return 0
        }
    }

    /// Runs `body` as the package's own SQL: the cipher rules and the transaction rule let its
    /// statements through, and whatever needed that is not cached.
    /// (The `package` scope of ConnectionScope.swift.)
    func asPackage<T>(_ body: () throws -> T) rethrows -> T {
        try scope.with(.package, body)
    }

    /// Whose SQL runs now and what it may do (ConnectionScope.swift).
    var scope: ConnectionScope { changeTracker.sqlGuard.scope }

    /// The run-time half of the transaction rule, for statements that were compiled (and cached)
    /// outside a body: throws ``SqlCipherError/transactionControlInBody(sql:)`` before the statement
    /// runs inside one.
    func refuseTransactionControl(_ statement: Statement) throws {
        if scope.refusesTransactionControl {
            throw SqlCipherError.transactionControlInBody(sql: statement.sql).redactingSQL()
        }
    }

    /// The refusals that the authorizer cannot make, judged on the text of the statement just
    /// compiled:
    /// - ``SqlCipherError/unsafeVacuumInto(sql:)`` for `VACUUM ... INTO` where this database does
    ///   not allow it (`VACUUM` reports nothing to the authorizer);
    /// - ``SqlCipherError/unsafeFunction(name:sql:)`` for a `CREATE TABLE` or `ALTER TABLE` whose text calls a
    ///   `sqlcipher*` function: SQLite compiles a column `DEFAULT` (and a generated column) without
    ///   telling the authorizer about its functions, so `DEFAULT (sqlcipher_export('b'))` would copy
    ///   the database at the next `INSERT`.
    /// Only statements that start with `VACUUM`, `CREATE`, `ALTER` or a comment are tokenized.
    func refuseByText(_ handle: OpaquePointer, sql: String) throws {
        guard let text = scb_sql(handle) else { return }
        var cursor = text
        while cursor.pointee == 32 || (cursor.pointee >= 9 && cursor.pointee <= 13) { cursor += 1 }
        let first = cursor.pointee
        let vacuum = strncasecmp(cursor, "vacuum", 6) == 0
        let schema = strncasecmp(cursor, "create", 6) == 0 || strncasecmp(cursor, "alter", 5) == 0
        guard vacuum || schema || first == 45 || first == 47 else { return }
        guard let tokens = SQLTokenizer.tokenize(String(cString: text)), let head = tokens.first else { return }
        if head.isKeyword("VACUUM") {
            if !changeTracker.sqlGuard.allowsVacuumInto && tokens.contains(where: { $0.isKeyword("INTO") }) {
                throw SqlCipherError.unsafeVacuumInto(sql: sql).redactingSQL()
            }
        } else if head.isKeyword("CREATE") || head.isKeyword("ALTER"), !scope.isPackage,
                  tokens.prefix(3).contains(where: { $0.isKeyword("TABLE") }) {
            // Tables only: views and triggers are resolved, so the authorizer refuses their calls
            // when they are used (SqlCipherKit.docc/RawSQLGuards.md).
            // A call in expression position: after a symbol or an expression keyword, so that a
            // table named sqlcipher_log in `CREATE TABLE sqlcipher_log(x)` is not taken for one.
            let expressionKeywords = ["DEFAULT", "AS", "SELECT", "WHEN", "THEN", "ELSE", "AND", "OR", "NOT", "CHECK"]
            for index in tokens.indices.dropFirst().dropLast() {
                let token = tokens[index], previous = tokens[index - 1]
                guard token.kind == .word || token.kind == .quotedIdentifier,
                      token.identifier?.lowercased().hasPrefix("sqlcipher") == true, tokens[index + 1].isSymbol("("),
                      previous.kind == .symbol || expressionKeywords.contains(where: previous.isKeyword) else { continue }
                throw SqlCipherError.unsafeFunction(name: token.identifier ?? token.text, sql: sql).redactingSQL()
            }
        }
    }

    /// Notes when a user's `ATTACH` starts (see ``SQLGuard/attachStarted``); called before its
    /// first step.
    func attachWillRun() {
        var now = timespec()
        #if os(Linux)
        // Linux stamps files from the coarse clock, which can lag the precise one by a tick.
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        #else
        clock_gettime(CLOCK_REALTIME, &now)
        #endif
        changeTracker.sqlGuard.attachStarted = now
    }

    /// The check after a user's `ATTACH` ran: every attached database that lives in a file must be
    /// encrypted exactly when this one is. One that is not (an empty `KEY` on an encrypted
    /// database, a `key=` URI parameter, a key on a plaintext database) is detached at once, before
    /// any other statement can write to it, and the statement fails with
    /// ``SqlCipherError/unsafeAttach(schema:path:encrypted:sql:)``. In-memory and temporary
    /// databases (no file) are left alone: under `temp_store = MEMORY` their pages never reach a
    /// file. The package's own `ATTACH` (conversions) is not checked. A file that the refused
    /// `ATTACH` created (empty, and younger than the statement) is removed again, so that the folder
    /// is left as it was.
    func attachDidRun(_ statement: Statement) throws {
        let sqlGuard = changeTracker.sqlGuard
        let started = sqlGuard.attachStarted
        sqlGuard.attachStarted = nil
        guard !scope.isPackage else { return }
        var attached: [(schema: String, file: String)] = []
        guard rows("PRAGMA database_list", columns: [0, 1, 2], { values in
            if case .integer(let seq) = values[0], seq > 1, case .text(let schema) = values[1],
               case .text(let file) = values[2], !file.isEmpty {
                attached.append((schema, file))
            }
        }) else { return }
        for (schema, file) in attached {
            // SQLCipher answers cipher_page_size only for a database with a codec (both versions).
            var encrypted = false
            let quoted = "\"" + schema.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            _ = rows("PRAGMA \(quoted).cipher_page_size", columns: []) { _ in encrypted = true }
            guard encrypted != sqlGuard.isEncrypted else { continue }
            scb_reset(statement.handle)
            if !rows("DETACH DATABASE \(quoted)", columns: [], { _ in }) {
                // Never leave such a database usable: from now on the authorizer refuses every
                // statement of this connection, which must be closed.
                sqlGuard.unsafeAttachment = (schema, file, encrypted)
            } else if let started {
                Self.removeIfCreatedEmpty(file, since: started)
            }
            throw SqlCipherError.unsafeAttach(schema: schema, path: file, encrypted: encrypted, sql: statement.sql).redactingSQL()
        }
    }

    /// Removes `path` when it is an empty regular file whose inode changed at or after `since`:
    /// the file an `ATTACH` of a missing path created. An older or non-empty file is never touched.
    private static func removeIfCreatedEmpty(_ path: String, since: timespec) {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size == 0 else { return }
        #if os(Linux)
        let changed = info.st_ctim
        #else
        let changed = info.st_ctimespec
        #endif
        guard changed.tv_sec > since.tv_sec || (changed.tv_sec == since.tv_sec && changed.tv_nsec >= since.tv_nsec) else {
            return
        }
        unlink(path)
    }

    /// Whether `name` is `temp_store` or `temp_store_directory` (for the error's wording).
    static func isTempStorePragma(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower == "temp_store" || lower == "temp_store_directory"
    }
}
