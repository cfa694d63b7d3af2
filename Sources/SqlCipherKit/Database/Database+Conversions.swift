import CSqlCipherBridge
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Conversions between plaintext and encrypted files, and between cipher settings.
//
// Every one of them writes a NEW file with `ATTACH ... KEY ?` and `sqlcipher_export`
// (https://www.zetetic.net/sqlcipher/sqlcipher-api/#sqlcipher_export), copies `user_version` and
// `application_id` (which the export does not), and verifies the new file with a fresh connection
// before it reports success. The ones that replace a file do it with one atomic `rename` after
// `fsync`, so a crash leaves either the old file or the complete new one.
extension Database {
    // MARK: Plaintext to encrypted

    /// Writes an encrypted copy of a plaintext database to a new file; the source is not changed.
    ///
    /// ```swift
    /// try Database.encrypt(plaintextAt: "/data/public.db", to: "/data/secret.db", key: "a passphrase")
    /// let db = try Database(path: "/data/secret.db", key: "a passphrase")
    /// ```
    ///
    /// Schema, rows, `user_version` and `application_id` are copied. The copy is then opened with
    /// the key and checked: the same tables with the same row counts, `PRAGMA quick_check`, and a
    /// header that is not plaintext. The new file gets the source's journal mode.
    ///
    /// Cancelling the task that calls it stops the copy (the running statement is interrupted
    /// within milliseconds) and throws `CancellationError`; the partial target is removed.
    ///
    /// - Parameters:
    ///   - source: A plaintext SQLite file.
    ///   - target: A path where no file exists yet, in an existing folder.
    ///   - key: The key of the new file: a passphrase, or ``DatabaseKey/rawKey(_:)``.
    ///   - cipher: Cipher settings of the new file.
    ///   - progress: Called with the pages of the source copied so far (see ``DatabaseProgress``);
    ///     it runs while the work goes on and must return quickly.
    /// - Throws: ``SqlCipherError/notPlaintextDatabase(path:)`` when the source is encrypted;
    ///   ``SqlCipherError/cannotOpen(path:reason:)`` when the target exists;
    ///   ``SqlCipherError/conversionFailed(source:target:reason:)`` when the export or its
    ///   verification fails (the partial target is removed); `CancellationError` when the task
    ///   was cancelled (no target is left).
    public static func encrypt(plaintextAt source: String, to target: String, key: DatabaseKey,
                               cipher: CipherSettings = .default,
                               progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws {
        let material = try key.material()
        let opened = try openPlaintextSource(source)
        defer { opened.connection.close() }
        try Exporter(source: opened.connection, sourcePath: source, library: opened.library)
            .export(to: target, key: material, cipher: cipher, journalMode: opened.journalMode, progress: progress)?
            .finish()
    }

    /// Writes an encrypted copy of a plaintext database with a passphrase. See
    /// ``Database/encrypt(plaintextAt:to:key:cipher:progress:)-(_,_,DatabaseKey,_,_)``.
    public static func encrypt(plaintextAt source: String, to target: String, key: String,
                               cipher: CipherSettings = .default,
                               progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws {
        try encrypt(plaintextAt: source, to: target, key: .passphrase(key), cipher: cipher, progress: progress)
    }

    /// Encrypts a plaintext database file where it is: the safe form of "export, then delete the
    /// plaintext".
    ///
    /// ```swift
    /// try Database.encryptInPlace(path: "/data/notes.db", key: "a passphrase")
    /// let db = try Database(path: "/data/notes.db", key: "a passphrase")
    /// ```
    ///
    /// The steps: export to `<path>.sqlcipherkit-encrypting` beside the original, verify it (see
    /// ``Database/encrypt(plaintextAt:to:key:cipher:progress:)-(_,_,DatabaseKey,_,_)``), `fsync` it, optionally keep
    /// the original under `<path>.plaintext-backup` (a hard link, made before the switch), then
    /// `rename` the new file over the original and `fsync` the folder. A crash or power loss at any
    /// moment leaves at `path` either the complete plaintext original or the complete encrypted
    /// file; a leftover `.sqlcipherkit-encrypting` file is removed by the next call.
    ///
    /// Close every connection to the file first: the original's WAL must be empty, and a process
    /// still holding the old file open would go on writing plaintext to it.
    ///
    /// Through a symbolic link, the link's target is the file encrypted: the work files and the
    /// backup are made beside the target, the new file replaces the target, and the link is kept,
    /// so that no plaintext copy stays behind under either name.
    ///
    /// Without a backup the plaintext bytes are unlinked, not overwritten: they may stay readable
    /// on the storage until the file system reuses the blocks (see <doc:Security>, "Not protected").
    ///
    /// Cancelling the task that calls it before the new file is in place stops the work and throws
    /// `CancellationError`: the temporary copy is removed and the original is left as it was.
    /// Once the rename is done the call completes.
    ///
    /// - Parameters:
    ///   - path: The plaintext database to encrypt.
    ///   - key: The key of the encrypted file.
    ///   - cipher: The settings of the encrypted file.
    ///   - keepBackup: Keep the plaintext original as `<path>.plaintext-backup`.
    ///   - progress: Called with the pages of the source copied so far; the total is reported once the new file is in place (see ``DatabaseProgress``);
    ///     it runs while the work goes on and must return quickly.
    /// - Returns: The backup's path when one was kept.
    /// - Throws: ``SqlCipherError/notPlaintextDatabase(path:)`` when the file is already encrypted,
    ///   ``SqlCipherError/conversionFailed(source:target:reason:)`` when a step fails; the
    ///   original is then unchanged; `CancellationError` when the task was cancelled.
    @discardableResult
    public static func encryptInPlace(path: String, key: DatabaseKey, cipher: CipherSettings = .default,
                                      keepBackup: Bool = false,
                                      progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws -> String? {
        let material = try key.material()
        // Through a symbolic link, the file to encrypt is its target: renaming the new file over
        // the link would leave the plaintext target on disk and the link gone.
        let path = SnapshotFiles.resolvedPath(path)
        let temporary = path + ".sqlcipherkit-encrypting"
        let backup = path + ".plaintext-backup"
        if keepBackup && FileManager.default.fileExists(atPath: backup) {
            throw SqlCipherError.conversionFailed(
                source: path, target: path,
                reason: "a backup already exists at \(backup); move it away first")
        }
        try Exporter.removeDatabaseFiles(temporary)

        let opened = try openPlaintextSource(path)
        let source = opened.connection
        let reporter: ProgressReporter?
        do {
            try Exporter.lockExclusively(source, path: path, journalMode: opened.journalMode)
            reporter = try Exporter(source: source, sourcePath: path, library: opened.library)
                .export(to: temporary, key: material, cipher: cipher, journalMode: opened.journalMode, progress: progress)
            // The last moment to stop: after it the original is replaced. Until here the original
            // was only read; now its WAL moves into it, so that none is left beside the new file.
            try Task.checkCancellation()
            if opened.journalMode == .wal { try Exporter.leaveWAL(source, path: path) }
        } catch {
            try? Exporter.removeDatabaseFiles(temporary)
            Exporter.unlock(source, journalMode: opened.journalMode)
            source.close()
            throw error
        }
        // The lock is held until here: nobody wrote to the original while it was being copied.
        source.close()
        do {
            try Exporter.replace(path, with: temporary, backup: keepBackup ? backup : nil)
        } catch {
            // The original stays; give it back the WAL mode that lockExclusively took from it.
            if opened.journalMode == .wal, let connection = try? SQLiteConnection(path: path) {
                _ = try? connection.query("PRAGMA journal_mode = WAL")
                connection.close()
            }
            throw error
        }
        reporter?.finish()
        return keepBackup ? backup : nil
    }

    /// Encrypts a plaintext database file where it is, with a passphrase. See
    /// ``encryptInPlace(path:key:cipher:keepBackup:progress:)-(_,DatabaseKey,_,_,_)``.
    @discardableResult
    public static func encryptInPlace(path: String, key: String, cipher: CipherSettings = .default,
                                      keepBackup: Bool = false,
                                      progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws -> String? {
        try encryptInPlace(path: path, key: .passphrase(key), cipher: cipher, keepBackup: keepBackup, progress: progress)
    }

    // MARK: SQLCipher 3 to 4

    /// Upgrades a SQLCipher 1.x-3.x file made with that version's default settings to SQLCipher 4's
    /// format, in place, with `PRAGMA cipher_migrate`
    /// (https://www.zetetic.net/sqlcipher/sqlcipher-api/#cipher_migrate).
    ///
    /// ```swift
    /// try Database.upgradeFromSqlCipher3(path: "/data/old.db", key: "secret")
    /// let db = try Database(path: "/data/old.db", key: "secret")   // 4.x defaults from now on
    /// ```
    ///
    /// The migration runs on a copy beside the file, which is verified with SQLCipher 4's default
    /// settings (same tables, same row counts, same `user_version`), synced and renamed over the
    /// original, so a crash leaves the old or the new file. Close every connection first. A file
    /// made with non-default settings (page size, KDF iterations) cannot be migrated this way: open
    /// it with those settings and use ``export(to:key:cipher:progress:)-(_,DatabaseKey,_,_)``.
    ///
    /// `progress` hears the file's pages: 0 at the start, the total once the new file is in place
    /// (`cipher_migrate` says nothing on the way). Cancelling the calling task before the new file
    /// is in place stops the migration and throws `CancellationError`; the original is unchanged.
    ///
    /// - Throws: ``SqlCipherError/unsupported(feature:requires:loaded:)`` on SQLCipher 3;
    ///   ``SqlCipherError/keyFailed(path:reason:)`` when the key does not open the file as a
    ///   SQLCipher 3 file; ``SqlCipherError/conversionFailed(source:target:reason:)``.
    public static func upgradeFromSqlCipher3(path: String, key: DatabaseKey,
                                             progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws {
        let library = try SqlCipherLibrary.shared
        try library.require("Upgrading a SQLCipher 3 file (PRAGMA cipher_migrate)", cipher: 4)
        let material = try key.material()
        // Through a symbolic link, the file to upgrade is its target (see encryptInPlace).
        let path = SnapshotFiles.resolvedPath(path)
        let temporary = path + ".sqlcipherkit-upgrading"
        try Exporter.removeDatabaseFiles(temporary)

        // Open as a SQLCipher 3 file: proves the key, gathers what the result must hold, and takes
        // the file for itself (a WAL moves into the file), so that a copy of the file alone is
        // complete and nobody writes to the original until it is replaced.
        let source = try DatabaseOpener.open(path: path, key: material, journalMode: .rollback, cipher: .sqlcipher3)
        let reporter: ProgressReporter?
        do {
            let expected = try Exporter.contents(of: source.connection, schema: "main")
            reporter = try Exporter.pageReporter(of: source.connection, progress)
            reporter?.start()
            try Task.checkCancellation()
            try Exporter.lockExclusively(source.connection, path: path, journalMode: source.journalMode, movingWAL: true)
            try SnapshotFiles.copyFile(path, to: temporary)
            let migrating = try SQLiteConnection(path: temporary)
            defer { migrating.close() }
            migrating.beginPackageSQL()  // PRAGMA cipher_migrate is the package's own (SQLiteConnection+Guards.swift)
            defer { migrating.endPackageSQL() }
            let rc = material.withBytes { scb_key(migrating.handle, $0.baseAddress, Int32($0.count)) }
            guard rc == 0 else { throw migrating.error(rc, sql: nil) }
            if library.cipherVersionIsAtLeast(4, 5, 1) { try migrating.execute("PRAGMA cipher_log = off") }
            // SQLCipher answers with the text "0" on success.
            let answer = try migrating.interruptGate.watching(cancellable: true, sample: nil) {
                try migrating.scalar("PRAGMA cipher_migrate").flatMap { value -> Int? in
                    if case .text(let text) = value { return Int(text) }
                    return Int.fromDatabaseValue(value)
                }
            }
            guard answer == 0 else {
                throw SqlCipherError.conversionFailed(
                    source: path, target: temporary,
                    reason: "cipher_migrate reported \(answer.map(String.init) ?? "no result"); only files made "
                        + "with SQLCipher 3's default settings can be migrated")
            }
            // cipher_migrate carries user_version over but not application_id: set it as every
            // other conversion does, so that the verification below compares like with like.
            try migrating.execute("PRAGMA application_id = \(expected.applicationID)")
            if source.journalMode == .wal { _ = try migrating.query("PRAGMA journal_mode = WAL") }
            migrating.close()
            try Task.checkCancellation()
            try Exporter.verify(temporary, key: material, cipher: .default, expected: expected, source: path)
            // The last moment to stop: after it the original is replaced.
            try Task.checkCancellation()
        } catch {
            Exporter.unlock(source.connection, journalMode: source.journalMode)
            source.connection.close()
            try? Exporter.removeDatabaseFiles(temporary)
            if error is SqlCipherError || error is CancellationError { throw error }
            throw SqlCipherError.conversionFailed(source: path, target: temporary, reason: "\(error)")
        }
        source.connection.close()
        try Exporter.replace(path, with: temporary, backup: nil)
        reporter?.finish()
    }

    /// Upgrades a SQLCipher 3 file with a passphrase. See ``upgradeFromSqlCipher3(path:key:progress:)-(_,DatabaseKey,_)``.
    public static func upgradeFromSqlCipher3(path: String, key: String,
                                             progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws {
        try upgradeFromSqlCipher3(path: path, key: .passphrase(key), progress: progress)
    }

    // MARK: Helpers

    /// Opens `path` as an existing plaintext database.
    private static func openPlaintextSource(_ path: String) throws -> DatabaseOpener.Opened {
        guard let header = FileHeader(path: path), header.fileSize > 0 else {
            throw SqlCipherError.cannotOpen(path: path, reason: "there is no database file there")
        }
        return try DatabaseOpener.open(path: path, key: nil, journalMode: .rollback, cipher: .default)
    }
}

/// The export machinery shared by the conversions.
struct Exporter {
    /// What a database holds, compared between the source and the copy.
    struct Contents: Equatable {
        var rowCounts: [String: Int64]
        var userVersion: Int64
        var applicationID: Int64
        /// Rows that `PRAGMA foreign_key_check` reports (a copy must not have more).
        var foreignKeyViolations: Int

        /// What differs between this (the new file) and `source`, one sentence each, for a
        /// person reading a failed conversion's reason.
        func differences(from source: Contents) -> [String] {
            var lines: [String] = []
            for name in Set(source.rowCounts.keys).union(rowCounts.keys).sorted() {
                switch (source.rowCounts[name], rowCounts[name]) {
                case let (expected?, found?) where expected != found:
                    lines.append("table \(name) has \(found) rows in the new file and \(expected) in the source")
                case (_?, nil):
                    lines.append("table \(name) is missing from the new file")
                case (nil, _?):
                    lines.append("table \(name) is in the new file but not in the source")
                default:
                    break
                }
            }
            if userVersion != source.userVersion {
                lines.append("user_version is \(userVersion) in the new file and \(source.userVersion) in the source")
            }
            if applicationID != source.applicationID {
                lines.append("application_id is \(applicationID) in the new file and \(source.applicationID) in the source")
            }
            if foreignKeyViolations != source.foreignKeyViolations {
                lines.append("foreign_key_check reports \(foreignKeyViolations) violations in the new file and "
                    + "\(source.foreignKeyViolations) in the source")
            }
            return lines.isEmpty ? ["the contents differ"] : lines
        }
    }

    let source: SQLiteConnection
    let sourcePath: String
    let library: SqlCipherLibrary

    /// The schema name the target is attached under.
    static let schema = "sqlcipherkit_export"

    /// Exports `source` (its main database) into a new file at `target`, then verifies the file.
    /// `key` nil writes a plaintext file. On failure the target's files are removed. Reports
    /// progress in pages of the source (estimated from the target's size on disk) without the
    /// final report, which the caller makes when its whole operation is done; stops with
    /// `CancellationError` when the current task is cancelled before verification ends.
    func export(to target: String, key: KeyMaterial?, cipher: CipherSettings, journalMode: JournalMode,
                progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws -> ProgressReporter? {
        // The ATTACH, cipher settings and sqlcipher_export below are the package's own SQL, which
        // the guards refuse from user SQL (SQLiteConnection+Guards.swift).
        source.beginPackageSQL()
        defer { source.endPackageSQL() }
        try Self.checkNewTarget(target)
        let settings = key == nil ? [] : try cipher.pragmas(for: library, schema: Self.schema)
        if key == nil && cipher != .default {
            throw SqlCipherError.invalidQuery(reason: "cipher settings apply to encrypted copies only")
        }
        try Task.checkCancellation()
        let expected = try Self.contents(of: source, schema: "main")
        let reporter = try Self.pageReporter(of: source, progress)
        reporter?.start()
        // sqlcipher_export copies table by table, so a child row can arrive before its parent:
        // foreign keys are checked again on the finished copy instead (foreign_key_check).
        let foreignKeys = try source.scalar("PRAGMA foreign_keys").flatMap { Int.fromDatabaseValue($0) } ?? 0
        // The package's own statements (asPackage): a pool refuses the pragma as raw SQL.
        if foreignKeys != 0 { _ = try source.asPackage { try source.execute("PRAGMA foreign_keys = OFF") } }
        defer {
            if foreignKeys != 0 {
                source.interruptGate.shielded { _ = source.asPackage { try? source.execute("PRAGMA foreign_keys = ON") } }
            }
        }
        let pageSize = Int64(max(1, try source.integer("PRAGMA main.page_size") ?? 4096))
        // A read-only Database's ATTACH is refused below, before SQLite creates anything: nor
        // does the claim, so that its folder does not change either.
        let claim = source.refusesWrites ? nil : try Self.createTarget(target)
        do {
            try attach(target, key: key)
            do {
                for pragma in settings { try source.execute(pragma) }
                _ = try source.query("PRAGMA \(Self.schema).journal_mode = \(journalMode.pragmaValue)")
                var sample: (@Sendable () -> Void)?
                if let reporter {
                    sample = { reporter.report(Self.bytesOnDisk(target) / pageSize) }
                }
                try source.interruptGate.watching(cancellable: true, sample: sample) {
                    _ = try source.query("SELECT sqlcipher_export('\(Self.schema)')")
                }
                try source.execute("PRAGMA \(Self.schema).user_version = \(expected.userVersion)")
                try source.execute("PRAGMA \(Self.schema).application_id = \(expected.applicationID)")
            } catch {
                source.interruptGate.shielded { _ = try? source.execute("DETACH DATABASE \(Self.schema)") }
                throw error
            }
            try source.execute("DETACH DATABASE \(Self.schema)")
            reporter?.report(Self.bytesOnDisk(target) / pageSize)
            try Task.checkCancellation()
            try Self.verify(target, key: key, cipher: cipher, expected: expected, source: sourcePath)
            try Task.checkCancellation()
        } catch {
            // Only what this export created (CreationClaim): a file another process put at the
            // path stays.
            for file in claim?.removableFiles ?? [] { try? FileManager.default.removeItem(atPath: file) }
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            if case SqlCipherError.conversionFailed = error { throw error }
            throw SqlCipherError.conversionFailed(source: sourcePath, target: target, reason: "\(error)")
        }
        return reporter
    }

    /// A reporter counting the pages of `connection`'s main database, or nil without a closure.
    static func pageReporter(of connection: SQLiteConnection,
                             _ progress: (@Sendable (DatabaseProgress) -> Void)?) throws -> ProgressReporter? {
        guard progress != nil else { return nil }
        let pages = try connection.scalar("PRAGMA main.page_count").flatMap { Int64.fromDatabaseValue($0) } ?? 0
        return ProgressReporter(total: pages, unit: .pages, progress)
    }

    /// The bytes of a database file and its WAL: what a copy being written holds so far.
    static func bytesOnDisk(_ path: String) -> Int64 {
        var total: Int64 = 0
        for file in [path, path + "-wal"] {
            var info = stat()
            if stat(file, &info) == 0 { total += Int64(info.st_size) }
        }
        return total
    }

    /// `ATTACH DATABASE ? AS sqlcipherkit_export KEY ?` with both bound: the key bytes never
    /// become SQL text. An empty key attaches a plaintext database (a missing KEY clause would
    /// reuse the main database's key instead).
    private func attach(_ target: String, key: KeyMaterial?) throws {
        let statement = try source.uncachedStatement("ATTACH DATABASE ? AS \(Self.schema) KEY ?")
        defer { statement.reset() }
        try statement.bind(.text(target), at: 1)
        if let key {
            try key.withBytes { try statement.bindBlob($0, at: 2) }
        } else {
            try statement.bindBlob(UnsafeRawBufferPointer(start: nil, count: 0), at: 2)
        }
        try statement.run()
    }

    /// Row counts of the ordinary tables, `user_version` and `application_id` of one schema.
    static func contents(of connection: SQLiteConnection, schema: String) throws -> Contents {
        let names = try connection.query(
            "SELECT name FROM \(schema).sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                + "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name")
            .compactMap { $0.get(0, as: String.self) }
        var counts: [String: Int64] = [:]
        for name in names {
            let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            counts[name] = try connection.scalar("SELECT count(*) FROM \(schema).\(quoted)")
                .flatMap { Int64.fromDatabaseValue($0) } ?? -1
        }
        let userVersion = try connection.scalar("PRAGMA \(schema).user_version").flatMap { Int64.fromDatabaseValue($0) } ?? 0
        let applicationID = try connection.scalar("PRAGMA \(schema).application_id").flatMap { Int64.fromDatabaseValue($0) } ?? 0
        let violations = try connection.query("PRAGMA \(schema).foreign_key_check").count
        return Contents(rowCounts: counts, userVersion: userVersion, applicationID: applicationID,
                        foreignKeyViolations: violations)
    }

    /// Opens `target` with a fresh connection and checks it against `expected`: tables and row
    /// counts, `user_version`, `application_id`, `quick_check`, and the header (ciphertext unless
    /// plaintext was asked for).
    static func verify(_ target: String, key: KeyMaterial?, cipher: CipherSettings, expected: Contents,
                       source: String) throws {
        func fail(_ reason: String) -> SqlCipherError {
            .conversionFailed(source: source, target: target, reason: "verification failed: " + reason)
        }
        guard let header = FileHeader(path: target), header.fileSize > 0 else { throw fail("the new file is empty") }
        if key == nil {
            guard header.looksPlaintextSQLite else { throw fail("the new file does not have a plaintext SQLite header") }
        } else if (cipher.plaintextHeaderSize ?? 0) == 0 && header.hasPlaintextMagic {
            throw fail("the new file starts with \"SQLite format 3\", it is not encrypted")
        }
        let opened: DatabaseOpener.Opened
        do {
            opened = try DatabaseOpener.open(path: target, key: key, journalMode: .rollback, cipher: cipher)
        } catch {
            throw fail("the new file does not open with the key (\(error))")
        }
        defer { opened.connection.close() }
        let found = try contents(of: opened.connection, schema: "main")
        guard found == expected else {
            throw fail(found.differences(from: expected).joined(separator: "; "))
        }
        let check = try opened.connection.query("PRAGMA quick_check").compactMap { $0.get(0, as: String.self) }
        guard check == ["ok"] else { throw fail("quick_check reports " + check.joined(separator: "; ")) }
        let expectedViolations = expected.foreignKeyViolations
        let violations = try opened.connection.query("PRAGMA foreign_key_check").count
        guard violations == expectedViolations else {
            throw fail("the new file has \(violations) foreign key violations, the source \(expectedViolations)")
        }
    }

    /// Refuses a target that exists (or has journal files) or whose folder is missing.
    static func checkNewTarget(_ target: String) throws {
        guard !target.isEmpty, target != ":memory:" else {
            throw SqlCipherError.cannotOpen(path: target, reason: "an export needs a file path")
        }
        for file in [target, target + "-wal", target + "-journal"] where FileManager.default.fileExists(atPath: file) {
            throw SqlCipherError.cannotOpen(
                path: target, reason: "\(file) already exists; an export only writes a new file, so remove it or choose another path")
        }
        let parent = (target as NSString).deletingLastPathComponent
        let folder = parent.isEmpty ? "." : parent
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw SqlCipherError.cannotOpen(path: target, reason: "the folder \(folder) does not exist; create it first")
        }
    }

    /// Creates the export's target, owner-only (<doc:Security>, "Paths and permissions"), with
    /// an exclusive create under the creation lock: the claim proves this export created it, so a
    /// failure may remove it, and nothing else.
    static func createTarget(_ target: String) throws -> CreationClaim {
        let claim = try CreationClaim(path: target)
        defer { claim.release() }
        try claim.createIfMissing(permissions: .ownerOnly)
        guard claim.createdFile else {
            throw SqlCipherError.cannotOpen(
                path: target, reason: "\(target) already exists; an export only writes a new file, so remove it or "
                    + "choose another path")
        }
        return claim
    }

    /// Makes `connection` the only user of its file until it closes: the exclusive lock is taken
    /// and kept (`locking_mode = EXCLUSIVE`), so that nobody reads or writes the original while it
    /// is copied. Waits at most a second for other connections.
    ///
    /// A WAL file stays in WAL mode unless `movingWAL`: leaving it changes the header (the change
    /// counters and the format bytes), which a cancelled operation must not do, so callers that
    /// read through the connection switch only once they cannot be stopped any more
    /// (``leaveWAL(_:path:)``). A caller that copies the file's bytes needs the WAL moved into the
    /// file first: switching to a rollback journal does that, and SQLite refuses it while any
    /// other connection has the file open.
    static func lockExclusively(_ connection: SQLiteConnection, path: String, journalMode: JournalMode,
                                movingWAL: Bool = false) throws {
        scb_busy_timeout(connection.handle, 1000)
        if journalMode == .wal && movingWAL { try leaveWAL(connection, path: path) }
        try connection.execute("PRAGMA locking_mode = EXCLUSIVE")
        do {
            try connection.execute("BEGIN EXCLUSIVE")
            try connection.execute("COMMIT")
        } catch {
            throw fileInUse(path, "\(error)")
        }
    }

    /// Switches a WAL file to a rollback journal (`DELETE`): the WAL moves into the file and is
    /// removed, so that nothing of it is left beside a file about to be replaced.
    ///
    /// The switch writes the header through a rollback journal. In exclusive locking mode SQLite
    /// keeps that journal (zeroed) until the connection closes, and a crash before then would
    /// leave it beside the file, where it blocks the next conversion; so the switch runs in
    /// normal locking mode, and a connection that held the file exclusively takes it back.
    static func leaveWAL(_ connection: SQLiteConnection, path: String) throws {
        let exclusive = (try? connection.lowercasedText("PRAGMA locking_mode")) == "exclusive"
        if exclusive { try connection.execute("PRAGMA locking_mode = NORMAL") }
        let mode: String?
        do {
            mode = try connection.lowercasedText("PRAGMA journal_mode = DELETE")
        } catch {
            throw fileInUse(path, "\(error)")
        }
        guard mode == "delete" else { throw fileInUse(path, "it stays in WAL mode") }
        if exclusive { try lockExclusively(connection, path: path, journalMode: .rollback) }
    }

    private static func fileInUse(_ path: String, _ detail: String) -> SqlCipherError {
        .conversionFailed(
            source: path, target: path,
            reason: "another connection is using the file (\(detail)); close every connection to it first")
    }

    /// Undoes ``lockExclusively(_:path:journalMode:movingWAL:)`` and ``leaveWAL(_:path:)`` after a
    /// failure: the lock is released and a WAL file gets its journal mode back (a no-op for one
    /// that never left it, which then keeps every byte).
    static func unlock(_ connection: SQLiteConnection, journalMode: JournalMode) {
        _ = try? connection.execute("PRAGMA locking_mode = NORMAL")
        if journalMode == .wal { _ = try? connection.query("PRAGMA journal_mode = WAL") }
    }

    /// Removes a database file and its journal files, when they exist.
    static func removeDatabaseFiles(_ path: String) throws {
        for file in [path, path + "-wal", path + "-shm", path + "-journal"]
        where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.removeItem(atPath: file)
        }
    }

    /// Puts `replacement` at `path` in one atomic step, after making it durable; keeps the old
    /// file as `backup` (a hard link made before the switch) when asked.
    static func replace(_ path: String, with replacement: String, backup: String?) throws {
        func fail(_ reason: String) -> SqlCipherError {
            .conversionFailed(source: path, target: replacement, reason: reason)
        }
        // A stale WAL beside the original would be replayed into the new file. The original's
        // connection was closed and checkpointed, so one still there belongs to someone else.
        if let wal = FileHeader(path: path + "-wal"), wal.fileSize > 0 {
            try? removeDatabaseFiles(replacement)
            throw fail("\(path)-wal is not empty: another connection is using the file; close it first")
        }
        if FileManager.default.fileExists(atPath: path + "-journal") {
            try? removeDatabaseFiles(replacement)
            throw fail("\(path)-journal exists: another connection is writing to the file; close it first")
        }
        let folder = (path as NSString).deletingLastPathComponent
        do {
            // The new file gets the original's permissions (SQLite creates files with the umask's).
            var original = stat()
            if stat(path, &original) == 0 {
                guard chmod(replacement, original.st_mode & 0o7777) == 0 else { throw posixError("chmod \(replacement)") }
            }
            try fsyncPath(replacement, directory: false)
            try fsyncPath(folder.isEmpty ? "." : folder, directory: true)
            if let backup {
                guard link(path, backup) == 0 else { throw posixError("link \(path) to \(backup)") }
                try fsyncPath(folder.isEmpty ? "." : folder, directory: true)
            }
        } catch {
            try? removeDatabaseFiles(replacement)
            throw fail("\(error)")
        }
        guard rename(replacement, path) == 0 else {
            let error = posixError("rename \(replacement) to \(path)")
            try? removeDatabaseFiles(replacement)
            if let backup { unlink(backup) }
            throw fail("\(error)")
        }
        // After the rename the new file is in place; a failing folder sync can only mean that the
        // switch may not survive a power loss, which leaves the old file: still no data lost.
        _ = try? fsyncPath(folder.isEmpty ? "." : folder, directory: true)
        for stale in [path + "-wal", path + "-shm"] { unlink(stale) }
    }

    /// `fsync` of a file or folder (a folder's entry list is what makes a rename durable).
    static func fsyncPath(_ path: String, directory: Bool) throws {
        let fd = open(path, directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY)
        guard fd >= 0 else { throw posixError("open \(path) for fsync") }
        defer { closeDescriptor(fd) }
        guard fsync(fd) == 0 else { throw posixError("fsync \(path)") }
    }

    private static func closeDescriptor(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    private static func posixError(_ what: String) -> SqlCipherError {
        .cannotOpen(path: what, reason: String(cString: strerror(errno)))
    }
}

extension DatabaseAccess {
    // MARK: Copies of an open database

    /// Writes a plaintext copy of this database to a new file. This database is not changed.
    ///
    /// ```swift
    /// try await db.exportDecrypted(to: "/tmp/inspect.db")   // readable by any SQLite tool
    /// ```
    ///
    /// The copy is verified like ``Database/encrypt(plaintextAt:to:key:cipher:progress:)-(_,_,DatabaseKey,_,_)``.
    /// It holds every row in the clear: keep it only as long as needed. Cancelling the calling
    /// task stops the copy and removes the partial target.
    ///
    /// - Parameters:
    ///   - target: A path where no file exists yet, in an existing folder.
    ///   - progress: Called with the pages of the source copied so far (see ``DatabaseProgress``);
    ///     it runs while the work goes on and must return quickly.
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` when the target exists,
    ///   ``SqlCipherError/conversionFailed(source:target:reason:)``; `CancellationError`.
    public func exportDecrypted(to target: String, progress: (@Sendable (DatabaseProgress) -> Void)? = nil) async throws {
        let (path, library, journalMode) = (self.path, self.library, exportJournalMode)
        try await _withConnection(.write) { conn in
            try Exporter(source: conn.core, sourcePath: path, library: library)
                .export(to: target, key: nil, cipher: .default, journalMode: journalMode, progress: progress)?
                .finish()
        }
    }

    /// Writes an encrypted copy of this database, with another key and possibly other cipher
    /// settings, to a new file. This database is not changed.
    ///
    /// ```swift
    /// // A SQLCipher 3 file, copied to SQLCipher 4's format with a raw key:
    /// let old = try Database(path: "/data/v3.db", key: "secret", cipher: .sqlcipher3)
    /// try await old.export(to: "/data/v4.db", key: .rawKey(keyBytes), cipher: .default)
    /// ```
    ///
    /// Works from a plaintext database too. The copy is verified like
    /// ``Database/encrypt(plaintextAt:to:key:cipher:progress:)-(_,_,DatabaseKey,_,_)``. Cancelling the
    /// calling task stops the copy and removes the partial target.
    ///
    /// - Parameters:
    ///   - target: A path where no file exists yet, in an existing folder.
    ///   - key: The key of the copy.
    ///   - cipher: The cipher settings of the copy.
    ///   - progress: Called with the pages of the source copied so far (see ``DatabaseProgress``);
    ///     it runs while the work goes on and must return quickly.
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` when the target exists,
    ///   ``SqlCipherError/conversionFailed(source:target:reason:)``; `CancellationError`.
    public func export(to target: String, key: DatabaseKey, cipher: CipherSettings = .default,
                       progress: (@Sendable (DatabaseProgress) -> Void)? = nil) async throws {
        _ = try key.material()
        let (path, library, journalMode) = (self.path, self.library, exportJournalMode)
        try await _withConnection(.write) { conn in
            let material = try key.material()
            try Exporter(source: conn.core, sourcePath: path, library: library)
                .export(to: target, key: material, cipher: cipher, journalMode: journalMode, progress: progress)?
                .finish()
        }
    }

    /// Writes an encrypted copy with a passphrase. See ``export(to:key:cipher:progress:)-(_,DatabaseKey,_,_)``.
    public func export(to target: String, key: String, cipher: CipherSettings = .default,
                       progress: (@Sendable (DatabaseProgress) -> Void)? = nil) async throws {
        try await export(to: target, key: .passphrase(key), cipher: cipher, progress: progress)
    }

    /// The journal mode an exported copy gets: the source's, WAL for an in-memory source.
    var exportJournalMode: JournalMode { path == ":memory:" ? .wal : journalMode }
}
