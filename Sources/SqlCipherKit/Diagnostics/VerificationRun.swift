import Foundation

/// The state of one verification, filled in step by step.
struct VerificationRun {
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
    /// The FTS5 tables whose tokenizer chain is too deep to use (never read nor checked).
    var deepTables: [String] = []
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

    /// `salt`: the salt of a file with a plaintext header, given by the operator (`--salt`).
    mutating func verify(key: DatabaseKey, salt: Data?, candidates: [DatabaseVerifier.SettingsCandidate]) {
        var key = key
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
            guard let salt, let candidate = candidates.first, (candidate.settings.plaintextHeaderSize ?? 0) > 0 else {
                // The form of the key given: a passphrase opens such a file with its salt too.
                let form = key.kind == .passphrase ? ".passphrase(passphrase, salt: salt)" : ".rawKey(key, salt: salt)"
                return fail(.notVerifiable, "It is a SQLCipher database with a plaintext header, whose salt is not "
                    + "stored in the file, so the key cannot be checked without it. Give the salt it was created with: "
                    + "sqlcipher-doctor verify --salt HEX (32 hex digits) [--plaintext-header-size N], or open it with "
                    + "Database(path:key:cipher:) with key: \(form) and CipherSettings(plaintextHeaderSize:), then run "
                    + "Database.verifyIntegrity()")
            }
            // The one form of a key with a salt: a raw key and its salt, a passphrase derived here
            // with the settings' digest and iterations, as every entry point of the package does.
            do {
                key = try key.keepingSalt(salt, of: candidate.settings)
                    .resolved(for: candidate.settings, library: library, readOnly: true)
            } catch {
                return fail(.notVerifiable, "The key cannot be used with the salt given: \(error)")
            }
        case .notADatabase:
            return fail(.notVerifiable, "It is not a database: " + inspection.detail)
        case .encrypted:
            if salt != nil {
                return fail(.notVerifiable, "It has no plaintext header, so it stores its own salt and --salt does not "
                    + "apply to it: verify it without --salt and --plaintext-header-size")
            }
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
                connection = try DatabaseVerifier.open(target, key: key, candidate: candidate, library: library, inPlace: true)
            } catch {
                return fail(.notVerifiable, "SQLCipher could not open it: \(error)")
            }
            do {
                _ = try connection.scalar("SELECT count(*) FROM sqlite_master")
                // The schema also reads when a file with page HMACs is read without them (KeyProof).
                guard candidate.settings.usesHMAC != false || KeyProof.firstBlockDecrypts(connection) else {
                    connection.close()
                    attempts.append(.init(settings: candidate.name, accepted: false,
                                          result: "page 1 does not decrypt without page HMACs (its freelist is longer than "
                                            + "the file): the file was most likely written with them; verify it without --no-hmac"))
                    continue
                }
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
                    // Or written by a newer SQLite than the loaded one: an intact file, which
                    // "damaged, restore it from a backup" sent the user away from.
                    if let schema = DatabaseOpener.unreadableSchemaReason(code: code, message: message) {
                        connection.close()
                        keyAccepted = true
                        settings = candidate
                        return fail(.notVerifiable, "The key is right (\(candidate.name) settings), but " + schema)
                    }
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
                let folder = try DatabaseVerifier.makeSnapshot(of: target, companions: companions)
                snapshot = folder
                access = .snapshot
                guard DatabaseVerifier.Fingerprint(target) == before else {
                    return fail(.notVerifiable, "The file or its -wal/-journal changed while it was copied: a program is "
                        + "writing to it. Run verify again when no program has it open")
                }
                let copy = folder + "/" + DatabasePath.lastComponent(of: target)
                connection = try DatabaseVerifier.open(copy, key: key, candidate: opened.candidate, library: library, inPlace: false)
                let what = [companions.walHasFrames ? "the -wal's frames" : nil,
                            companions.journalIsHot ? "a hot -journal (an interrupted transaction)" : nil]
                    .compactMap { $0 }.joined(separator: " and ")
                notes.append("it has \(what): verified a private copy, in which SQLite "
                    + (companions.journalIsHot ? "rolled back the journal" : "recovered the WAL")
                    + " as the next program to open the file will; the file itself was only read")
                do {
                    _ = try connection.scalar("SELECT count(*) FROM sqlite_master")
                } catch SqlCipherError.sqlite(let code, _, _, _) where code & 0xFF == 26 && companions.walHasFrames {
                    // The key opened page 1 of the file itself (in place, above), so it is the
                    // -wal's newest page 1 that does not decrypt: "damaged, restore a backup" sent
                    // the user after a database file that is fine.
                    let name = DatabasePath.lastComponent(of: path)
                    return fail(.damaged, "The key is right (\(opened.candidate.name) settings) and opens the database file, "
                        + "but not the newest pages in its -wal: "
                        + SQLiteMessageAdvice.walPagesNotDecrypting(wal: name + "-wal", shm: name + "-shm"))
                }
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
        // SQLCipher 4.7+ keeps a connection in error once a page failed to decrypt on it, so the
        // checks after a failed one run on a fresh connection to the same file (or copy).
        let checked = access == .snapshot ? (snapshot.map { $0 + "/" + DatabasePath.lastComponent(of: target) } ?? target) : target
        let candidate = opened.candidate, inPlace = access == .inPlace, library = self.library
        runChecks(&connection) {
            try DatabaseVerifier.open(checked, key: key, candidate: candidate, library: library, inPlace: inPlace)
        }
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
        if failures.isEmpty, !deepTables.isEmpty {
            fail(.notVerifiable, "The key is right (\(opened.candidate.name) settings), but integrity_check was not run: "
                + "the FTS5 table" + (deepTables.count == 1 ? " " : "s ") + deepTables.joined(separator: ", ")
                + " nest" + (deepTables.count == 1 ? "s" : "") + " tokenizers deeply enough to exhaust the stack when "
                + "opened, and integrity_check opens every FTS5 table. SqlCipherKit does not open this file; remove the "
                + "table with the program that made it")
        } else if failures.isEmpty {
            status = .verified
        } else {
            fail(.damaged, "The key is right (\(opened.candidate.name) settings), but the file is damaged: "
                + failures.joined(separator: "; ") + ". Restore it from a backup; Database.export(to:key:) may "
                + "rescue the readable tables")
        }
    }

    // MARK: Checks

    /// Runs the checks on `connection`. After a check that failed on SQLCipher 4.7 or later, whose
    /// codec then fails every later read of that connection (`SQLITE_NOMEM`), the next check runs
    /// on a connection from `reopen`, so that one damaged page does not hide what else is readable.
    private mutating func runChecks(_ connection: inout SQLiteConnection, reopen: () throws -> SQLiteConnection) {
        let errorSticks = library.cipherVersionIsAtLeast(4, 7)
        func freshConnection() {
            guard errorSticks, let fresh = try? reopen() else { return }
            connection.close()
            connection = fresh
        }
        pageSize = try? connection.integer("PRAGMA page_size")
        pageCount = try? connection.integer("PRAGMA page_count")
        userVersion = try? connection.integer("PRAGMA user_version")
        // A file written with `cipher_use_hmac = OFF` has no HMAC to check: SQLCipher answers the
        // pragma with one line, "HMAC is not enabled", which is no damage.
        let hasHMAC = settings?.settings.usesHMAC != false
        let checksHMAC = library.cipherVersionIsAtLeast(4, 2) && hasHMAC
        let reporter = ProgressReporter(total: checksHMAC ? 3 : 2, unit: .checks, progress)
        reporter?.start()
        defer { reporter?.finish() }
        var done: Int64 = 0

        if !hasHMAC {
            cipherIntegrity = .skipped("the file's pages carry no HMAC (it was written with cipher_use_hmac = OFF), so a "
                + "changed byte cannot be told from data; Database.export(to:key:cipher:) writes a copy whose pages have one")
        } else if library.cipherVersionIsAtLeast(4, 2) {
            let (lines, stop) = Self.rows(connection, "PRAGMA cipher_integrity_check")
            let problems = lines + (stop.map { ["stopped: \($0)"] } ?? [])
            cipherIntegrity = problems.isEmpty
                ? .init(status: .pass, problems: [], reason: "every page's HMAC verified"
                    + (copyWork.map { " (in the copy, \($0))" } ?? ""))
                : .init(status: .fail, problems: problems, reason: nil)
            if !problems.isEmpty { freshConnection() }
        } else {
            // On 3.4.1 the pragma does not exist and returns no rows, which is also what a clean
            // file gives on 4.x: never read that as a pass.
            cipherIntegrity = .skipped("SQLCipher \(library.cipherVersion) has no cipher_integrity_check (it needs "
                + "SQLCipher 4.2.0 or later); the HMAC of every page read below was still checked")
        }
        if checksHMAC {
            done += 1
            reporter?.report(done)
        }

        // Never named in a statement, nor checked: FTS5 would build their tokenizer chain (also for
        // integrity_check, which asks every FTS5 table to check itself), deep enough to end the
        // process.
        deepTables = connection.tablesWithDeepTokenizerChains().sorted()
        let deep = Set(deepTables)
        if !deep.isEmpty {
            integrity = .skipped("not run: integrity_check would open the FTS5 table"
                + (deep.count == 1 ? " " : "s ") + deepTables.joined(separator: ", ")
                + ", whose tokenizer chain is deep enough to exhaust the stack")
        } else {
            // One row may hold several lines (SQLite joins the problems of one b-tree with newlines).
            let (rows, stop) = Self.rows(connection, "PRAGMA integrity_check")
            let lines = rows.flatMap { $0.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }
                .filter { !$0.hasPrefix("*** in database ") }
            if lines == ["ok"] && stop == nil {
                integrity = .init(status: .pass, problems: [], reason: "ok")
            } else {
                integrity = .init(status: .fail, problems: lines + (stop.map { ["stopped: \($0)"] } ?? []), reason: nil)
                freshConnection()
            }
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
                if deep.contains(name) {
                    notes.append("table \(name) is an FTS5 table whose tokenize option nests more than "
                        + "\(SQLiteConnection.maximumTokenizerWords) tokenizers, which can exhaust the stack when it is "
                        + "used; its rows were not counted")
                    tables.append(.init(name: name, rows: nil, error: nil))
                    continue
                }
                let quoted = SQLRenderer.quotedName(name)
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
                    freshConnection()
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
        // The page size the file and its -wal give away, against the first settings tried (the
        // ones given, or the library's defaults; SQLCipher 3's, tried next on SQLCipher 4, have
        // 1024-byte pages and SQLCipher 3's KDF, so a file made with 1024-byte pages and SQLCipher
        // 4's KDF fails both). The file itself: a snapshot holds its -wal only when it has frames.
        let likely = candidates.first.flatMap { PageSizeEvidence.likelyPageSizes(of: path, tried: $0.pageSize) }
        let pageSizeAdvice = likely.map {
            "\($0.evidence). Verify it with --cipher-page-size "
                + $0.pageSizes.map { "\($0)" }.joined(separator: " or ")
                + " (and the file's other settings); if that fails too, "
        }
        let wrongKey = inspection.kind == .plaintextHeader
            ? "the key or the salt (--salt) is wrong, the header's size is another (--plaintext-header-size)"
            : "the key is wrong"
        // --no-hmac: the pages carry no HMAC, so cipher_integrity_check has nothing to verify (it
        // answers "HMAC is not enabled") and cannot tell a wrong key from a damaged page 1.
        guard candidates.contains(where: { $0.settings.usesHMAC != false }) else {
            return fail(.keyRejected, "The key did not open it with the settings tried (\(tried)): " + (pageSizeAdvice ?? "")
                + "\(wrongKey), the file was made with other settings (give them with \(settingOptions)), or its first "
                + "page is damaged; without page HMACs (--no-hmac) nothing tells these apart")
        }
        guard library.cipherVersionIsAtLeast(4, 2) else {
            var message = "The key did not open it with the settings tried (\(tried)): " + (pageSizeAdvice ?? "")
                + "the key is wrong, the file was made with other settings (give them with \(settingOptions)), or "
                + "its first page is damaged; SQLCipher \(library.cipherVersion) cannot tell these apart (it has no "
                + "cipher_integrity_check)"
            if library.cipherMajorVersion < 4 && size % 4096 == 0 {
                message += ". A file made by SQLCipher 4 with its defaults cannot be read by SQLCipher 3 at all: "
                    + "verify it with libsqlcipher.so.1 (--library)"
            }
            return fail(.keyRejected, message)
        }
        for candidate in candidates {
            guard let connection = try? DatabaseVerifier.open(target, key: key, candidate: candidate, library: library, inPlace: true)
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
            let passing = "The key is right (\(candidate.name) settings: \(total - failing.count) of \(total) pages pass "
                + "their HMAC check), but page 1 "
            // Only page 1 holds the plaintext header: a header size other than the file's leaves
            // every other page decrypting and page 1 not, exactly as damage to it would.
            if inspection.kind == .plaintextHeader, failing == [1] {
                return fail(.damaged, passing + "does not decrypt: most likely its plaintext header has another size "
                    + "than the \(candidate.settings.plaintextHeaderSize ?? 0) bytes tried (give it with "
                    + "--plaintext-header-size; SQLCipher's shared-container setup uses 32), else page 1 is damaged "
                    + "(restore the file from a backup)")
            }
            return fail(.damaged, passing + "is damaged, so SQLite cannot read the file. Restore it from a backup")
        }
        let wrong = wrongKey
        if let pageSizeAdvice {
            return fail(.keyRejected, "The key did not open it with the settings tried (\(tried)), and "
                + "cipher_integrity_check verified no page with any of them: " + pageSizeAdvice + "\(wrong), or other "
                + "settings differ as well (give them with \(settingOptions))")
        }
        return fail(.keyRejected, "The key did not open it with the settings tried (\(tried)), and "
            + "cipher_integrity_check verified no page with any of them: \(wrong), or the file was made with "
            + "other settings (give them with \(settingOptions))")
    }

    /// The options that give a file's cipher settings, for the messages of a rejected key: the
    /// digests only where the library can choose them (SQLCipher 4).
    private var settingOptions: String {
        library.cipherMajorVersion >= 4
            ? "--cipher-page-size, --kdf-iter, --kdf-algorithm, --hmac-algorithm, --no-hmac, --cipher-compatibility"
            : "--cipher-page-size, --kdf-iter, --no-hmac, --cipher-compatibility"
    }

    // MARK: Helpers

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
