/// What ``Database`` and ``DatabasePool`` have in common: every raw-SQL, query-builder, entity,
/// transaction and migration method, defined once for both.
///
/// ```swift
/// func archive(_ db: some DatabaseAccess, before date: Date) async throws -> Int {
///     try await db.execute("DELETE FROM notes WHERE created < ?", date)
/// }
/// try await archive(database, before: cutoff)   // a Database
/// try await archive(pool, before: cutoff)       // or a DatabasePool
/// ```
///
/// Each method is the ``Connection`` method of the same name run as one call on a connection the
/// database chooses: on a ``Database`` its only connection; on a ``DatabasePool`` a reader for
/// work that only reads (``read(_:)``, `query`, `fetch`, `count`) and the writer for everything
/// else. So the methods behave the same on both, and code written against `some DatabaseAccess`
/// works with either.
///
/// SqlCipherKit's own types are the only conforming types: the requirement that routes a call
/// (`_withConnection(_:_:)`) is not meant to be implemented elsewhere.
public protocol DatabaseAccess: AnyObject, Sendable {
    /// The path the database was opened with (`:memory:` for an in-memory database).
    var path: String { get }
    /// The SQLCipher library in use.
    var library: SqlCipherLibrary { get }
    /// Whether the database was opened with a key.
    var isEncrypted: Bool { get }
    /// The journal mode the file was in when it was opened (a pool's is always ``JournalMode/wal``).
    var journalMode: JournalMode { get }
    /// The cipher settings the database was opened with.
    var cipherSettings: CipherSettings { get }
    /// Whether the database can only be read.
    var isReadOnly: Bool { get }

    /// Runs `work` on a connection chosen for `access`, as one cancellable call: the one routing
    /// point of every method this protocol's extensions define. Not for use outside SqlCipherKit.
    func _withConnection<T: Sendable>(_ access: _DatabaseAccessKind,
                                      _ work: @Sendable (borrowing Connection) throws -> T) async throws -> T

    /// The values of `request` as the database changes: the current value first, then one value
    /// after each committed transaction that changed the result (see ``LiveValues``).
    func values<Value>(of request: LiveRequest<Value>) -> LiveValues<Value>

    /// Copies the live database into a new encrypted file at `target`, verified before it takes
    /// that name (see ``Database/backup(to:key:pagesPerStep:progress:)`` and
    /// ``DatabasePool/backup(to:key:pagesPerStep:progress:)``).
    func backup(to target: String, key: DatabaseKey, pagesPerStep: Int,
                progress: (@Sendable (DatabaseProgress) -> Void)?) async throws

    /// Closes every connection. Later calls throw ``SqlCipherError/databaseClosed``.
    func close() async
}

/// How a call of ``DatabaseAccess`` uses the database, which decides the connection it runs on.
/// Not for use outside SqlCipherKit.
public enum _DatabaseAccessKind: Sendable {
    /// One or more statements that are expected only to read. A pool runs them on a reader; should
    /// one of them write, it runs the work again on the writer (so the work must only read before
    /// its first writing statement, which holds for the single queries routed this way).
    case read
    /// A read-only body that needs one stable snapshot: a pool runs it on a reader, where a
    /// statement that writes is refused.
    case snapshot
    /// Anything that writes, or must see the writer's own state: runs on the writer.
    case write
}
