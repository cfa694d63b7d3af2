import Foundation
import SqlCipherKit
import Testing

/// The real `sqlcipher` command-line tools.
enum SqlcipherCLI {
    /// SQLCipher 4.6.1's CLI, which uses libsqlcipher.so.1.
    static let version4 = "/usr/bin/sqlcipher"
    /// SQLCipher 3.4.1's CLI (directory overridable with SQLCIPHERKIT_CLI3_DIR).
    static var version3: String {
        let dir = ProcessInfo.processInfo.environment["SQLCIPHERKIT_CLI3_DIR"] ?? "/opt/sqlcipherkit/sqlcipher-3.4.1"
        return dir + "/usr/bin/sqlcipher"
    }

    /// Runs `sql` (one statement per line) against `path` with the CLI and returns the output lines,
    /// without the `ok` that 4.x prints for `PRAGMA key`. Throws when the CLI reports an error.
    static func run(_ cli: String, _ path: String, _ statements: [String]) throws -> [String] {
        let script = statements.map { $0.hasSuffix(";") ? $0 : $0 + ";" }.joined(separator: "\n") + "\n"
        let result = try runChild(cli, ["-batch", "-bail", path], input: Data(script.utf8))
        let lines = result.stdout.split(separator: "\n").map(String.init).filter { $0 != "ok" }
        guard result.status == 0 else {
            throw CLIError(status: result.status, stdout: result.stdout, stderr: result.stderr)
        }
        return lines
    }

    /// Runs `statements` with the CLI and then kills it with SIGKILL from inside (its `.shell`
    /// runs `kill -9` on its parent), so that what it left on disk is what a crashed program
    /// leaves: committed frames in a `-wal`, or a hot `-journal` of an open transaction.
    static func runAndKill(_ cli: String, _ path: String, _ statements: [String]) throws {
        let script = statements.map { $0.hasSuffix(";") ? $0 : $0 + ";" }.joined(separator: "\n")
            + "\n.shell kill -9 $PPID\n"
        let result = try runChild(cli, ["-batch", "-bail", path], input: Data(script.utf8))
        guard result.signaled, result.status == SIGKILL else {
            throw CLIError(status: result.status, stdout: result.stdout, stderr: result.stderr)
        }
    }

    /// The `PRAGMA key` statement for a passphrase (quotes doubled) or a raw key.
    static func keyPragma(passphrase: String) -> String {
        "PRAGMA key = '" + passphrase.replacingOccurrences(of: "'", with: "''") + "'"
    }

    static func keyPragma(rawKey: Data) -> String {
        "PRAGMA key = \"x'" + rawKey.map { String(format: "%02x", $0) }.joined() + "'\""
    }

    struct CLIError: Error, CustomStringConvertible {
        let status: Int32
        let stdout: String
        let stderr: String
        var description: String { "sqlcipher CLI exit \(status): \(stderr) \(stdout)" }
    }
}

/// Whether the test process runs as root, for which file permissions do not apply.
var runningAsRoot: Bool { getuid() == 0 }

/// Runs the helper as the unprivileged user `nobody` (via `setpriv`) when the tests run as root, so
/// that permission checks apply; otherwise runs it directly.
func runHelperUnprivileged(_ arguments: [String]) throws -> ChildResult {
    let helper = productPath("sqlcipherkit-test-helper")
    if runningAsRoot {
        return try runChild("/usr/bin/setpriv",
                            ["--reuid=65534", "--regid=65534", "--clear-groups", helper] + arguments)
    }
    return try runChild(helper, arguments)
}

/// A temporary directory that the unprivileged user can enter and read, for the permission tests.
func makeWorldReadable(_ directory: TemporaryDirectory) throws {
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.url.path)
}

/// A passphrase database with low KDF work, so tests that are not about key derivation stay fast.
let fastCipher = CipherSettings(kdfIterations: 2)

/// The hex text of bytes.
func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

/// Whether `needle` occurs in any of the files (missing files are skipped).
func filesContain(_ paths: [String], _ needle: String) -> [String] {
    let bytes = Data(needle.utf8)
    return paths.filter { FileManager.default.contents(atPath: $0)?.range(of: bytes) != nil }
}

/// Fills a table `t(id INTEGER PRIMARY KEY, body TEXT)` with `rows` rows of about `size` bytes.
func fill(_ db: Database, rows: Int, size: Int = 100, marker: String = "") async throws {
    try await db.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, body TEXT)")
    try await db.transaction { conn in
        for index in 0..<rows {
            try conn.execute("INSERT INTO t(body) VALUES (?)", marker + String(repeating: "x", count: size) + "\(index)")
        }
    }
}

/// The number of rows of table `t`.
func countRows(_ db: some DatabaseAccess, table: String = "t") async throws -> Int {
    try await db.query("SELECT count(*) FROM \(table)")[0].decode(0, as: Int.self)
}
