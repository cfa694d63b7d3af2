/// Whose SQL a connection runs now, and what that SQL may do: the one state every guard, the
/// tracer and the transaction code read, in place of a depth counter per concern.
///
/// ## State table
///
/// Scopes nest (a closure inside a closure), so the state is a set of depths rather than a single
/// state: each row is one depth (or flag), raised only by ``with(_:_:)`` for the length of one
/// closure and restored, whatever the closure does, when it returns or throws. No other code
/// writes it, so no scope can be left unbalanced.
///
/// | scope (depth)  | entered by                                                                 | while above zero (set)                                                                                          |
/// |----------------|----------------------------------------------------------------------------|------------------------------------------------------------------------------------------------------------------|
/// | *top level*    | nothing: every depth zero                                                  | the user's SQL: every guard applies, statements are cached, traced as the user's                                  |
/// | `package`      | `asPackage` (cipher settings, conversions, keys, the package's `BEGIN`, `COMMIT`, `SAVEPOINT`) | the cipher rules, the transaction rule and the per-connection pragma rule let statements through; what needed that is never cached; traced as internal; a failure does not end paused streams; `CREATE TABLE` text is not scanned for `sqlcipher*` calls; the `ATTACH` check is skipped |
/// | `internal`     | `asInternal` (opening, the migrations table, checkpoints, bookkeeping)     | traced as internal; a failure does not end paused streams; every guard still applies                              |
/// | `configuring`  | `DatabaseConfiguration.prepareConnection` while a connection opens         | a pool's connection may set per-connection pragmas (the cipher rules still apply)                                 |
/// | `body`         | `runBody`: the closure of `transaction`, `savepoint` or `read`             | `package` is zero again inside (the body's SQL is the user's); transaction control is refused; cursors end with it |
/// | `readOnly`     | a `read` body (a `body` too)                                               | a statement that writes is refused before it runs (`readOnlyViolation`)                                          |
/// | `transactional`| a body inside a transaction or savepoint the package opened (a `body` too) | no statement runs once SQLite has ended that transaction by itself (`transactionRolledBack`)                      |
/// | `savepoint`    | `inSavepoint`, around the package's `SAVEPOINT` and the body               | names the savepoint (`sqlcipherkit_sp<depth>`), so that nested savepoints never share a name                     |
/// | `migration`    | the runner, around a migration's `up` or `down`                            | setting a per-connection pragma as raw SQL is refused: a rollback of the migration would not undo it             |
///
/// One fact is not a scope: ``isPooled`` is set once, when a ``DatabasePool`` opens the connection,
/// and never changes; outside `package` and `configuring` it refuses per-connection pragmas as raw SQL.
///
/// Read on the connection's isolation domain only, by the statement path and by the C authorizer
/// (which SQLite calls inside a prepare on that same domain). The state is
/// `@exclusivity(unchecked)`: no access to it spans a call that could reach it again (``with(_:_:)``
/// saves a copy, mutates, and restores the copy), and the dynamic check would be paid by every
/// statement and every authorizer action.
final class ConnectionScope {
    /// The depths of the table above.
    struct Depths: Equatable {
        var package = 0
        var `internal` = 0
        var configuring = 0
        var body = 0
        var readOnly = 0
        var transactional = 0
        var savepoint = 0
        var migration = 0
    }

    /// A scope to enter (one row of the table).
    enum Entry {
        case package
        case `internal`
        case configuring
        /// A body of the user's; `readOnly` and `transactional` raise those depths too.
        case body(readOnly: Bool, transactional: Bool)
        case savepoint
        /// A migration's `up` or `down`.
        case migration
    }

    @exclusivity(unchecked) private(set) var depths = Depths()

    /// Whether the connection belongs to a ``DatabasePool`` (see the table): set once at opening.
    @exclusivity(unchecked) var isPooled = false

    /// Runs `body` inside `entry`, and restores the state it found when `body` returns or throws.
    func with<T>(_ entry: Entry, _ body: () throws -> T) rethrows -> T {
        let saved = depths
        switch entry {
        case .package: depths.package += 1
        case .internal: depths.internal += 1
        case .configuring: depths.configuring += 1
        case let .body(readOnly, transactional):
            depths.package = 0
            depths.body += 1
            if readOnly { depths.readOnly += 1 }
            if transactional { depths.transactional += 1 }
        case .savepoint: depths.savepoint += 1
        case .migration: depths.migration += 1
        }
        defer { depths = saved }
        return try body()
    }

    // MARK: What the table permits

    /// Whether the package runs its own SQL now (`package`).
    @inline(__always) var isPackage: Bool { depths.package > 0 }

    /// Whether the statements running now are the package's own, for trace events and for paused
    /// streams (`package` or `internal`).
    @inline(__always) var isInternal: Bool { depths.package > 0 || depths.internal > 0 }

    /// Whether a user's body runs now and transaction control is refused (`body`, outside `package`).
    @inline(__always) var refusesTransactionControl: Bool { depths.body > 0 && depths.package == 0 }

    /// Whether writes are refused (`readOnly`).
    @inline(__always) var refusesWrites: Bool { depths.readOnly > 0 }

    /// Whether a body runs inside a transaction the package opened (`transactional`).
    @inline(__always) var isTransactionalBody: Bool { depths.transactional > 0 }

    /// Whether setting a per-connection pragma as raw SQL is refused: on a pool's connection, or
    /// in a migration's body (`PRAGMA query_only = ON` there outlived the migration it failed, and
    /// every later write of the connection failed), outside `package` and `configuring`.
    @inline(__always) var refusesPerConnectionPragmas: Bool {
        (isPooled || depths.migration > 0) && depths.package == 0 && depths.configuring == 0
    }
    /// Whether setting a per-connection pragma is allowed only because of the scope (a pool's
    /// connection in `package` or `configuring`): such a statement must not be cached.
    @inline(__always) var bypassesPerConnectionPragmaRule: Bool {
        isPooled && (depths.package > 0 || depths.configuring > 0)
    }

    /// The depth of savepoints the package opened (`savepoint`), for the next one's name.
    var savepointDepth: Int { depths.savepoint }
}
