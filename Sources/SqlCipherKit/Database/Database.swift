import Foundation

/// An encrypted (or, when asked, plaintext) SQLite database, isolated in an actor.
///
/// ```swift
/// let db = try Database(path: "/path/to/store.db", key: "my-passphrase")
/// try await db.execute("CREATE TABLE IF NOT EXISTS notes(id INTEGER PRIMARY KEY, body TEXT)")
/// try await db.execute("INSERT INTO notes(body) VALUES (?)", "hello")
/// let rows = try await db.query("SELECT body FROM notes")
/// ```
///
/// Opening proves the SQLCipher binding first (``SqlCipherLibrary``), applies the key with
/// `sqlite3_key`, applies ``CipherSettings``, reads the schema to prove the key, and for a new
/// encrypted file writes once and checks on disk that nothing readable was written.
///
/// Each connection gets these defaults, the first three of which ``DatabaseConfiguration``
/// changes: a 5-second busy timeout, an 8 MiB page cache (`PRAGMA cache_size = -8192`, so that a
/// working set that fits is decrypted once; see `docs/performance.md`), `synchronous = FULL`,
/// `PRAGMA foreign_keys = ON`,
/// `PRAGMA temp_store = MEMORY` (no plaintext temporary files), and on SQLCipher 4.5.1+ its
/// stderr log turned off (`PRAGMA cipher_log = off`, which is process-wide).
public actor Database {
    /// The path the database was opened with (`:memory:` for an in-memory database), made absolute
    /// from the working folder at open when it was relative: a rekey, a backup and every later
    /// use of the path name the file opened, whatever the process's working folder is then.
    public nonisolated let path: String
    /// The SQLCipher library in use.
    public nonisolated let library: SqlCipherLibrary
    /// Whether the database was opened with a key. False for ``init(unencryptedPath:journalMode:readOnly:configuration:)``.
    public nonisolated let isEncrypted: Bool
    /// The journal mode the file was in when this database opened it. An in-memory database reports
    /// ``JournalMode/rollback``. A later `PRAGMA journal_mode = …` run as SQL changes the file's mode
    /// but not this value (read the pragma for the mode now); the database checks its file before
    /// each transaction from then on, as it does in rollback mode.
    public nonisolated let journalMode: JournalMode
    /// The cipher settings the database was opened with.
    public nonisolated let cipherSettings: CipherSettings
    /// Whether the database was opened with `readOnly: true`, or could only be opened read-only
    /// (for example a file without write permission). Reads work; every write throws
    /// ``SqlCipherError/sqlite(code:extendedCode:message:sql:)`` with SQLite's `SQLITE_READONLY` (8).
    public nonisolated let isReadOnly: Bool
    /// The configuration the connection was set up with.
    public nonisolated let configuration: DatabaseConfiguration

    var connection: SQLiteConnection?

    /// Runs the actor's calls on a queue of their own rather than on Swift's cooperative pool,
    /// which blocking SQLite calls would starve (DatabaseExecutor.swift).
    private nonisolated let executor = DatabaseExecutor(label: "SqlCipherKit.Database")

    /// The database's own serial executor: a dispatch queue of its own, so that a long SQLite call
    /// blocks only this database, never Swift's cooperative thread pool.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    /// The watch for commits of other connections, running while observations exist
    /// (Database+LiveQueries.swift).
    nonisolated let externalWatch = ExternalChangeWatch()

    /// Whether the connection's tracers, SQL functions and collations are its own (a lone
    /// database) rather than a pool's, shared with the pool's other connections: only then does
    /// ``close()`` stop the tracers, which the pool stops when it closes itself.
    private nonisolated let ownsExtensions: Bool

    /// Opens or creates an encrypted database with a passphrase.
    ///
    /// SQLCipher derives the key from the passphrase with PBKDF2 (256,000 iterations of
    /// HMAC-SHA512 on SQLCipher 4), which takes a noticeable fraction of a second by design. The
    /// initialiser is synchronous and runs on the caller's thread: on the main actor, open in a
    /// task of its own so the interface stays responsive,
    /// `let db = try await Task.detached { try Database(path: path, key: passphrase) }.value`.
    ///
    /// - Parameters:
    ///   - path: A file path, or `":memory:"`.
    ///   - key: A non-empty passphrase. Its UTF-8 bytes are run through SQLCipher's key
    ///     derivation; a passphrase spelled like SQLCipher's raw-key literal (`x'` and 64, 96 or 160
    ///     hexadecimal digits, 67, 99 or 163 bytes in all) is refused, because SQLCipher would take it
    ///     as a raw key: use ``init(path:rawKey:journalMode:cipher:readOnly:configuration:)`` for raw keys.
    ///   - journalMode: The mode for a new file; an existing file keeps its own.
    ///   - cipher: Cipher settings; the same must be given each time the file is opened.
    ///   - readOnly: Opens an existing database without ever writing to it or to its folder:
    ///     statements that write throw, and no `-wal`, `-shm` or `-journal` file is created (see
    ///     "Read-only opening" in <doc:OpeningADatabase>).
    ///   - configuration: How the connection is set up: busy timeout, page cache, `synchronous`,
    ///     the permissions of a new file (`0o600` unless set), a closure run on the connection
    ///     before it is used (``DatabaseConfiguration``).
    /// - Throws: ``SqlCipherError/emptyKey``, ``SqlCipherError/passphraseLooksLikeRawKey``,
    ///   ``SqlCipherError/keyFailed(path:reason:)`` and the other opening errors.
    public init(path: String, key: String, journalMode: JournalMode = .wal, cipher: CipherSettings = .default,
                readOnly: Bool = false, configuration: DatabaseConfiguration = DatabaseConfiguration()) throws {
        try self.init(path: path, key: .passphrase(key), journalMode: journalMode, cipher: cipher, readOnly: readOnly,
                      configuration: configuration)
    }

    /// Opens or creates an encrypted database with a raw 32-byte key: no key derivation runs.
    ///
    /// ```swift
    /// let key: Data = ...  // exactly 32 bytes, e.g. from the system keychain
    /// let db = try Database(path: "/path/to/store.db", rawKey: key)
    /// ```
    ///
    /// A database created with a raw key cannot be opened with a passphrase, or the reverse.
    /// `readOnly` opens an existing database without ever writing to it or to its folder.
    /// - Throws: ``SqlCipherError/invalidRawKey(byteCount:)`` unless the key has 32 bytes.
    public init(path: String, rawKey: Data, journalMode: JournalMode = .wal, cipher: CipherSettings = .default,
                readOnly: Bool = false, configuration: DatabaseConfiguration = DatabaseConfiguration()) throws {
        try self.init(path: path, key: .rawKey(rawKey), journalMode: journalMode, cipher: cipher, readOnly: readOnly,
                      configuration: configuration)
    }

    /// Opens or creates an encrypted database with any ``DatabaseKey``: a passphrase given as
    /// bytes, a raw key or a passphrase with the salt of a file that has a plaintext header, or a
    /// string literal.
    ///
    /// ```swift
    /// let db = try Database(path: "/path/to/store.db", key: .passphrase(passphraseBytes))
    /// let headed = try Database(path: "/path/to/headed.db", key: .rawKey(keyBytes, salt: saltBytes),
    ///                           cipher: CipherSettings(plaintextHeaderSize: 32))
    /// ```
    ///
    /// This is the one keyed initialiser; the `String` and `rawKey:` forms make a ``DatabaseKey``
    /// and come here. A file with a plaintext header (``CipherSettings/plaintextHeaderSize``)
    /// does not store its salt, so it opens only with a key that carries the salt kept when it
    /// was created: ``DatabaseKey/rawKey(_:salt:)`` or ``DatabaseKey/passphrase(_:salt:)-(String,_)``.
    /// `readOnly` opens an existing database without ever writing to it or to its folder.
    /// - Throws: ``SqlCipherError/emptyKey``, ``SqlCipherError/passphraseLooksLikeRawKey``,
    ///   ``SqlCipherError/invalidRawKey(byteCount:)``, ``SqlCipherError/keyFailed(path:reason:)``
    ///   and the other opening errors.
    public init(path: String, key: DatabaseKey, journalMode: JournalMode = .wal, cipher: CipherSettings = .default,
                readOnly: Bool = false, configuration: DatabaseConfiguration = DatabaseConfiguration()) throws {
        let material = try key.resolved(for: cipher, library: SqlCipherLibrary.shared, readOnly: readOnly).material()
        do {
            try self.init(path: path, key: material, journalMode: journalMode, cipher: cipher, readOnly: readOnly,
                          setup: ConnectionSetup(configuration: configuration))
        } catch {
            throw KeySalt.explainingRefusal(error, given: key.salt, settings: cipher)
        }
    }

    /// Opens or creates a plaintext SQLite database: no key, readable by any SQLite tool.
    ///
    /// ```swift
    /// let db = try Database(unencryptedPath: "/path/to/public.db")
    /// ```
    ///
    /// `readOnly` opens an existing database without ever writing to it or to its folder.
    /// - Throws: ``SqlCipherError/notPlaintextDatabase(path:)`` for an encrypted file.
    public init(unencryptedPath: String, journalMode: JournalMode = .wal, readOnly: Bool = false,
                configuration: DatabaseConfiguration = DatabaseConfiguration()) throws {
        try self.init(path: unencryptedPath, key: nil, journalMode: journalMode, cipher: .default, readOnly: readOnly,
                      setup: ConnectionSetup(configuration: configuration))
    }

    /// Opens with `key` (nil for a plaintext database): every public initialiser and each
    /// connection of a ``DatabasePool`` come here.
    /// `setup` says how the connection is set up (``ConnectionSetup``: its role, a pool's registry
    /// of extensions, relay and file identity, the caller's configuration). `claim` is the
    /// creation lock when the caller holds it already (a pool holds it across its key derivation).
    init(path: String, key: KeyMaterial?, journalMode: JournalMode, cipher: CipherSettings,
         readOnly: Bool, setup: ConnectionSetup, claim: CreationClaim? = nil) throws {
        let opened = try DatabaseOpener.open(
            path: path, key: key, journalMode: journalMode, cipher: cipher, readOnly: readOnly, setup: setup,
            claim: claim)

        self.configuration = setup.configuration
        self.path = DatabasePath.absolute(path)
        self.library = opened.library
        self.isEncrypted = key != nil
        self.journalMode = opened.journalMode
        self.cipherSettings = key == nil ? .default : cipher
        self.isReadOnly = opened.isReadOnly
        self.connection = opened.connection
        self.ownsExtensions = setup.extensions == nil
        // From now on the connection is used on this database's executor only (debug builds check it).
        opened.connection.isolation = executor
    }

    /// The open connection, or ``SqlCipherError/databaseClosed``.
    func liveConnection() throws -> SQLiteConnection {
        guard let connection else { throw SqlCipherError.databaseClosed }
        return connection
    }

    /// Runs `work` on the connection as one cancellable call: every public method that runs SQL
    /// goes through here.
    ///
    /// A call whose task is already cancelled does not start. When the task is cancelled while
    /// `work` runs, the running statement is interrupted (``InterruptGate``), an open transaction
    /// is rolled back, and the call throws `CancellationError` whatever error the interrupted
    /// work reported.
    func perform<T>(_ work: (SQLiteConnection) throws -> T) async throws -> T {
        try Task.checkCancellation()
        let core = try liveConnection()
        let gate = core.interruptGate
        let call = gate.nextCall()
        return try await withTaskCancellationHandler {
            // A synchronous call of an actor-isolated method: it compiles only because this
            // closure is isolated to the actor (it uses `self`). A closure that does not mention
            // `self` is not, and would run `work` off the actor, beside other calls.
            try self.run(work, on: core, call: call)
        } onCancel: {
            gate.cancel(call)
        }
    }

    /// The synchronous part of ``perform(_:)``: no other call interleaves with it.
    private func run<T>(_ work: (SQLiteConnection) throws -> T, on core: SQLiteConnection, call: UInt64) throws -> T {
        // Before anything else: the statements of streams whose loop has already been left.
        core.streams.closeAbandoned()
        let gate = core.interruptGate
        gate.begin(call)
        defer { if gate.end(call) { core.restoreBusyTimeout() } }
        do {
            return try work(core)
        } catch {
            if gate.wasCancelled(call) { throw CancellationError() }
            throw error
        }
    }

    /// Closes the database. Later calls throw ``SqlCipherError/databaseClosed``. Tracers stop,
    /// and sequences of ``DatabaseAccess/traceEvents(options:bufferingPolicy:)`` end. Closing
    /// twice is harmless. A call running now finishes first (a transaction commits or fails as it
    /// would have), since the database runs one call at a time; cancel its task to stop it sooner.
    ///
    /// A database is also closed when the last reference to it goes away.
    public func close() {
        externalWatch.stop()
        // Tracers end now, not when the last reference to the connection goes: a sequence of
        // `traceEvents()` ends and its loop returns, whatever else still holds the connection.
        if ownsExtensions { connection?.extensionState.registry.removeAllTracers() }
        connection?.streams.closeAll()
        connection?.close()
        connection = nil
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { connection == nil }
}

extension Database: DatabaseAccess {
    /// Runs `work` on the database's only connection: every kind of access goes to it, so a
    /// ``DatabaseAccess/read(_:)`` sees the database's own uncommitted writes when called inside a
    /// transaction opened by hand.
    public func _withConnection<T: Sendable>(_ access: _DatabaseAccessKind,
                                             _ work: @Sendable (borrowing Connection) throws -> T) async throws -> T {
        try await perform { core in try core.lend(work) }
    }
}
