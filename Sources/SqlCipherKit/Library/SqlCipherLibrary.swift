import CSqlCipherBridge
import Foundation
import Synchronization

/// The SQLCipher library this process uses, loaded at run time and proven before use.
///
/// SqlCipherKit never links libsqlcipher. It loads it from an explicit path, isolates it from any
/// other SQLite in the process, resolves every function from that handle, audits the library's
/// own symbol bindings and checks that a keyed database reports a `cipher_version`. Only then
/// does a ``Database`` open.
///
/// The path is chosen in this order:
/// 1. a path given in code with ``load(from:)``;
/// 2. the environment variable `SQLCIPHERKIT_LIBRARY`;
/// 3. discovery: `libsqlcipher.so.1` before `libsqlcipher.so.0` in the usual library folders
///    (``searchPaths``).
///
/// ```swift
/// let library = try SqlCipherLibrary.shared
/// print(library.path, library.cipherVersion)   // /usr/lib/.../libsqlcipher.so.1.8.0 4.6.1 community
/// ```
///
/// One library is loaded per process. Asking for a different file once one is loaded throws
/// ``SqlCipherError/libraryAlreadyLoaded(loaded:requested:)``.
public final class SqlCipherLibrary: Sendable {
    /// The name of the environment variable that selects the library file.
    public static let environmentVariable = "SQLCIPHERKIT_LIBRARY"

    /// The absolute, symlink-free path of the loaded file.
    public let path: String
    /// The `dlopen` flags used, e.g. `RTLD_NOW|RTLD_LOCAL|RTLD_DEEPBIND`.
    public let loadMethod: String
    /// Whether the file was already mapped into the process before SqlCipherKit loaded it.
    public let wasAlreadyLoaded: Bool
    /// SQLite's version string (`sqlite3_libversion`), e.g. `3.46.1`.
    public let sqliteVersion: String
    /// SQLite's version number (`sqlite3_libversion_number`), e.g. `3046001`.
    public let sqliteVersionNumber: Int
    /// SQLite's source id (`sqlite3_sourceid`).
    public let sqliteSourceID: String
    /// `PRAGMA cipher_version`, e.g. `4.6.1 community` or `3.4.1`.
    public let cipherVersion: String
    /// `PRAGMA cipher_provider`, e.g. `openssl`, when the library reports it.
    public let cipherProvider: String?
    /// `PRAGMA cipher_provider_version`, when the library reports it.
    public let cipherProviderVersion: String?
    /// The result of the relocation audit made at load.
    public let bindingAudit: BindingAudit
    /// Whether `sqlite3_prepare_v3` is available (SQLite 3.20+).
    package let hasPrepareV3: Bool
    /// What keeps a process that exits while other threads still call the library from crashing
    /// in libcrypto's cleanup (docs/reliability.md, "A process that exits while it reads").
    package let exitProtection: ExitProtection

    /// How the bridge made exit safe, decided once at load.
    package enum ExitProtection: String, Sendable {
        /// libcrypto came into the process with the library, and the bridge's first
        /// initialisation of it turned its cleanup at exit off: nothing is freed at exit.
        case cleanupOff = "cleanup-off"
        /// libcrypto was already loaded (and may have registered its cleanup), or the library is
        /// SQLCipher 4.7 or later, whose own atexit handler frees its private heap and mutexes: the
        /// bridge's exit handler, registered after theirs so that it runs first, interrupts every
        /// connection and waits for calls in progress before they run.
        case exitGate = "exit-gate"
        /// The library's crypto provider is not OpenSSL's libcrypto.
        case notOpenSSL = "not-openssl"
    }

    /// The numeric parts of ``cipherVersion`` (`4.6.1 community` gives `[4, 6, 1]`), to compare
    /// with `lexicographicallyPrecedes`. To stop when the library is too old, use
    /// ``require(minimumCipherVersion:_:)``, which throws an error naming what is missing.
    package var cipherVersionComponents: [Int] { Self.versionComponents(cipherVersion) }

    /// SQLCipher's major version: 3 or 4 for the libraries Debian ships.
    package var cipherMajorVersion: Int { cipherVersionComponents.first ?? 0 }

    private init() {
        path = String(cString: scb_library_path())
        loadMethod = String(cString: scb_load_method())
        wasAlreadyLoaded = scb_library_was_already_loaded() != 0
        sqliteVersion = String(cString: scb_sqlite_version())
        sqliteVersionNumber = Int(scb_sqlite_version_number())
        sqliteSourceID = String(cString: scb_sqlite_source_id())
        cipherVersion = String(cString: scb_cipher_version())
        let provider = String(cString: scb_cipher_provider())
        cipherProvider = provider.isEmpty ? nil : provider
        let providerVersion = String(cString: scb_cipher_provider_version())
        cipherProviderVersion = providerVersion.isEmpty ? nil : providerVersion
        bindingAudit = BindingAudit(
            isSupported: scb_audit_supported() != 0, checked: Int(scb_audit_checked()), foreign: [],
            sqlite3Checked: Int(scb_audit_checked_family(Int32(SCB_FAMILY_SQLITE3.rawValue))),
            sqlcipherChecked: Int(scb_audit_checked_family(Int32(SCB_FAMILY_SQLCIPHER.rawValue))),
            otherChecked: Int(scb_audit_checked_family(Int32(SCB_FAMILY_OTHER.rawValue))))
        hasPrepareV3 = scb_has_function(Int32(SCB_OPT_PREPARE_V3.rawValue)) != 0
        switch scb_exit_protection() {
        case 1: exitProtection = .cleanupOff
        case 2: exitProtection = .exitGate
        default: exitProtection = .notOpenSSL
        }
    }

    private static let loaded = Mutex<SqlCipherLibrary?>(nil)

    /// The library this process uses: the one already loaded, else the one named by
    /// `SQLCIPHERKIT_LIBRARY`, else the first found in ``searchPaths``.
    ///
    /// - Throws: ``SqlCipherError/libraryNotFound(searched:package:)`` and the other loading errors.
    public static var shared: SqlCipherLibrary {
        get throws {
            if let library = loaded.withCheckedLock({ $0 }) { return library }
            if let path = ProcessInfo.processInfo.environment[environmentVariable], !path.isEmpty {
                return try load(from: path)
            }
            let candidates = searchPaths
            for candidate in candidates where FileManager.default.fileExists(atPath: candidate) {
                return try load(from: candidate)
            }
            throw SqlCipherError.libraryNotFound(searched: candidates, package: installPackage)
        }
    }

    /// Loads and proves the SQLCipher library at `path`, or returns it when it is already loaded.
    ///
    /// ```swift
    /// let library = try SqlCipherLibrary.load(from: "/usr/lib/x86_64-linux-gnu/libsqlcipher.so.0")
    /// let same = try SqlCipherLibrary.load(from: "libsqlcipher.so.0")   // a bare name
    /// ```
    ///
    /// A `path` containing `/` is a file path (a relative one starts at the current directory). A
    /// bare file name such as `libsqlcipher.so.0` is looked up the way `dlopen` looks up bare
    /// names: `LD_LIBRARY_PATH`, the run path, `/etc/ld.so.cache` and the system's library folders,
    /// never the current directory unless that search path names it. ``path`` then records the
    /// file that was found. The same holds for `SQLCIPHERKIT_LIBRARY`.
    ///
    /// - Throws: ``SqlCipherError/libraryNotFound(searched:package:)`` when no file is there (and
    ///   for an empty path or one holding a NUL byte, which names no file),
    ///   ``SqlCipherError/notSQLCipher(path:reason:)``, ``SqlCipherError/missingSymbol(path:symbol:)``,
    ///   ``SqlCipherError/bindingConflict(path:foreign:checked:symbol:boundTo:)``,
    ///   ``SqlCipherError/unsupportedRuntime(reason:)`` or
    ///   ``SqlCipherError/libraryAlreadyLoaded(loaded:requested:)``.
    @discardableResult
    public static func load(from path: String) throws -> SqlCipherLibrary {
        // C reads a path only up to its first NUL, and an empty name is no file: either would load
        // something other than what was named (or nothing) under a message about a search.
        guard !path.isEmpty, !path.utf8.contains(0) else {
            let shown = path.isEmpty ? "an empty path" : path.replacingOccurrences(of: "\0", with: "\\0") + " (a path holding a NUL byte)"
            throw SqlCipherError.libraryNotFound(searched: [shown], package: installPackage)
        }
        let absolute = absolutePath(path)
        // The bridge serializes loads under a lock of its own; `loaded` is taken only after it,
        // so the two never nest.
        var report = scb_load_report()
        let status = scb_load(absolute, &report)
        guard status == Int32(SCB_LOAD_OK.rawValue) else {
            throw error(for: report, path: absolute)
        }
        return loaded.withCheckedLock { current in
            if let current { return current }
            let library = SqlCipherLibrary()
            current = library
            return library
        }
    }

    /// The files discovery tries, in order.
    public static var searchPaths: [String] {
        #if os(macOS)
        return [
            "/opt/homebrew/opt/sqlcipher/lib/libsqlcipher.dylib",
            "/usr/local/opt/sqlcipher/lib/libsqlcipher.dylib",
            "/opt/local/lib/libsqlcipher.dylib",
            "/usr/local/lib/libsqlcipher.dylib",
        ]
        #else
        var directories: [String] = []
        if let multiarch = multiarchTriple { directories += ["/usr/lib/\(multiarch)", "/lib/\(multiarch)"] }
        directories += ["/usr/lib64", "/usr/lib", "/usr/local/lib64", "/usr/local/lib"]
        return ["libsqlcipher.so.1", "libsqlcipher.so.0", "libsqlcipher.so"].flatMap { name in
            directories.map { "\($0)/\(name)" }
        }
        #endif
    }

    /// The SQLite libraries other than this one that are mapped into the process right now, such
    /// as a libsqlite3 linked by the program or by another library.
    public var otherSQLiteLibraries: [OtherSQLiteLibrary] { Self.sqliteLibrariesInProcess }

    /// Whether the loaded SQLCipher is at least the given version.
    package func cipherVersionIsAtLeast(_ major: Int, _ minor: Int = 0, _ patch: Int = 0) -> Bool {
        let parts = cipherVersionComponents + [0, 0, 0]
        return (parts[0], parts[1], parts[2]) >= (major, minor, patch)
    }

    /// Throws ``SqlCipherError/unsupported(feature:requires:loaded:)`` unless the loaded SQLCipher is
    /// at least `major.minor.patch`.
    func require(_ feature: String, cipher major: Int, _ minor: Int = 0, _ patch: Int = 0) throws {
        guard cipherVersionIsAtLeast(major, minor, patch) else {
            throw SqlCipherError.unsupported(
                feature: feature, requires: "SQLCipher \(major).\(minor).\(patch) or later", loaded: cipherVersion)
        }
    }

    /// Throws ``SqlCipherError/unsupported(feature:requires:loaded:)`` unless the loaded SQLite is at
    /// least the given version number (e.g. `3_024_000`).
    func require(_ feature: String, sqlite number: Int) throws {
        guard sqliteVersionNumber >= number else {
            let version = "\(number / 1_000_000).\(number / 1000 % 1000).\(number % 1000)"
            throw SqlCipherError.unsupported(
                feature: feature, requires: "SQLite \(version) or later (SQLCipher 4)",
                loaded: "\(cipherVersion) (SQLite \(sqliteVersion))")
        }
    }

    static func versionComponents(_ version: String) -> [Int] {
        // The first run of ASCII digits and dots, wherever it starts ("v4.6.1", "SQLCipher 4.6.1
        // community"): a build that names itself first must not read as major version 0, which
        // would turn off every SQLCipher 4 path. A part too large for Int reads as the largest
        // version, never as a smaller one.
        func isDigit(_ character: Character) -> Bool { character.isASCII && character.isNumber }
        guard let start = version.firstIndex(where: isDigit) else { return [] }
        let numeric = version[start...].prefix { isDigit($0) || $0 == "." }
        return numeric.split(separator: ".", omittingEmptySubsequences: false)
            .prefix { !$0.isEmpty }
            .map { Int($0) ?? Int.max }
    }

    private static var installPackage: String {
        #if os(macOS)
        return "sqlcipher (brew install sqlcipher)"
        #else
        return "libsqlcipher1 (or libsqlcipher0)"
        #endif
    }

    private static var multiarchTriple: String? {
        #if arch(x86_64)
        return "x86_64-linux-gnu"
        #elseif arch(arm64)
        return "aarch64-linux-gnu"
        #else
        return nil
        #endif
    }

    /// `path` made absolute against the current directory; a bare file name (no `/`) is left for
    /// the bridge to look up as `dlopen` does.
    private static func absolutePath(_ path: String) -> String {
        if path.hasPrefix("/") || !path.contains("/") { return path }
        return FileManager.default.currentDirectoryPath + "/" + path
    }

    private static func text<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    private static func error(for report: scb_load_report, path: String) -> SqlCipherError {
        let message = text(report.message)
        let symbol = text(report.symbol)
        let object = text(report.object)
        switch report.status {
        case Int32(SCB_LOAD_NOT_FOUND.rawValue):
            let searched = path.contains("/") ? path : "\(path) (on the dynamic linker's search path)"
            return .libraryNotFound(searched: [searched], package: installPackage)
        case Int32(SCB_LOAD_MISSING_SYMBOL.rawValue):
            return .missingSymbol(path: path, symbol: symbol)
        case Int32(SCB_LOAD_BINDING_CONFLICT.rawValue):
            return .bindingConflict(
                path: path, foreign: Int(report.audit_foreign), checked: Int(report.audit_checked),
                symbol: symbol, boundTo: object)
        case Int32(SCB_LOAD_UNSUPPORTED_RUNTIME.rawValue), Int32(SCB_LOAD_STATIC_EXECUTABLE.rawValue):
            return .unsupportedRuntime(reason: message)
        case Int32(SCB_LOAD_ALREADY_LOADED_OTHER.rawValue):
            return .libraryAlreadyLoaded(loaded: object, requested: path)
        default:
            return .notSQLCipher(path: path, reason: message)
        }
    }
}

/// What the relocation audit found when the library was loaded.
///
/// Every relocation slot through which the library reaches a symbol it defines itself (its
/// `sqlite3_*` API, its own `sqlcipher_*` functions, and any other name it exports) must point
/// into the library. A library with foreign slots is refused at load, so a loaded library always
/// has an empty ``foreign`` list; the list is filled in the error and by the doctor.
///
/// Measured on Debian 12: libsqlcipher.so.1 (4.6.1) has 458 such slots (435 `sqlite3_*`,
/// 15 `sqlcipher_*`, 8 other), libsqlcipher.so.0 (3.4.1) has 410 (355, 50, 5).
public struct BindingAudit: Sendable, Equatable {
    /// Whether this platform supports the audit (ELF on x86_64 and arm64). Apple platforms isolate
    /// libraries with two-level namespaces instead.
    public let isSupported: Bool
    /// How many relocation slots were checked: every family together (`sqlite3_*`, `sqlcipher_*`
    /// and the library's other names; sqlcipher-doctor shows each family's count).
    public let checked: Int
    /// Slots that point outside the library.
    public let foreign: [ForeignBinding]
    /// Slots checked whose symbol is one of SQLite's `sqlite3_*` functions or variables.
    package let sqlite3Checked: Int
    /// Slots checked whose symbol is one of SQLCipher's own `sqlcipher_*` functions (its codec,
    /// memory and provider helpers).
    package let sqlcipherChecked: Int
    /// Slots checked whose symbol has another name the library defines (for example
    /// `sqlcipherCodecAttach` or `sqlite3pager_reset`).
    package let otherChecked: Int
}

/// One of the library's references to its own symbols bound into another object.
public struct ForeignBinding: Sendable, Equatable {
    /// The symbol, e.g. `sqlite3_step` or `sqlcipher_codec_pragma`.
    public let symbol: String
    /// The object its slot points into, e.g. `/usr/lib/x86_64-linux-gnu/libsqlite3.so.0`.
    public let object: String
}

/// Another SQLite library mapped into the same process.
public struct OtherSQLiteLibrary: Sendable, Equatable {
    /// The object's path as the dynamic linker recorded it.
    public let path: String
    /// Its `sqlite3_libversion()`.
    public let version: String
}

extension SqlCipherLibrary {
    /// The loaded SQLite and SQLCipher, as advice names them ("SQLite 3.46.1 (SQLCipher 4.6.1
    /// community)"), or "the loaded SQLite" when none could be loaded.
    static var loadedForAdvice: String {
        (try? SqlCipherLibrary.shared).map { "SQLite \($0.sqliteVersion) (SQLCipher \($0.cipherVersion))" }
            ?? "the loaded SQLite"
    }
}
