import CSqlCipherBridge
import Foundation

/// The opening sequence shared by every ``Database`` initializer and by the conversions that open
/// files of their own. One sequence, so that every connection gets the same checks and defaults.
enum DatabaseOpener {
    struct Opened {
        let connection: SQLiteConnection
        let library: SqlCipherLibrary
        let journalMode: JournalMode
        /// Whether SQLite opened the file read-only (it does so by itself when the file cannot be
        /// written, https://sqlite.org/c3ref/open.html).
        let isReadOnly: Bool
        /// The path of the file opened: the given one with symbolic links resolved (``DatabasePath``).
        let path: String
    }

    /// Opens `path` with `key` (nil for plaintext), applies `cipher`, proves the key, sets the
    /// journal mode of a new file, applies the defaults and, for a new encrypted file, checks on
    /// disk that what was written is ciphertext.
    ///
    /// With `readOnly`, the file must exist and hold a database; it is opened so that neither it
    /// nor its folder changes (ReadOnlyOpening.swift), and statements that write are refused.
    ///
    /// `setup` says how the connection is set up (``ConnectionSetup``): with a registry of
    /// extensions (a pool's, shared by its connections), the connection uses it from its first
    /// statement on, so its tracers see the opening statements (as internal ones) and its
    /// functions and collations are there before the caller's first statement; its role is what
    /// its trace events report (a pool's readers: `.reader`, made read-only with
    /// `PRAGMA query_only`); its ``DatabaseConfiguration`` is applied last, its
    /// `prepareConnection` after everything else.
    ///
    /// The path is resolved once, here (``DatabasePath``): the connection, its companion files and
    /// every check of them use the file a symbolic link leads to. A missing or empty file is
    /// opened under the creation lock (``CreationClaim``), taken here unless the caller holds it
    /// already (`claim`: a pool holds it across its key derivation); a missing file is created
    /// with the configuration's permissions. `identity`, when given, is the file the path must still name (a pool's
    /// readers): checked before SQLite opens the file and again before anything is read. An
    /// existing file under conversion (`encryptInPlace`, `upgradeFromSqlCipher3`) is waited for,
    /// up to the busy timeout, unless the caller is that conversion (`conversion`, its lock).
    ///
    /// An opening that fails while the process is out of file descriptors says so
    /// (``ResourceExhaustion``), whichever step met the limit.
    static func open(path given: String, key: KeyMaterial?, journalMode: JournalMode,
                     cipher: CipherSettings, readOnly: Bool = false, setup: ConnectionSetup = ConnectionSetup(),
                     claim heldClaim: CreationClaim? = nil, conversion: ConversionLock? = nil) throws -> Opened {
        do {
            return try openSteps(path: given, key: key, journalMode: journalMode, cipher: cipher, readOnly: readOnly,
                                     setup: setup, claim: heldClaim, conversion: conversion)
        } catch {
            throw ResourceExhaustion.explaining(error)
        }
    }

    /// Runs the opening's own statements: a lock that another connection kept past the busy
    /// timeout is reported as the opening's, not as a failure of the package's internal SQL, which
    /// the caller never wrote ("raise busyTimeout in `SELECT count(*) FROM sqlite_master …`"
    /// and "this statement did not take effect", of a statement that was no one's). The code
    /// stays SQLite's (`SQLITE_BUSY`, `SQLITE_LOCKED`), so a caller that retries on it still does.
    private static func namingTheOpening<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch SqlCipherError.sqlite(let code, let extended, let message, _) where code & 0xFF == 5 || code & 0xFF == 6 {
            throw SqlCipherError.sqlite(
                code: code, extendedCode: extended,
                message: message.replacingOccurrences(of: SQLiteMessageAdvice.busy, with: SQLiteMessageAdvice.busyOpening),
                sql: nil)
        }
    }

    /// The steps of ``open(path:key:journalMode:cipher:readOnly:setup:claim:conversion:)``.
    private static func openSteps(path given: String, key: KeyMaterial?, journalMode: JournalMode,
                                      cipher: CipherSettings, readOnly: Bool, setup: ConnectionSetup,
                                      claim heldClaim: CreationClaim?, conversion: ConversionLock?) throws -> Opened {
        let library = try SqlCipherLibrary.shared
        let encrypted = key != nil
        let inMemory = given == ":memory:"
        guard !given.isEmpty else {
            throw SqlCipherError.cannotOpen(path: given, reason: "the path is empty; use \":memory:\" for an in-memory database")
        }
        try DatabasePath.refuseUnusable(given)
        let settings = try cipher.pragmas(for: library, readOnly: readOnly)
        try setup.configuration.validate()
        let permissions = setup.configuration.filePermissions
        if cipher.plaintextHeaderSize != nil && !encrypted {
            throw SqlCipherError.invalidQuery(reason: "a plaintext header applies to encrypted databases only")
        }
        try cipher.requireSaltedKey(key, path: given)
        if !inMemory && !readOnly { _ = try permissions.mode(path: given) }
        let path = try DatabasePath.resolve(given)
        if !inMemory { try refuseSpecialFiles(of: path) }
        if readOnly { try checkReadOnlyPath(path, exists: !inMemory && FileManager.default.fileExists(atPath: path)) }
        // A read-only open creates nothing and removes nothing: it needs no claim, but it waits
        // for a creator of the file to finish, as an opener of an existing file does.
        if readOnly && !inMemory { try CreationClaim.waitForCreators(of: path) }
        // A conversion's own openings of the file it converts hold its lock (`conversion`).
        if !inMemory && conversion == nil {
            try ConversionLock.waitForConversions(
                of: path, timeoutMilliseconds: try setup.configuration.busyTimeoutMilliseconds())
        }
        let claim = inMemory || readOnly ? nil : try heldClaim ?? CreationClaim(path: path)
        defer { if heldClaim == nil { claim?.release() } }
        var isNew = inMemory ? true : try checkPath(path, encrypted: encrypted, cipher: cipher)
        if isNew && !inMemory, let reason = DatabasePath.companionNameReason(path) {
            throw SqlCipherError.cannotOpen(path: path, reason: reason)
        }
        if !inMemory && !readOnly {
            try refuseNameWithoutRoom(path, isNew: isNew)
            // A conversion judges the names of the file it converts itself (its own backup link
            // is one of them: InPlaceEncryption); its companions are judged here all the same.
            if conversion == nil { try refuseOtherNames(path) }
            try refuseLinkedCompanions(of: path)
        }
        do {
            if let claim, !FileManager.default.fileExists(atPath: path) {
                try claim.createIfMissing(permissions: permissions)
                // Another program made the file between the check and the create: judge it as found.
                if !claim.createdFile { isNew = try checkPath(path, encrypted: encrypted, cipher: cipher) }
            }
            var attempt = 0
            while true {
                attempt += 1
                do {
                    return try openConnection(
                        path: path, key: key, journalMode: journalMode, cipher: cipher, settings: settings,
                        readOnly: readOnly, isNew: isNew, setup: setup, library: library)
                } catch let contradicted as FirstReadContradicted {
                    if attempt >= FirstReadContradicted.attempts { throw contradicted.lastTry(path: path) }
                } catch SqlCipherError.keyFailed(let failedPath, let reason) where attempt > 1 {
                    // An earlier try found page 1 decrypting with this key (every contradiction
                    // does), and this one found it not decrypting: the key was changed meanwhile.
                    throw FirstReadContradicted.keyChangedDuringOpening(path: failedPath, reason: reason)
                }
            }
        } catch {
            if let claim, claim.stillOwnsItsFiles(after: error) {
                if case SqlCipherError.plaintextDetected = error, isNew, claim.mayWipe {
                    // The file was missing or empty before this call, which held the lock: what is
                    // in it now came through a library that does not encrypt. Nothing of the
                    // caller's was written yet.
                    wipeRefusedCreation(path: path, created: claim.removableFiles)
                }
                for file in claim.removableFiles { try? FileReplacement.removeFile(file) }
            }
            throw error
        }
    }

    /// The part of ``open(path:key:journalMode:cipher:readOnly:setup:claim:conversion:)``
    /// after the file is there: opens, keys, proves and sets up the connection.
    private static func openConnection(path: String, key: KeyMaterial?, journalMode: JournalMode, cipher: CipherSettings,
                                       settings: [String], readOnly: Bool, isNew: Bool,
                                       setup: ConnectionSetup, library: SqlCipherLibrary) throws -> Opened {
        let identity = setup.identity
        let encrypted = key != nil
        let inMemory = path == ":memory:"
        try identity?.check(path: path)
        if encrypted && !inMemory && !readOnly {
            try refuseHotJournalOfOtherPageSize(path: path, cipher: cipher, library: library)
        }
        if !inMemory && !readOnly && library.sqliteVersionNumber < 3_016_000,
           let walSize = SnapshotFiles.regularFileSize(path + "-wal"), walSize > 32 {
            try proveReadableWithoutCheckpoint(path: path, key: key, settings: settings, setup: setup)
        }
        let connection: SQLiteConnection
        if readOnly {
            let access = try ReadOnlyOpening.access(for: path)
            do {
                connection = try SQLiteConnection(
                    path: ReadOnlyOpening.uri(for: path, access: access),
                    flags: ReadOnlyOpening.readOnlyFlag | SQLiteConnection.uri | SQLiteConnection.noMutex)
            } catch SqlCipherError.cannotOpen(_, let reason) {
                throw SqlCipherError.cannotOpen(path: path, reason: reason)
            }
        } else {
            connection = try SQLiteConnection(path: path)
        }
        // What raw SQL may do on this connection (SQLiteConnection+Guards.swift): an encrypted
        // database refuses page_size, plaintext attachments and VACUUM INTO, whose copy takes its
        // key from the target (a `file:...?key=` URI writes plaintext) and SQLCipher's default
        // settings, neither of which can be checked before it runs.
        connection.statementGate.isEncrypted = encrypted
        connection.statementGate.allowsVacuumInto = !encrypted
        do {
            // Again now that SQLite holds the file open, before it reads anything: a file renamed
            // over the path in between would otherwise be read with the old file's -wal and -shm.
            // Closing a connection that read nothing touches no file.
            try identity?.check(path: path)
            // Every statement of the opening is the package's own (trace events mark it), up to
            // the caller's prepareConnection.
            let mode: JournalMode = try namingTheOpening { try connection.asInternal {
                connection.role = setup.role
                connection.changeTracker.relay = setup.relay
                if let extensions = setup.extensions { try extensions.apply(to: connection) }
                // Before the first read, so that a file locked by another connection is waited for
                // rather than reported busy at once.
                connection.setBusyTimeout(try setup.configuration.busyTimeoutMilliseconds())
                if let key {
                    try connection.applyKey(key)
                    if !key.isRawKey { KeyDerivation.notePassphraseKeying(path: path) }
                }
                if library.cipherVersionIsAtLeast(4, 5, 1) {
                    try connection.execute("PRAGMA cipher_log = off")
                }
                try connection.asPackage {
                    for pragma in settings { try connection.execute(pragma) }
                }
                try proveReadable(connection, path: path, key: key, settings: settings, readOnly: readOnly)
                connection.keyProven = true

                // New: the file was missing or empty, and no other connection has committed to it
                // (a WAL database stays empty until its first checkpoint).
                let fresh = try isNew && (inMemory || pageCount(connection) == 0)
                let journal: JournalMode
                if fresh {
                    let answer = try connection.scalar("PRAGMA journal_mode = \(journalMode.pragmaValue)")
                    journal = inMemory ? .rollback : JournalMode(pragmaAnswer: String.fromDatabaseValue(answer ?? .null) ?? "")
                } else {
                    let answer = try connection.scalar("PRAGMA journal_mode")
                    journal = JournalMode(pragmaAnswer: String.fromDatabaseValue(answer ?? .null) ?? "")
                }

                if !inMemory && !readOnly && journal != .wal, let tooLong = DatabasePath.nameTooLong(
                    path, suffix: DatabasePath.longestCompanionSuffix,
                    files: "the file is in rollback journal mode, in which every write makes a -journal beside it") {
                    throw SqlCipherError.cannotOpen(path: path, reason: tooLong + ", or read it with a Database opened with readOnly: true")
                }

                try connection.execute("PRAGMA foreign_keys = ON")
                // The page cache (a page read from the file is decrypted at each read, one in the
                // cache is not: docs/performance.md) and synchronous.
                try setup.configuration.applySettings(to: connection)

                if encrypted && fresh && !inMemory {
                    try verifyCiphertextOnDisk(connection, path: path, cipher: cipher)
                    // Before the creation lock is released: page 1, and with it the salt, is then in
                    // the file's first bytes, where every later opener (SQLCipher's own key
                    // derivation, KeySalt) reads it, rather than only in this connection's -wal.
                    if journal == .wal { try connection.execute("PRAGMA wal_checkpoint(PASSIVE)") }
                } else if encrypted && !inMemory {
                    try finishInterruptedCreation(connection, path: path, cipher: cipher)
                }
                if setup.role == .reader {
                    // Backs up the pool's own refusal of writing statements on its readers
                    // (https://sqlite.org/pragma.html#pragma_query_only).
                    try connection.asPackage { _ = try connection.execute("PRAGMA query_only = 1") }
                }
                // After the opening sequence's own statements (PRAGMA journal_mode), which must run.
                connection.refusesWrites = readOnly
                connection.movedFileCheck.checksBeforeEachStatement = journal != .wal && !inMemory
                return journal
            } }
            connection.scope.isPooled = setup.pooled
            try prepare(connection, with: setup.configuration)
            let isReadOnly = readOnly || scb_db_readonly(connection.handle, "main") == 1
            return Opened(connection: connection, library: library, journalMode: mode, isReadOnly: isReadOnly,
                          path: path)
        } catch {
            // A failed opening leaves the files as it found them. Closing the last connection to a
            // file checkpoints the -wal into it and removes the -wal, whatever key the connection
            // had (a checkpoint copies frames byte for byte): a wrong key rewrote the database
            // file and deleted the -wal another program had left. SQLite 3.15.2 (SQLCipher 3.4.1)
            // has no such option; there a -wal with frames was proven readable on a read-only
            // connection before this one opened (proveReadableWithoutCheckpoint).
            _ = scb_no_checkpoint_on_close(connection.handle)
            connection.close()
            // Page 1 decrypted at the proof, and a later statement of the opening found it no
            // longer does: another connection changed the key in between.
            if connection.keyProven, let failure = error as? SqlCipherError, case .sqlite(let code, _, _, _) = failure,
               code & 0xFF == SQLiteConnection.sqliteNotADatabase {
                throw FirstReadContradicted(error: failure)
            }
            throw error
        }
    }

    /// Refuses, before SQLite opens the file, a live `-journal` (a write that was interrupted, or
    /// is under way in another process) whose pages have another size than the one `cipher` gives:
    /// the file was made with other cipher settings. SQLite rolls a hot journal back at the first
    /// read, before the key is checked, and SQLCipher 3.4.1 then crashes the process (SIGSEGV,
    /// measured with its own CLI) when the journal's pages are smaller than its cipher page size;
    /// 4.6.1 rolls the file back and then fails. The journal is left for an opening with the
    /// file's settings, which rolls it back. Nothing is read or changed; a library that cannot
    /// report its page size skips the check.
    private static func refuseHotJournalOfOtherPageSize(path: String, cipher: CipherSettings,
                                                        library: SqlCipherLibrary) throws {
        let journal = path + "-journal"
        guard let journalPageSize = ReadOnlyOpening.liveJournalPageSize(journal),
              let pageSize = try? KeyDerivation.parameters(for: cipher, library: library).pageSize,
              pageSize != journalPageSize else { return }
        let name = DatabasePath.lastComponent(of: journal)
        let setting = journalPageSize == 1024 && library.cipherMajorVersion >= 4
            ? "CipherSettings.sqlcipher3 for a SQLCipher 3 file, or CipherSettings(pageSize: 1024)"
            : "CipherSettings(pageSize: \(journalPageSize))"
        throw SqlCipherError.keyFailed(
            path: path,
            reason: "\(name), left by a write that was interrupted or is under way, holds \(journalPageSize)-byte pages, "
                + "and these cipher settings give \(pageSize)-byte pages: the file was made with other cipher settings. "
                + "Open it with the settings it was made with (\(setting), and the same key); that opening rolls the "
                + "interrupted write back. Nothing was read or changed")
    }

    /// Runs the caller's ``DatabaseConfiguration/prepareConnection`` on a connection that is
    /// otherwise ready: the per-connection pragmas a pool refuses as raw SQL are allowed in it.
    private static func prepare(_ connection: SQLiteConnection, with configuration: DatabaseConfiguration) throws {
        guard let prepareConnection = configuration.prepareConnection else { return }
        try connection.scope.with(.configuring) { try connection.lend(prepareConnection) }
    }

    /// The checks of a `readOnly` open: a read-only open cannot create a database, so the file
    /// must exist and hold one.
    private static func checkReadOnlyPath(_ path: String, exists: Bool) throws {
        if path == ":memory:" {
            throw SqlCipherError.cannotOpen(
                path: path, reason: "an in-memory database starts empty and lives only in this process, so it cannot "
                    + "be opened read-only; leave readOnly out")
        }
        guard exists else {
            throw SqlCipherError.cannotOpen(
                path: path, reason: "there is no file there, and a read-only open never creates one; check the path")
        }
        if let header = FileHeader(path: path), header.fileSize == 0 {
            throw SqlCipherError.cannotOpen(
                path: path, reason: "the file is empty: there is no database to read, and a read-only open never "
                    + "creates one")
        }
    }

    /// Refuses a database path that is a named pipe, socket or device, and a `-journal`, `-wal` or
    /// `-shm` beside it that is a symbolic link or not a regular file, before anything reads them (read-only opens
    /// too): reading a named pipe waits for a writer forever. SQLite opens the companions by name:
    /// its hot-journal check opens a pipe `-journal` read-only and waits (measured on 4.6.1 and
    /// 3.4.1), and a pipe, socket or device `-wal` or `-shm` fails only at the first read or write,
    /// as a bare disk I/O error. A directory as the path gets its own message from ``checkPath``.
    /// `importPlaintext(from:as:_:)`, which attaches an existing file, checks it here too.
    /// A companion SQLite did not write is refused too (``refuseForeignCompanions(of:)``), also by
    /// a read-only open, which SQLite would have read it as the database's own.
    static func refuseSpecialFiles(of path: String) throws {
        if let kind = SnapshotFiles.specialKind(path), kind != "a directory" {
            throw SqlCipherError.cannotOpen(
                path: path, reason: "it is \(kind), not a regular file; give the path of a database file")
        }
        try refuseKernelFileSystem(path)
        try refuseSpecialCompanions(of: path)
        try refuseForeignCompanions(of: path)
    }

    /// Refuses a `-journal`, `-wal` or `-shm` beside `path` that SQLite did not write
    /// (``ForeignCompanion``): SQLite would delete or overwrite it at the opening or at the first
    /// write, a database of its own with that name included; and a `-wal` with commits beside a
    /// missing or empty file, which SQLite deletes (``ForeignCompanion/orphanedWAL(of:)``). Before
    /// SQLite opens the file; an `ATTACH` and `importPlaintext(from:as:_:)` check the file they
    /// attach here too.
    static func refuseForeignCompanions(of path: String) throws {
        if let orphaned = ForeignCompanion.orphanedWAL(of: path) {
            throw SqlCipherError.cannotOpen(path: path, reason: orphaned)
        }
        // A -shm in use by this process's connections is not read (ForeignCompanion): it was
        // checked when the first of them opened.
        let readsShm = !OpenFiles.hasConnections(to: path)
        for suffix in ["-journal", "-wal", "-shm"] {
            guard let what = ForeignCompanion.description(of: path, suffix: suffix, readsShm: readsShm) else { continue }
            let name = DatabasePath.lastComponent(of: path + suffix)
            throw SqlCipherError.cannotOpen(
                path: path, reason: "\(name) beside it is \(what), but SQLite takes a file of that name for the database's "
                    + "own \(suffix) and deletes or overwrites it when it opens or writes the database. Move it out of the "
                    + "way (if it is a database of its own, rename it to a name without that ending; if it is this "
                    + "database's own with a damaged header, SQLite cannot use what it holds, so keep it only for "
                    + "recovery); if it is not needed, delete it. Nothing was read or changed")
        }
    }

    /// Refuses a path in `/proc` or `/sys` (or a link into them): their files are regular files
    /// that report a size of 0 (or 4096) whatever they hold, so `/proc/self/status` was taken for a
    /// new, empty database, and the opening failed at its first write with SQLite's bare "unable
    /// to open database file"; a writable one would have been written to. Decided on the path with
    /// every link resolved (the folder's, for a file that does not exist).
    private static func refuseKernelFileSystem(_ path: String) throws {
        var info = stat()
        let full = stat(path, &info) == 0
            ? SnapshotFiles.resolvedPath(path)
            : DatabasePath.joined(SnapshotFiles.resolvedPath(DatabasePath.folder(of: path)), DatabasePath.lastComponent(of: path))
        guard let root = ["/proc", "/sys"].first(where: { full == $0 || full.hasPrefix($0 + "/") }) else { return }
        throw SqlCipherError.cannotOpen(
            path: path, reason: "it is in the kernel's \(root) file system, whose files are a view of the running "
                + "system, not storage; give the path of a database file")
    }

    /// The companions' part of ``refuseSpecialFiles(of:)``: a `-journal`, `-wal` or `-shm` beside
    /// `path` that is a symbolic link or not a regular file. A user's `ATTACH` is checked with it
    /// before it runs (SQLiteConnection+Guards.swift).
    static func refuseSpecialCompanions(of path: String) throws {
        for companion in CreationClaim.companions(of: path) {
            // A linked companion: SQLite writes through the link but removes only the link, so
            // the file it points to keeps what was written (plaintext frames, after
            // encryptInPlace on 3.4.1); 4.6.1 refuses it with a bare "unable to open".
            var info = stat()
            guard lstat(companion, &info) == 0 else { continue }
            if (info.st_mode & S_IFMT) == S_IFLNK {
                throw SqlCipherError.cannotOpen(
                    path: path, reason: "\(companion) is a symbolic link; SQLite would write through it and then "
                        + "remove only the link, leaving the pages in the file it points to. Remove the link (a "
                        + "database's -wal, -shm and -journal are its own files, beside it)")
            }
            // Not a link, so lstat saw the file itself, as stat would: no second call.
            guard let kind = SnapshotFiles.specialKind(mode: info.st_mode) else { continue }
            throw SqlCipherError.cannotOpen(
                path: path, reason: "\(companion) is \(kind), not a regular file: SQLite would wait on it forever or "
                    + "fail on it. Remove it (a database's -wal, -shm and -journal are always regular files)")
        }
    }

    /// Refuses, before SQLite opens it for writing, a file that has other names (hard links).
    /// SQLite keeps the `-wal`, `-shm` and `-journal` beside the name a connection opened, so a
    /// connection opened by another name uses others: it neither sees this one's commits nor
    /// honours its hot journal, and a checkpoint by either writes over the other's pages
    /// (https://sqlite.org/howtocorrupt.html#_multiple_links_to_the_same_file). SQLite only logs a
    /// warning. A symbolic link is no such case: every opening resolves the path first
    /// (``DatabasePath/resolve(_:)``). An in-place conversion would also replace this name only,
    /// leaving the plaintext under the others. A read-only opening writes nothing and is allowed.
    /// A user's `ATTACH` is checked here too (SQLiteConnection+Guards.swift).
    static func refuseOtherNames(_ path: String, attaching: Bool = false) throws {
        guard SnapshotFiles.nameCount(path) > 1 else { return }
        // A copy whose writer died between giving it the target's name and removing its hidden
        // one (HiddenCopy.publish) is complete: the hidden name is the package's own leftover.
        HiddenCopy.removeDeadCopies(besides: path)
        var info = stat()
        guard stat(path, &info) == 0, info.st_nlink > 1 else { return }
        // The other names in the same folder (where a backup link of a conversion is), to name them.
        let folder = DatabasePath.folder(of: path), own = DatabasePath.lastComponent(of: path)
        let beside = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted().filter { name in
            var other = stat()
            return name != own && lstat(DatabasePath.joined(folder, name), &other) == 0
                && other.st_dev == info.st_dev && other.st_ino == info.st_ino
        }
        let named = beside.isEmpty ? "" : " (in this folder: " + beside.prefix(5).joined(separator: ", ") + ")"
        throw SqlCipherError.cannotOpen(
            path: path, reason: "the file has \(info.st_nlink) names (hard links)\(named), and SQLite keeps the -wal and "
                + "-journal beside the name it was opened by: a connection opened by another name would not see this one's "
                + "commits, and a checkpoint by either would write over the other's pages. Keep one name (remove the "
                + "others; `find <mount point> -samefile <path>` lists them) or give this one its own copy with cp; "
                + (attaching ? "to read it as it is, attach a copy. " : "to read it as it is, open it with readOnly: true. ")
                + "Nothing was read or changed")
    }

    /// Refuses, before SQLite opens the file for writing, a `-wal`, `-shm` or `-journal` beside it
    /// that has other names (hard links). SQLite makes its companions as new files and never links
    /// them, so such a one is another file's as well, most likely another database's own (found
    /// by the review: with another database's `-wal` linked under this one's name, the opening
    /// went ahead, its reads failed as damage, and its checkpoint at close copied the other
    /// database's pages into this file, damaging it for good). A read-only opening writes nothing
    /// and is allowed, as for the file's own other names: a copy made with `cp -al` links every
    /// file of a database, and reads alike under either name. A user's `ATTACH` is checked too
    /// (SQLiteConnection+Guards.swift).
    static func refuseLinkedCompanions(of path: String, attaching: Bool = false) throws {
        for companion in CreationClaim.companions(of: path) {
            let names = SnapshotFiles.nameCount(companion, following: false)
            guard names > 1 else { continue }
            let name = DatabasePath.lastComponent(of: companion)
            throw SqlCipherError.cannotOpen(
                path: path, reason: "\(name) beside it has \(names) names (hard links), and SQLite never links the "
                    + "-wal, -shm or -journal it makes: that file is another one's as well (another database's own, or a "
                    + "copy's), and SQLite would read its pages as this database's and write over them, and a checkpoint "
                    + "would copy them into this file. Remove this name of it (the other names keep the file; "
                    + "`find <mount point> -samefile \(companion)` lists them)"
                    + (attaching ? ", or attach a copy. " : ", or open the database with readOnly: true. ")
                    + "Nothing was read or changed")
        }
    }

    /// Refuses, before SQLite opens the file for writing, a name the file system takes with no
    /// room for the companions SQLite keeps beside it: a new file needs its `-journal` (the first
    /// transaction, and the switch to WAL, write one), an existing one at least its `-wal` and
    /// `-shm`. Such a name failed at the first write, or the first read in WAL mode, with SQLite's
    /// bare "unable to open database file" (error 14). A file in rollback mode is checked for its
    /// `-journal` once its journal mode is read (``openConnection``).
    private static func refuseNameWithoutRoom(_ path: String, isNew: Bool) throws {
        let reason = isNew
            ? DatabasePath.nameTooLong(path, suffix: DatabasePath.longestCompanionSuffix,
                                       files: "a new database needs a -journal (and a -wal and -shm) beside it")
            : DatabasePath.nameTooLong(path, suffix: "-wal",
                                       files: "SQLite keeps a -wal and a -shm (in rollback mode, a -journal) beside it")
                .map { $0 + ", or read it with a Database opened with readOnly: true" }
        if let reason { throw SqlCipherError.cannotOpen(path: path, reason: reason) }
    }

    /// Checks the path before SQLite sees it; returns whether the file is new (missing or empty).
    private static func checkPath(_ path: String, encrypted: Bool, cipher: CipherSettings) throws -> Bool {
        // One stat answers "is it there", "a directory" and "a regular file" at once.
        var info = stat()
        if stat(path, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR {
                throw SqlCipherError.cannotOpen(path: path, reason: "it is a directory; give the path of a file inside it")
            }
            // Reading the header of a named pipe would wait forever for a writer; a socket or a
            // device is no database either.
            if let kind = SnapshotFiles.specialKind(mode: info.st_mode) {
                throw SqlCipherError.cannotOpen(
                    path: path, reason: "it is \(kind), not a regular file; give the path of a database file")
            }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw SqlCipherError.cannotOpen(path: path, reason: "the file is not readable (check its permissions)")
            }
            guard let header = FileHeader(path: path) else {
                throw SqlCipherError.cannotOpen(path: path, reason: "the file cannot be read")
            }
            if header.fileSize == 0 { return true }
            // One classification with DatabaseFileInspector (FileHeader's rules): a readable header
            // with bytes reserved per page is SQLCipher's plaintext header only when the rest of
            // page 1 is not plain SQLite; a checksum VFS, say, reserves bytes in plain files too.
            // A plaintext header that reaches past byte 100 leaves page 1's b-tree header readable
            // too; FileHeader looks at the cells and the end of page 1 before it calls a file plain.
            if encrypted {
                // Every SQLCipher file is whole pages of at least 512 bytes. A shorter one is no
                // database: a file of 1 byte (SQLCipher reads a salt shorter than 16 bytes as none)
                // opened as a new database with the key, skipped the creation proof, and was then
                // overwritten with it; a read-only open reported an empty database. Unless a -wal
                // with frames is beside it: a crash (or a copy taken while the file was open) can
                // leave the main file short and page 1 in the -wal, which SQLite reads from there.
                if !header.hasPlaintextMagic && (header.fileSize < 512 || header.fileSize % 512 != 0),
                   (SnapshotFiles.regularFileSize(path + "-wal") ?? 0) <= 32 {
                    throw SqlCipherError.notADatabase(path: path, reason: notWholePages(size: header.fileSize))
                }
                let reserved = header.reservedBytes ?? 0
                if header.looksPlaintextSQLite {
                    let reservedNote = reserved > 0
                        ? " (its pages reserve \(reserved) bytes, but for something other than SQLCipher: the whole "
                            + "header and first page are readable)"
                        : ""
                    throw SqlCipherError.keyFailed(
                        path: path,
                        reason: "it is a plaintext SQLite database\(reservedNote). Open it with Database(unencryptedPath:), "
                            + "or make an encrypted copy with Database.encrypt(plaintextAt:to:key:)")
                }
                if header.looksPlaintextHeaderSQLCipher && cipher.plaintextHeaderSize == nil {
                    throw SqlCipherError.keyFailed(path: path, reason: KeySalt.plaintextHeaderWithoutSetting)
                }
            } else if header.looksPlaintextHeaderSQLCipher {
                throw SqlCipherError.notPlaintextDatabase(path: path)
            } else if !header.hasPlaintextMagic {
                if header.fileSize < 512 || header.fileSize % 512 != 0 {
                    throw SqlCipherError.notADatabase(
                        path: path, reason: "its size (\(header.fileSize) bytes) is not a multiple of any page size "
                            + "and it has no SQLite header")
                }
                throw SqlCipherError.notPlaintextDatabase(path: path)
            }
            return false
        }
        let folder = DatabasePath.folder(of: path)
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) || !isDirectory.boolValue {
            throw SqlCipherError.cannotOpen(path: path, reason: DatabasePath.missingFolderReason(folder))
        }
        if !FileManager.default.isWritableFile(atPath: folder) {
            throw SqlCipherError.cannotOpen(path: path, reason: "the folder \(folder) is not writable")
        }
        return true
    }

    /// Reads the schema: the first read is where SQLCipher derives the key and checks it. The
    /// same read counts the virtual tables, whose definitions are then checked for FTS5 tokenizer
    /// chains deep enough to end the process when used
    /// (``SQLiteConnection/tablesWithDeepTokenizerChains(schema:)``); such a file is not opened.
    private static func proveReadable(_ connection: SQLiteConnection, path: String, key: KeyMaterial?,
                                      settings: [String], readOnly: Bool) throws {
        let virtualTables: Int64?
        do {
            virtualTables = try connection.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND rootpage = 0")
                .flatMap(Int64.fromDatabaseValue)
        } catch SqlCipherError.sqlite(let code, let extended, let message, let sql) {
            if let walError = ReadOnlyOpening.walStorageError(
                path: path, code: code, extended: extended, message: message, readOnly: readOnly) {
                throw walError
            }
            let error = failedRead(connection, path: path, encrypted: key != nil,
                                   error: .sqlite(code: code, extendedCode: extended, message: message, sql: sql))
            if let key, let walError = foreignOrDamagedWAL(error, path: path, key: key, settings: settings) {
                throw FirstReadContradicted(error: walError)
            }
            if case .sqlite(let decided, _, _, _) = error, !KeyProof.saysNothingAboutTheKey(decided) {
                throw FirstReadContradicted(error: error)
            }
            throw error
        }
        // Asked only of the openings without HMAC (settings, not a statement on every opening).
        if key != nil, settings.contains(where: { $0.hasSuffix("cipher_use_hmac = OFF") }),
           !KeyProof.firstBlockDecrypts(connection) {
            throw SqlCipherError.keyFailed(
                path: path,
                reason: pageOneDoesNotDecrypt + " without page HMACs (its first encrypted bytes read as a freelist longer than "
                    + "the file): it was most likely written with page HMACs, so open it without CipherSettings(usesHMAC: false) "
                    + "(with the hmacAlgorithm it was made with); otherwise the key or salt is wrong or its first page is damaged. "
                    + "Nothing was written")
        }
        if (virtualTables ?? 0) > 0 {
            let deep = connection.tablesWithDeepTokenizerChains()
            if !deep.isEmpty {
                throw SqlCipherError.cannotOpen(path: path, reason: SQLiteConnection.deepTokenizerChainsReason(deep))
            }
        }
    }

    /// A first read that failed although page 1 decrypts with the key: the schema behind it (or
    /// the `-wal`'s newest pages) did not read. Said of a file at rest, that is damage or a
    /// foreign `-wal`. Said of a file another connection was changing meanwhile, it can be neither:
    /// the read, the proof of page 1 and the look at the `-wal` are separate reads, and a rekey in
    /// another process that committed to its `-wal` between them, or checkpointed, showed each a
    /// different file (measured: 3 in 30 openings beside two racing rekeys on a loaded machine
    /// reported a damaged `-wal` or SQLite's bare "file is not a database"). The opening is then
    /// tried again on a new connection (a codec error sticks to the old one on SQLCipher 4.12+),
    /// and what the last try decides is reported. So is an opening whose proof passed and whose
    /// next statement found page 1 no longer decrypting (SQLITE_NOTADB): the key changed between.
    struct FirstReadContradicted: Error {
        let error: SqlCipherError
        /// Tries in all, the first one included: a rekey's commit and checkpoint are two moments.
        static let attempts = 3

        /// The error of the last try. SQLCipher's bare "file is not a database" (26) after page 1
        /// was proven to decrypt is either a header SQLite rejects behind the HMAC's reach (the
        /// plaintext bytes of a plaintext header: a damaged page size, measured on 4.6.1) or the
        /// key changing under the opening on every try (measured once in 25 openings beside a
        /// rekey loop in another process). Nothing here tells the two apart, so the advice names
        /// both; the error stays SQLite's, as damage does.
        func lastTry(path: String) -> SqlCipherError {
            guard case .sqlite(let code, let extended, let message, let sql) = error,
                  code & 0xFF == SQLiteConnection.sqliteNotADatabase, !message.hasSuffix(SQLiteMessageAdvice.pageOneDecryptsYetNotADatabase)
            else { return error }
            return .sqlite(code: code, extendedCode: extended,
                           message: message.replacingOccurrences(of: SQLiteMessageAdvice.keyChanged, with: "")
                               + SQLiteMessageAdvice.pageOneDecryptsYetNotADatabase,
                           sql: sql)
        }

        /// The error for a try that found page 1 not decrypting with the key, after an earlier
        /// try of the same opening had found it decrypting: another connection changed the key in
        /// between (a rekey that waited for the earlier try's read lock commits right after it).
        /// The try's own reason ("the key is wrong, other cipher settings, a damaged page 1")
        /// sent the user after a key that was right when the opening began. A `keyFailed` that is
        /// not about page 1 (a `-journal` of another page size) keeps its reason.
        static func keyChangedDuringOpening(path: String, reason: String) -> SqlCipherError {
            guard reason.hasPrefix(DatabaseOpener.pageOneDoesNotDecrypt) else {
                return .keyFailed(path: path, reason: reason)
            }
            return .keyFailed(
                path: path,
                reason: "the key opened the file at the start of this opening, and a moment later its first page no "
                    + "longer decrypted with it: another connection (in this process or another) most likely changed "
                    + "the key (rekey) meanwhile. Open the file with the key it has now")
        }
    }

    /// On a library whose SQLite cannot be told not to checkpoint on close (before 3.16: SQLCipher
    /// 3.4.1), proves the first read on a read-only connection before the file is opened for
    /// writing, when a `-wal` beside it holds frames. Closing the last connection checkpoints the
    /// `-wal` into the file and deletes it, whatever key the connection had: after a wrong key
    /// that rewrote the file with its own frames, and beside another database's `-wal` it wrote
    /// that database's pages over this one (measured: the file's tables were gone). A read-only
    /// connection cannot checkpoint, so a failed opening leaves the file and its `-wal` as they
    /// were (SQLite may create a missing `-shm`, an index it rebuilds from the `-wal`).
    private static func proveReadableWithoutCheckpoint(path: String, key: KeyMaterial?, settings: [String],
                                                       setup: ConnectionSetup) throws {
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(
                path: ReadOnlyOpening.lockingReadOnlyURI(for: path),
                flags: ReadOnlyOpening.readOnlyFlag | SQLiteConnection.uri | SQLiteConnection.noMutex)
        } catch SqlCipherError.cannotOpen(_, let reason) {
            throw SqlCipherError.cannotOpen(path: path, reason: reason)
        }
        defer { connection.close() }
        try connection.asInternal {
            connection.setBusyTimeout(try setup.configuration.busyTimeoutMilliseconds())
            if let key { try connection.applyKey(key) }
            try connection.asPackage {
                for pragma in settings { try connection.execute(pragma) }
            }
            // readOnly: false: the caller's opening writes, and its errors say what that needs.
            try proveReadable(connection, path: path, key: key, settings: settings, readOnly: false)
        }
    }

    /// The error for a first read that failed as a wrong key would (`keyFailed`, or SQLCipher's
    /// "file is not a database" once page 1 was proven to decrypt) although the key opens the
    /// database file itself: page 1 in the `-wal` beside it does not decrypt. That `-wal` is
    /// damaged, or another database's (a file restored or copied without its own `-wal`, next to
    /// a stale one): SQLite reads the newest page images from it whatever file they came from.
    /// Reported as a wrong key (3.4.1) or as a bare SQLite error (4.x) it sent the user after a
    /// key that was right. Decided by reading page 1 of the main file alone, with the same key and
    /// settings, on a connection of its own (`immutable=1`: no lock, no `-wal`, nothing written);
    /// nil when the `-wal` holds no frames or the main file does not open either.
    private static func foreignOrDamagedWAL(_ error: SqlCipherError, path: String, key: KeyMaterial,
                                            settings: [String]) -> SqlCipherError? {
        switch error {
        case .keyFailed: break
        case .sqlite(let code, _, _, _) where code & 0xFF == 26: break
        default: return nil
        }
        // 32 bytes of WAL header, then frames: only a -wal with frames can hold a page 1.
        guard let walSize = SnapshotFiles.regularFileSize(path + "-wal"), walSize > 32,
              mainFileDecrypts(path: path, key: key, settings: settings) else { return nil }
        let wal = DatabasePath.lastComponent(of: path) + "-wal"
        let shm = DatabasePath.lastComponent(of: path) + "-shm"
        return .cannotOpen(
            path: path,
            reason: "the key opens the database file, but not the newest pages in \(wal) beside it: "
                + SQLiteMessageAdvice.walPagesNotDecrypting(wal: wal, shm: shm))
    }

    /// Whether page 1 of the database file alone, without its `-wal`, decrypts with `key` and
    /// `settings`.
    private static func mainFileDecrypts(path: String, key: KeyMaterial, settings: [String]) -> Bool {
        // An empty main file has no page 1 (everything is in the -wal): nothing to prove.
        guard (FileHeader(path: path)?.fileSize ?? 0) >= 512, let connection = try? SQLiteConnection(
            path: ReadOnlyOpening.uri(for: path, access: .immutable),
            flags: ReadOnlyOpening.readOnlyFlag | SQLiteConnection.uri | SQLiteConnection.noMutex)
        else { return false }
        defer { connection.close() }
        return (try? connection.asInternal {
            try connection.applyKey(key)
            return try connection.asPackage {
                if (try? SqlCipherLibrary.shared)?.cipherVersionIsAtLeast(4, 5, 1) == true {
                    try connection.execute("PRAGMA cipher_log = off")
                }
                for pragma in settings { try connection.execute(pragma) }
                if KeyProof.cookieProvesNothing(connection) { return KeyProof.schemaReads(connection) == true }
                // Page 1 alone. It fails when page 1 does not decrypt (no SQLite magic), except with
                // a plaintext header, whose magic is in the clear: a cookie of 0 is then a page
                // SQLCipher zeroed after its HMAC failed (or an empty schema, which proves nothing).
                let cookie = Int64.fromDatabaseValue(try connection.scalar("PRAGMA schema_version") ?? .null) ?? 0
                return cookie != 0 || !settings.contains { $0.contains("cipher_plaintext_header_size") }
            }
        }) ?? false
    }

    /// How the reason of ``failedRead(_:path:encrypted:error:)``'s `keyFailed` begins: the words a
    /// retried opening looks for (``FirstReadContradicted/keyChangedDuringOpening(path:reason:)``).
    static let pageOneDoesNotDecrypt = "its first page does not decrypt with this key"

    /// The error for a failed first read of `path` on `connection`, which is still open with the
    /// key (or none) and settings that failed: the one place that decides between "the key does not
    /// open it" and "the key opens it, and the file is damaged behind page 1". Every opening
    /// (``Database``, read-only, a pool's writer and readers, the conversions) comes through here.
    ///
    /// The decision is ``KeyProof``'s, by a second read of page 1, never by the result code: the
    /// code a library gives for a page 1 that does not decrypt differs by release (1, 7, 11, 26).
    static func failedRead(_ connection: SQLiteConnection, path: String, encrypted: Bool,
                           error: SqlCipherError) -> SqlCipherError {
        guard case let .sqlite(code, _, message, _) = error else { return error.redactingSQL() }
        guard KeyProof.keyDecryptsPageOne(connection, path: path, keyed: encrypted, afterFailure: code) == false else {
            if let unreadable = unreadableSchema(path: path, encrypted: encrypted, code: code, message: message) {
                return unreadable
            }
            // Page 1 decrypts, so the damage lies behind it; said as on an open connection.
            guard case let .sqlite(_, extended, _, sql) = error, extended == SQLiteConnection.sqliteCorrupt,
                  message == SQLiteMessageAdvice.bareDamage
            else { return error.redactingSQL() }
            let advice = SQLiteMessageAdvice.damaged(finding: connection.damageFinding(), encrypted: encrypted)
            return SqlCipherError.sqlite(code: code, extendedCode: extended, message: message + advice, sql: sql)
                .redactingSQL()
        }
        let size = FileHeader(path: path)?.fileSize ?? 0
        if size % 512 != 0 {
            return .notADatabase(path: path, reason: notWholePages(size: size))
        }
        if !encrypted { return .notPlaintextDatabase(path: path) }
        // The page size the connection tried (a codec setting, answered without a read), against
        // what the file and its -wal say: named first when they disagree.
        var reason = pageOneDoesNotDecrypt + " (SQLCipher reports \"\(message)\", SQLite error \(code))"
        if let tried = (try? connection.asPackage { try connection.integer("PRAGMA cipher_page_size") }) ?? nil,
           let likely = PageSizeEvidence.likelyPageSizes(of: path, tried: tried) {
            reason += ": \(likely.evidence). Open it with the page size it was made with (\(pageSizeSetting(likely.pageSizes))) "
                + "and the same key. If that fails too"
        }
        return .keyFailed(
            path: path,
            reason: reason + ": the key is wrong (or, for a plaintext header, the salt), the file was made with other cipher settings ("
                + "\(otherSettingsHint); a plaintext header needs the same plaintextHeaderSize), its first page is damaged, or it is not a database")
    }

    /// The ``CipherSettings`` that give one of `pageSizes`, for a message; on SQLCipher 4, whose
    /// own default is 4096, SQLCipher 3's defaults too when 1024 is among them.
    static func pageSizeSetting(_ pageSizes: [Int]) -> String {
        let setting = pageSizes.count == 1
            ? "CipherSettings(pageSize: \(pageSizes[0]))"
            : "CipherSettings(pageSize:) with " + pageSizes.map { "\($0)" }.joined(separator: " or ")
        guard pageSizes.contains(1024), ((try? SqlCipherLibrary.shared)?.cipherMajorVersion ?? 4) >= 4 else { return setting }
        return setting + "; CipherSettings.sqlcipher3 for a file SQLCipher 3 made with its defaults"
    }

    /// Why a file to be opened with a key, `size` bytes long, is refused before the key is tried:
    /// SQLCipher files are whole pages of at least 512 bytes. Past the first page, such a file is
    /// as likely a database cut short (a copy that stopped early, a full disk) as no database at
    /// all, and the two call for different remedies.
    static func notWholePages(size: Int) -> String {
        let base = "its size (\(size) bytes) is not a multiple of any page size"
        guard size >= 512 else { return base }
        let whole = size - size % 512
        return base + ": it is either no database, or a database cut short (a copy that stopped early, a full "
            + "disk), whose last page is incomplete. If it is your database, restore it from a backup; to read what "
            + "the lost pages did not hold, open a copy cut to \(whole) bytes or fewer (a multiple of the page size, "
            + "4096 unless set otherwise)"
    }

    /// The error for a file whose page 1 the key decrypts but whose schema the loaded SQLite cannot
    /// parse (SQLite reports the schema as malformed with a syntax error): a `STRICT` table, a
    /// generated column or other SQL that a newer SQLite wrote, read by an older one (SQLCipher
    /// 3.4.1's SQLite 3.15 reads none of the SQL added since 2016). SQLite's bare "database disk
    /// image is malformed" code read like damage; the file is intact and opens with a newer library.
    /// Nil for any other failure. `importPlaintext(from:as:_:)`, whose `ATTACH` fails so, says it too.
    static func unreadableSchema(path: String, encrypted: Bool, code: Int32, message: String) -> SqlCipherError? {
        guard let schema = unreadableSchemaReason(code: code, message: message) else { return nil }
        return .cannotOpen(path: path, reason: (encrypted ? "the key opens it" : "it is a readable SQLite file") + ", but " + schema)
    }

    /// What ``unreadableSchema(path:encrypted:code:message:)`` says of the schema, from "its schema
    /// holds SQL" on; `sqlcipher-doctor verify` says the same of a file whose key it proved.
    static func unreadableSchemaReason(code: Int32, message: String) -> String? {
        guard isUnreadableSchema(code: code, message: message) else { return nil }
        let loaded = SqlCipherLibrary.loadedForAdvice
        return "its schema holds SQL that \(loaded) cannot read (\(message)\(unreadableTableNote(message))), "
            + "most likely written by a newer SQLite. Open it with a newer SQLCipher (point "
            + "\(SqlCipherLibrary.environmentVariable) at libsqlcipher.so.1 for SQLCipher 4); if no newer program "
            + "wrote it, its schema is damaged"
    }

    /// Whether SQLite's `message` for result `code` says that the schema could not be parsed: a
    /// syntax error, or an index, trigger or view whose table could not be (SQLite goes on reading
    /// the schema after the table's syntax error and reports the last failure: a table with a
    /// generated column and an index, read by SQLite 3.15, is "no such table: main.t"). The
    /// openings, `importPlaintext(from:as:_:)` and a user's `ATTACH` ask it.
    static func isUnreadableSchema(code: Int32, message: String) -> Bool {
        code == 11 && message.hasPrefix("malformed database schema")
            && (message.contains("syntax error") || message.contains("no such table"))
    }

    /// The words that say why a schema failure names an index or trigger rather than the table
    /// SQLite could not parse.
    static func unreadableTableNote(_ message: String) -> String {
        message.contains("no such table") ? ": an index, trigger or view names a table SQLite could not parse" : ""
    }

    /// Which other major version's files the loaded library can be told about: SQLCipher 4 reads
    /// a 3.x file with ``CipherSettings/sqlcipher3``, but SQLCipher 3 cannot read a 4.x file at all.
    private static var otherSettingsHint: String {
        guard let library = try? SqlCipherLibrary.shared, library.cipherMajorVersion < 4 else {
            return "a SQLCipher 3 file needs CipherSettings.sqlcipher3 on SQLCipher 4, or Database.upgradeFromSqlCipher3, "
                + "which also migrates SQLCipher 2 and 1 files; a file made with another page size or KDF iteration count "
                + "needs those in CipherSettings, and one made with another HMAC or KDF digest needs "
                + "CipherSettings(kdfAlgorithm:hmacAlgorithm:); one made with PRAGMA cipher_use_hmac = OFF needs "
                + "CipherSettings(usesHMAC: false)"
        }
        return "a SQLCipher 4 file needs SQLCipher 4; the loaded library is SQLCipher \(library.cipherVersion), so "
            + "point \(SqlCipherLibrary.environmentVariable) at libsqlcipher.so.1; one made with PRAGMA cipher_use_hmac = "
            + "OFF needs CipherSettings(usesHMAC: false)"
    }

    private static func pageCount(_ connection: SQLiteConnection) throws -> Int64 {
        Int64.fromDatabaseValue(try connection.scalar("PRAGMA page_count") ?? .null) ?? 0
    }

    /// Finishes a creation that was interrupted between the probe's CREATE and DROP (the process
    /// was killed; the crash-safety suite hits this window): drops the leftover probe table, which
    /// would otherwise stay in the user's schema, and runs the on-disk check the interruption
    /// skipped. One read of the schema when there is nothing to do; nothing on a read-only file.
    private static func finishInterruptedCreation(_ connection: SQLiteConnection, path: String,
                                                  cipher: CipherSettings) throws {
        let leftovers = try connection
            .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'sqlcipherkit_probe_*'")
            .compactMap { $0.get("name", as: String.self) }
        guard !leftovers.isEmpty, scb_db_readonly(connection.handle, "main") == 0 else { return }
        for name in leftovers { try connection.execute("DROP TABLE \"\(name)\"") }
        try verifyCiphertextOnDisk(connection, path: path, cipher: cipher)
    }

    /// A probe the creation check writes: a uniquely named table holding one row of 32 random
    /// bytes, as a blob and as hex text. Random, so that no page of a real database can hold it by
    /// chance and a leftover from an earlier attempt cannot be mistaken for it.
    struct Probe {
        let table: String
        let marker: Data
        var markerText: String { marker.map { String(format: "%02x", $0) }.joined() }
        /// Every byte string whose presence on disk would prove plaintext.
        var needles: [Data] { [marker, Data(markerText.utf8), Data(table.utf8)] }

        init() {
            var generator = SystemRandomNumberGenerator()
            marker = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
            table = "sqlcipherkit_probe_" + marker.prefix(16).map { String(format: "%02x", $0) }.joined()
        }
    }

    /// Proves, positively, that the library encrypts what it writes to this new file, then
    /// removes the probe again. Fails closed: any doubt is ``SqlCipherError/plaintextDetected(path:reason:)``.
    ///
    /// One statement writes a probe row (``Probe``) and commits it: in rollback mode into the
    /// database file, in WAL mode into `-wal` frames. No checkpoint is needed: SQLCipher encrypts
    /// in the pager, before a page reaches either file, and a checkpoint copies the frames' bytes
    /// into the database file unchanged, so the frames are what the file will hold. The database
    /// file, its `-wal` and its `-journal` are read back from disk and must show:
    /// 1. no plaintext SQLite header, unless a plaintext header was asked for;
    /// 2. none of the probe's bytes (the random blob, its hex text, the table name);
    /// 3. on every page of the database file and in every `-wal` frame, from byte 0 or from the end
    ///    of the plaintext header on page 1, bytes distributed like ciphertext (``CiphertextProof``);
    /// 4. every page of the database, as the library counts them, present in one of the files:
    ///    the probe's row is on one of the judged pages, so it was judged.
    /// The checks run before the probe is dropped, so secure delete or page reuse cannot hide it.
    static func verifyCiphertextOnDisk(_ connection: SQLiteConnection, path: String, cipher: CipherSettings) throws {
        let probe = Probe()
        do {
            // One statement, one commit; finalized before the DROP below.
            let create = try connection.uncachedStatement("CREATE TABLE \(probe.table) AS SELECT ? AS marker, ? AS marker_text")
            try create.bind(.blob(probe.marker), at: 1)
            try create.bind(.text(probe.markerText), at: 2)
            try create.run()
        }
        let pageSize = try connection.integer("PRAGMA page_size") ?? 0
        let pageCount = Int(try pageCount(connection))
        try proveCiphertext(path: path, probe: probe, pageSize: pageSize, pageCount: pageCount,
                            plaintextHeaderSize: cipher.plaintextHeaderSize ?? 0)
        try connection.execute("DROP TABLE \(probe.table)")
    }

    /// Steps 1 to 4 of ``verifyCiphertextOnDisk(_:path:cipher:)``, on the files as they are now.
    static func proveCiphertext(path: String, probe: Probe, pageSize: Int, pageCount: Int,
                                plaintextHeaderSize: Int) throws {
        func refuse(_ reason: String) -> SqlCipherError { .plaintextDetected(path: path, reason: reason) }
        // The -wal first: a checkpoint by another connection in between moves pages from it into
        // the database file, read second, so no committed page can be missed between the reads.
        let wal = FileManager.default.contents(atPath: path + "-wal") ?? Data()
        let main = OpenFiles.contents(of: path)  // the connection has the file open: keep its locks
        let journal = FileManager.default.contents(atPath: path + "-journal") ?? Data()
        if main.isEmpty && wal.isEmpty {
            throw refuse("nothing was written to the file or its -wal after the first write")
        }
        if plaintextHeaderSize == 0 && main.prefix(16).elementsEqual(FileHeader.sqliteMagic) {
            throw refuse("its first 16 bytes read \"SQLite format 3\"")
        }
        for (file, data) in [(path, main), (path + "-wal", wal), (path + "-journal", journal)] {
            if probe.needles.contains(where: { data.range(of: $0) != nil }) {
                throw refuse("a random value written to it is readable in \(file)")
            }
        }
        var scan = CiphertextProof.Scan()
        scan.scanDatabase(main, file: path, pageSize: pageSize, plaintextHeaderSize: plaintextHeaderSize)
        scan.scanWAL(wal, file: path + "-wal", pageSize: pageSize, plaintextHeaderSize: plaintextHeaderSize)
        if let failure = scan.failure { throw refuse(failure) }
        let missing = pageCount < 1 ? [1] : (1...pageCount).filter { !scan.pagesFound.contains($0) }
        if let page = missing.first {
            throw refuse("the library reports \(pageCount) pages of \(pageSize) bytes, but page \(page) is in "
                + "neither the file nor its -wal, so what was written could not be checked")
        }
        if scan.pagesJudged == 0 {
            throw refuse("no page of the file or its -wal was long enough to judge, so what was written could not be checked")
        }
    }

    /// After a refused creation: overwrites with zeros what the library wrote in the clear, then
    /// removes the files this call created and empties the others (the database file was empty
    /// before, and a `-wal` or `-journal` of an empty database holds only what this call wrote).
    /// The zeros are synced before the files go, so that on storage that writes in place the
    /// plaintext does not survive in freed blocks.
    static func wipeRefusedCreation(path: String, created: [String]) {
        for file in [path, path + "-wal", path + "-journal"] {
            guard let handle = FileHandle(forUpdatingAtPath: file) else { continue }
            if let size = try? handle.seekToEnd(), size > 0 {
                try? handle.seek(toOffset: 0)
                var remaining = Int(size)
                let zeros = Data(count: 64 * 1024)
                while remaining > 0 {
                    let chunk = min(remaining, zeros.count)
                    try? handle.write(contentsOf: zeros.prefix(chunk))
                    remaining -= chunk
                }
                try? handle.synchronize()
            }
            try? handle.truncate(atOffset: 0)
            try? handle.synchronize()
            try? handle.close()
            if created.contains(file) { try? FileReplacement.removeFile(file) }
        }
    }
}
