import CSqlCipherBridge
import Foundation

/// One open connection of the loaded library: the single place where SQL runs.
///
/// ``Database`` (an actor) and ``Connection`` (a transaction's view) both forward here, so every
/// statement goes through one cache, one error mapping and one set of hooks. Not thread-safe by
/// itself: its owner serializes access (the connection is opened with `SQLITE_OPEN_NOMUTEX`).
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    var cache = StatementCache()
    /// The statements of ``DatabaseStream`` iterators open on this connection (DatabaseStream.swift).
    var streams = OpenStreams()
    /// The executor of the ``Database`` that owns the connection, once it does: every use of the
    /// connection must then run on it. Nil while the opener sets the connection up (on the
    /// caller's thread, before anyone else can reach it) and for the package's own short-lived
    /// connections, which one call opens, uses and closes.
    var isolation: DatabaseExecutor?
    /// The ``Statement/serial`` of the newest statement.
    var statementSerial: UInt64 = 0
    /// Whose SQL runs now and what it may do (ConnectionScope.swift); the gate reads the same one.
    let scope: ConnectionScope
    /// What decides whether a statement may compile and run (StatementGate.swift); the
    /// authorizer's context.
    let statementGate: StatementGate
    /// What this connection's statements change, for live queries (SQLiteConnection+Observation.swift).
    let changeTracker = ChangeTracker()
    /// The commit hook's check that the file is still at its path (MovedFileCheck.swift).
    let movedFileCheck = MovedFileCheck()
    /// Stops the running call's statement when its task is cancelled.
    let interruptGate: InterruptGate
    /// The bodies (transaction, savepoint, read) running now, innermost last, and the cursors
    /// they opened (SQLiteConnection+Bodies.swift).
    /// Read before every statement runs: no run-time exclusivity check (the connection has one
    /// owner, and no method that touches it re-enters another that does).
    @exclusivity(unchecked)
    var bodies = BodyStack()
    /// Set on connections opened with `readOnly: true`: every statement that is not read-only
    /// (`sqlite3_stmt_readonly`) is refused before its first step (ReadOnlyOpening.swift).
    @exclusivity(unchecked)
    var refusesWrites = false

    /// Whether the opening proved this connection's key (page 1 decrypted). From then on an
    /// `SQLITE_NOTADB` means that page 1 stopped decrypting, most likely a rekey by another
    /// connection, whoever runs the statement: the package's own statements (a transaction's
    /// `BEGIN IMMEDIATE`, a migration's bookkeeping, an export's or a backup's first read) get the
    /// same advice as the caller's. Before it, the opening decides the error itself.
    var keyProven = false
    /// The tables whose key column a save with a nil integer key found to be the rowid
    /// (`INTEGER PRIMARY KEY`), with the `schema_version` they were checked at
    /// (SQLiteConnection+Entity.swift): a schema change made anywhere empties it.
    @exclusivity(unchecked)
    var rowIDKeyTables: (schemaVersion: Int64, keys: Set<String>) = (0, [])
    /// Tracers, SQL functions and collations, and what of them this connection applied
    /// (ConnectionExtensions.swift, SQLiteConnection+Tracing.swift, SQLiteConnection+Functions.swift).
    let extensionState = ExtensionState()

    /// SQLite open flags (https://sqlite.org/c3ref/open.html).
    static let readWrite: Int32 = 0x0000_0002
    static let create: Int32 = 0x0000_0004
    static let noMutex: Int32 = 0x0000_8000
    static let uri: Int32 = 0x0000_0040

    /// Traps, in debug builds, when the connection belongs to a ``Database`` and the caller is not
    /// on its executor: the "used only on its isolation domain" promise of the `@exclusivity(unchecked)`
    /// properties, checked at the entry points (each statement's run, each lent ``Connection``) so
    /// that a violation fails the test run instead of racing. Compiled out of release builds.
    @inline(__always)
    func assertIsolated() {
        #if DEBUG
        isolation?.checkIsolated()
        #endif
    }

    /// The name to hand SQLite for the file at `path`, so that it opens that file and no other:
    /// `path` itself, except that a relative path starting with `file:` gets `./` in front.
    ///
    /// SQLite reads a name starting with `file:` as a URI (https://sqlite.org/uri.html) when URIs
    /// are enabled for the process, and Debian's SQLCipher 4.6.1 enables them by default (3.4.1
    /// does not): `Database(unencryptedPath: "file:notes.db")` wrote `notes.db` and left an empty
    /// `file:notes.db`, `"file:notes.db?mode=memory"` kept nothing, and an `ATTACH` of such a name
    /// read or wrote another file than the one the package had checked. `./file:notes.db` is the
    /// same file for the system and never a URI. The package's own URIs (read-only openings) are
    /// built from a path already, and pass ``uri`` explicitly. Every `sqlite3_open_v2` without
    /// ``uri`` and every `ATTACH` of a path the package checked goes through this.
    static func fileName(_ path: String) -> String {
        path.hasPrefix("file:") ? "./" + path : path
    }

    /// SQLite's unix VFS takes full paths of at most this many bytes (`SQLITE_MAX_PATHNAME`, the
    /// default of both Debian builds): a longer one fails with a bare "unable to open database file".
    static let maximumPathBytes = 512

    /// Why `path` is too long for SQLite, or nil: its full form (a relative path after the working
    /// folder) is longer than ``maximumPathBytes``. Said before SQLite's bare error is, and by the
    /// copies before they write anything.
    static func pathTooLong(_ path: String) -> String? {
        guard path != ":memory:", !path.isEmpty else { return nil }
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let bytes = full.utf8.count
        guard bytes > maximumPathBytes else { return nil }
        return "its full path is \(bytes) bytes long, and SQLite opens paths of at most \(maximumPathBytes) bytes; "
            + "move the database (or the copy) to a folder with a shorter path"
    }

    /// Opens `path` with the loaded library. Throws ``SqlCipherError/cannotOpen(path:reason:)``.
    init(path: String, flags: Int32 = readWrite | create | noMutex) throws {
        let scope = ConnectionScope()
        self.scope = scope
        let interruptGate = InterruptGate()
        self.interruptGate = interruptGate
        statementGate = StatementGate(scope: scope, interrupts: interruptGate)
        var db: OpaquePointer?
        let rc = scb_open_v2(flags & Self.uri == 0 ? Self.fileName(path) : path, &db, flags, nil)
        guard rc == 0, let db else {
            var message = db.map { String(cString: scb_errmsg($0)) } ?? String(cString: scb_errstr(rc))
            if rc == Self.sqliteInterrupt, scb_exit_refusing() != 0 { message = Self.exitingMessage }
            if let db { scb_close_v2(db) }
            throw ResourceExhaustion.explaining(
                SqlCipherError.cannotOpen(path: path, reason: Self.pathTooLong(path).map { message + ": " + $0 } ?? message))
        }
        handle = db
        self.path = path
        openFile = OpenFiles.connectionOpened(db)
        scb_extended_result_codes(db, 1)
        installStatementGate()
        installChangeTracking()
        interruptGate.install(on: db)
        // Here rather than in DatabaseOpener so that every connection has it, conversions and
        // exports included: SQLCipher does not encrypt temporary files, and Debian's builds keep
        // temporary tables, indices and sort spills in files by default (SqlCipherKit.docc/Security.md). The
        // pragma reads nothing from the database, so it may run before the key is given.
        try uncachedStatement("PRAGMA temp_store = MEMORY").run()
    }

    deinit {
        close()
    }

    /// Whether ``close()`` ran.
    private(set) var isClosed = false

    /// Finalizes the cached statements and closes the handle now rather than at release, so that
    /// files can be checked, renamed or removed right after. Closing twice is harmless.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        // Before the handle goes: a cancellation handler on another thread cuts its wait under
        // the gate's lock, which this waits for.
        interruptGate.detach()
        cache.removeAll()
        scb_close_v2(handle)
        // After SQLite let its locks go: the package's descriptors of the file may close now.
        OpenFiles.connectionClosed(openFile)
        openFile = nil
    }

    /// Sets how long a statement waits for another connection's lock
    /// (https://sqlite.org/c3ref/busy_timeout.html), and notes it for ``restoreBusyTimeout()``.
    func setBusyTimeout(_ milliseconds: Int32) {
        interruptGate.busyTimeout.store(milliseconds, ordering: .relaxed)
        scb_busy_timeout(handle, milliseconds)
    }

    /// Sets back the busy timeout after a cancelled call's wait was cut to 1 ms
    /// (``InterruptGate/cancel(_:)``), before the next call runs.
    func restoreBusyTimeout() {
        guard !isClosed else { return }
        scb_busy_timeout(handle, interruptGate.busyTimeout.load(ordering: .relaxed))
    }

    /// The database file this connection has open, as noted in ``OpenFiles``.
    private var openFile: OpenFiles.Identity?

    // MARK: Errors

    /// The typed error for result code `rc`, with SQLite's message for this connection. A failed
    /// compile reports its refusal itself (``StatementGate/Compilation/error(sql:on:)``); a step
    /// that failed because SQLite compiled the statement again (after a schema change) and the
    /// authorizer refused it then (`SQLITE_AUTH`, or `SQLITE_ERROR` for a refused function) is
    /// reported with the typed error of that refusal. `writes` says that the failing statement
    /// writes (`sqlite3_stmt_readonly` false), which decides the advice for `SQLITE_BUSY`.
    func error(_ rc: Int32, sql: String?, writes: Bool = false) -> SqlCipherError {
        if rc & 0xFF == Self.sqliteAuth || rc & 0xFF == 1, let refused = statementGate.takeStepRefusal() {
            return refused.error(sql: sql ?? "")
        }
        if rc & 0xFF == 1, let failure = functionFailure(sql: sql) { return failure }
        if rc == Self.sqliteInterrupt, scb_exit_refusing() != 0 {
            return .sqlite(code: rc, extendedCode: rc, message: Self.exitingMessage, sql: sql).redactingSQL()
        }
        let extended = scb_extended_errcode(handle)
        var message = String(cString: scb_errmsg(handle))
        if let advice = SQLiteMessageAdvice.advice(code: rc & 0xFF, message: message, sql: sql) { message += advice }
        if SQLiteMessageAdvice.isMisplacedParameter(code: rc & 0xFF, message: message) {
            // Appended after the redaction, which masks what follows SQLite's words in the message
            // of a key statement (`PRAGMA key = \(passphrase)` is the likely one); it holds no value.
            let redacted = SqlCipherError.sqlite(code: 1, extendedCode: extended, message: message, sql: sql).redactingSQL()
            guard case let .sqlite(code, extended, shown, text) = redacted else { return redacted }
            return .sqlite(code: code, extendedCode: extended, message: shown + SQLiteMessageAdvice.misplacedParameter, sql: text)
        }
        if extended == Self.readOnlyDatabaseMoved {
            movedFileCheck.noteMovedBySQLite()
            message += SQLiteMessageAdvice.databaseMoved
        }
        // A commit that the commit hook refused because the file is no longer at its path: the
        // transaction was rolled back. Reported as SQLite reports such a write in rollback mode.
        if extended == Self.constraintCommitHook, movedFileCheck.takeRefusal() { return Self.fileMovedError(sql: sql) }
        if rc & 0xFF == Self.sqliteBusy {
            // A write that failed inside a transaction still open began without the write lock:
            // the package's own transactions take it first (BEGIN IMMEDIATE), and a statement in
            // autocommit mode, or a COMMIT (which SQLite counts as read-only), waits for it.
            let deferred = extended == Self.sqliteBusySnapshot || (writes && isInTransaction)
            message += deferred ? SQLiteMessageAdvice.busyInDeferredTransaction
                // A file in WAL mode: its connections keep a -wal beside it (a rollback one has none).
                : SQLiteMessageAdvice.leavesWAL(sql) && access(path + "-wal", F_OK) == 0
                ? SQLiteMessageAdvice.busyLeavingWAL : SQLiteMessageAdvice.busy
        }
        // After the opening (which tells a wrong key from damage itself, DatabaseOpener.failedRead):
        // page 1 of a file this connection has read stopped decrypting.
        if rc & 0xFF == Self.sqliteNotADatabase, statementGate.isEncrypted, keyProven || !scope.isInternal {
            message += SQLiteMessageAdvice.keyChanged
        }
        // Before the key is proven the opening tells damage from a wrong key itself
        // (DatabaseOpener.failedRead), and reads nothing more until it has.
        if extended == Self.sqliteCorrupt, message == SQLiteMessageAdvice.bareDamage, keyProven || !statementGate.isEncrypted {
            message += SQLiteMessageAdvice.damaged(finding: damageFinding(), encrypted: statementGate.isEncrypted)
        }
        // SQLCipher 4.7+ answers every statement with SQLITE_NOMEM once a page failed to decrypt on
        // this connection: name the causes and the way out instead of a bare "out of memory".
        if rc & 0xFF == Self.sqliteNoMemory, statementGate.isEncrypted,
           (try? SqlCipherLibrary.shared)?.cipherVersionIsAtLeast(4, 7) == true {
            message += SQLiteMessageAdvice.codecErrorSticks
        }
        return .sqlite(code: rc & 0xFF, extendedCode: extended, message: message, sql: sql).redactingSQL()
    }

    /// What the size of this connection's main file says of the damage SQLite just reported
    /// (``SQLiteMessageAdvice/truncation(fileSize:pageSize:pageCount:walHoldsPages:)``), or nil
    /// when it says nothing or cannot be read. A readable header (a plaintext file, or SQLCipher's
    /// plaintext header) gives the page size and count; an encrypted one keeps its count out of
    /// reach, but SQLite refuses every read of a file shorter than that count before it reads a
    /// page past page 1 (`SQLITE_CORRUPT`), which `PRAGMA page_count` shows. Never from inside
    /// itself (a failure of those pragmas comes back through ``error(_:sql:writes:)``).
    func damageFinding() -> String? {
        guard !isDiagnosingDamage else { return nil }
        isDiagnosingDamage = true
        defer { isDiagnosingDamage = false }
        var file = stat()
        guard stat(path, &file) == 0, file.st_mode & S_IFMT == S_IFREG else { return nil }
        let size = Int(file.st_size)
        var wal = stat()
        let walHoldsPages = stat(path + "-wal", &wal) == 0 && wal.st_size > 0
        if let header = FileHeader(path: path), header.hasPlaintextMagic, let pageSize = header.pageSize {
            return SQLiteMessageAdvice.truncation(fileSize: size, pageSize: pageSize, pageCount: header.headerPageCount ?? 0,
                                                  walHoldsPages: walHoldsPages)
        }
        guard let pageSize = try? asPackage({ try integer("PRAGMA cipher_page_size") }) else { return nil }
        if size % pageSize == 0 {
            do {
                _ = try asPackage { try integer("PRAGMA page_count") }
                return nil
            } catch SqlCipherError.sqlite(let code, _, _, _) where code == Self.sqliteCorrupt {
                // The header counts more pages than the file holds.
            } catch {
                return nil
            }
        }
        return SQLiteMessageAdvice.truncation(fileSize: size, pageSize: pageSize, pageCount: nil, walHoldsPages: walHoldsPages)
    }

    /// Set while ``damageFinding()`` runs its pragmas.
    private var isDiagnosingDamage = false

    /// `SQLITE_CORRUPT` as such, without an extended code (https://sqlite.org/rescode.html#corrupt):
    /// the virtual-table, sequence and index variants have words of their own.
    static let sqliteCorrupt: Int32 = 11

    /// `SQLITE_READONLY_DBMOVED`: the file this connection opened is no longer at its path
    /// (https://sqlite.org/rescode.html#readonly_dbmoved).
    static let readOnlyDatabaseMoved: Int32 = 1032

    /// `SQLITE_READONLY`.
    static let sqliteReadOnly: Int32 = 8

    /// The error of a statement refused because the file left its path (``MovedFileCheck``):
    /// what SQLite reports for a rollback-mode write there, with the package's advice.
    static func fileMovedError(sql: String?) -> SqlCipherError {
        SqlCipherError.sqlite(code: sqliteReadOnly, extendedCode: readOnlyDatabaseMoved,
                              message: "attempt to write a readonly database" + SQLiteMessageAdvice.databaseMoved, sql: sql)
            .redactingSQL()
    }

    /// `SQLITE_CONSTRAINT_COMMITHOOK`: the commit hook refused the commit
    /// (https://sqlite.org/rescode.html#constraint_commithook).
    static let constraintCommitHook: Int32 = 531

    /// `SQLITE_INTERRUPT`, which is also what a call refused by the exit gate returns.
    static let sqliteInterrupt: Int32 = 9

    /// The message of a call refused because another thread called `exit()` (the exit gate of
    /// docs/reliability.md, in a process where libcrypto was loaded before the library): the call
    /// never reached SQLite.
    static let exitingMessage = "the process is exiting: another thread called exit() (or returned from the "
        + "program's top-level code), and the library takes no new calls until it ends, so that OpenSSL's "
        + "cleanup cannot free the ciphers under them. This call did not run and nothing was written. Save what "
        + "must be saved before exit(), or in an atexit handler registered after the first database was opened"

    /// `SQLITE_BUSY` (https://sqlite.org/rescode.html#busy).
    static let sqliteBusy: Int32 = 5

    /// `SQLITE_BUSY_SNAPSHOT`: a transaction that read a snapshot older than the last commit tried
    /// to write (https://sqlite.org/rescode.html#busy_snapshot).
    static let sqliteBusySnapshot: Int32 = 517

    /// `SQLITE_NOTADB`.
    static let sqliteNotADatabase: Int32 = 26

    /// `SQLITE_NOMEM`, which SQLCipher 4.7 and later also return for every page access of a
    /// connection whose codec is in error (``SQLiteMessageAdvice/codecErrorSticks``).
    static let sqliteNoMemory: Int32 = 7

    /// Ends the streams paused between batches when a statement failed because their open
    /// statements hold something it needs: `SQLITE_LOCKED` (`DROP TABLE` of a table being read),
    /// or "SQL statements in progress" / "is locked" (`VACUUM`, `DETACH`, leaving WAL mode).
    /// True when a stream was ended, so that the failed statement can run once more (StreamHold.swift).
    /// Only the caller's SQL takes a stream's statement: the package's own statements that may
    /// meet an open stream (a rekey's best-effort checkpoint) expect the failure and go on.
    func endPausedStreams(after rc: Int32) -> Bool {
        guard streams.count > 0, !scope.isInternal else {
            return false
        }
        let primary = rc & 0xFF
        guard primary == 6 || primary == 5 || primary == 1 else { return false }
        let message = String(cString: scb_errmsg(handle))
        guard primary == 6 || message.contains("in progress") || message.contains("is locked") else { return false }
        return streams.endPaused(
            reason: "a later call on the same Database needed what its open statement held (SQLite said: \(message))")
    }

    // MARK: Preparing

    /// Prepares the first statement of `sql`, and tells whether more statements follow it.
    /// Returns nil for text with no statement (only whitespace or comments). The one place where
    /// SQL text given to the package is compiled for running, cached or not.
    func prepareFirst(_ sql: String) throws -> Statement? {
        // The length first: it costs nothing, and text too long for SQLite need not be scanned.
        let length = try CLength.sql(sql.utf8.count, sql: sql)
        try Self.refuseNUL(in: sql)
        syncExtensionsIfChanged()
        var statement: OpaquePointer?
        var trailing = false
        let compiled: StatementGate.Compilation = sql.utf8CString.withUnsafeBufferPointer { buffer in
            var tail: UnsafePointer<CChar>?
            let base = buffer.baseAddress!
            let compiled = compile(base, length: length, statement: &statement, tail: &tail)
            if compiled.rc == 0, let tail, tail - base < buffer.count - 1 {
                trailing = containsStatement(tail)
            }
            return compiled
        }
        guard compiled.rc == 0 else {
            if let statement { scb_finalize(statement) }
            throw compiled.error(sql: sql, on: self)
        }
        guard let statement else { return nil }
        let vacuumIntoParameter: Bool
        do { vacuumIntoParameter = try refuseByText(statement, sql: sql) } catch { scb_finalize(statement); throw error }
        let prepared = Statement(handle: statement, sql: sql, hasTrailingStatements: trailing, connection: self)
        prepared.guardKind = vacuumIntoParameter && compiled.kind == .ordinary ? .vacuumInto : compiled.kind
        prepared.compiledUnderPackageRules = compiled.bypassed
        return prepared
    }

    /// Whether the text at `tail` holds a statement (rather than only whitespace and comments).
    /// What the authorizer refuses in it belongs to no error of the first statement: the probe's
    /// compilation is dropped.
    private func containsStatement(_ tail: UnsafePointer<CChar>) -> Bool {
        var probe: OpaquePointer?
        let rc = compile(tail, statement: &probe).rc
        if let probe { scb_finalize(probe) }
        // A syntax error in the rest still means "there is more SQL": refuse to ignore it.
        return rc != 0 || probe != nil
    }

    /// The cached prepared statement for `sql`, prepared on first use.
    func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = cache.statement(for: sql) { return statement }
        guard let statement = try prepareFirst(sql) else { throw SqlCipherError.emptyStatement(sql: sql).redactingSQL() }
        // A statement that compiled only because the package runs it must not serve user SQL. Text
        // that carries a key (`ATTACH ... KEY 'secret'`, a key pragma, a `key=` URI) is not kept
        // either: the cache would hold the key, and SQLite its copy, for the connection's life.
        if !statement.hasTrailingStatements && !statement.compiledUnderPackageRules
            && SQLRedaction.text(of: sql) == sql {
            cache.insert(statement)
        }
        return statement
    }

    /// A new statement for `sql`, outside the cache, which must hold exactly one statement: for
    /// cursors and streams, which keep their statement open while other SQL runs (a cached
    /// statement could be handed out again and reset under them).
    func singleStatement(_ sql: String) throws -> Statement {
        guard let statement = try prepareFirst(sql) else { throw SqlCipherError.emptyStatement(sql: sql).redactingSQL() }
        guard !statement.hasTrailingStatements else { throw SqlCipherError.multipleStatements(sql: sql).redactingSQL() }
        return statement
    }

    /// A new statement (outside the cache) for one statement of text, bound and ready to step.
    private func openStatement<Arguments: BindableArguments>(_ sql: String, binding arguments: Arguments) throws -> Statement {
        let statement = try singleStatement(sql)
        do {
            try statement.bind(arguments)
        } catch {
            statement.reset()
            throw error
        }
        return statement
    }

    /// A new statement (outside the cache) for `query`, bound and ready to step.
    func openStatement(_ query: QuerySource) throws -> Statement {
        switch query {
        case let .sql(sql, arguments):
            return try openStatement(sql, binding: arguments)
        case let .literal(sql, arguments):
            return try openStatement(sql, binding: arguments)
        case let .fragment(fragment, bindings):
            return try boundStatement(fragment, bindings, cached: false)
        }
    }

    // MARK: Running SQL

    /// Runs `sql` with positional arguments; returns the number of rows changed
    /// (https://sqlite.org/c3ref/changes.html).
    ///
    /// Text of several statements runs them all when no arguments are given. With arguments the
    /// text must hold exactly one statement and the counts must match.
    @discardableResult
    func execute<Arguments: BindableArguments>(_ sql: String, binding arguments: Arguments) throws -> Int {
        let statement = try cachedStatement(sql)
        if statement.hasTrailingStatements {
            guard arguments.isEmpty else { throw SqlCipherError.multipleStatements(sql: sql).redactingSQL() }
            return try executeScript(sql)
        }
        defer { statement.reset() }
        try statement.bind(arguments)
        try statement.run()
        return statement.isReadOnly ? 0 : Int(scb_changes(handle))
    }

    /// Runs every statement of `sql`, one after the other; returns the total rows changed.
    /// Statements before a failing one stay applied, as with `sqlite3_exec`.
    private func executeScript(_ sql: String) throws -> Int {
        var changed = 0
        try sql.utf8CString.withUnsafeBufferPointer { buffer in
            let end = buffer.baseAddress! + (buffer.count - 1)
            var cursor = buffer.baseAddress!
            while cursor < end {
                var handle: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let compiled = compile(cursor, length: try CLength.sql(end - cursor, sql: sql), statement: &handle, tail: &tail)
                guard compiled.rc == 0 else {
                    if let handle { scb_finalize(handle) }
                    throw compiled.error(sql: sql, on: self)
                }
                guard let handle else { break }
                do { try refuseByText(handle, sql: sql) } catch { scb_finalize(handle); throw error }
                let text = String(cString: scb_sql(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
                let statement = Statement(handle: handle, sql: text, hasTrailingStatements: false, connection: self)
                statement.guardKind = compiled.kind
                guard statement.parameterCount == 0 else {
                    throw SqlCipherError.argumentCountMismatch(expected: statement.parameterCount, given: 0, sql: text).redactingSQL()
                }
                try statement.run()
                if !statement.isReadOnly { changed += Int(scb_changes(self.handle)) }
                cursor = tail ?? end
            }
        }
        return changed
    }

    /// Runs `sql` with ``DatabaseValue`` arguments (none by default); returns the number of rows
    /// changed. Lets `[.text(name)]` literals find their type.
    @discardableResult
    func execute(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> Int {
        try execute(sql, binding: ArgumentList(arguments))
    }

    /// Runs a single-statement query with positional arguments and returns its rows.
    func query<Arguments: BindableArguments>(_ sql: String, binding arguments: Arguments) throws -> [Row] {
        let statement = try cachedStatement(sql)
        guard !statement.hasTrailingStatements else { throw SqlCipherError.multipleStatements(sql: sql).redactingSQL() }
        defer { statement.reset() }
        try statement.bind(arguments)
        return try statement.fetchAll()
    }

    /// Runs a single-statement query with ``DatabaseValue`` arguments (none by default) and
    /// returns its rows. Lets `[.text(name)]` literals find their type.
    func query(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> [Row] {
        try query(sql, binding: ArgumentList(arguments))
    }

    /// The first column of the first row of `sql`, or nil.
    func scalar(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> DatabaseValue? {
        try query(sql, arguments).first.map { $0.count > 0 ? $0[0] : .null }
    }

    /// The first value of `sql` as text, lowercased (pragma answers such as `journal_mode`), or nil.
    func lowercasedText(_ sql: String) throws -> String? {
        try scalar(sql).flatMap { String.fromDatabaseValue($0) }?.lowercased()
    }

    /// The first value of `sql` as an integer, or nil. Integer pragmas may answer with text:
    /// SQLCipher 4 answers `PRAGMA page_size` with the number as text.
    func integer(_ sql: String) throws -> Int? {
        let value = try scalar(sql)
        return value.flatMap { Int.fromDatabaseValue($0) ?? String.fromDatabaseValue($0).flatMap { Int($0) } }
    }

    /// Runs `sql` with the raw API (neither cached, tracked nor checked as a user statement) and
    /// hands the given columns of each row to `body` (NULL for a column the result lacks); false on
    /// error. For the package's own bookkeeping queries: live-query analysis and the ATTACH check.
    /// Traced as internal statements (SQLiteConnection+Tracing.swift).
    func rows(_ sql: String, columns: [Int32], _ body: ([DatabaseValue]) -> Void) -> Bool {
        var raw: OpaquePointer?
        guard compile(sql, statement: &raw).rc == 0, let raw else { return false }
        let trace = startRawTrace()
        var rc: Int32 = 0
        defer {
            scb_finalize(raw)
            trace?.finish(sql: SQLRedaction.text(of: sql), arguments: nil,
                          outcome: rc == 101 ? .completed : .failed(code: rc & 0xFF))
        }
        while true {
            rc = scb_step(raw)
            if rc == 101 { return true }
            guard rc == 100 else { return false }
            let count = scb_column_count(raw)
            body(columns.map { column in
                guard column < count else { return .null }
                switch scb_column_type(raw, column) {
                case 1: return .integer(scb_column_int64(raw, column))
                case 3: return .text(scb_column_text(raw, column).map { String(cString: $0) } ?? "")
                default: return .null
                }
            })
        }
    }

    // MARK: Transactions

    /// Whether a transaction is open (https://sqlite.org/c3ref/get_autocommit.html).
    var isInTransaction: Bool { scb_get_autocommit(handle) == 0 }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, or inside a savepoint when a transaction is
    /// already open. Rolls back when `body` or the commit throws.
    func inTransaction<T>(_ body: () throws -> T) throws -> T {
        if isInTransaction { return try inSavepoint(body) }
        // The package's own BEGIN/COMMIT/ROLLBACK; runBody makes the body the user's.
        return try asPackage {
            try execute("BEGIN IMMEDIATE")
            do {
                let result = try runBody(transactional: true, body)
                // A body that swallowed the interrupt of a cancelled call must not commit half of
                // its work: the whole transaction goes.
                if interruptGate.isCancellingCurrentCall { throw CancellationError() }
                try execute("COMMIT")
                return result
            } catch {
                interruptGate.shielded {
                    if isInTransaction { _ = try? execute("ROLLBACK") }
                }
                throw error
            }
        }
    }

    /// Runs `body` holding the write lock from its first statement: inside `BEGIN IMMEDIATE …
    /// COMMIT` when no transaction is open, as it is inside one (whose lock is the caller's
    /// business: the package's own transactions begin immediate). For work whose later statements
    /// are decided by what an earlier one found (an update or a lookup, then an insert): in
    /// autocommit mode, or a deferred savepoint, another connection could write in between. A
    /// read-only connection takes no write lock: its first write is refused as it would be anyway,
    /// naming that statement.
    func holdingTheWriteLock<T>(_ body: () throws -> T) throws -> T {
        isInTransaction || refusesWrites ? try body() : try inTransaction(body)
    }

    /// ``inTransaction(_:)`` (`BEGIN IMMEDIATE`, or a savepoint inside an open transaction), or a
    /// savepoint on a read-only connection, which takes no write lock: for work that must be all
    /// or nothing and whose first statement may only read (a lookup before an insert).
    func inWriteTransaction<T>(_ body: () throws -> T) throws -> T {
        refusesWrites ? try inSavepoint(body) : try inTransaction(body)
    }

    /// Runs `body` inside a savepoint; a throw rolls back only the savepoint's work
    /// (https://sqlite.org/lang_savepoint.html).
    /// With `readOnly`, the body may only read (``runBody(readOnly:_:)``): one consistent view of
    /// the database for all its statements.
    func inSavepoint<T>(readOnly: Bool = false, _ body: () throws -> T) throws -> T {
        // The package's own SAVEPOINT/RELEASE; runBody makes the body the user's.
        try scope.with(.savepoint) {
            try asPackage {
                let name = "sqlcipherkit_sp\(scope.savepointDepth)"
                try execute("SAVEPOINT \(name)")
                do {
                    let result = try runBody(readOnly: readOnly, transactional: true, body)
                    if interruptGate.isCancellingCurrentCall { throw CancellationError() }
                    try execute("RELEASE \(name)")
                    return result
                } catch {
                    interruptGate.shielded {
                        if isInTransaction {
                            _ = try? execute("ROLLBACK TO \(name)")
                            _ = try? execute("RELEASE \(name)")
                        }
                    }
                    throw error
                }
            }
        }
    }

    // MARK: Facts

    /// The number of rows changed by the last statement.
    var changes: Int { Int(scb_changes(handle)) }

    /// The rowid of the last successful insert (https://sqlite.org/c3ref/last_insert_rowid.html).
    var lastInsertRowID: Int64 { scb_last_insert_rowid(handle) }
}

/// A query as the caller gave it, kept so that a cursor or a stream can prepare it when it
/// starts: raw SQL with its arguments, or a rendered builder template with its bindings.
enum QuerySource: Sendable {
    case sql(String, StatementArguments)
    case fragment(SQLFragment, [ParameterBinding])
    /// An ``SQL`` literal's text and values.
    case literal(String, SQL)

    /// A ``Select`` template, rendered now so that an invalid template fails at the call.
    static func select(_ select: Select, _ bindings: [ParameterBinding]) throws -> QuerySource {
        .fragment(try select.render(), bindings)
    }
}
