import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The export machinery shared by the conversions (Database/Database+Conversions.swift).
///
/// Every conversion writes a NEW file with `ATTACH ... KEY ?` and `sqlcipher_export`
/// (https://www.zetetic.net/sqlcipher/sqlcipher-api/#sqlcipher_export), copies `user_version` and
/// `application_id` (which the export does not), and verifies the new file with a fresh connection
/// before it reports success. The ones that replace a file do it with ``FileReplacement``.
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
    /// Where the caller can register a collation or function the source's schema names, for the
    /// error of a copy that failed for want of one (``missingExtensionHint(_:registration:)``):
    /// nil when the source is the caller's own database, which takes `add(collation:)` and
    /// `add(function:)`; the way to such a database for the static conversions, which open the
    /// source themselves and had been told to register it "on this database", which they have none of.
    var registration: String? = nil

    /// The schema name the target is attached under.
    static let schema = "sqlcipherkit_export"

    /// Exports `source` (its main database) into a new file at `target`, then verifies the file.
    /// `key` nil writes a plaintext file. On failure the target's files are removed. Reports
    /// progress in pages of the source (estimated from the target's size on disk) without the
    /// final report, which the caller makes when its whole operation is done; stops with
    /// `CancellationError` when the current task is cancelled before verification ends.
    ///
    /// `hidden` (the default) writes the copy under a hidden name and gives it the target's name
    /// once verified (``HiddenCopy``); a caller whose target is already a work file of its own,
    /// removed by its next call and guarded by its lock (``InPlaceEncryption``), passes false.
    func export(to target: String, key: KeyMaterial?, cipher: CipherSettings, journalMode: JournalMode,
                hidden: Bool = true,
                progress: (@Sendable (DatabaseProgress) -> Void)? = nil) throws -> ProgressReporter? {
        // The ATTACH, cipher settings and sqlcipher_export are the package's own SQL, which the
        // guards refuse from user SQL (SQLiteConnection+Guards.swift).
        try source.asPackage {
            try exportAsPackage(to: target, key: key, cipher: cipher, journalMode: journalMode, hidden: hidden,
                                progress: progress)
        }
    }

    /// ``export(to:key:cipher:journalMode:progress:)`` inside the package's scope.
    private func exportAsPackage(to target: String, key: KeyMaterial?, cipher: CipherSettings, journalMode: JournalMode,
                                 hidden: Bool, progress: (@Sendable (DatabaseProgress) -> Void)?) throws -> ProgressReporter? {
        // A dead export's hidden file is removed first, even when the target is refused below
        // because it exists: otherwise the leftover (for exportDecrypted, a partial plaintext
        // copy) stayed beside the target for as long as the target did. Not for a read-only
        // source, whose export changes nothing in the target's folder.
        let hidden = hidden && !source.refusesWrites
        if hidden { HiddenCopy.removeDead(besides: target, kind: "export") }
        try Self.checkNewTarget(target)
        // Said as such: SQLite's own refusal of the ATTACH below ("unable to open database") read
        // as a target that is a pipe, a directory or in a folder that cannot be written.
        if source.refusesWrites {
            throw SqlCipherError.conversionFailed(
                source: sourcePath, target: target,
                reason: "this Database was opened with readOnly: true, and a read-only connection cannot create the "
                    + "copy (SQLite attaches it read-only too); open the file without readOnly to copy it, or use "
                    + "backup(to:key:) for an encrypted copy with the same cipher settings")
        }
        let settings = key == nil ? [] : try cipher.pragmas(for: library, schema: Self.schema)
        try cipher.requireSaltedKey(key, path: target)
        if key == nil && cipher != .default {
            throw SqlCipherError.invalidQuery(reason: "cipher settings apply to encrypted copies only")
        }
        try Task.checkCancellation()
        // Read again below, in the snapshot the copy is taken from; this first reading proves the
        // source readable before anything is created.
        var expected = try Self.contents(of: source, schema: "main")
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
        // Written under a hidden name beside the target (HiddenCopy), which takes the target's name
        // only once complete and verified: sqlcipher_export commits table by table, so a process
        // killed midway left a copy missing tables under the target's name, which opened with the
        // key. A dead export's hidden file was removed above.
        let work = hidden ? try HiddenCopy.path(besides: target, kind: "export") : target
        let claim: CreationClaim?
        do {
            claim = source.refusesWrites ? nil : try Self.createTarget(work)
        } catch SqlCipherError.cannotOpen(let path, let reason) where path == work {
            // Named after the target the caller gave, as a backup's are: the hidden name is the
            // package's own (a folder that cannot be written read as a problem with a file the
            // caller never named).
            throw SqlCipherError.cannotOpen(path: target, reason: reason.replacingOccurrences(of: work, with: target))
        }
        var ownership: Int32 = -1
        // After the DETACH and the verification's connection: closing it earlier would drop
        // their POSIX locks on the file.
        defer { if ownership >= 0 { _ = close(ownership) } }
        let fail = { (reason: String) in
            SqlCipherError.conversionFailed(source: self.sourcePath, target: target, reason: reason)
        }
        do {
            if hidden { ownership = try HiddenCopy.own(work, fail: fail) }
            try attach(work, key: key)
            // One read transaction for the counts the copy is verified against and the copy itself:
            // read apart, another connection's commits in between (another process writing the
            // source, in WAL mode at any moment) made them differ, and the export failed its
            // verification although the copy was whole. (ATTACH cannot run inside it.)
            let snapshot = !source.isInTransaction
            do {
                for pragma in settings { try source.execute(pragma) }
                _ = try source.query("PRAGMA \(Self.schema).journal_mode = \(journalMode.pragmaValue)")
                if snapshot { try source.execute("BEGIN") }
                expected = try Self.contents(of: source, schema: "main")
                var sample: (@Sendable () -> Void)?
                if let reporter {
                    sample = { reporter.report(Self.bytesOnDisk(work) / pageSize) }
                }
                try source.interruptGate.watching(cancellable: true, sample: sample) {
                    _ = try source.query("SELECT sqlcipher_export('\(Self.schema)')")
                }
                try source.execute("PRAGMA \(Self.schema).user_version = \(expected.userVersion)")
                try source.execute("PRAGMA \(Self.schema).application_id = \(expected.applicationID)")
                if snapshot { try source.execute("COMMIT") }
            } catch {
                source.interruptGate.shielded {
                    if snapshot && source.isInTransaction { _ = try? source.execute("ROLLBACK") }
                    _ = try? source.execute("DETACH DATABASE \(Self.schema)")
                }
                throw error
            }
            try source.execute("DETACH DATABASE \(Self.schema)")
            reporter?.report(Self.bytesOnDisk(work) / pageSize)
            try Task.checkCancellation()
            try Self.verify(work, promised: target, key: key, cipher: cipher, expected: expected, source: sourcePath,
                            schemaExtensions: Self.schemaExtensions(of: source))
            try Task.checkCancellation()
            if hidden { try HiddenCopy.publish(work, as: target, fail: fail) }
        } catch {
            // Only what this export created (CreationClaim): a file another process put at the
            // path stays.
            for file in claim?.removableFiles ?? [] { try? FileReplacement.removeFile(file) }
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            if case SqlCipherError.conversionFailed = error { throw error }
            throw SqlCipherError.conversionFailed(
                source: sourcePath, target: target, reason: "\(error)" + (Self.missingExtensionHint(
                    error, registration: registration,
                    pageCopyPossible: key != nil && source.statementGate.isEncrypted) ?? ""))
        }
        return reporter
    }

    /// The collations and functions registered on `connection`, without its tracers, for the
    /// connection that verifies a copy: `quick_check` compares an index's keys with the index's
    /// collation, so the copy of a file whose index uses a collation its maker registered (and
    /// the caller registered too, as the error says) failed its verification with "no such
    /// collation sequence". Nil when none is registered.
    static func schemaExtensions(of connection: SQLiteConnection) -> ConnectionExtensions? {
        let snapshot = connection.extensionState.registry.snapshot()
        guard !snapshot.functions.isEmpty || !snapshot.collations.isEmpty else { return nil }
        let copy = ConnectionExtensions()
        for registration in snapshot.collations.values {
            copy.store(collation: registration.definition, serial: copy.nextSerial())
        }
        for registration in snapshot.functions.values {
            copy.store(function: registration.definition, serial: copy.nextSerial())
        }
        return copy
    }

    /// What to do when the copy failed because the schema names a collation, function or
    /// virtual-table module this connection lacks (a file made by another program that registers
    /// its own): `sqlcipher_export` re-runs every `CREATE` statement, and SQLite resolves them
    /// then. A database opens and reads without them; only statements that use them fail.
    /// `registration` is where to register it (``registration``); nil for the source database.
    ///
    /// `pageCopyPossible` when the source is encrypted and so is the copy: only then is
    /// `backup(to:key:)`, which copies pages without running the schema, a way around a virtual
    /// table's module (it refuses a plaintext source, and writes the source's encryption).
    static func missingExtensionHint(_ error: any Error, registration: String? = nil,
                                     pageCopyPossible: Bool = false) -> String? {
        guard case let SqlCipherError.sqlite(_, _, message, _) = error else { return nil }
        if message.contains("no such collation sequence") || message.contains("no such function") {
            return ": the schema uses a collation or function that the program which made the file registers. "
                + (registration ?? "Register it on this database first (add(collation:) or add(function:)), then convert again")
        }
        if message.contains("no such module") {
            return ": the schema has a virtual table whose module the program which made the file provides, and "
                + "SqlCipherKit cannot register one. Drop that table first if it can be rebuilt"
                + (pageCopyPossible ? ", or copy the pages with backup(to:key:), which does not run the schema" : "")
        }
        return nil
    }

    /// The way to register what a plaintext source's schema needs for the static conversions
    /// (`encrypt(plaintextAt:to:key:)`, `encryptInPlace`), which open the source themselves.
    static let registrationForStaticCopy = "Open the file with Database(unencryptedPath:), register it there "
        + "(add(collation:) or add(function:)), and copy it with export(to:key:cipher:) on that Database, which writes "
        + "the same encrypted copy"

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
        try statement.bind(.text(SQLiteConnection.fileName(target)), at: 1)
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
            let quoted = SQLRenderer.quotedName(name)
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
    /// plaintext was asked for). A failure names `promised`, the path the caller asked for: the
    /// hidden work file it checks is removed before the error reaches anyone.
    static func verify(_ target: String, promised: String, key: KeyMaterial?, cipher: CipherSettings,
                       expected: Contents, source: String, schemaExtensions: ConnectionExtensions? = nil) throws {
        func fail(_ reason: String) -> SqlCipherError {
            .conversionFailed(source: source, target: promised, reason: "verification failed: " + reason)
        }
        guard let header = FileHeader(path: target), header.fileSize > 0 else { throw fail("the new file is empty") }
        if key == nil {
            guard header.looksPlaintextSQLite else { throw fail("the new file does not have a plaintext SQLite header") }
        } else if (cipher.plaintextHeaderSize ?? 0) == 0 && header.hasPlaintextMagic {
            throw fail("the new file starts with \"SQLite format 3\", it is not encrypted")
        }
        let opened: DatabaseOpener.Opened
        do {
            opened = try DatabaseOpener.open(path: target, key: key, journalMode: .rollback, cipher: cipher,
                                             setup: ConnectionSetup(extensions: schemaExtensions))
        } catch {
            throw fail("the new file does not open with the key (\("\(error)".replacingOccurrences(of: target, with: promised)))")
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
        try DatabasePath.refuseUnusable(target)
        // SQLite manages a database's companion files by name: a new file called like one would be
        // taken for another database's journal or WAL and deleted by its next write or opening.
        if let reason = DatabasePath.companionNameReason(target) {
            throw SqlCipherError.cannotOpen(path: target, reason: reason)
        }
        if let tooLong = SQLiteConnection.pathTooLong(target) {
            throw SqlCipherError.cannotOpen(path: target, reason: tooLong)
        }
        if let tooLong = DatabasePath.nameTooLong(
            target, suffix: DatabasePath.longestCompanionSuffix, files: "SQLite keeps the copy's -journal, -wal and -shm beside it") {
            throw SqlCipherError.cannotOpen(path: target, reason: tooLong)
        }
        if target.hasSuffix("/") {
            throw SqlCipherError.cannotOpen(
                path: target, reason: "the path ends in \"/\", which names a folder; give the path of the new file")
        }
        // lstat, not stat: a symbolic link there, even one that points nowhere, is an entry too.
        // SQLite would create and write the companions through it (SQLCipher 3.4.1 overwrote the
        // file a linked -shm pointed to, and left a linked -journal's pages where it pointed) and
        // then remove only the link.
        for file in [target, target + "-wal", target + "-shm", target + "-journal"] {
            var info = stat()
            guard lstat(file, &info) == 0 else { continue }
            let what = (info.st_mode & S_IFMT) == S_IFLNK ? "\(file) is a symbolic link" : "\(file) already exists"
            throw SqlCipherError.cannotOpen(
                path: target, reason: "\(what); an export only writes a new file, with companion files of its own, so "
                    + "remove it or choose another path")
        }
        let folder = DatabasePath.folder(of: target)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw SqlCipherError.cannotOpen(path: target, reason: DatabasePath.missingFolderReason(folder))
        }
    }

    /// Creates the export's target, owner-only (docs/security.md, "Paths and permissions"), with
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

    /// Opens `path` as an existing plaintext database: the source of ``Database/encrypt(plaintextAt:to:key:cipher:progress:)``
    /// and of ``InPlaceEncryption``, which holds the file's `conversion` lock.
    static func openPlaintextSource(_ path: String, conversion: ConversionLock? = nil) throws -> DatabaseOpener.Opened {
        guard let header = FileHeader(path: path), header.fileSize > 0 else { throw noSource(path) }
        return try SourceLock.describingBusy(path) {
            try DatabaseOpener.open(path: path, key: nil, journalMode: .rollback, cipher: .default, conversion: conversion)
        }
    }

    /// Why `path` holds no database to read (it has no readable header, or an empty one):
    /// missing, a symlink loop, a pipe, socket, device or directory, or an empty file. The one
    /// refusal of every call that converts or reads an existing file it did not open itself (the
    /// conversions, the SQLCipher 3 upgrade, `importPlaintext(from:as:_:)`), so each names the
    /// file's kind the same way; `expected` says what the path should hold.
    static func noSource(_ path: String, expected: String = "a plaintext SQLite database") -> SqlCipherError {
        var info = stat()
        let reason: String
        if stat(path, &info) != 0 {
            reason = errno == ELOOP
                ? "it is a symbolic link that leads through too many links (a loop?); point it at the database file"
                : "there is no database file there (\(String(cString: strerror(errno)))); give the path of \(expected)"
        } else if let kind = SnapshotFiles.specialKind(mode: info.st_mode) {
            reason = "it is \(kind), not a database file; give the path of \(expected)"
        } else if info.st_size == 0 {
            reason = "the file is empty: there is no database in it"
        } else {
            reason = "the file cannot be read; check its permissions"
        }
        return .cannotOpen(path: path, reason: reason)
    }
}
