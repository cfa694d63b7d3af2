import CSqlCipherBridge
import Synchronization

/// What the loaded SQLCipher library can do, probed on the library itself rather than assumed from
/// its version number: Debian's SQLCipher 3.4.1 (SQLite 3.15.2) lacks all of these, and builds of
/// the same version can differ in their compile-time options (JSON, FTS5).
///
/// ```swift
/// let library = try SqlCipherLibrary.shared
/// if !library.capabilities.features.contains(.returning) {
///     // fall back to lastInsertRowID
/// }
/// try library.require(minimumCipherVersion: "4.0", .upsert, .json)   // typed error if older
/// ```
///
/// Each feature is probed once per process, on first use, by compiling one statement of it on a
/// private in-memory database (and, for FTS5, creating a table there; for the `cipher_*` pragmas,
/// reading them on a keyed one): nothing touches a file.
public struct LibraryCapabilities: Sendable, Equatable {
    /// A SQL feature that not every SQLite has.
    public enum Feature: String, Sendable, CaseIterable, Comparable {
        /// `INSERT … ON CONFLICT … DO UPDATE` (SQLite 3.24, https://sqlite.org/lang_upsert.html).
        case upsert
        /// `INSERT/UPDATE/DELETE … RETURNING` (SQLite 3.35, https://sqlite.org/lang_returning.html).
        case returning
        /// `ALTER TABLE … DROP COLUMN` (SQLite 3.35, https://sqlite.org/lang_altertable.html).
        case dropColumn
        /// `ALTER TABLE … RENAME COLUMN` (SQLite 3.25).
        case renameColumn
        /// Window functions such as `row_number() OVER (…)` (SQLite 3.25, https://sqlite.org/windowfunctions.html).
        case windowFunctions
        /// The JSON functions such as `json_extract` and the table-valued `json_each`
        /// (https://sqlite.org/json1.html).
        case json
        /// The JSON operators `->` and `->>` (SQLite 3.38, https://sqlite.org/json1.html#jptr).
        case jsonOperators
        /// The FTS5 full-text search module (https://sqlite.org/fts5.html).
        case fts5
        /// `PRAGMA cipher_compatibility` (SQLCipher 4.0.1): another major version's file format on
        /// one connection, which ``CipherSettings/sqlcipher3`` and ``CipherSettings/sqlcipher4`` set.
        case cipherCompatibility
        /// `PRAGMA cipher_plaintext_header_size` (SQLCipher 4.0): files whose first bytes stay in the
        /// clear (``CipherSettings/plaintextHeaderSize``).
        case cipherPlaintextHeader
        /// `PRAGMA cipher_settings` (SQLCipher 4.1): the open database's settings as pragmas.
        case cipherSettings

        /// Orders features by their declaration, for stable reports.
        public static func < (lhs: Feature, rhs: Feature) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }

        /// A statement that compiles (or, for FTS5, runs) only where the feature exists, on a
        /// database that has `t(a PRIMARY KEY, b)`.
        var probe: (sql: String, run: Bool) {
            switch self {
            case .upsert: return ("INSERT INTO t(a) VALUES (1) ON CONFLICT(a) DO UPDATE SET b = excluded.b", false)
            case .returning: return ("INSERT INTO t(a) VALUES (1) RETURNING a", false)
            case .dropColumn: return ("ALTER TABLE t DROP COLUMN b", false)
            case .renameColumn: return ("ALTER TABLE t RENAME COLUMN b TO c", false)
            case .windowFunctions: return ("SELECT row_number() OVER (ORDER BY a) FROM t", false)
            case .json: return ("SELECT json_extract('{\"k\":1}', '$.k')", false)
            case .jsonOperators: return ("SELECT '{\"k\":1}' ->> '$.k'", false)
            case .fts5: return ("CREATE VIRTUAL TABLE f USING fts5(x)", true)
            // Asked on a keyed database (``cipherProbe``): a library without the pragma ignores it.
            case .cipherCompatibility: return ("PRAGMA cipher_hmac_algorithm", true)
            case .cipherPlaintextHeader: return ("PRAGMA cipher_plaintext_header_size", true)
            case .cipherSettings: return ("PRAGMA cipher_settings", true)
            }
        }

        /// What a library needs to have the feature, for the message of a refusal.
        var requirement: String {
            switch self {
            case .upsert: return "SQLite 3.24 or later (SQLCipher 4)"
            case .returning, .dropColumn: return "SQLite 3.35 or later (SQLCipher 4)"
            case .renameColumn, .windowFunctions: return "SQLite 3.25 or later (SQLCipher 4)"
            case .json: return "an SQLite with the JSON functions (built in since SQLite 3.38, as in SQLCipher 4)"
            case .jsonOperators: return "SQLite 3.38 or later, whose JSON has the -> and ->> operators (SQLCipher 4)"
            case .fts5: return "an SQLite built with the FTS5 module, as in SQLCipher 4"
            case .cipherCompatibility: return "SQLCipher 4.0.1 or later"
            case .cipherPlaintextHeader: return "SQLCipher 4.0 or later"
            case .cipherSettings: return "SQLCipher 4.1 or later"
            }
        }

        /// Whether the feature is one of SQLCipher's pragmas, probed on a keyed database by the row
        /// it answers (an unknown pragma answers nothing, without an error).
        var isCipherPragma: Bool {
            self == .cipherCompatibility || self == .cipherPlaintextHeader || self == .cipherSettings
        }
    }

    /// The features the library has.
    public let features: Set<Feature>

    /// The features the library lacks, in declaration order.
    public var missing: [Feature] { Feature.allCases.filter { !features.contains($0) } }

    /// Probes `Feature.allCases` on a private in-memory database of the loaded library.
    static func probe() -> LibraryCapabilities {
        var db: OpaquePointer?
        // SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY: nothing on disk.
        guard scb_open_v2(":memory:", &db, 0x02 | 0x04 | 0x80, nil) == 0, let db else {
            if let db { scb_close_v2(db) }
            return LibraryCapabilities(features: [])
        }
        defer { scb_close_v2(db) }
        guard run(db, "CREATE TABLE t(a PRIMARY KEY, b)") else { return LibraryCapabilities(features: []) }
        var found: Set<Feature> = []
        for feature in Feature.allCases where !feature.isCipherPragma {
            let probe = feature.probe
            if probe.run ? run(db, probe.sql) : compiles(db, probe.sql) { found.insert(feature) }
        }
        return LibraryCapabilities(features: found.union(cipherProbe()))
    }

    /// The `cipher_*` features, asked on a private keyed in-memory database. `cipher_compatibility`
    /// counts only when setting it to 3 really switches the connection to SQLCipher 3's HMAC.
    private static func cipherProbe() -> Set<Feature> {
        var db: OpaquePointer?
        guard scb_open_v2(":memory:", &db, 0x02 | 0x04 | 0x80, nil) == 0, let db else {
            if let db { scb_close_v2(db) }
            return []
        }
        defer { scb_close_v2(db) }
        let key = Array("sqlcipherkit-capabilities-probe".utf8)
        guard scb_key(db, key, Int32(key.count)) == 0 else { return [] }
        var found: Set<Feature> = []
        if firstText(db, Feature.cipherPlaintextHeader.probe.sql) != nil { found.insert(.cipherPlaintextHeader) }
        if firstText(db, Feature.cipherSettings.probe.sql) != nil { found.insert(.cipherSettings) }
        if run(db, "PRAGMA cipher_compatibility = 3"),
           firstText(db, Feature.cipherCompatibility.probe.sql)?.uppercased() == "HMAC_SHA1" {
            found.insert(.cipherCompatibility)
        }
        return found
    }

    /// The first column of the first row of `sql`, or nil without a row.
    private static func firstText(_ db: OpaquePointer, _ sql: String) -> String? {
        var statement: OpaquePointer?
        guard scb_prepare(db, sql, -1, 0, &statement, nil) == 0, let statement else { return nil }
        defer { scb_finalize(statement) }
        guard scb_step(statement) == 100 else { return nil }
        return scb_column_text(statement, 0).map { String(cString: $0) } ?? ""
    }

    private static func compiles(_ db: OpaquePointer, _ sql: String) -> Bool {
        var statement: OpaquePointer?
        let rc = scb_prepare(db, sql, -1, 0, &statement, nil)
        if let statement { scb_finalize(statement) }
        return rc == 0 && statement != nil
    }

    private static func run(_ db: OpaquePointer, _ sql: String) -> Bool {
        var statement: OpaquePointer?
        guard scb_prepare(db, sql, -1, 0, &statement, nil) == 0, let statement else { return false }
        defer { scb_finalize(statement) }
        var rc = scb_step(statement)
        while rc == 100 { rc = scb_step(statement) }
        return rc == 101
    }
}

extension SqlCipherLibrary {
    private static let probedCapabilities = Mutex<LibraryCapabilities?>(nil)

    /// What this library can do (``LibraryCapabilities``), probed once per process.
    public var capabilities: LibraryCapabilities {
        if let cached = Self.probedCapabilities.withCheckedLock({ $0 }) { return cached }
        // Probed without the lock (the probe runs SQL on private in-memory databases): two first
        // calls at once may both probe, and the first answer stored is the one every caller gets.
        let probed = LibraryCapabilities.probe()
        return Self.probedCapabilities.withCheckedLock { cached in
            if let cached { return cached }
            cached = probed
            return probed
        }
    }

    /// Throws ``SqlCipherError/unsupported(feature:requires:loaded:)`` naming `feature` unless the
    /// loaded library has it: what a builder piece checks when it renders (the JSON functions and
    /// operators, FTS5's statements, `MATCH` and auxiliary functions), so that a statement the library cannot run is refused with the capability's name
    /// before SQLite answers with a syntax error or "no such function".
    static func require(_ feature: LibraryCapabilities.Feature, for use: String) throws {
        let library = try SqlCipherLibrary.shared
        guard !library.capabilities.features.contains(feature) else { return }
        throw SqlCipherError.unsupported(
            feature: "\(use) (the `\(feature.rawValue)` capability)", requires: feature.requirement,
            loaded: "\(library.cipherVersion) (SQLite \(library.sqliteVersion))")
    }

    /// Returns the library when it is SQLCipher `minimumCipherVersion` or later (`"4.0"`,
    /// `"4.5.1"`) and has every feature in `features`; a program calls it once at start-up so that
    /// an older library is refused with a clear error instead of failing later in some query.
    ///
    /// ```swift
    /// let library = try SqlCipherLibrary.shared.require(minimumCipherVersion: "4.0", .json)
    /// ```
    /// - Throws: ``SqlCipherError/libraryTooOld(loaded:required:missing:)``.
    @discardableResult
    public func require(minimumCipherVersion: String? = nil, _ features: LibraryCapabilities.Feature...) throws
        -> SqlCipherLibrary {
        var required: [String] = []
        var missing: [String] = []
        if let minimumCipherVersion {
            required.append("SQLCipher \(minimumCipherVersion)")
            let wanted = Self.versionComponents(minimumCipherVersion)
            let padded = wanted + Array(repeating: 0, count: max(0, 3 - wanted.count))
            if !cipherVersionIsAtLeast(padded[0], padded[1], padded[2]) {
                missing.append("SQLCipher \(minimumCipherVersion) or later")
            }
        }
        let absent = capabilities.missing
        for feature in features {
            required.append(feature.rawValue)
            if absent.contains(feature) && !missing.contains(feature.rawValue) { missing.append(feature.rawValue) }
        }
        guard missing.isEmpty else {
            throw SqlCipherError.libraryTooOld(
                loaded: "SQLCipher \(cipherVersion) (SQLite \(sqliteVersion)) at \(path)",
                required: required.joined(separator: ", "), missing: missing)
        }
        return self
    }
}
