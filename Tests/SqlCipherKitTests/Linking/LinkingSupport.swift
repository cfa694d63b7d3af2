import CSQLite3
import Foundation
import Testing
@testable import SqlCipherKit

/// Shared pieces of the linking, library and doctor tests: paths, the C compiler, binutils,
/// JSON lines from child processes, and plaintext work through the linked libsqlite3.
enum Linking {
    /// The repository's root folder, from this file's path.
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Sources/CSqlCipherBridge.
    static var bridgeSources: URL { root.appendingPathComponent("Sources/CSqlCipherBridge") }

    /// Fixtures/.
    static var fixtures: URL { root.appendingPathComponent("Fixtures") }

    /// The multiarch library folder, e.g. /usr/lib/x86_64-linux-gnu.
    static var libraryDirectory: String {
        #if arch(x86_64)
        return "/usr/lib/x86_64-linux-gnu"
        #elseif arch(arm64)
        return "/usr/lib/aarch64-linux-gnu"
        #else
        return "/usr/lib"
        #endif
    }

    /// The plaintext system SQLite the tests link.
    static var libsqlite3: String { libraryDirectory + "/libsqlite3.so.0" }

    /// The SQLCipher library under test: SQLCIPHERKIT_LIBRARY, as given (not resolved), else the
    /// loaded library's path.
    static func libraryUnderTest() throws -> String {
        if let path = ProcessInfo.processInfo.environment[SqlCipherLibrary.environmentVariable], !path.isEmpty {
            return path
        }
        return try SqlCipherLibrary.shared.path
    }

    /// The environment that pins a child process to the library under test.
    static func childEnvironment(_ extra: [String: String?] = [:]) throws -> [String: String?] {
        var environment: [String: String?] = [SqlCipherLibrary.environmentVariable: try libraryUnderTest()]
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Runs a tool (gcc, nm, readelf) and returns its output; throws with its stderr when it fails.
    @discardableResult
    static func tool(_ name: String, _ arguments: [String]) throws -> String {
        let path = ["/usr/bin/\(name)", "/bin/\(name)"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let executable = try #require(path, "\(name) is not installed; run scripts/install-deps.sh")
        let result = try runChild(executable, arguments)
        guard result.status == 0, !result.signaled else {
            throw ToolFailure(description: "\(name) \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
        return result.stdout
    }

    /// The NEEDED entries of an ELF file.
    static func neededLibraries(_ path: String) throws -> [String] {
        try tool("readelf", ["-d", "-W", path]).split(separator: "\n").compactMap { line in
            guard line.contains("(NEEDED)"), let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else {
                return nil
            }
            return String(line[line.index(after: open)..<close])
        }
    }

    /// The undefined symbols of an ELF file or object whose name starts with `prefix`.
    static func undefinedSymbols(_ path: String, prefix: String = "sqlite3_") throws -> [String] {
        // Lines are "<spaces>U <name>[@version]".
        try tool("nm", ["-u", path]).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 1)
            let symbol = fields.count == 2 ? fields[1] : ""
            let name = String(symbol.split(separator: "@").first ?? symbol)
            return name.hasPrefix(prefix) ? name : nil
        }
    }

    /// The global symbols an object defines whose name starts with `prefix`.
    static func definedSymbols(_ path: String, prefix: String = "sqlite3_") throws -> [String] {
        // Lines are "<address> <type> <name>"; local symbols (string literals among them) are left out.
        try tool("nm", ["--defined-only", "--extern-only", path]).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 2)
            let name = fields.count == 3 ? String(fields[2]) : ""
            return name.hasPrefix(prefix) ? name : nil
        }
    }

    /// Each non-empty line of `text` parsed as a JSON object.
    static func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").filter { $0.hasPrefix("{") }.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }

    /// A whole output parsed as one JSON object.
    static func jsonObject(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    /// 32 random bytes as 64 hex digits.
    static func randomKeyHex() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()
    }

    /// The bytes of 64 hex digits.
    static func keyBytes(_ hex: String) -> Data {
        let digits = Array(hex.utf8)
        return Data(stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        })
    }

    /// A random marker of letters and digits.
    static func marker(_ label: String) -> String {
        "\(label)-" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
    }

    /// Whether a file starts with `SQLite format 3\0`.
    static func hasPlaintextHeader(_ path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return false }
        return data.prefix(16) == Data("SQLite format 3\0".utf8)
    }

    /// Whether any of the files holds the marker's bytes.
    static func anyFileContains(_ paths: [String], _ marker: String) -> Bool {
        paths.contains { FileManager.default.contents(atPath: $0)?.range(of: Data(marker.utf8)) != nil }
    }

    /// The database file and the files SQLite keeps beside it.
    static func databaseFiles(_ path: String) -> [String] {
        [path, path + "-wal", path + "-shm", path + "-journal"]
    }

    /// Compiles C sources with gcc into `output`; `flags` come before the sources, `libraries` after.
    static func compile(_ sources: [String], output: String, flags: [String] = [], libraries: [String] = []) throws {
        try tool("gcc", ["-std=c11", "-I", bridgeSources.appendingPathComponent("include").path] + flags + sources
            + ["-o", output] + libraries)
    }

    /// The bridge's C files, for programs that embed the bridge directly: every `.c` file of the
    /// target, so that a file added to the bridge is in these programs too.
    static var bridgeCFiles: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: bridgeSources.path)) ?? []
        return names.filter { $0.hasSuffix(".c") }.sorted().map { bridgeSources.appendingPathComponent($0).path }
    }
}

/// A tool failed; the description carries its stderr.
struct ToolFailure: Error, CustomStringConvertible {
    let description: String
}

/// Plaintext SQLite work through the libsqlite3 the test binary links (module CSQLite3). These
/// calls bind at link time to libsqlite3, never to the SQLCipher the bridge loads.
enum LibSQLite3 {
    /// `sqlite3_libversion()` of the linked libsqlite3.
    static var version: String { String(cString: sqlite3_libversion()) }

    /// `sqlite3_sourceid()` of the linked libsqlite3.
    static var sourceID: String { String(cString: sqlite3_sourceid()) }

    /// Runs SQL (one or more statements) on `path` and returns the last statement's rows as text.
    /// Throws ``LibSQLite3Error`` with SQLite's result code.
    @discardableResult
    static func run(_ path: String, _ sql: String) throws -> [[String]] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(db)
            throw LibSQLite3Error(code: SQLITE_CANTOPEN, message: message)
        }
        defer { sqlite3_close(db) }
        var rows: [[String]] = []
        let text = Array(sql.utf8CString)
        var offset = 0
        while offset < text.count - 1 {
            var statement: OpaquePointer?
            var consumed = 0
            let rc = text.withUnsafeBufferPointer { buffer -> Int32 in
                let start = buffer.baseAddress! + offset
                var tail: UnsafePointer<CChar>?
                let rc = sqlite3_prepare_v2(db, start, -1, &statement, &tail)
                consumed = tail.map { start.distance(to: $0) } ?? (buffer.count - 1 - offset)
                return rc
            }
            guard rc == SQLITE_OK else { throw LibSQLite3Error(code: rc, message: String(cString: sqlite3_errmsg(db))) }
            offset += max(consumed, 1)
            guard let statement else { continue }
            defer { sqlite3_finalize(statement) }
            rows = []
            while true {
                let step = sqlite3_step(statement)
                if step == SQLITE_DONE { break }
                guard step == SQLITE_ROW else { throw LibSQLite3Error(code: step, message: String(cString: sqlite3_errmsg(db))) }
                rows.append((0..<sqlite3_column_count(statement)).map { column in
                    sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
                })
            }
        }
        return rows
    }
}

/// An error from the linked libsqlite3.
struct LibSQLite3Error: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    var description: String { "libsqlite3 error \(code): \(message)" }
}
