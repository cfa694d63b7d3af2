import CSqlCipherBridge
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Proves that a key opens an encrypted database file and that the file is intact, without
/// changing a byte of it or creating a file beside it: the engine of `sqlcipher-doctor verify`.
///
/// Package API rather than public: an application opens its database with ``Database`` and checks
/// it with ``Database/verifyIntegrity(progress:)``; this is the operator's view of a file at rest.
///
/// Why the file is opened the way it is (measured with both libraries, docs/doctor.md):
/// - `SQLITE_OPEN_READONLY` (or `mode=ro`) is not enough: on a database in WAL mode SQLite creates
///   the `-shm` (and a `-wal` when there is none) even for a read-only connection, and writes to an
///   existing `-shm`. With a hot journal it refuses to read (`SQLITE_READONLY_ROLLBACK`).
/// - `immutable=1` reads the main file alone: no lock, no journal, no WAL, nothing created. That is
///   the whole database exactly when no `-wal` holds frames and no hot `-journal` exists, so the
///   verifier reads the file in place only then.
/// - Otherwise it copies the file with its `-wal` and `-journal` into a new private folder and opens
///   the copy: SQLite recovers the WAL or rolls back the journal there, as the next program to open
///   the original would, and the original is only ever read with `read(2)`. The copy is of bytes,
///   never of links, and a `-wal` only as far as its valid frames (``SnapshotFiles``); a symlinked
///   path is resolved to its target first, and a named pipe, socket or device among the files is
///   refused before anything is opened.
/// - The key check itself always reads the original's page 1 in place (immutable), so settings
///   that do not fit never get to replay a journal, not even into the copy.
package enum DatabaseVerifier {
    /// A settings set to try when opening a file with a key.
    package struct SettingsCandidate: Sendable, Equatable {
        /// A short name: `sqlcipher4`, `sqlcipher3` or `custom`.
        package let name: String
        /// The settings, as ``Database`` takes them.
        package let settings: CipherSettings
        /// What the settings are, for a person.
        package let summary: String
        /// How to open the file with SqlCipherKit, e.g. `CipherSettings.sqlcipher3`.
        package let swift: String
        /// Which SQLCipher versions read a file with these settings, and how.
        package let readableBy: String
        /// The page size these settings read, for counting the pages of the file.
        package let pageSize: Int
        /// The pragmas run after the key on the loaded library.
        package let pragmas: [String]
    }

    /// The settings sets to try on `library`, in order: the library's defaults first, then, on
    /// SQLCipher 4, SQLCipher 3's (`cipher_compatibility = 3`). With `given` settings, only those.
    /// SQLCipher 3.4.1 knows only SQLCipher 3's format (it has no SHA-512), so it tries only that.
    ///
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` or ``SqlCipherError/unsupported(feature:requires:loaded:)``
    ///   for given settings the library cannot apply.
    package static func candidates(for library: SqlCipherLibrary, given: CipherSettings? = nil) throws -> [SettingsCandidate] {
        let v4 = library.cipherMajorVersion >= 4
        if let given {
            let compatibility = given.compatibility ?? (v4 ? 4 : 3)
            let pageSize = given.pageSize ?? (compatibility >= 4 ? 4096 : 1024)
            var parts: [String] = []
            var swiftArguments: [String] = []
            if let value = given.compatibility {
                parts.append("cipher_compatibility = \(value)")
                swiftArguments.append("compatibility: \(value)")
            }
            if let value = given.pageSize {
                parts.append("cipher_page_size = \(value)")
                swiftArguments.append("pageSize: \(value)")
            }
            if let value = given.kdfIterations {
                parts.append("kdf_iter = \(value)")
                swiftArguments.append("kdfIterations: \(value)")
            }
            let base = compatibility >= 4 ? "SQLCipher 4" : "SQLCipher 3"
            return [SettingsCandidate(
                name: "custom", settings: given,
                summary: "the settings given (\(parts.joined(separator: ", "))) over \(base)'s defaults",
                swift: "CipherSettings(\(swiftArguments.joined(separator: ", ")))",
                readableBy: "\(base == "SQLCipher 4" ? "SQLCipher 4.0 or later" : "SQLCipher 3.x or 4.x (4.x with cipher_compatibility = 3)"), "
                    + "with these settings given after the key every time the file is opened (SQLCipher stores none of "
                    + "them in the file)",
                pageSize: pageSize, pragmas: try given.pragmas(for: library))]
        }
        let sqlcipher3 = SettingsCandidate(
            name: "sqlcipher3", settings: v4 ? .sqlcipher3 : .default,
            summary: "SQLCipher 3 defaults: 1024-byte pages, PBKDF2-HMAC-SHA1 with 64,000 iterations, HMAC-SHA1"
                + (v4 ? " (PRAGMA cipher_compatibility = 3 on SQLCipher 4)" : ""),
            swift: v4 ? "CipherSettings.sqlcipher3" : "CipherSettings.default on SQLCipher 3, CipherSettings.sqlcipher3 on either version",
            readableBy: "SQLCipher 3.x with its defaults, and SQLCipher 4.x with PRAGMA cipher_compatibility = 3 right "
                + "after the key (CipherSettings.sqlcipher3), or after an upgrade to SQLCipher 4's format "
                + "(Database.upgradeFromSqlCipher3)",
            pageSize: 1024, pragmas: try (v4 ? CipherSettings.sqlcipher3 : .default).pragmas(for: library))
        guard v4 else { return [sqlcipher3] }
        let sqlcipher4 = SettingsCandidate(
            name: "sqlcipher4", settings: .default,
            summary: "SQLCipher 4 defaults: 4096-byte pages, PBKDF2-HMAC-SHA512 with 256,000 iterations, HMAC-SHA512",
            swift: "CipherSettings.default (or CipherSettings.sqlcipher4)",
            readableBy: "SQLCipher 4.0 or later with its default settings; SQLCipher 3 cannot read it (it has no SHA-512)",
            pageSize: 4096, pragmas: [])
        return [sqlcipher4, sqlcipher3]
    }

    /// Verifies the file at `path` with `key`, trying `candidates` in order (from
    /// ``candidates(for:given:)``). Never throws: every failure is part of the result.
    /// `progress` hears the checks of a file that opened (HMAC check where the library has it,
    /// `integrity_check`, schema summary), counted in ``DatabaseProgress/Unit/checks``.
    package static func verify(_ path: String, key: DatabaseKey, candidates: [SettingsCandidate],
                               library: SqlCipherLibrary,
                               progress: (@Sendable (DatabaseProgress) -> Void)? = nil) -> DatabaseVerification {
        var run = VerificationRun(path: path, target: SnapshotFiles.resolvedPath(path),
                                  inspection: DatabaseFileInspector.inspect(path), library: library)
        run.progress = progress
        run.verify(key: key, candidates: candidates)
        return run.result()
    }
}

// MARK: - One verification

/// The state of one verification, filled in step by step.
private struct VerificationRun {
    /// The path, as given.
    let path: String
    /// The file read: `path` with its symbolic links resolved, beside which SQLite looks for the
    /// `-wal` and `-journal`.
    let target: String
    let inspection: DatabaseFileInspection
    let library: SqlCipherLibrary

    var status: DatabaseVerification.Status = .notVerifiable
    var keyAccepted: Bool?
    var settings: DatabaseVerifier.SettingsCandidate?
    var attempts: [DatabaseVerification.Attempt] = []
    var access: DatabaseVerification.Access?
    var pageSize: Int?
    var pageCount: Int?
    var userVersion: Int?
    var cipherIntegrity = DatabaseVerification.Check.skipped("the file was not opened")
    var integrity = DatabaseVerification.Check.skipped("the file was not opened")
    var tables: [DatabaseVerification.Table] = []
    var indexCount: Int?, viewCount: Int?, triggerCount: Int?
    var notes: [String] = []
    var error: String?
    /// What SQLite did to the private copy before the checks, when a copy was verified.
    var copyWork: String?
    /// Where the checks report how far they are.
    var progress: (@Sendable (DatabaseProgress) -> Void)?

    init(path: String, target: String, inspection: DatabaseFileInspection, library: SqlCipherLibrary) {
        self.path = path
        self.target = target
        self.inspection = inspection
        self.library = library
    }

    func result() -> DatabaseVerification {
        DatabaseVerification(
            path: path, status: status, inspection: inspection, keyAccepted: keyAccepted, settings: settings,
            attempts: attempts, access: access, pageSize: pageSize, pageCount: pageCount, userVersion: userVersion,
            cipherIntegrity: cipherIntegrity, integrity: integrity, tables: tables, indexCount: indexCount,
            viewCount: viewCount, triggerCount: triggerCount, notes: notes, error: status == .verified ? nil : error)
    }

    mutating func fail(_ status: DatabaseVerification.Status, _ message: String) {
        self.status = status
        error = message
    }

    mutating func verify(key: DatabaseKey, candidates: [DatabaseVerifier.SettingsCandidate]) {
        switch inspection.kind {
        case .missing:
            return fail(.missing, inspection.detail.prefix(1).uppercased() + inspection.detail.dropFirst()
                + ". Check the path")
        case .empty:
            return fail(.notVerifiable, "The file is empty (0 bytes): SQLite treats it as a new database, so any key "
                + "would \"open\" it and there is nothing to verify")
        case .plaintext:
            keyAccepted = false
            return fail(.notEncrypted, "It is not encrypted, so there is no key to verify (\(inspection.detail)). Make "
                + "an encrypted copy with Database.encrypt(plaintextAt:to:key:), or open it with Database(unencryptedPath:)")
        case .plaintextHeader:
            return fail(.notVerifiable, "It is a SQLCipher database with a plaintext header, whose salt is not stored "
                + "in the file, so verify cannot derive its key. Open it with Database(path:rawKey:salt:cipher:) and "
                + "CipherSettings(plaintextHeaderSize:), then run Database.verifyIntegrity()")
        case .notADatabase:
            return fail(.notVerifiable, "It is not a database: " + inspection.detail)
        case .encrypted:
            break
        }
        guard !candidates.isEmpty else { return fail(.notVerifiable, "No settings to try") }
        // Every file is checked before SQLite opens anything: a named pipe, socket or device as
        // the -wal or -journal is refused here rather than waited on.
        let companions: DatabaseVerifier.Companions
        do {
            companions = try DatabaseVerifier.Companions(target)
        } catch SqlCipherError.cannotOpen(_, let reason) {
            return fail(.notVerifiable, reason.prefix(1).uppercased() + reason.dropFirst())
        } catch {
            return fail(.notVerifiable, "\(error)")
        }
        let before = DatabaseVerifier.Fingerprint(target)

        // 1. The key, against page 1 of the file itself.
        var opened: (connection: SQLiteConnection, candidate: DatabaseVerifier.SettingsCandidate)?
        attempting: for candidate in candidates {
            let connection: SQLiteConnection
            do {
                connection = try Self.open(target, key: key, candidate: candidate, library: library, inPlace: true)
            } catch {
                return fail(.notVerifiable, "SQLCipher could not open it: \(error)")
            }
            do {
                _ = try connection.scalar("SELECT count(*) FROM sqlite_master")
                attempts.append(.init(settings: candidate.name, accepted: true, result: "opened"))
                opened = (connection, candidate)
                break attempting
            } catch let error as SqlCipherError {
                // Whether the key is right is proven by a second read of page 1 alone, never by
                // the code: releases differ in what they return for a page 1 that does not decrypt.
                guard case let .sqlite(code, _, message, _) = error,
                      let decrypts = KeyProof.keyDecryptsPageOne(connection, path: path, afterFailure: code) else {
                    connection.close()
                    return fail(.notVerifiable, "Reading it failed with an error that says nothing about the key: \(error)")
                }
                if decrypts {
                    // Page 1 decrypted, but the schema behind it is damaged.
                    attempts.append(.init(settings: candidate.name, accepted: true,
                                          result: "page 1 decrypted, then: \(message) (SQLite error \(code))"))
                    opened = (connection, candidate)
                    break attempting
                }
                connection.close()
                attempts.append(.init(settings: candidate.name, accepted: false,
                                      result: "\(message) (SQLite error \(code))"))
            } catch {
                connection.close()
                return fail(.notVerifiable, "Reading it failed with an error that says nothing about the key: \(error)")
            }
        }
        guard let opened else { return diagnoseRejectedKey(key: key, candidates: candidates) }
        keyAccepted = true
        settings = opened.candidate
        if opened.candidate.name != candidates[0].name {
            notes.append("\(candidates[0].name) settings (tried first) did not open it; \(opened.candidate.name) did")
        }

        // 2. The checks, on the file itself or on a private copy.
        var connection = opened.connection
        var snapshot: String?
        defer {
            connection.close()
            if let snapshot { try? FileManager.default.removeItem(atPath: snapshot) }
        }
        if companions.walHasFrames || companions.journalIsHot {
            connection.close()
            do {
                let folder = try Self.makeSnapshot(of: target, companions: companions)
                snapshot = folder
                access = .snapshot
                guard DatabaseVerifier.Fingerprint(target) == before else {
                    return fail(.notVerifiable, "The file or its -wal/-journal changed while it was copied: a program is "
                        + "writing to it. Run verify again when no program has it open")
                }
                let copy = folder + "/" + (target as NSString).lastPathComponent
                connection = try Self.open(copy, key: key, candidate: opened.candidate, library: library, inPlace: false)
                let what = [companions.walHasFrames ? "the -wal's frames" : nil,
                            companions.journalIsHot ? "a hot -journal (an interrupted transaction)" : nil]
                    .compactMap { $0 }.joined(separator: " and ")
                notes.append("it has \(what): verified a private copy, in which SQLite "
                    + (companions.journalIsHot ? "rolled back the journal" : "recovered the WAL")
                    + " as the next program to open the file will; the file itself was only read")
                _ = try? connection.scalar("SELECT count(*) FROM sqlite_master")
                copyWork = companions.journalIsHot ? "after rolling back its journal" : nil
                if companions.walHasFrames {
                    if (try? connection.checkpoint("TRUNCATE")) == nil {
                        notes.append("the copy's WAL could not be checkpointed: pages still in it were not HMAC-checked")
                    } else {
                        copyWork = [copyWork, "after checkpointing its WAL"].compactMap { $0 }.joined(separator: " and ")
                    }
                }
            } catch {
                return fail(.notVerifiable, "Verifying a copy failed: \(error)")
            }
        } else {
            access = .inPlace
        }
        runChecks(connection)
        connection.close()
        if DatabaseVerifier.Fingerprint(target) != before {
            return fail(.notVerifiable, "The file or its -wal/-journal changed while it was verified: a program is "
                + "writing to it, so the result is not reliable. Run verify again when no program has it open")
        }
        var failures: [String] = []
        if cipherIntegrity.status == .fail {
            failures.append("cipher_integrity_check found \(Self.count(cipherIntegrity.problems.count, "problem"))")
        }
        if integrity.status == .fail {
            failures.append("integrity_check found \(Self.count(integrity.problems.count, "problem"))")
        }
        let unreadable = tables.filter { $0.error != nil }
        if !unreadable.isEmpty {
            failures.append("\(Self.count(unreadable.count, "table")) could not be read ("
                + unreadable.map(\.name).joined(separator: ", ") + ")")
        }
        if failures.isEmpty {
            status = .verified
        } else {
            fail(.damaged, "The key is right (\(opened.candidate.name) settings), but the file is damaged: "
                + failures.joined(separator: "; ") + ". Restore it from a backup; Database.export(to:key:) may "
                + "rescue the readable tables")
        }
    }

    // MARK: Checks

    private mutating func runChecks(_ connection: SQLiteConnection) {
        pageSize = try? connection.integer("PRAGMA page_size")
        pageCount = try? connection.integer("PRAGMA page_count")
        userVersion = try? connection.integer("PRAGMA user_version")
        let reporter = ProgressReporter(total: library.cipherVersionIsAtLeast(4, 2) ? 3 : 2, unit: .checks, progress)
        reporter?.start()
        defer { reporter?.finish() }
        var done: Int64 = 0

        if library.cipherVersionIsAtLeast(4, 2) {
            let (lines, stop) = Self.rows(connection, "PRAGMA cipher_integrity_check")
            let problems = lines + (stop.map { ["stopped: \($0)"] } ?? [])
            cipherIntegrity = problems.isEmpty
                ? .init(status: .pass, problems: [], reason: "every page's HMAC verified"
                    + (copyWork.map { " (in the copy, \($0))" } ?? ""))
                : .init(status: .fail, problems: problems, reason: nil)
        } else {
            // On 3.4.1 the pragma does not exist and returns no rows, which is also what a clean
            // file gives on 4.x: never read that as a pass.
            cipherIntegrity = .skipped("SQLCipher \(library.cipherVersion) has no cipher_integrity_check (it needs "
                + "SQLCipher 4.2.0 or later); the HMAC of every page read below was still checked")
        }
        if library.cipherVersionIsAtLeast(4, 2) {
            done += 1
            reporter?.report(done)
        }

        // One row may hold several lines (SQLite joins the problems of one b-tree with newlines).
        let (rows, stop) = Self.rows(connection, "PRAGMA integrity_check")
        let lines = rows.flatMap { $0.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }
            .filter { !$0.hasPrefix("*** in database ") }
        if lines == ["ok"] && stop == nil {
            integrity = .init(status: .pass, problems: [], reason: "ok")
        } else {
            integrity = .init(status: .fail, problems: lines + (stop.map { ["stopped: \($0)"] } ?? []), reason: nil)
        }
        done += 1
        reporter?.report(done)

        do {
            let objects = try connection.query("SELECT type, name FROM sqlite_master ORDER BY name")
            let pairs = objects.map { ($0.get(0, as: String.self) ?? "", $0.get(1, as: String.self) ?? "") }
            indexCount = pairs.filter { $0.0 == "index" }.count
            viewCount = pairs.filter { $0.0 == "view" }.count
            triggerCount = pairs.filter { $0.0 == "trigger" }.count
            for (type, name) in pairs where type == "table" && !name.lowercased().hasPrefix("sqlite_") {
                let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                do {
                    let rows = try connection.uncachedStatement("SELECT count(*) FROM \(quoted)")
                    defer { rows.reset() }
                    guard try rows.step(), let count = Int.fromDatabaseValue(rows.value(at: 0)) else {
                        tables.append(.init(name: name, rows: nil, error: "count(*) returned no row"))
                        continue
                    }
                    tables.append(.init(name: name, rows: count, error: nil))
                } catch SqlCipherError.sqlite(let code, _, let message, _) where message.hasPrefix("no such module") {
                    notes.append("table \(name) is a virtual table whose module this library lacks (\(message), SQLite "
                        + "error \(code)); its rows were not counted")
                    tables.append(.init(name: name, rows: nil, error: nil))
                } catch {
                    tables.append(.init(name: name, rows: nil, error: Self.sqliteText(error)))
                }
            }
        } catch {
            tables = []
            integrity = integrity.status == .fail ? integrity : .init(
                status: .fail, problems: ["the schema could not be read: \(Self.sqliteText(error))"], reason: nil)
        }
    }

    // MARK: A key no settings accepted

    /// Tells a wrong key from a damaged page 1, which SQLCipher reports the same way: on 4.2+,
    /// `cipher_integrity_check` authenticates every page on its own, so with the right key and
    /// settings the other pages verify, and with a wrong key none does.
    private mutating func diagnoseRejectedKey(key: DatabaseKey, candidates: [DatabaseVerifier.SettingsCandidate]) {
        keyAccepted = false
        let tried = candidates.map(\.name).joined(separator: ", ")
        let size = inspection.size ?? 0
        guard library.cipherVersionIsAtLeast(4, 2) else {
            var message = "The key did not open it with the settings tried (\(tried)): the key is wrong, the file was "
                + "made with other settings (give them with --cipher-page-size, --kdf-iter, --cipher-compatibility), or "
                + "its first page is damaged; SQLCipher \(library.cipherVersion) cannot tell these apart (it has no "
                + "cipher_integrity_check)"
            if library.cipherMajorVersion < 4 && size % 4096 == 0 {
                message += ". A file made by SQLCipher 4 with its defaults cannot be read by SQLCipher 3 at all: "
                    + "verify it with libsqlcipher.so.1 (--library)"
            }
            return fail(.keyRejected, message)
        }
        for candidate in candidates {
            guard let connection = try? Self.open(target, key: key, candidate: candidate, library: library, inPlace: true)
            else { continue }
            let (lines, _) = Self.rows(connection, "PRAGMA cipher_integrity_check")
            connection.close()
            let total = (size + candidate.pageSize - 1) / candidate.pageSize
            let failing = Set(lines.compactMap(Self.pageNumber))
            guard total > 1, !failing.isEmpty, failing.count < total else { continue }
            keyAccepted = true
            settings = candidate
            cipherIntegrity = .init(status: .fail, problems: lines, reason: nil)
            integrity = .skipped("page 1 cannot be decrypted, so SQLite cannot read the database")
            attempts.append(.init(settings: candidate.name, accepted: true,
                                  result: "cipher_integrity_check verified \(total - failing.count) of \(total) pages"))
            return fail(.damaged, "The key is right (\(candidate.name) settings: \(total - failing.count) of \(total) "
                + "pages pass their HMAC check), but page 1 is damaged, so SQLite cannot read the file. Restore it "
                + "from a backup")
        }
        return fail(.keyRejected, "The key did not open it with the settings tried (\(tried)), and "
            + "cipher_integrity_check verified no page with any of them: the key is wrong, or the file was made with "
            + "other settings (give them with --cipher-page-size, --kdf-iter, --cipher-compatibility)")
    }

    // MARK: Helpers

    /// Opens `path` with `key` and the candidate's settings. In place: read-only and immutable (no
    /// lock, no journal or WAL, nothing created). Otherwise (a private copy): read-write.
    static func open(_ path: String, key: DatabaseKey, candidate: DatabaseVerifier.SettingsCandidate,
                     library: SqlCipherLibrary, inPlace: Bool) throws -> SQLiteConnection {
        let readOnly: Int32 = 0x0000_0001
        let connection = inPlace
            ? try SQLiteConnection(path: immutableURI(path), flags: readOnly | SQLiteConnection.uri | SQLiteConnection.noMutex)
            : try SQLiteConnection(path: path, flags: SQLiteConnection.readWrite | SQLiteConnection.noMutex)
        do {
            let material = try key.material()
            let rc = material.withBytes { bytes in scb_key(connection.handle, bytes.baseAddress, Int32(bytes.count)) }
            guard rc == 0 else { throw connection.error(rc, sql: nil) }
            // The package's own settings pragmas, which the raw-SQL guard refuses from users.
            connection.beginPackageSQL()
            defer { connection.endPackageSQL() }
            if library.cipherVersionIsAtLeast(4, 5, 1) { try connection.execute("PRAGMA cipher_log = off") }
            for pragma in candidate.pragmas { try connection.execute(pragma) }
            return connection
        } catch {
            connection.close()
            throw error
        }
    }

    /// `file:` URI of `path` with `immutable=1` (https://sqlite.org/uri.html): an empty authority,
    /// then the absolute path with every byte outside `[A-Za-z0-9/._~-]` percent-encoded, so that
    /// `?`, `#` and `%` in a file name stay part of it.
    static func immutableURI(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let safe = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._~-".utf8)
        var encoded = ""
        for byte in absolute.utf8 {
            if safe.contains(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += String(format: "%%%02X", byte)
            }
        }
        return "file://" + encoded + "?immutable=1"
    }

    /// Copies the bytes of the file, its valid `-wal` and its `-journal` (not the `-shm`, which
    /// SQLite rebuilds from the WAL) into a new folder that only this user can enter, through
    /// ``SnapshotFiles``; returns the folder.
    static func makeSnapshot(of path: String, companions: DatabaseVerifier.Companions) throws -> String {
        let base = NSTemporaryDirectory()
        let needed = companions.sizes.reduce(0, +)
        var info = statvfs()
        if statvfs(base, &info) == 0 {
            let free = Int(info.f_bavail) * Int(info.f_frsize)
            if free < needed + 1 << 20 {
                throw SqlCipherError.cannotOpen(path: path, reason: "the temporary folder \(base) has \(free) bytes "
                    + "free, and a copy needs \(needed); set TMPDIR to a folder with more space")
            }
        }
        let directory = try SnapshotFiles.makePrivateDirectory(prefix: "sqlcipher-doctor-verify", for: path)
        do {
            try SnapshotFiles.copy(path, into: directory)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        return directory
    }

    /// Every row's first column as text, and the error that stopped the statement, if one did:
    /// `integrity_check` on a damaged file prints rows and then fails.
    static func rows(_ connection: SQLiteConnection, _ sql: String) -> (lines: [String], stop: String?) {
        var lines: [String] = []
        do {
            let statement = try connection.uncachedStatement(sql)
            defer { statement.reset() }
            while try statement.step() {
                lines.append(String.fromDatabaseValue(statement.value(at: 0)) ?? "\(statement.value(at: 0))")
            }
            return (lines, nil)
        } catch {
            return (lines, sqliteText(error))
        }
    }

    /// The page number in a `cipher_integrity_check` line ("HMAC verification failed for page 8",
    /// "page 8 has an invalid size of 2048 bytes ...").
    static func pageNumber(_ line: String) -> Int? {
        guard let range = line.range(of: "page ") else { return nil }
        let digits = line[range.upperBound...].prefix { $0.isNumber }
        return Int(digits)
    }

    static func sqliteText(_ error: any Error) -> String {
        if case let SqlCipherError.sqlite(code, _, message, _) = error { return "\(message) (SQLite error \(code))" }
        return "\(error)"
    }

    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }
}

extension DatabaseVerifier {
    /// The `-wal` and `-journal` beside a database, as far as they decide how it must be read.
    fileprivate struct Companions {
        /// A `-wal` whose valid part is longer than its 32-byte header holds frames that may not
        /// be in the main file (frames after the first whose salts do not match are never read).
        let walHasFrames: Bool
        /// A `-journal` SQLite would replay: present, not empty, first byte not zero (the rule of
        /// pager.c's hasHotJournal; `journal_mode = PERSIST` zeroes the header of an unused journal).
        let journalIsHot: Bool
        /// How many bytes a copy of the file, `-wal` and `-journal` takes.
        let sizes: [Int]

        /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` when the file, its `-wal` or its
        ///   `-journal` is not a regular file.
        init(_ path: String) throws {
            let sources = try SnapshotFiles.sources(of: path)
            walHasFrames = (sources["-wal"]?.copyLength ?? 0) > 32
            var hot = false
            if let journal = sources["-journal"], journal.size > 0,
               let (descriptor, _) = try SnapshotFiles.openRegular(journal.path, database: path) {
                var first: UInt8 = 0
                hot = pread(descriptor, &first, 1, 0) == 1 && first != 0
                close(descriptor)
            }
            journalIsHot = hot
            sizes = sources.values.map(\.copyLength)
        }
    }

    /// Identity, size and modification time of a file and its `-wal` and `-journal`: a change means
    /// another program wrote to the database while it was being verified. (The `-shm` is left out: a
    /// reader changes it too, and it holds no data.)
    fileprivate struct Fingerprint: Equatable {
        private let files: [[Int]]

        init(_ path: String) {
            files = ["", "-wal", "-journal"].map { suffix in
                var info = stat()
                guard stat(path + suffix, &info) == 0 else { return [] }
                #if canImport(Darwin)
                let modified = [Int(info.st_mtimespec.tv_sec), Int(info.st_mtimespec.tv_nsec)]
                #else
                let modified = [Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
                #endif
                return [Int(info.st_dev), Int(info.st_ino), Int(info.st_size)] + modified
            }
        }
    }
}
