extension DoctorReport {
    /// The report's JSON document (docs/doctor.md lists every key).
    struct JSON: Encodable {
        var ok: Bool
        var library: Library
        var bindingAudit: Audit
        var process: Process
        var selfTest: SelfTest
        /// Present only when `ok` is false.
        var error: String?
        /// What went wrong, as a name a script can compare (``DoctorReport/errorKind``); present
        /// only when `ok` is false.
        var errorKind: String?
        /// What works but an operator should know (a fallback to SQLCipher 3); empty otherwise.
        var warnings: [String]
    }

    struct Library: Encodable {
        var status: String
        @Nullable var path: String?
        @Nullable var requestedPath: String?
        var source: String
        @Nullable var loadMethod: String?
        @Nullable var alreadyLoaded: Bool?
        @Nullable var sqliteVersion: String?
        @Nullable var sqliteVersionNumber: Int?
        @Nullable var sqliteSourceId: String?
        @Nullable var cipherVersion: String?
        @Nullable var cipherProvider: String?
        @Nullable var cipherProviderVersion: String?
        /// How an exit while threads still read is kept safe: `cleanup-off`, `exit-gate` or
        /// `not-openssl` (docs/doctor.md); null when refused.
        @Nullable var exitProtection: String?
        /// The SQL features probed on the library (``LibraryCapabilities``); null when refused.
        @Nullable var features: [String]?
        @Nullable var missingFeatures: [String]?
    }

    struct Audit: Encodable {
        var status: String
        @Nullable var supported: Bool?
        @Nullable var checked: Int?
        var foreignCount: Int
        var foreign: [Foreign]
        /// The checked relocations by the family of their symbol (sqlite3_*, sqlcipher_*, other).
        @Nullable var checkedSqlite3: Int?
        @Nullable var checkedSqlcipher: Int?
        @Nullable var checkedOther: Int?
    }

    struct Foreign: Encodable {
        var symbol: String
        var object: String
    }

    struct Process: Encodable {
        var otherSqliteLibraries: [String]
        var otherSqliteLibraryVersions: [OtherLibrary]
    }

    struct OtherLibrary: Encodable {
        var path: String
        var version: String
    }

    struct SelfTest: Encodable {
        var status: String
        var headerEncrypted: Bool
        /// Present only when the self-test ran.
        var keyKind: String?
        var checks: [Check]
    }

    struct Check: Encodable {
        var name: String
        var passed: Bool
        var detail: String
    }

    /// The report as its JSON document.
    var json: JSON {
        let audit = self.audit
        return JSON(
            ok: ok,
            library: Library(
                status: libraryStatus.rawValue, path: libraryPath, requestedPath: requestedPath, source: source.rawValue,
                loadMethod: library?.loadMethod, alreadyLoaded: library?.wasAlreadyLoaded,
                sqliteVersion: library?.sqliteVersion, sqliteVersionNumber: library?.sqliteVersionNumber,
                sqliteSourceId: library?.sqliteSourceID, cipherVersion: library?.cipherVersion,
                cipherProvider: library?.cipherProvider, cipherProviderVersion: library?.cipherProviderVersion,
                exitProtection: library?.exitProtection.rawValue,
                features: library?.capabilities.features.sorted().map(\.rawValue),
                missingFeatures: library?.capabilities.missing.map(\.rawValue)),
            bindingAudit: Audit(
                status: auditStatus.rawValue,
                // A binding conflict is an audit result, so the audit ran.
                supported: library.map { $0.bindingAudit.isSupported } ?? (auditStatus == .fail ? true : nil),
                checked: audit.checked, foreignCount: audit.foreignCount,
                foreign: audit.foreign.map { Foreign(symbol: $0.symbol, object: $0.object) },
                checkedSqlite3: auditFamilies?.sqlite3, checkedSqlcipher: auditFamilies?.sqlcipher,
                checkedOther: auditFamilies?.other),
            process: Process(
                otherSqliteLibraries: otherLibraries.map(\.path),
                otherSqliteLibraryVersions: otherLibraries.map { OtherLibrary(path: $0.path, version: $0.version) }),
            selfTest: SelfTest(
                status: selfTestStatus.rawValue, headerEncrypted: selfTest?.check(.headerEncrypted)?.passed ?? false,
                keyKind: selfTest?.keyKind.rawValue,
                checks: selfTest?.checks.map { Check(name: $0.name.rawValue, passed: $0.passed, detail: $0.detail) } ?? []),
            error: error,
            errorKind: errorKind,
            warnings: warnings)
    }
}
