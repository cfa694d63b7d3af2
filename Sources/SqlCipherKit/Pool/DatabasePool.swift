import Foundation
import Synchronization

/// An encrypted database with concurrent readers beside one writer, for services that serve many
/// requests and apps that read while they write.
///
/// ```swift
/// let pool = try DatabasePool(path: "/var/lib/app/store.db", key: passphrase)
/// try await pool.migrate(migrations)
/// async let orders = pool.fetch(Order.self, where: col("status") == "open")
/// async let count = pool.read { conn in try conn.query("SELECT count(*) FROM customers")[0].get(0, as: Int.self) }
/// try await pool.transaction { conn in try conn.save(order) }   // runs beside the reads
/// ```
///
/// - Reads (``DatabaseAccess/read(_:)``, `query`, `fetch`, `count`, streams, live-query fetches)
///   run on a reader, each in one read transaction: a stable snapshot of the last commit, which
///   a write that commits meanwhile does not change. A read never waits for the writer.
/// - Writes (`execute`, `save`, `delete`, ``DatabaseAccess/transaction(_:)``, `migrate`, ...)
///   run on the one writer, one at a time. A write never waits for readers.
/// - Readers are opened when concurrent reads need them, up to ``maximumReaderCount``, and reused
///   most recently used first.
/// - With a passphrase, the key is derived once for the whole pool, not once per connection:
///   every connection is keyed with the derived key and the file's salt (see
///   <doc:DatabasePools> and "Deriving the key once" in <doc:KeysInMemory>).
///
/// The file must be in WAL mode (a new file is created in it); see ``SqlCipherError/poolRequiresWAL(path:journalMode:)``.
/// The path is resolved once, when the pool opens (a symbolic link leads to its target), and a
/// file later renamed over it is never read with the pool's `-wal`: readers opened after that
/// throw ``SqlCipherError/cannotOpen(path:reason:)`` ("replaced"); close the pool and open it again.
public final class DatabasePool: DatabaseAccess {
    /// The path of the database file, as given, made absolute from the working folder at open
    /// when it was relative (the readers the pool opens later use the file it names then,
    /// whatever the working folder is).
    public let path: String
    /// The SQLCipher library in use.
    public let library: SqlCipherLibrary
    /// Whether the database was opened with a key.
    public let isEncrypted: Bool
    /// Always ``JournalMode/wal``: a pool needs it.
    public let journalMode: JournalMode
    /// The cipher settings the database was opened with.
    public let cipherSettings: CipherSettings
    /// Always false: a pool writes.
    public let isReadOnly = false
    /// The most readers the pool opens at once.
    public let maximumReaderCount: Int
    /// The configuration every connection of the pool was set up with.
    public let configuration: DatabaseConfiguration

    /// The default ``maximumReaderCount``: enough to keep the cores of a small server busy with
    /// reads. Each reader holds its own connection and page cache, so more readers than cores add
    /// memory, not throughput; reads beyond the limit wait for a reader, in arrival order.
    public static let defaultMaximumReaderCount = 4

    /// Why a passphrase pool keys each connection with the passphrase rather than with a key
    /// derived once (nil when it derives once, or has no passphrase).
    let derivationFallback: String?
    let writer: Database
    /// The tracers, SQL functions and collations of every connection of the pool: registered
    /// through the writer, picked up by each reader before its next statement.
    let extensions: ConnectionExtensions
    let readers: ReaderSet

    /// Calls waiting for a reader and whether a rekey waits for busy readers (``ReaderSet``): for
    /// the package's tests, which wait for these waits rather than sleep.
    package var pendingReaderWaits: (calls: Int, exclusive: Bool) { readers.pendingWaits }
    /// How each reader is set up: also for readers opened after a rekey.
    let readerSetup: ConnectionSetup
    let key: PoolKey?
    let relay = CommitRelay()
    private let closed = Atomic<Bool>(false)
    /// Set once the pool has seen its file gone from its path (the writer's commit refused, or the
    /// live-query watch: ``MovedFileCheck``): from then on the readers, which still have the old
    /// file open, are not used either, and every call fails with the "replaced or moved" error.
    let fileLeftPath = Atomic<Bool>(false)
    /// The pool's observations, fetched on readers (DatabasePool+LiveQueries.swift).
    let observations = PoolObservations()

    /// Opens or creates a pool on an encrypted database with a passphrase.
    ///
    /// The key is derived from the passphrase once, here, for every connection the pool will
    /// open (the writer and each reader): one derivation, about as long as opening one
    /// ``Database``, however many readers run.
    ///
    /// - Parameters:
    ///   - path: The database file; created (in WAL mode) when missing.
    ///   - key: A non-empty passphrase (see ``Database/init(path:key:journalMode:cipher:readOnly:configuration:)-(_,String,_,_,_,_)``).
    ///   - cipher: Cipher settings; the same must be given each time the file is opened.
    ///   - maximumReaderCount: The most readers open at once (at least 1).
    ///   - configuration: How every connection of the pool is set up: busy timeout, page cache,
    ///     `synchronous`, the permissions of a new file (`0o600` unless set), a closure run on each
    ///     connection before it is used (``DatabaseConfiguration``). Per-connection `PRAGMA`s sent
    ///     as raw SQL are refused on a pool: set them here.
    /// - Throws: ``SqlCipherError/poolRequiresWAL(path:journalMode:)`` for a file in rollback
    ///   mode or an in-memory path, and the errors of opening a ``Database``.
    public convenience init(path: String, key: String, cipher: CipherSettings = .default,
                            maximumReaderCount: Int = DatabasePool.defaultMaximumReaderCount,
                            configuration: DatabaseConfiguration = DatabaseConfiguration()) throws {
        try self.init(path: path, keyedBy: .passphrase(key), cipher: cipher, maximumReaderCount: maximumReaderCount,
                      configuration: configuration)
    }

    /// Opens or creates a pool with a raw 32-byte key: no key derivation runs at all.
    public convenience init(path: String, rawKey: Data, cipher: CipherSettings = .default,
                            maximumReaderCount: Int = DatabasePool.defaultMaximumReaderCount,
                            configuration: DatabaseConfiguration = DatabaseConfiguration()) throws {
        try self.init(path: path, keyedBy: .rawKey(rawKey), cipher: cipher, maximumReaderCount: maximumReaderCount,
                      configuration: configuration)
    }

    /// Opens or creates a pool with any ``DatabaseKey``: a passphrase given as bytes, a raw key or a
    /// passphrase with the salt of a file that has a plaintext header (``DatabaseKey/rawKey(_:salt:)``,
    /// ``DatabaseKey/passphrase(_:salt:)-(String,_)``), or
    /// a string literal (see
    /// ``Database/init(path:key:journalMode:cipher:readOnly:configuration:)-(_,DatabaseKey,_,_,_,_)``).
    ///
    /// A passphrase is derived once for every connection, as with a `String`; the `String` and
    /// `rawKey:` forms make a ``DatabaseKey`` and come here.
    public convenience init(path: String, key: DatabaseKey, cipher: CipherSettings = .default,
                            maximumReaderCount: Int = DatabasePool.defaultMaximumReaderCount,
                            configuration: DatabaseConfiguration = DatabaseConfiguration()) throws {
        try self.init(path: path, keyedBy: key, cipher: cipher, maximumReaderCount: maximumReaderCount,
                      configuration: configuration)
    }

    /// Opens or creates a pool on a plaintext database.
    public convenience init(unencryptedPath: String,
                            maximumReaderCount: Int = DatabasePool.defaultMaximumReaderCount,
                            configuration: DatabaseConfiguration = DatabaseConfiguration()) throws {
        try self.init(path: unencryptedPath, secret: nil, cipher: .default, maximumReaderCount: maximumReaderCount,
                      configuration: configuration)
    }

    /// The one entry of every keyed pool. A raw key opens every connection as it is. A passphrase
    /// is derived once (``KeyDerivation``) and every connection opens with the derived key. Should
    /// the derived key not open an existing file, the passphrase is tried as SQLCipher itself
    /// would use it: if that opens the file, the derivation did not match this library, and the
    /// pool keys each connection with the passphrase instead (slower, never wrong). A wrong
    /// passphrase fails both and throws the first error.
    ///
    /// `key` is the caller's: the pool keeps a copy of its own (``PoolKey``), zeroed on its own
    /// schedule, and never clears the caller's value, which may open another database.
    ///
    /// A new file is claimed (``CreationClaim``) before its salt is chosen and until the writer
    /// has created it: another opener of the same new path waits, then finds the salt in the file,
    /// rather than choosing one of its own for a file that is not its to create.
    private convenience init(path: String, keyedBy key: DatabaseKey, cipher: CipherSettings, maximumReaderCount: Int,
                             configuration: DatabaseConfiguration) throws {
        let key = try key.resolved(for: cipher, library: SqlCipherLibrary.shared)
        let material = try key.material()
        guard key.kind == .passphrase else {
            do {
                try self.init(path: path, secret: key.copy(), cipher: cipher, maximumReaderCount: maximumReaderCount,
                              configuration: configuration)
            } catch {
                throw KeySalt.explainingRefusal(error, given: key.salt, settings: cipher)
            }
            return
        }
        let library = try SqlCipherLibrary.shared
        try DatabasePath.refuseUnusable(path)
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file::memory:") else {
            try self.init(path: path, secret: key.copy(), cipher: cipher,
                          maximumReaderCount: maximumReaderCount, configuration: configuration)
            return
        }
        let resolved = try DatabasePath.resolve(path)
        // The salt is read from the file the conversion leaves, not from the original it replaces.
        try ConversionLock.waitForConversions(
            of: resolved, timeoutMilliseconds: try configuration.busyTimeoutMilliseconds())
        let claim = try CreationClaim(path: resolved)
        defer { claim.release() }
        var fallbackReason: String?
        let secret: DatabaseKey
        switch try KeyDerivation.derivedKey(passphrase: material, path: resolved, settings: cipher, library: library) {
        case .derived(let derived):
            secret = .derived(derived.key)
        case .fallback(let reason):
            secret = key.copy()
            fallbackReason = reason
        }
        do {
            try self.init(path: path, secret: secret, cipher: cipher, maximumReaderCount: maximumReaderCount,
                          configuration: configuration, claim: claim, derivationFallback: fallbackReason)
        } catch SqlCipherError.keyFailed(let failedPath, let reason) where fallbackReason == nil {
            // The derived key did not open the file: a wrong passphrase, or a derivation that does
            // not match this library. SQLCipher's own derivation tells which.
            do {
                try self.init(path: path, secret: key.copy(), cipher: cipher,
                              maximumReaderCount: maximumReaderCount, configuration: configuration, claim: claim,
                              derivationFallback: "the key derived in Swift did not open the file, the passphrase did")
            } catch {
                throw SqlCipherError.keyFailed(path: failedPath, reason: reason)
            }
        }
    }

    /// Opens the writer (under `claim`, when the caller holds it) and records the file it opened:
    /// readers opened later must find that same file at the path (``FileIdentity``).
    private init(path: String, secret: DatabaseKey?, cipher: CipherSettings, maximumReaderCount: Int,
                 configuration: DatabaseConfiguration, claim: CreationClaim? = nil,
                 derivationFallback: String? = nil) throws {
        guard maximumReaderCount >= 1 else {
            throw SqlCipherError.invalidQuery(
                reason: "a DatabasePool needs at least one reader, and maximumReaderCount is \(maximumReaderCount)")
        }
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file::memory:") else {
            throw SqlCipherError.poolRequiresWAL(path: path, journalMode: "memory")
        }
        let key = secret.map(PoolKey.init)
        let relay = self.relay
        let extensions = ConnectionExtensions()
        try DatabasePath.refuseUnusable(path)
        let resolved = try DatabasePath.resolve(path)
        let setup = ConnectionSetup(role: .writer, pooled: true, extensions: extensions, configuration: configuration,
                                    relay: relay)
        let writer = try Database(path: resolved, key: key?.material(), journalMode: .wal, cipher: cipher,
                                  readOnly: false, setup: setup, claim: claim)
        guard let identity = FileIdentity(path: resolved) else {
            Task { await writer.close() }
            throw SqlCipherError.cannotOpen(
                path: path, reason: "the database file was deleted while the pool opened it; open the pool again")
        }
        guard writer.journalMode == .wal else {
            Task { await writer.close() }
            throw SqlCipherError.poolRequiresWAL(path: path, journalMode: writer.journalMode.pragmaValue.lowercased())
        }
        self.path = DatabasePath.absolute(path)
        self.library = writer.library
        self.isEncrypted = secret != nil
        self.journalMode = .wal
        self.cipherSettings = writer.cipherSettings
        self.maximumReaderCount = maximumReaderCount
        self.derivationFallback = derivationFallback
        self.writer = writer
        self.extensions = extensions
        self.key = key
        let readerSetup = ConnectionSetup(role: .reader, pooled: true, extensions: extensions,
                                          configuration: configuration, identity: identity)
        self.readerSetup = readerSetup
        self.configuration = configuration
        self.readers = ReaderSet(maximum: maximumReaderCount) {
            do {
                return try Database(path: resolved, key: key?.material(), journalMode: .wal, cipher: cipher,
                                    readOnly: false, setup: readerSetup)
            } catch SqlCipherError.keyFailed(let path, let reason) {
                // The writer proved this key when the pool opened: a reader opened later that it
                // does not open most likely meets a rekey by another connection (another process),
                // not a wrong key, which the generic reason (cipher settings, SQLCipher 3) suggests.
                throw SqlCipherError.keyFailed(path: path, reason: Self.keyChangedSinceOpening + " (" + reason + ")")
            }
        }
    }

    deinit {
        key?.wipe()
    }

    /// Why a reader opened after the pool does not open the file with the pool's key.
    static let keyChangedSinceOpening = "this pool opened the file with this key, so most likely another connection "
        + "(in this process or another) changed the key (rekey) since; nothing was written. Close the pool and open it "
        + "again with the key the file has now. If no key was changed, the file was replaced or damaged: run "
        + "sqlcipher-doctor verify on it"

    // MARK: DatabaseAccess

    /// Routes a call: work that only reads to a reader (work that turns out to write runs again
    /// on the writer), snapshots to a reader, everything else to the writer. At the end of each
    /// call of the writer, the observations its commits changed are woken (``CommitRelay``).
    public func _withConnection<T: Sendable>(_ access: _DatabaseAccessKind,
                                             _ work: @Sendable (borrowing Connection) throws -> T) async throws -> T {
        guard !closed.load(ordering: .acquiring) else { throw SqlCipherError.databaseClosed }
        guard !fileLeftPath.load(ordering: .acquiring) else { throw SQLiteConnection.fileMovedError(sql: nil) }
        switch access {
        case .write:
            // Published on the writer's executor, before the next call of the writer can start:
            // published after this call had returned, it could also wake observations staged by
            // the next call's commit hook while that commit is not yet visible to readers, whose
            // fetch would then find nothing new, and the next call's own publication nothing
            // staged: a change lost for good.
            let relay = self.relay
            do {
                return try await writer._withConnection(.write) { conn in
                    defer { relay.publish() }
                    return try work(conn)
                }
            } catch SqlCipherError.sqlite(let code, let extended, let message, let sql)
                        where extended == SQLiteConnection.readOnlyDatabaseMoved {
                fileLeftPath.store(true, ordering: .releasing)
                throw SqlCipherError.sqlite(code: code, extendedCode: extended, message: message, sql: sql)
            }
        case .snapshot:
            return try await readers.withReader { reader in try await reader._withConnection(.snapshot, work) }
        case .read:
            do {
                return try await readers.withReader { reader in
                    try await reader._withConnection(.read) { conn in
                        try conn.core.runBody(readOnly: true) { try conn.core.lend(work) }
                    }
                }
            } catch SqlCipherError.readOnlyViolation {
                return try await _withConnection(.write, work)
            }
        }
    }

    /// Closes the pool: idle readers now, the writer and readers running a call when that call
    /// ends (a running transaction commits or fails as it would have; this returns after it).
    /// Waiting and later calls throw ``SqlCipherError/databaseClosed``; the key kept for readers
    /// is zeroed. Tracers stop, and sequences of ``DatabaseAccess/traceEvents(options:bufferingPolicy:)``
    /// end. Closing twice is harmless.
    public func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        observations.stopWatching()
        await readers.close()
        await writer.close()
        // The tracers belong to the pool's registry, which the pool itself keeps: stopped here, or
        // a loop over `traceEvents()` waited for ever after the close, and `TraceToken.isActive`
        // stayed true. A reader still running a read delivers nothing more.
        extensions.removeAllTracers()
        key?.wipe()
        // Observers waiting for a change would wait for ever: each is woken, fetches again, and
        // ends with `databaseClosed`, as those of a closed Database do.
        relay.externalChange()
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// How many readers are open now (they are opened as concurrent reads need them).
    public var openReaderCount: Int { readers.openCount }
}
