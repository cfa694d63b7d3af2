import CSqlCipherBridge
import Foundation

/// A prepared statement of the loaded library (https://sqlite.org/c3ref/stmt.html).
///
/// Owned by one ``SQLiteConnection`` and used only on its isolation domain. Statements are
/// prepared with `sqlite3_prepare_v2`/`v3`, so SQLite re-prepares them by itself after a schema
/// change (https://sqlite.org/c3ref/prepare.html); column names are read at each execution for
/// the same reason.
@usableFromInline
final class Statement {
    @usableFromInline let handle: OpaquePointer
    let sql: String
    /// Whether the SQL text holds more statements after this one.
    let hasTrailingStatements: Bool
    /// The number of parameters (`?`, `?NNN`, `:name`).
    let parameterCount: Int
    unowned let connection: SQLiteConnection
    /// A number no other statement of the connection has, before or after (``ChangeTracker``
    /// recognises a statement run again by it; an object's address can be reused).
    let serial: UInt64
    // The variables below are touched at every execution (several at every step); the run-time
    // exclusivity checks of class properties would cost more than they do. A statement is used
    // only on its connection's isolation domain, and none of its methods re-enters another.
    /// What live queries know about this statement (Statement+Observation.swift).
    @exclusivity(unchecked)
    var observation = StatementObservation()
    /// When ``StatementCache`` last handed the statement out; orders evictions.
    @exclusivity(unchecked)
    var lastUse: UInt64 = 0
    /// What the SQL guards learned when the statement was compiled (SQLiteConnection+Guards.swift).
    @exclusivity(unchecked)
    var guardKind = StatementGuardKind.ordinary
    /// Whether the authorizer allowed something in it only because the package ran it
    /// (``StatementGate/Compilation/bypassed``): such a statement never enters the cache, so that
    /// user SQL of the same text is judged again.
    var compiledUnderPackageRules = false
    /// Whether text or a blob is bound: SQLite holds a copy of it until the bindings are cleared,
    /// and that copy can be sensitive, so ``reset()`` clears it. Integers need no clearing, since
    /// every execution binds every parameter again.
    @exclusivity(unchecked)
    private var holdsBufferBindings = false
    /// The connection's tracers and SQL functions, tested with a plain load (ConnectionExtensions.swift).
    let extensions: ExtensionState
    /// The running execution's trace, while a tracer listens (SQLiteConnection+Tracing.swift).
    /// Unchecked exclusivity, as for ``ExtensionState``: used only on the connection's domain.
    @exclusivity(unchecked) var trace: ActiveTrace?
    /// The values bound for the next or running execution, while a tracer asked for arguments.
    @exclusivity(unchecked) var tracedArguments: [DatabaseValue?]?
    /// The text trace events show (``SQLRedaction``), found at the first traced execution.
    var tracedSQL: String?
    /// Which functions the statement's own text calls, by folded name, found when first asked
    /// (SQLiteConnection+Functions.swift).
    var directCalls: [String: Bool] = [:]

    init(handle: OpaquePointer, sql: String, hasTrailingStatements: Bool, connection: SQLiteConnection) {
        self.handle = handle
        self.sql = sql
        self.hasTrailingStatements = hasTrailingStatements
        self.parameterCount = Int(scb_bind_parameter_count(handle))
        self.connection = connection
        self.extensions = connection.extensionState
        connection.statementSerial &+= 1
        self.serial = connection.statementSerial
    }

    deinit {
        if trace != nil { endTrace(.stoppedEarly) }
        scb_finalize(handle)
    }

    /// Whether the statement leaves the database unchanged (https://sqlite.org/c3ref/stmt_readonly.html).
    /// Asked each time rather than stored: a re-preparation after a schema change can turn the
    /// same text from a read into a write (`CREATE TABLE IF NOT EXISTS` once the table is gone).
    var isReadOnly: Bool { scb_stmt_readonly(handle) != 0 }

    /// Binds arguments in any form the package accepts; each form checks that every parameter
    /// gets exactly one value.
    func bind<Arguments: BindableArguments>(_ arguments: Arguments) throws {
        try arguments.bind(to: self)
    }

    /// Binds named values (``StatementArguments``'s dictionary form) and checks that every
    /// parameter got one. A key without a prefix matches `:key`, `@key` or `$key`.
    func bind(named bindings: [ParameterBinding]) throws {
        var bound = [Bool](repeating: false, count: parameterCount + 1)
        for binding in bindings {
            guard let index = namedParameterIndex(binding.name) else {
                throw SqlCipherError.unknownParameter(name: binding.name)
            }
            guard !bound[Int(index)] else {
                throw SqlCipherError.invalidQuery(
                    reason: "two values were given for the parameter \(binding.name); pass one value per parameter")
            }
            bound[Int(index)] = true
            try bind(binding.value, at: index)
        }
        for index in bound.indices.dropFirst() where !bound[index] {
            throw SqlCipherError.unboundParameter(name: parameterName(Int32(index)) ?? "?\(index)")
        }
    }

    /// The index of the parameter a named value's key designates, or nil. A key holding a NUL
    /// designates nothing (the library would read only the part before it).
    private func namedParameterIndex(_ name: String) -> Int32? {
        guard let first = name.utf8.first, !name.utf8.contains(0) else { return nil }
        if first == UInt8(ascii: ":") || first == UInt8(ascii: "@") || first == UInt8(ascii: "$") {
            return parameterIndex(name)
        }
        return parameterIndex(":" + name) ?? parameterIndex("@" + name) ?? parameterIndex("$" + name)
    }

    /// The first parameter the text names itself (`?3`, `:name`), or nil when every parameter is
    /// an anonymous `?`. Found once per compiled statement: an SQL literal's values bind only at
    /// anonymous parameters, and a cached statement is run again with the same text.
    private(set) lazy var firstNamedParameter: String? = {
        for index in 0..<parameterCount {
            if let name = parameterName(Int32(index + 1)) { return name }
        }
        return nil
    }()

    /// The name of the parameter at a 1-based index as written in the SQL (`:name`, `?3`), or nil
    /// for an anonymous `?` (https://sqlite.org/c3ref/bind_parameter_name.html).
    func parameterName(_ index: Int32) -> String? {
        scb_bind_parameter_name(handle, index).map { String(cString: $0) }
    }

    /// Binds one value at a 1-based parameter index.
    @usableFromInline
    func bind(_ value: DatabaseValue, at index: Int32) throws {
        if extensions.capturesArguments { captureArgument(value, at: index) }
        try bindValue(value, at: index)
    }

    /// ``bind(_:at:)`` without keeping the value for a tracer: for callers that keep all the
    /// values of an execution at once (``ArgumentList``).
    @inline(__always)
    func bindValue(_ value: DatabaseValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .null:
            rc = scb_bind_null(handle, index)
        case .integer(let int):
            rc = scb_bind_int64(handle, index, int)
        case .real(let double):
            rc = scb_bind_double(handle, index, double)
        case .text(var text):
            if guardKind == .attach || guardKind == .vacuumInto, text.utf8.contains(0) { try refuseNULInFileName(at: index) }
            holdsBufferBindings = true
            rc = try text.withUTF8 { utf8 in
                // A non-null pointer even for "" so SQLite binds an empty text, not NULL.
                try utf8.withMemoryRebound(to: CChar.self) { chars in
                    guard let base = chars.baseAddress else { return scb_bind_text(handle, index, "", 0) }
                    return scb_bind_text(handle, index, base, try CLength.value(chars.count, kind: "a text", sql: sql))
                }
            }
        case .blob(let data):
            try data.withUnsafeBytes { try bindBlob($0, at: index) }
            return
        }
        guard rc == 0 else { throw connection.error(rc, sql: sql) }
    }

    /// Binds bytes as a blob at a 1-based parameter index. SQLite keeps a copy until the bindings
    /// are cleared, which ``reset()`` then does: a key bound here does not linger.
    func bindBlob(_ bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        holdsBufferBindings = true
        // SQLite binds a NULL pointer as NULL; an empty blob needs a valid pointer.
        var empty: UInt8 = 0
        let length = try CLength.value(bytes.count, kind: "a blob", sql: sql)
        let rc = bytes.baseAddress.map { scb_bind_blob(handle, index, $0, length) }
            ?? scb_bind_blob(handle, index, &empty, 0)
        guard rc == 0 else { throw connection.error(rc, sql: sql) }
    }

    /// The 1-based index of a named parameter such as `:name`, or nil.
    func parameterIndex(_ name: String) -> Int32? {
        let index = scb_bind_parameter_index(handle, name)
        return index > 0 ? index : nil
    }

    /// Resets the statement so that it can be reused from the cache, and drops the library's
    /// copies of bound text and blobs (https://sqlite.org/c3ref/clear_bindings.html).
    func reset() {
        if trace != nil || tracedArguments != nil { resetTrace() }
        observation.started = false
        scb_reset(handle)
        if holdsBufferBindings {
            scb_clear_bindings(handle)
            holdsBufferBindings = false
        }
    }

    /// The tracing part of ``reset()``, out of line: only while a tracer listens.
    @inline(never)
    private func resetTrace() {
        if trace != nil { endTrace(.stoppedEarly) }
        tracedArguments = nil
    }

    /// The result's column names, as of the current preparation.
    func columnNames() -> [String] {
        let count = scb_column_count(handle)
        return (0..<count).map { index in
            scb_column_name(handle, index).map { String(cString: $0) } ?? ""
        }
    }

    /// The value of column `index` of the current row.
    func value(at index: Int32) -> DatabaseValue {
        var kind: UInt8 = 0
        var bits: Int64 = 0
        scb_read_columns(handle, index, 1, &kind, &bits)
        switch kind {
        case 1: return .integer(bits)
        case 2: return .real(Double(bitPattern: UInt64(bitPattern: bits)))
        case 3: return text(at: index)
        case 4: return blob(at: index)
        default: return .null
        }
    }

    /// The text in column `index` of the current row, which must hold text.
    ///
    /// SQLite stores whatever bytes it was given as text without checking them. Bytes that are not
    /// valid UTF-8 cannot become a Swift `String` without being replaced, so such a value is
    /// returned as a blob of exactly those bytes: `Data` reads it unchanged, and `String` reads
    /// nil rather than altered text.
    func text(at index: Int32) -> DatabaseValue {
        guard let text = scb_column_text(handle, index) else { return .text("") }
        let bytes = UnsafeBufferPointer(start: text, count: Int(scb_column_bytes(handle, index)))
        if let valid = String(validating: bytes, as: UTF8.self) { return .text(valid) }
        return .blob(Data(buffer: bytes))
    }

    /// The blob in column `index` of the current row, which must hold a blob.
    func blob(at index: Int32) -> DatabaseValue {
        let count = Int(scb_column_bytes(handle, index))
        guard count > 0, let bytes = scb_column_blob(handle, index) else { return .blob(Data()) }
        return .blob(Data(bytes: bytes, count: count))
    }

    /// Steps once: true when a row is available, false when done.
    @usableFromInline @inline(__always)
    func step() throws -> Bool {
        if !observation.started {
            try connection.statementWillRun(self)
            if extensions.needsAttention { connection.extensionsWillRun(self) }
        }
        let rc = extensions.tracksRunningStatement ? stepMarkingRunning() : scb_step(handle)
        if rc == 100 { return true }
        return try ended(rc)
    }

    /// The end of an execution (`SQLITE_DONE`, or an error): the checks after it, its trace event.
    /// Out of line, so that the inlined ``step()`` stays small in row loops.
    @inline(never)
    private func ended(_ rc: Int32) throws -> Bool {
        if rc == 101 {
            if guardKind == .attach {
                do {
                    try connection.attachDidRun(self)
                } catch {
                    // SQLITE_AUTH: the statement ran, and the package undid its effect.
                    endTrace(.failed(code: 23))
                    throw error
                }
            }
            if trace != nil { endTrace(.completed) }
            return false
        }
        if connection.endPausedStreams(after: rc) {
            // The statement failed (and SQLite undid it) only because a paused stream's statement
            // was open; with it ended, the same execution runs once more, bindings kept.
            scb_reset(handle)
            let retried = extensions.tracksRunningStatement ? stepMarkingRunning() : scb_step(handle)
            return retried == 100 ? true : try ended(retried)
        }
        var error = connection.error(rc, sql: sql, writes: !isReadOnly)
        if guardKind == .attach { connection.attachFailed() }
        if guardKind == .attach, case let .sqlite(code, extended, message, redacted) = error, code == 1,
           message.hasPrefix("Invalid key value") {
            // SQLCipher's words for a KEY that is neither text nor a blob (a number, a NULL bound
            // in a way it refuses), which said nothing of what a KEY takes.
            error = .sqlite(
                code: code, extendedCode: extended,
                message: message + " (an ATTACH's KEY takes text, a passphrase, or a blob; bind it: "
                    + "execute(\"ATTACH DATABASE ? AS name KEY ?\", path, key). Nothing was attached)",
                sql: redacted)
        } else if guardKind == .attach, case let .sqlite(code, extended, message, redacted) = error, code == 10 || code == 14 {
            // "unable to open database", its file name already masked (it may be a URI holding a
            // key; SQLite's own message is never read again here): say
            // what an ATTACH can open. A named pipe fails here (SQLite reads with pread, which a
            // pipe refuses), as do a directory and a missing folder.
            error = .sqlite(
                code: code, extendedCode: extended,
                message: message + " (an ATTACH opens a regular database file, "
                    + "or creates one in a folder this process can write; a named pipe, socket, device or directory "
                    + "cannot be attached)",
                sql: redacted)
        } else if guardKind == .attach, case let .sqlite(code, extended, message, redacted) = error, code == 7 {
            // SQLCipher 4.6.1 hands a `file:` URI's `textkey=` to sqlite3_key_v2 with the length -1,
            // which it cannot allocate: every such ATTACH fails with a bare "out of memory" (found by
            // the adversarial review), which sends the user looking for a leak.
            error = .sqlite(
                code: code, extendedCode: extended,
                message: message + " (SQLCipher 4 fails this way for every ATTACH of a file: URI with a textkey= "
                    + "parameter, whatever the key; give the key in the ATTACH's KEY clause instead)",
                sql: redacted)
        } else if guardKind == .attach, case let .sqlite(code, extended, message, redacted) = error, code == 1,
                  message.hasPrefix("attached databases must use the same text encoding") {
            // SQLite attaches only a file of the main database's text encoding, which is fixed when
            // a file is created (https://sqlite.org/pragma.html#pragma_encoding): a UTF-16 file
            // another program wrote could not be imported (importPlaintext) or attached, and
            // SQLite's message named no way out (found by the hostile-files review).
            error = .sqlite(
                code: code, extendedCode: extended,
                message: message + " (the file stores its text as UTF-16 and this database as UTF-8, or the reverse; see "
                    + "PRAGMA encoding. SQLite fixes a file's encoding when it is created and attaches only files of the "
                    + "same one. Read its rows with a Database opened on it (Database(unencryptedPath:) for a plaintext "
                    + "file) and write them here, or make an encrypted copy of a plaintext one with "
                    + "Database.encrypt(plaintextAt:to:key:), which keeps its encoding, and use that)",
                sql: redacted)
        } else if guardKind == .attach, case let .sqlite(code, extended, message, redacted) = error, code == 11,
                  DatabaseOpener.isUnreadableSchema(code: code, message: message) {
            // A schema the loaded SQLite cannot parse, its token masked in an ATTACH's message: SQL
            // a newer SQLite wrote (a STRICT table read by SQLCipher 3.4.1's SQLite 3.15), which
            // read like damage (DatabaseOpener.unreadableSchema says the same of an opening).
            let loaded = (try? SqlCipherLibrary.shared).map { "SQLite \($0.sqliteVersion)" } ?? "the loaded SQLite"
            error = .sqlite(
                code: code, extendedCode: extended,
                message: message + " (the attached file's schema holds SQL that \(loaded) cannot read"
                    + DatabaseOpener.unreadableTableNote(message) + ", most likely "
                    + "written by a newer SQLite: attach it with a newer SQLCipher (point "
                    + "\(SqlCipherLibrary.environmentVariable) at libsqlcipher.so.1 for SQLCipher 4); if no newer "
                    + "program wrote it, its schema is damaged)",
                sql: redacted)
        } else if guardKind == .attach, case let .sqlite(code, extended, _, redacted) = error, code == 26 {
            // SQLite's "file is not a database" says nothing of why: an ATTACH reads the file with
            // its KEY, or without one with this database's key, and a plaintext file has neither.
            // SQLite's own words, without the advice for a main file whose key changed.
            error = .sqlite(
                code: code, extendedCode: extended,
                message: String(cString: scb_errmsg(connection.handle)) + " (the attached file does not open with the ATTACH's KEY, or, without a KEY clause, with "
                    + "this database's key: to read rows from a plaintext database use "
                    + "db.importPlaintext(from:as:_:); for an encrypted one give its KEY)",
                sql: redacted)
        }
        if trace != nil { endTrace(.failed(code: rc & 0xFF)) }
        throw error
    }

    /// Refuses a text holding a NUL bound to an `ATTACH`'s file or schema name, or to a `VACUUM
    /// INTO`'s file: SQLite reads those only up to the NUL, so `ATTACH ? AS a` with `"new.db\0x"`
    /// attached (or created) `new.db`, and `VACUUM INTO ?` wrote its copy there (found by the
    /// attack review). A key may hold any byte: a parameter after the `KEY` keyword is left alone.
    /// Runs only for such a text, so the usual binding pays one test.
    private func refuseNULInFileName(at index: Int32) throws {
        guard guardKind == .attach else {
            throw SqlCipherError.invalidQuery(
                reason: "the file name bound to this VACUUM INTO holds a NUL character, and SQLite reads a file name only "
                    + "up to it, so the copy would be written under another name; remove the NUL. Nothing was written")
        }
        guard let tokens = SQLTokenizer.tokenize(sql) else { return }
        // Parameters numbered as SQLite numbers them: `?` the next, `?N` N, a name its first number.
        var highest: Int32 = 0
        var named: [String: Int32] = [:]
        var afterKey = false
        for token in tokens {
            if token.isKeyword("KEY") { afterKey = true }
            guard token.kind == .variable else { continue }
            let number: Int32
            if token.text == "?" {
                number = highest + 1
            } else if token.text.hasPrefix("?"), let given = Int32(token.text.dropFirst()) {
                number = given
            } else if let seen = named[token.text] {
                number = seen
            } else {
                number = highest + 1
                named[token.text] = number
            }
            highest = max(highest, number)
            guard number == index else { continue }
            if afterKey { return }
            throw SqlCipherError.invalidQuery(
                reason: "the value bound to parameter \(index) of this ATTACH, its file or schema name, holds a NUL "
                    + "character, and SQLite reads a name only up to it, so another file (or schema) would be "
                    + "attached; remove the NUL. Nothing was attached")
        }
    }

    /// Steps with the statement recorded as the one running, for SQL functions that may only be
    /// called from the statement's own text (SQLiteConnection+Functions.swift).
    private func stepMarkingRunning() -> Int32 {
        let calls = extensions.calls
        let outer = calls.running
        calls.running = self
        defer { calls.running = outer }
        return scb_step(handle)
    }

    /// Runs the statement to completion and collects every row.
    ///
    /// Column names are read after the first step: a statement whose schema changed is prepared
    /// again inside `sqlite3_step`, so before it the count and names can still be the old ones
    /// (for example `SELECT *` after `ALTER TABLE ... ADD COLUMN`).
    func fetchAll() throws -> [Row] {
        var columns: RowColumns?
        return try fetch(limit: .max, columns: &columns).rows
    }

    /// Steps at most `limit` times and collects the rows, in one buffer; `done` tells whether the
    /// statement reached its end. `columns` is read at the first row and then reused, so that
    /// successive batches of one execution share one column table.
    func fetch(limit: Int, columns: inout RowColumns?) throws -> (rows: [Row], done: Bool) {
        var builder = RowStorageBuilder()
        var fetched = 0
        var done = false
        while fetched < limit {
            guard try step() else {
                done = true
                break
            }
            if columns == nil { columns = RowColumns(names: columnNames()) }
            // Row hot path (once per row fetched): set on the line above, so the unchecked unwrap
            // only drops a branch the optimizer keeps.
            try appendCurrentRow(to: &builder, width: columns.unsafelyUnwrapped.names.count)
            fetched += 1
        }
        let storage = builder.finish(columns: columns ?? RowColumns(names: columnNames()))
        return (storage.rows(), done)
    }

    /// The row the statement is positioned on (after a ``step()`` that returned true), as a
    /// ``Row``. `columns` is read at the first call and then reused.
    ///
    /// The row is written into `reusable` when no ``Row`` of an earlier call still refers to it
    /// (``RowStorage/refill(fill:text:blob:)``), else into a new storage that becomes `reusable`:
    /// a loop that lets each row go before asking for the next allocates nothing per row, and a
    /// row that is kept keeps its values.
    @inline(__always)
    func currentRow(reusing reusable: inout RowStorage?, columns: inout RowColumns?) throws -> Row {
        if columns == nil { columns = RowColumns(names: columnNames()) }
        // Row hot path (once per cursor row): `columns` and `reusable` are set just above, so the
        // unchecked unwraps only drop branches.
        if !isKnownUniquelyReferenced(&reusable) {
            reusable = try RowStorage.singleRow(columns: columns.unsafelyUnwrapped)
        }
        let storage = reusable.unsafelyUnwrapped
        let width = Int32(truncatingIfNeeded: storage.width)
        storage.refill(fill: { scb_read_columns(handle, 0, width, $0, $1) }, text: text(at:), blob: blob(at:))
        return Row(storage: storage, offset: 0)
    }

    @inline(__always)
    private func appendCurrentRow(to builder: inout RowStorageBuilder, width: Int) throws {
        try builder.reserve(width)
        builder.appendRow(width: width, fill: { scb_read_columns(handle, 0, Int32(width), $0, $1) },
                          text: text(at:), blob: blob(at:))
    }

    /// Runs the statement to completion, discarding rows.
    func run() throws {
        while try step() {}
    }
}

/// What the change tracker keeps with one prepared statement (see ``ChangeTracker``).
struct StatementObservation {
    /// The statement's analysis, once one was needed.
    var access: StatementAccess?
    /// The tracker generation ``access`` belongs to.
    var generation: UInt64 = 0
    /// Whether the current execution was already accounted for; cleared by `reset()`.
    var started = false
}
