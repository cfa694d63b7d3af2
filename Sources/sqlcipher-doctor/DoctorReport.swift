import Foundation
import SqlCipherKit

/// Everything the doctor found: the load, the binding audit, the other SQLite libraries in the
/// process and the encryption self-test. Collected once, printed as text or JSON.
struct DoctorReport {
    /// How the library path was chosen.
    enum Source: String {
        case option = "--library"
        case environment = "SQLCIPHERKIT_LIBRARY"
        case discovery
    }

    let source: Source
    /// The path asked for (`--library` or the environment), nil for discovery.
    let requestedPath: String?
    let library: SqlCipherLibrary?
    let loadError: SqlCipherError?
    let otherLibraries: [OtherSQLiteLibrary]
    let selfTest: EncryptionSelfTest?

    /// Loads the library (from `libraryPath`, else as ``SqlCipherLibrary/shared`` does) and runs
    /// every check that the outcome allows. Never throws: a failure is part of the report.
    static func collect(libraryPath: String?) async -> DoctorReport {
        let environment = ProcessInfo.processInfo.environment[SqlCipherLibrary.environmentVariable] ?? ""
        let source: Source = libraryPath != nil ? .option : environment.isEmpty ? .discovery : .environment
        let requested = libraryPath ?? (environment.isEmpty ? nil : environment)
        var library: SqlCipherLibrary?
        var loadError: SqlCipherError?
        do {
            library = try libraryPath.map { try SqlCipherLibrary.load(from: $0) } ?? SqlCipherLibrary.shared
        } catch let error as SqlCipherError {
            loadError = error
        } catch {
            loadError = .notSQLCipher(path: requested ?? "(discovery)", reason: "\(error)")
        }
        let others = library?.otherSQLiteLibraries ?? SqlCipherLibrary.sqliteLibrariesInProcess
        let selfTest = await library?.runEncryptionSelfTest(keyKind: .passphrase)
        return DoctorReport(source: source, requestedPath: requested, library: library, loadError: loadError,
                            otherLibraries: others, selfTest: selfTest)
    }

    /// Whether every check passed.
    var ok: Bool { library != nil && loadError == nil && selfTest?.passed == true }

    /// Things that work but that an operator should know: today, a fallback to SQLCipher 3.
    /// Warnings do not change `ok` or the exit code.
    var warnings: [String] {
        guard let library, library.cipherMajorVersion < 4 else { return [] }
        let missing = library.capabilities.missing.map(\.rawValue).joined(separator: ", ")
        return ["SQLCipher \(library.cipherVersion) (SQLite \(library.sqliteVersion)) is in use"
            + (source == .discovery ? " because no SQLCipher 4 library was found" : "")
            + ": it reads and writes only SQLCipher 3 files and lacks \(missing.isEmpty ? "nothing probed" : missing). "
            + "Install SQLCipher 4 (Debian 12: apt-get install -t bookworm-backports libsqlcipher1; Debian 13 and "
            + "Ubuntu 24.04: apt-get install libsqlcipher1)."]
    }

    /// What went wrong, for the report's last line and the JSON `error`; nil when all passed.
    var error: String? {
        if let loadError { return Self.libraryErrorText(loadError, source: source, requested: requestedPath) }
        if let failure = selfTest?.failure { return "The encryption self-test failed: \(failure)" }
        if library == nil { return "No SQLCipher library was loaded." }
        return nil
    }

    /// What went wrong, for scripts: the ``SqlCipherError`` case of a refused load (e.g.
    /// `libraryNotFound`, `bindingConflict`, `notSQLCipher`), `selfTestFailed`, or `noLibrary`;
    /// nil when all passed. docs/doctor.md lists the values.
    var errorKind: String? {
        if let loadError { return Self.kind(of: loadError) }
        if selfTest?.failure != nil { return "selfTestFailed" }
        if library == nil { return "noLibrary" }
        return nil
    }

    /// The case name of `error` (`bindingConflict` for `.bindingConflict(path:…)`).
    static func kind(of error: SqlCipherError) -> String {
        if let label = Mirror(reflecting: error).children.first?.label { return label }
        // A case without associated values reflects as its own name.
        return String(String(reflecting: error).split(separator: ".").last ?? "unknown")
    }

    /// The status of a section: "pass", "fail", or "skipped" when an earlier failure kept it from running.
    enum Status: String {
        case pass, fail, skipped
    }

    var libraryStatus: Status { library != nil ? .pass : .fail }

    var auditStatus: Status {
        if library != nil { return .pass }
        if case .bindingConflict? = loadError { return .fail }
        return .skipped
    }

    var selfTestStatus: Status {
        guard let selfTest else { return .skipped }
        return selfTest.passed ? .pass : .fail
    }

    /// The path that was (or would have been) loaded.
    var libraryPath: String? {
        if let library { return library.path }
        switch loadError {
        case let .notSQLCipher(path, _)?, let .missingSymbol(path, _)?, let .bindingConflict(path, _, _, _, _)?:
            return path
        case let .libraryAlreadyLoaded(_, requested)?:
            return requested
        default:
            return requestedPath.map(absolute)
        }
    }

    /// The slots checked per family of symbol names (sqlite3_*, sqlcipher_*, other), known for a
    /// loaded library; a refusal carries the totals only.
    var auditFamilies: (sqlite3: Int, sqlcipher: Int, other: Int)? {
        guard let audit = library?.bindingAudit, audit.isSupported else { return nil }
        return (audit.sqlite3Checked, audit.sqlcipherChecked, audit.otherChecked)
    }

    /// The audit's numbers: from the loaded library, or from a binding-conflict refusal.
    /// A refusal carries the first foreign binding only; `foreignCount` counts them all.
    var audit: (checked: Int?, foreignCount: Int, foreign: [(symbol: String, object: String)]) {
        if let library {
            let foreign = library.bindingAudit.foreign.map { (symbol: $0.symbol, object: $0.object) }
            return (library.bindingAudit.checked, foreign.count, foreign)
        }
        if case let .bindingConflict(_, foreign, checked, symbol, boundTo)? = loadError {
            return (checked, foreign, [(symbol: symbol, object: boundTo)])
        }
        return (nil, 0, [])
    }

    /// The load error in the words of how the path was chosen: SqlCipherError's own text tells
    /// to point the environment variable at the library, which is not what to change when the
    /// path came from `--library`.
    static func libraryErrorText(_ error: SqlCipherError, source: Source, requested: String?) -> String {
        guard source == .option, let requested else { return error.description }
        let example = SqlCipherLibrary.searchPaths.first { FileManager.default.fileExists(atPath: $0) }
            ?? "/usr/lib/x86_64-linux-gnu/libsqlcipher.so.1"
        let advice = "Give --library the path of libsqlcipher (e.g. \(example)), or leave --library out to use "
            + "$\(SqlCipherLibrary.environmentVariable) or discovery."
        switch error {
        case let .notSQLCipher(path, reason):
            return "--library \(requested): \(path) is not a usable SQLCipher library: \(reason). \(advice)"
        case .libraryNotFound:
            return "--library \(requested): there is no file at this path. \(advice)"
        default:
            return "--library \(requested): \(error.description)"
        }
    }

    private func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}
