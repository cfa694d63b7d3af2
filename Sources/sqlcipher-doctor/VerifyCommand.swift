import Foundation
import SqlCipherKit

/// `sqlcipher-doctor verify KEY-SOURCE FILE...`: proves that the key opens each file and that the
/// file is intact, without changing a byte of it (`DatabaseVerifier`, docs/doctor.md).
enum VerifyCommand {
    struct Options: Equatable {
        var files: [String]
        var key: KeySource
        var json: Bool
        var library: String?
        var settings: CipherSettings?
        /// The salt of a file with a plaintext header (`--salt`), which the file does not store.
        var salt: Data?
    }

    /// The options of the command line. Throws for missing files, no key source or two, and
    /// settings that are not numbers.
    static func options(_ arguments: CommandLineArguments) throws(UsageError) -> Options {
        guard !arguments.files.isEmpty else { throw UsageError(message: "verify needs at least one FILE", command: .verify) }
        let key = try KeySource.from(arguments)
        func number(_ option: String) throws(UsageError) -> Int? {
            guard let text = arguments.values[option] else { return nil }
            guard let value = Int(text) else {
                throw UsageError(message: "\(option) needs a whole number, not \(ArgumentParser.shownValue(text))", command: .verify)
            }
            return value
        }
        let compatibility = try number("--cipher-compatibility")
        let pageSize = try number("--cipher-page-size")
        let iterations = try number("--kdf-iter")
        func digest(_ option: String) throws(UsageError) -> CipherSettings.Digest? {
            guard let text = arguments.values[option] else { return nil }
            // SQLCipher's own spellings (PBKDF2_HMAC_SHA256, HMAC_SHA256) name the same digests.
            let name = text.lowercased().replacingOccurrences(of: "pbkdf2_", with: "").replacingOccurrences(of: "hmac_", with: "")
            switch name {
            case "sha1": return .sha1
            case "sha256": return .sha256
            case "sha512": return .sha512
            default:
                throw UsageError(message: "\(option) needs sha1, sha256 or sha512, not \(ArgumentParser.shownValue(text))",
                                 command: .verify)
            }
        }
        let kdfAlgorithm = try digest("--kdf-algorithm")
        let hmacAlgorithm = try digest("--hmac-algorithm")
        // The salt is not a secret (a file without a plaintext header stores it in its first 16
        // bytes), so unlike a key it may be given on the command line.
        let salt = try arguments.values["--salt"].map { text throws(UsageError) in
            try KeySource.hexBytes(Array(text.utf8), count: 16, option: "--salt",
                                   what: "a salt is 32 hex digits (16 bytes, as PRAGMA cipher_salt prints them)")
        }
        var headerSize = try number("--plaintext-header-size")
        if headerSize != nil && salt == nil {
            throw UsageError(message: "--plaintext-header-size needs --salt: a file with a plaintext header does not "
                + "store its salt, so its key cannot be checked without the salt it was created with", command: .verify)
        }
        if let size = headerSize, size <= 0 {
            throw UsageError(message: "--plaintext-header-size needs the size of the file's plaintext header in bytes "
                + "(32 or more, a multiple of 16), not \(size): a file without one stores its salt, and is verified "
                + "without --salt", command: .verify)
        }
        // SQLCipher's shared-container setup (and its documentation's example) uses 32 bytes.
        if salt != nil, headerSize == nil { headerSize = 32 }
        let usesHMAC: Bool? = arguments.flag("--no-hmac") ? false : nil
        let settings = compatibility == nil && pageSize == nil && iterations == nil && kdfAlgorithm == nil
            && hmacAlgorithm == nil && headerSize == nil && usesHMAC == nil
            ? nil
            : CipherSettings(compatibility: compatibility, pageSize: pageSize, kdfIterations: iterations,
                             plaintextHeaderSize: headerSize, kdfAlgorithm: kdfAlgorithm, hmacAlgorithm: hmacAlgorithm,
                             usesHMAC: usesHMAC)
        return Options(files: arguments.files, key: key, json: arguments.flag("--json"),
                       library: arguments.values["--library"], settings: settings, salt: salt)
    }

    /// Reads the key, loads the library and verifies every file. Returns the output and the exit
    /// status: 0 when every file verified, 1 otherwise (or when no library could be loaded).
    static func run(_ options: Options, warn: (String) -> Void) throws(UsageError) -> (output: String, status: Int32) {
        let key = try options.key.read(warn: warn)
        let library: SqlCipherLibrary
        do {
            library = try options.library.map { try SqlCipherLibrary.load(from: $0) } ?? SqlCipherLibrary.shared
        } catch {
            let text: String
            var kind = "noLibrary"
            if let error = error as? SqlCipherError {
                kind = DoctorReport.kind(of: error)
                text = options.library != nil
                    ? DoctorReport.libraryErrorText(error, source: .option, requested: options.library)
                    : error.description
            } else {
                text = "\(error)"
            }
            let report = JSON(ok: false, library: nil, key: keyJSON(options.key), files: [], error: text, errorKind: kind)
            return (options.json ? JSONOutput.text(report) : "sqlcipher-doctor verify: no SQLCipher library: \(text)", 1)
        }
        let candidates: [DatabaseVerifier.SettingsCandidate]
        do {
            candidates = try DatabaseVerifier.candidates(for: library, given: options.settings)
        } catch {
            throw UsageError(message: "the settings given cannot be used: \(error)", command: .verify)
        }
        // A progress bar only for a person watching: never in --json, never into a file or pipe.
        let showBar = !options.json && isatty(STDERR_FILENO) == 1
        let results = options.files.map { file -> DatabaseVerification in
            var progress: (@Sendable (DatabaseProgress) -> Void)?
            if showBar { progress = { Self.drawBar(file, $0) } }
            return DatabaseVerifier.verify(file, key: key, salt: options.salt, candidates: candidates, library: library,
                                           progress: progress)
        }
        let ok = results.allSatisfy(\.ok)
        let output = options.json
            ? JSONOutput.text(JSON(ok: ok, library: libraryJSON(library), key: keyJSON(options.key),
                                   files: results.map(fileJSON), error: nil, errorKind: nil))
            : text(results, library: library, key: options.key)
        return (output, ok ? 0 : 1)
    }

    /// Draws `file`'s progress on one line of standard error, and clears it when the file is done.
    static func drawBar(_ file: String, _ progress: DatabaseProgress) {
        let width = 20
        let filled = Int(progress.fraction * Double(width))
        let line = progress.completed == progress.total
            ? "\r\u{1B}[K"
            : "\r\u{1B}[K\(TerminalText.line((file as NSString).lastPathComponent)) [" + String(repeating: "#", count: filled)
                + String(repeating: "-", count: width - filled) + "] \(progress.completed)/\(progress.total) checks"
        FileHandle.standardError.write(Data(line.utf8))
    }

    // MARK: JSON (docs/doctor.md)

    struct JSON: Encodable {
        var ok: Bool
        @Nullable var library: Library?
        var key: Key
        var files: [File]
        /// Present only when no library could be loaded.
        var error: String?
        /// The ``SqlCipherError`` case of that failure (as in the report's `error_kind`).
        var errorKind: String?
    }

    struct Library: Encodable {
        var path: String
        var cipherVersion: String
        var sqliteVersion: String
    }

    struct Key: Encodable {
        var kind: String
        var source: String
        @Nullable var name: String?
    }

    struct File: Encodable {
        var path: String
        var ok: Bool
        var status: String
        var kind: String
        @Nullable var keyAccepted: Bool?
        @Nullable var settings: Settings?
        var attempts: [Attempt]
        @Nullable var access: String?
        @Nullable var pageSize: Int?
        @Nullable var pageCount: Int?
        @Nullable var userVersion: Int?
        var cipherIntegrityCheck: Check
        var integrityCheck: Check
        var tables: [Table]
        @Nullable var indexCount: Int?
        @Nullable var viewCount: Int?
        @Nullable var triggerCount: Int?
        var notes: [String]
        @Nullable var error: String?
    }

    struct Settings: Encodable {
        var name: String
        var summary: String
        var swift: String
        var readableBy: String
        var pragmas: [String]
    }

    struct Attempt: Encodable {
        var settings: String
        var accepted: Bool
        var result: String
    }

    struct Check: Encodable {
        var status: String
        var problems: [String]
        @Nullable var reason: String?
    }

    struct Table: Encodable {
        var name: String
        @Nullable var rows: Int?
        @Nullable var error: String?
    }

    static func libraryJSON(_ library: SqlCipherLibrary) -> Library {
        Library(path: library.path, cipherVersion: library.cipherVersion, sqliteVersion: library.sqliteVersion)
    }

    static func keyJSON(_ source: KeySource) -> Key {
        let name: String?
        switch source.origin {
        case let .environment(variable): name = variable
        case let .file(path): name = path
        case .standardInput: name = nil
        }
        return Key(kind: source.raw ? "raw" : "passphrase", source: source.option, name: name)
    }

    static func fileJSON(_ result: DatabaseVerification) -> File {
        func check(_ check: DatabaseVerification.Check) -> Check {
            Check(status: check.status.rawValue, problems: check.problems, reason: check.reason)
        }
        return File(
            path: result.path, ok: result.ok, status: result.status.rawValue, kind: result.inspection.kind.rawValue,
            keyAccepted: result.keyAccepted,
            settings: result.settings.map {
                Settings(name: $0.name, summary: $0.summary, swift: $0.swift, readableBy: $0.readableBy, pragmas: $0.pragmas)
            },
            attempts: result.attempts.map { Attempt(settings: $0.settings, accepted: $0.accepted, result: $0.result) },
            access: result.access?.rawValue, pageSize: result.pageSize, pageCount: result.pageCount,
            userVersion: result.userVersion, cipherIntegrityCheck: check(result.cipherIntegrity),
            integrityCheck: check(result.integrity),
            tables: result.tables.map { Table(name: $0.name, rows: $0.rows, error: $0.error) },
            indexCount: result.indexCount, viewCount: result.viewCount, triggerCount: result.triggerCount,
            notes: result.notes, error: result.error)
    }

    // MARK: Text

    static func text(_ results: [DatabaseVerification], library: SqlCipherLibrary, key: KeySource) -> String {
        var lines = ["sqlcipher-doctor verify: SQLCipher \(library.cipherVersion) (\(library.path)); key: \(key.description)", ""]
        for result in results {
            lines += fileText(result) + [""]
        }
        let failed = results.filter { !$0.ok }.count
        if failed == 0 {
            lines.append("Result: OK. \(plural(results.count, "file")) verified.")
        } else {
            lines.append("Result: FAILED. \(failed) of \(plural(results.count, "file")) did not verify.")
        }
        return TerminalText.lines(lines)
    }

    private static func field(_ name: String, _ value: String) -> String {
        "  " + name.padding(toLength: 24, withPad: " ", startingAt: 0) + value
    }

    static func fileText(_ result: DatabaseVerification) -> [String] {
        var lines = ["\(result.path): \(result.status.rawValue.uppercased())"]
        if let accepted = result.keyAccepted {
            lines.append(field("key", accepted ? "accepted" : "not accepted"))
        }
        let tried = result.attempts.map { "\($0.settings): \($0.result)" }
        if !tried.isEmpty { lines.append(field("tried", tried.joined(separator: "; "))) }
        if let settings = result.settings {
            lines.append(field("settings", settings.summary))
            lines.append(field("readable by", settings.readableBy))
            lines.append(field("in SqlCipherKit", settings.swift))
        }
        switch result.access {
        case .inPlace?: lines.append(field("read", "in place, read-only and immutable (no lock, nothing written or created)"))
        case .snapshot?: lines.append(field("read", "a private copy (see the note)"))
        case nil: break
        }
        if let pageCount = result.pageCount {
            lines.append(field("pages", plural(pageCount, "page") + (result.pageSize.map { " of \($0) bytes" } ?? "")))
        }
        if let userVersion = result.userVersion { lines.append(field("user_version", String(userVersion))) }
        if result.keyAccepted == true || result.cipherIntegrity.status != .skipped {
            lines += checkText("cipher_integrity_check", result.cipherIntegrity)
            lines += checkText("integrity_check", result.integrity)
        }
        if let indexCount = result.indexCount {
            let counts = [plural(result.tables.count, "table"), plural(indexCount, "index"),
                          plural(result.viewCount ?? 0, "view"), plural(result.triggerCount ?? 0, "trigger")]
            lines.append(field("schema", counts.joined(separator: ", ")))
            for table in result.tables {
                let rows = table.rows.map { plural($0, "row") } ?? (table.error.map { "unreadable: \($0)" } ?? "not counted")
                lines.append("    " + table.name.padding(toLength: 22, withPad: " ", startingAt: 0) + rows)
            }
        }
        for note in result.notes { lines.append("  note: \(note)") }
        if let error = result.error { lines.append("  \(error)") }
        return lines
    }

    private static func checkText(_ name: String, _ check: DatabaseVerification.Check) -> [String] {
        var lines = [field(name, check.status.rawValue + (check.reason.map { ": \($0)" } ?? ""))]
        let shown = check.problems.prefix(10)
        lines += shown.map { "    \($0)" }
        if check.problems.count > shown.count {
            lines.append("    ... and \(check.problems.count - shown.count) more (--json lists them all)")
        }
        return lines
    }

    /// "1 row", "20 rows", "1 index", "2 indexes".
    static func plural(_ count: Int, _ noun: String) -> String {
        let plural = noun.hasSuffix("x") ? noun + "es" : noun + "s"
        return "\(count) \(count == 1 ? noun : plural)"
    }
}
