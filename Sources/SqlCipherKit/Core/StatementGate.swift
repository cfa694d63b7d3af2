import CSqlCipherBridge
import Foundation

// The one statement gate: what decides whether a statement may be compiled (the authorizer) and
// whether it may run now (SQLiteConnection.statementMayRun), from the connection's scope
// (ConnectionScope.swift) and the guards' rules (SQLiteConnection+Guards.swift, CipherPragmaRule.swift).
// Features (live queries, tracing) come after it and never decide what runs.

// MARK: - What the authorizer learns

/// What a statement is, as far as the guards care, learned from the authorizer while it compiled.
enum StatementGuardKind: UInt8 {
    case ordinary
    /// `BEGIN`, `COMMIT`/`END`, `ROLLBACK`, `SAVEPOINT`, `RELEASE`, `ROLLBACK TO`.
    case transactionControl
    /// `ATTACH`: the key it attaches with is only known once it ran.
    case attach
    /// `VACUUM … INTO ?`: the target is only known once it is bound.
    case vacuumInto
    /// `PRAGMA journal_mode = …` by the caller's SQL: the connection may leave WAL mode, after
    /// which its file must be checked before each transaction (``MovedFileCheck/checksBeforeEachStatement``).
    case journalModeChange
}

/// The statement gate of one connection: the state of the SQL guards, and the authorizer's
/// context pointer. A class so that the C callback can update it while the Swift code that
/// started the compile holds no access to it; owned by the connection, so it outlives the handle
/// and the unretained context pointer stays valid for as long as SQLite can call back.
///
/// What the authorizer decides during a compile is read back by that compile, through
/// ``compile(_:)``, which hands the caller SQLite's result together with the refusal: nothing of
/// it outlives the compile.
final class StatementGate {
    /// Whether the connection's main database is encrypted (a key was given at open). Decides
    /// whether `page_size` may be set and which databases `ATTACH` may add.
    var isEncrypted = false
    /// Whether `VACUUM INTO` may run: false on every encrypted database (DatabaseOpener), whose copy
    /// would take its key from the target and SQLCipher's default settings.
    var allowsVacuumInto = true
    /// Whose SQL runs now and what it may do (ConnectionScope.swift): the connection's own, read
    /// here by the authorizer.
    let scope: ConnectionScope

    init(scope: ConnectionScope, interrupts: InterruptGate) {
        self.scope = scope
        self.interrupts = interrupts
    }
    /// The connection's interrupt gate, told of the caller's `PRAGMA busy_timeout = N`
    /// (``InterruptGate/busyTimeout``).
    let interrupts: InterruptGate
    /// Set when the authorizer allowed something in the current compile only because the package
    /// runs it: such a statement is never cached, so user SQL of the same text cannot reuse it.
    /// Read through ``compile(_:)``.
    fileprivate(set) var bypassed = false
    /// What the current compile reported. Read through ``compile(_:)``.
    fileprivate(set) var kind = StatementGuardKind.ordinary
    /// What the authorizer refused in the compile running now. Empty between compiles, but for a
    /// refusal made while SQLite compiled a statement again by itself inside `sqlite3_step` (a
    /// schema change), which ``takeStepRefusal()`` hands to that step's error.
    fileprivate var refused: Refusal?
    /// Who else listens to the authorizer's allowed actions (live queries' statement analysis),
    /// only for the length of one compile; nil otherwise, so an ordinary compile pays a nil test.
    var listener: (any AuthorizerListener)?
    /// When the user's `ATTACH` running now started, on the clock the kernel stamps files with
    /// (`CLOCK_REALTIME_COARSE`): a refused attachment removes the empty file it created.
    var attachStarted: timespec?
    /// The files the user's `ATTACH` running now names (``SQLiteConnection/attachedFilePaths(_:)``):
    /// one that SQLite created before the statement failed is removed again.
    var attachFiles: [String] = []
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

    /// What one compile reported: SQLite's result code and what the authorizer learned or refused.
    struct Compilation {
        let rc: Int32
        let kind: StatementGuardKind
        /// See ``StatementGate/bypassed``.
        let bypassed: Bool
        let refusal: Refusal?

        /// The typed error of a failed compile of `sql`: the refusal that made it fail
        /// (`SQLITE_AUTH`, or `SQLITE_ERROR` for a refused function), otherwise SQLite's own
        /// error from `connection`.
        func error(sql: String, on connection: SQLiteConnection) -> SqlCipherError {
            if let refusal, rc & 0xFF == SQLiteConnection.sqliteAuth || rc & 0xFF == 1 {
                return refusal.error(sql: sql)
            }
            return connection.error(rc, sql: sql)
        }
    }

    /// Runs `prepare` (one `sqlite3_prepare` on this gate's connection) and returns its result
    /// with what the authorizer decided during it. Every compile the package starts goes through
    /// here, so a refusal is returned to the code that compiled, never left for a later error.
    func compile(_ prepare: () throws -> Int32) rethrows -> Compilation {
        kind = .ordinary
        bypassed = false
        refused = nil
        defer { refused = nil }
        let rc = try prepare()
        return Compilation(rc: rc, kind: kind, bypassed: bypassed, refusal: refused)
    }

    /// The refusal the authorizer made while SQLite compiled a statement again inside
    /// `sqlite3_step` (the one compile the package does not start), emptied as it is taken.
    func takeStepRefusal() -> Refusal? {
        defer { refused = nil }
        return refused
    }
}

/// What a feature that learns from compiles (live queries' statement analysis) implements to hear
/// the authorizer's allowed actions: the narrow door through which Core reports to it.
protocol AuthorizerListener: AnyObject {
    /// An action the gate allowed, with the authorizer's arguments
    /// (https://sqlite.org/c3ref/set_authorizer.html).
    func authorizerAllowed(action: Int32, first: UnsafePointer<CChar>?, second: UnsafePointer<CChar>?)
}

extension SQLiteConnection {
    /// Installs the authorizer, with ``statementGate`` as its context.
    ///
    /// Called once, right after opening and before any statement is prepared: setting an
    /// authorizer expires every prepared statement (https://sqlite.org/c3ref/set_authorizer.html).
    func installStatementGate() {
        let context = Unmanaged.passUnretained(statementGate).toOpaque()
        // The authorizer answers SQLITE_OK (0) to everything but what the SQL guards refuse:
        // pragmas that would send temporary data to unencrypted files or defeat the encryption,
        // SQLCipher's export function, transaction control inside a body (SQLITE_DENY: the prepare
        // fails with SQLITE_AUTH, or SQLITE_ERROR for a function, and compile(_:) returns the
        // refusal with it). Otherwise it only watches: without a listener an allowed action costs
        // a switch and a nil test.
        scb_set_authorizer(handle, { context, action, first, second, database, source in
            guard let context else { return 0 }
            let gate = Unmanaged<StatementGate>.fromOpaque(context).takeUnretainedValue()
            let verdict = SQLiteConnection.authorize(gate, action: action, first: first, second: second,
                                                     database: database, context: source)
            if verdict != 0 { return verdict }
            gate.listener?.authorizerAllowed(action: action, first: first, second: second)
            return 0
        }, context)
    }

    /// Compiles `length` bytes of `sql` at `text` through the gate (see ``StatementGate/compile(_:)``).
    func compile(_ text: UnsafePointer<CChar>?, length: Int32 = -1, statement: inout OpaquePointer?,
                 tail: UnsafeMutablePointer<UnsafePointer<CChar>?>? = nil) -> StatementGate.Compilation {
        statementGate.compile { scb_prepare(handle, text, length, 0, &statement, tail) }
    }

    /// The gate's decision on one execution of `statement`, before its first step: the run-time
    /// half of the rules the authorizer applies at compile time, for a statement compiled (and
    /// perhaps cached) in another scope.
    /// - transaction control inside a body: ``SqlCipherError/transactionControlInBody(sql:)``;
    /// - any statement in a body whose transaction SQLite ended: ``SqlCipherError/transactionRolledBack(sql:)``;
    /// - a write in a `read` body: ``SqlCipherError/readOnlyViolation(sql:)``;
    /// - a write on a connection opened `readOnly`: SQLite's own `SQLITE_READONLY` error (``readOnlyRefusal(sql:)``).
    /// A user's `ATTACH` has its start noted, for the check after it ran.
    @inline(__always)
    func statementMayRun(_ statement: Statement) throws {
        switch statement.guardKind {
        case .ordinary: break
        case .transactionControl: try refuseTransactionControl(statement)
        case .attach: try attachWillRun(statement)
        case .vacuumInto: try vacuumIntoWillRun(statement)
        case .journalModeChange:
            // Whatever the new mode, from now on: one `stat` per transaction, against a rollback
            // journal's pager opening the `-wal` of a file made at the path since (MovedFileCheck).
            movedFileCheck.checksBeforeEachStatement = true
        }
        try refuseStatementsAfterRollback(statement)
        if !statement.isReadOnly {
            if scope.refusesWrites { throw SqlCipherError.readOnlyViolation(sql: statement.sql).redactingSQL() }
            if refusesWrites { throw Self.readOnlyRefusal(sql: statement.sql) }
        }
    }

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
    /// `allowedInSchema` is refused there (``StatementGate/directOnlyFunctions`` is empty from 3.30 on,
    /// where SQLite refuses it by itself with `SQLITE_DIRECTONLY`, and allows it in a `WITH` clause).
    ///
    /// `database` is the schema the action is on (nil for actions on none): while a plaintext file
    /// is attached for reading (``StatementGate/readOnlySchema``), any action on its schema but a read
    /// (an insert, update, delete, create, drop, alter, pragma) is refused, so nothing of the
    /// encrypted database can be written to it.
    static func authorize(_ gate: StatementGate, action: Int32, first: UnsafePointer<CChar>?,
                          second: UnsafePointer<CChar>?, database: UnsafePointer<CChar>? = nil,
                          context: UnsafePointer<CChar>? = nil) -> Int32 {
        if let attachment = gate.unsafeAttachment {
            gate.refused = .attachment(schema: attachment.schema, path: attachment.path, encrypted: attachment.encrypted)
            return deny
        }
        if let schema = gate.readOnlySchema, let database, action != readAction,
           strcasecmp(database, schema) == 0 {
            gate.refused = .plaintextWrite(schema: schema)
            return deny
        }
        switch action {
        case pragmaAction:
            guard let first else { return 0 }
            if refusesPragma(first, value: second) {
                gate.refused = .pragma(name: String(cString: first), value: second.map { String(cString: $0) } ?? "")
                return deny
            }
            let scope = gate.scope
            // Without a schema a pragma applies to every database of the connection, main too; an
            // attached schema's journal or locking mode is no concern of the pool's readers, which
            // read the main file only.
            let namesMain = database.map { strcasecmp($0, "main") == 0 } ?? true
            if let second, !scope.isPackage, strcasecmp(first, "journal_mode") == 0 {
                // A pool's readers read beside its writer only in WAL mode, which it proved at open.
                if scope.isPooled, namesMain, strcasecmp(second, "wal") != 0 {
                    gate.refused = .pragma(name: String(cString: first), value: String(cString: second))
                    return deny
                }
                gate.kind = .journalModeChange
            }
            if second != nil, isPerConnectionPragma(first) {
                if scope.refusesPerConnectionPragmas {
                    gate.refused = .perConnectionPragma(name: String(cString: first))
                    return deny
                }
                // Never cached: the same text must be judged again where it is refused (a pool's
                // connection outside its set-up, a migration's body).
                gate.bypassed = true
                // Never cached, so compiled for each run: what a cut wait sets back.
                if let second, strcasecmp(first, "busy_timeout") == 0 {
                    gate.interrupts.busyTimeout.store(Int32(clamping: atol(second)), ordering: .relaxed)
                }
            }
            if let second, scope.isPooled, !scope.isPackage, namesMain, strcasecmp(first, "locking_mode") == 0,
               strcasecmp(second, "exclusive") == 0 {
                // Where the per-connection refusal sends it, a pool's prepareConnection: the writer
                // would keep its lock on the file from its first write on, and every reader's read
                // would fail with "database is locked" (found by the review: it was run there).
                gate.refused = .pragma(name: String(cString: first), value: String(cString: second))
                return deny
            }
            guard CipherPragmaRule.refuses(first, value: second, encrypted: gate.isEncrypted) else { return 0 }
            if scope.isPackage {
                gate.bypassed = true
                return 0
            }
            gate.refused = .pragma(name: String(cString: first), value: second.map { String(cString: $0) } ?? "")
            return deny
        case functionAction:
            // The function's name is the second argument (https://sqlite.org/c3ref/c_alter_table.html).
            if !gate.directOnlyFunctions.isEmpty, context != nil, let second,
               gate.directOnlyFunctions.contains(FunctionKey.fold(String(cString: second))) {
                gate.refused = .functionInSchema(name: String(cString: second))
                return deny
            }
            guard let second, strncasecmp(second, "sqlcipher", 9) == 0 else { return 0 }
            if gate.scope.isPackage {
                gate.bypassed = true
                return 0
            }
            gate.refused = .function(name: String(cString: second))
            return deny
        case transactionAction, savepointAction:
            gate.kind = .transactionControl
            // A compile inside a body is refused here; a cached statement is checked again when it
            // runs (statementWillRun), because the same text is allowed outside a body.
            if gate.scope.refusesTransactionControl {
                gate.refused = .transactionControl
                return deny
            }
            return 0
        case attachAction:
            gate.kind = .attach
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

    /// The run-time half of the transaction rule, for statements that were compiled (and cached)
    /// outside a body: throws ``SqlCipherError/transactionControlInBody(sql:)`` before the statement
    /// runs inside one.
    func refuseTransactionControl(_ statement: Statement) throws {
        if scope.refusesTransactionControl {
            throw SqlCipherError.transactionControlInBody(sql: statement.sql).redactingSQL()
        }
    }
}
