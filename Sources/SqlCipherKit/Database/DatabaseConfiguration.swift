/// How every connection of a ``Database`` or a ``DatabasePool`` is set up: applied to the
/// database's connection, and to each connection of a pool (the writer, each reader when it is
/// opened, and readers opened again after a rekey) before it runs any of your statements.
///
/// ```swift
/// var configuration = DatabaseConfiguration()
/// configuration.synchronous = .normal            // see the trade-off below
/// configuration.pageCacheKiB = 64 * 1024         // 64 MiB per connection
/// configuration.busyTimeout = .seconds(10)
/// configuration.prepareConnection = { conn in
///     try conn.execute("PRAGMA recursive_triggers = ON")
/// }
/// let pool = try DatabasePool(path: path, key: passphrase, configuration: configuration)
/// ```
///
/// A pool runs each call on whichever connection its routing picks, so a per-connection `PRAGMA`
/// sent as raw SQL would set one connection at random: a pool refuses those
/// (``SqlCipherError/perConnectionPragma(name:sql:)``) and this value is the one way to set them.
/// A ``Database`` has one connection and accepts them as raw SQL too.
///
/// The connections the package opens for its own work (the proof of a new key after a rekey, the
/// source and target of a conversion) are not set up with it: they run none of your statements.
public struct DatabaseConfiguration: Sendable {
    /// How long a statement waits for a lock held by another connection or process before it
    /// fails with `SQLITE_BUSY` (https://sqlite.org/c3ref/busy_timeout.html). Five seconds unless set;
    /// from zero (do not wait) to `Int32.max` milliseconds. An opening of a file that
    /// ``Database/encryptInPlace(path:key:cipher:keepBackup:progress:)`` or
    /// ``Database/upgradeFromSqlCipher3(path:key:progress:)`` is converting, in this process or
    /// another, waits as long for the conversion to end.
    public var busyTimeout: Duration = .seconds(5)

    /// The page cache of each connection, in KiB (`PRAGMA cache_size = -N`,
    /// https://sqlite.org/pragma.html#pragma_cache_size): ``Database/defaultPageCacheKiB`` (8 MiB)
    /// unless set; from 0 to `Int32.max`.
    ///
    /// SQLCipher decrypts a page each time SQLite reads it from the file, and a page found in the
    /// cache costs nothing: a working set that fits is decrypted once per connection. Each
    /// connection of a pool has its own cache, so a pool can hold up to
    /// `(maximumReaderCount + 1) × pageCacheKiB`. The cache fills only as pages are read. Measured
    /// figures are in docs/performance.md ("The page cache").
    public var pageCacheKiB: Int = Database.defaultPageCacheKiB

    /// How hard SQLite makes sure a commit is on disk before it returns
    /// (https://sqlite.org/pragma.html#pragma_synchronous): ``Synchronous/full`` unless set.
    public var synchronous: Synchronous = .full

    /// The permissions of a new database file and of its `-wal`, `-shm` and `-journal`:
    /// ``FilePermissions/ownerOnly`` (`0o600`) unless set. An existing file keeps its own.
    public var filePermissions: FilePermissions = .ownerOnly

    /// Runs on every connection once the package has set it up (key, cipher settings, the
    /// settings above, a pool's functions and tracers), before any other statement: per-connection
    /// `PRAGMA`s, temporary tables or views, anything each connection needs.
    ///
    /// Its statements may set the per-connection `PRAGMA`s that a pool refuses as raw SQL; the
    /// rules that protect the encryption (<doc:RawSQLGuards>) still apply. A pool's readers are
    /// read-only when it runs (`PRAGMA query_only`), so it can tell a reader by
    /// `try conn.query("PRAGMA query_only")[0].get(0, as: Int.self) == 1`. An error it throws fails
    /// the opening of that connection (the initialiser, or the read that needed a new reader) with
    /// that error; a file the failed initialiser created is removed again.
    ///
    /// It runs on the connection's own executor, possibly on another thread than the one that
    /// set it: it is `@Sendable`, and should not wait for other connections of the same pool.
    public var prepareConnection: (@Sendable (borrowing Connection) throws -> Void)?

    /// The defaults: a 5-second busy timeout, an 8 MiB page cache, `synchronous = FULL`, new files
    /// `0o600`, no preparation.
    public init() {}

    /// `PRAGMA synchronous` (https://sqlite.org/pragma.html#pragma_synchronous). `OFF` is not offered:
    /// with it, a power loss or an operating-system crash can corrupt the database, and an
    /// encrypted database whose pages are damaged cannot be read past them.
    public enum Synchronous: String, Sendable, Hashable, CaseIterable {
        /// `NORMAL`. In WAL mode a commit does not wait for the disk: the `-wal` file is synced only
        /// at checkpoints. The database never becomes corrupt, but the last transactions committed
        /// before a power loss or an operating-system crash may be rolled back when the file is
        /// next opened (a process crash loses nothing). In rollback-journal mode it syncs at the
        /// most critical moments only, and a power loss at the wrong moment can corrupt the file.
        /// Measured on a virtual machine's disk (fsync about 2 ms): one-row transactions in WAL
        /// mode ran at 516 commits per second with `FULL` and 11,062 with `NORMAL` (SQLCipher
        /// 4.6.1); the gain is the disk's sync time per commit, so it is small on a disk with a
        /// fast sync and large on a slow one (docs/performance.md, "Durability and write speed").
        case normal = "NORMAL"
        /// `FULL`, SQLite's default: each commit is synced to disk before it returns. A commit
        /// that returned survives a power loss.
        case full = "FULL"
        /// `EXTRA`: as `FULL`, and in rollback-journal mode the folder is synced too after the
        /// journal is deleted, so that a commit also survives a power loss right after it.
        case extra = "EXTRA"
    }

    /// The busy timeout in milliseconds, or a typed error for a value SQLite cannot take.
    func busyTimeoutMilliseconds() throws -> Int32 {
        let (seconds, attoseconds) = busyTimeout.components
        guard seconds >= 0, attoseconds >= 0 else {
            throw SqlCipherError.invalidConfiguration(
                reason: "busyTimeout is \(busyTimeout), and it cannot be negative; use .zero not to wait for locks")
        }
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        let total = milliseconds.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        guard !milliseconds.overflow, !total.overflow, total.partialValue <= Int64(Int32.max) else {
            throw SqlCipherError.invalidConfiguration(
                reason: "busyTimeout is \(busyTimeout), more than SQLite can wait (Int32.max milliseconds, "
                    + "about 24 days); give a shorter one")
        }
        return Int32(total.partialValue)
    }

    /// Checks every setting, so that a bad one is reported before a file is created.
    func validate() throws {
        _ = try busyTimeoutMilliseconds()
        guard pageCacheKiB >= 0, pageCacheKiB <= Int(Int32.max) else {
            throw SqlCipherError.invalidConfiguration(
                reason: "pageCacheKiB is \(pageCacheKiB); give a size from 0 to \(Int32.max) KiB (the default is "
                    + "\(Database.defaultPageCacheKiB))")
        }
    }

    /// Applies the page cache and `synchronous` to a connection being opened, as the package's own
    /// statements (the busy timeout is set before the first read, by the opener).
    func applySettings(to connection: SQLiteConnection) throws {
        try connection.execute("PRAGMA cache_size = -\(pageCacheKiB)")
        try connection.execute("PRAGMA synchronous = \(synchronous.rawValue)")
    }
}

extension Database {
    /// The page cache each connection gets, in KiB: 8 MiB, four times SQLite's own default
    /// (`PRAGMA cache_size = -8192`, applied when the database opens).
    ///
    /// SQLCipher decrypts a page every time SQLite reads it from the file, and a page SQLite finds
    /// in its cache costs nothing. With SQLite's default, a table of a few megabytes read twice
    /// is decrypted twice; with a cache that holds it, once. The cache fills only as pages are
    /// read, so a small database never uses more than its size, and the memory is freed when the
    /// database closes. 8 MiB keeps a working set of that size decrypted once per connection
    /// while bounding what several connections (a pool's readers) can hold. Measured figures and
    /// guidance are in `docs/performance.md`.
    ///
    /// To give every connection of a database or pool another size, set
    /// ``DatabaseConfiguration/pageCacheKiB`` when it opens:
    ///
    /// ```swift
    /// var configuration = DatabaseConfiguration()
    /// configuration.pageCacheKiB = 64 * 1024   // 64 MiB, for a working set that large
    /// let pool = try DatabasePool(path: path, key: passphrase, configuration: configuration)
    /// ```
    public static let defaultPageCacheKiB = 8_192
}

/// How the opener sets up one connection: one value, given to ``DatabaseOpener`` whole rather
/// than written into the connection after it opened.
struct ConnectionSetup: Sendable {
    /// What trace events report the connection as.
    var role = ConnectionRole.writer
    /// Whether the connection belongs to a ``DatabasePool``: per-connection `PRAGMA`s sent as raw
    /// SQL are then refused (``SqlCipherError/perConnectionPragma(name:sql:)``).
    var pooled = false
    /// A pool's registry of tracers, functions and collations, shared by its connections.
    var extensions: ConnectionExtensions?
    /// The caller's configuration.
    var configuration = DatabaseConfiguration()
    /// A pool's writer: the relay through which the pool's observations learn of its commits.
    var relay: CommitRelay?
    /// A pool's readers: the file the path must still name (checked before SQLite opens it and
    /// again before anything is read).
    var identity: FileIdentity?
}
