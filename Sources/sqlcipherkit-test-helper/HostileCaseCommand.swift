import Foundation
import SqlCipherKit

/// The outcome of one hostile case, as one JSON line. The parent test decodes the same fields
/// (Tests/SqlCipherKitTests/Reliability/HostileInputTests.swift) and judges them.
struct HostileCaseResult: Codable {
    var name: String
    /// "ok" when the case ran without an error, "error" when it threw.
    var outcome = "ok"
    /// The SqlCipherError case (with the SQLite code for `sqlite`), or "untyped ..." otherwise.
    var kind = ""
    var detail = ""
}

/// The cases that could crash or hang the process running them, so each runs in a child of its
/// own: a NUL in a path, a named pipe as the database, values of tens of megabytes, more
/// parameters than SQLite allows, deeply nested SQL, a NUL inside SQL text, a huge passphrase,
/// a huge identifier, dates outside what the date format can hold, an FTS5 tokenizer nested
/// 200,000 deep.
enum HostileCases {
    static let names = [
        "nul-in-path", "fifo-path", "huge-string", "huge-blob", "too-big", "many-parameters",
        "deep-nesting", "nul-in-sql", "huge-passphrase", "huge-identifier", "far-date", "nan-date",
        "deep-tokenizer",
    ]

    static func run(_ name: String, directory: String, key: Data) async -> HostileCaseResult {
        var result = HostileCaseResult(name: name)
        do {
            result.detail = try await body(name, directory: directory, key: key)
        } catch {
            result.outcome = "error"
            result.detail = String(describing: error)
            if let typed = error as? SqlCipherError {
                if case let .sqlite(code, _, _, _) = typed {
                    result.kind = "sqlite(\(code))"
                } else {
                    result.kind = Mirror(reflecting: typed).children.first?.label ?? "\(typed)"
                }
            } else {
                result.kind = "untyped \(type(of: error))"
            }
        }
        return result
    }

    private static func body(_ name: String, directory: String, key: Data) async throws -> String {
        let path = directory + "/hostile.db"
        switch name {
        case "nul-in-path":
            // Swift passes a String with NUL to C truncated at the NUL: "a\0b.db" would open "a".
            _ = try Database(path: directory + "/a\u{0}b.db", rawKey: key)
            return "opened"
        case "fifo-path":
            guard mkfifo(path, 0o600) == 0 else { return "mkfifo failed: \(errno)" }
            _ = try Database(path: path, rawKey: key)
            return "opened"
        case "huge-string":
            let db = try Database(path: path, rawKey: key)
            let text = String(repeating: "0123456789abcdef", count: 2 * 1024 * 1024) + "é🍣"
            try await db.execute("CREATE TABLE t(v)")
            try await db.execute("INSERT INTO t(v) VALUES (?)", text)
            let back = try await db.query("SELECT v FROM t").first?.get("v", as: String.self)
            return back == text ? "round trip of \(text.utf8.count) bytes" : "MISMATCH"
        case "huge-blob":
            let db = try Database(path: path, rawKey: key)
            var blob = Data(count: 48 * 1024 * 1024)
            for index in stride(from: 0, to: blob.count, by: 4093) { blob[index] = UInt8(truncatingIfNeeded: index) }
            try await db.execute("CREATE TABLE t(v)")
            try await db.execute("INSERT INTO t(v) VALUES (?)", blob)
            let back = try await db.query("SELECT v FROM t").first?.get("v", as: Data.self)
            return back == blob ? "round trip of \(blob.count) bytes" : "MISMATCH"
        case "too-big":
            let db = try Database(path: path, rawKey: key)
            _ = try await db.query("SELECT length(zeroblob(?))", 2_000_000_000)
            return "no error"
        case "many-parameters":
            let db = try Database(path: path, rawKey: key)
            let count = 40_000
            let sql = "SELECT " + Array(repeating: "?", count: count).joined(separator: " + ")
            _ = try await db.query(sql, arguments: StatementArguments(Array(repeating: 1, count: count)))
            return "accepted \(count) parameters"
        case "deep-nesting":
            let db = try Database(path: path, rawKey: key)
            let depth = 100_000
            _ = try await db.query("SELECT " + String(repeating: "(", count: depth) + "1" + String(repeating: ")", count: depth))
            return "accepted depth \(depth)"
        case "nul-in-sql":
            // SQL text built by interpolation can carry a NUL from user data. SQLite reads the
            // text only up to it: a targeted DELETE would lose its WHERE clause.
            let db = try Database(path: path, rawKey: key)
            try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1), (2), (3)")
            var outcome = "accepted"
            var message = ""
            do {
                try await db.execute("DELETE FROM t\u{0} WHERE id = 2")
            } catch {
                let kind = (error as? SqlCipherError).flatMap { Mirror(reflecting: $0).children.first?.label } ?? "untyped"
                outcome = "refused (\(kind))"
                message = ": \(error)"
            }
            let left = try await db.query("SELECT count(*) FROM t").first?.get(0, as: Int.self) ?? -1
            return "\(outcome); rows left: \(left) of 3\(message)"
        case "huge-passphrase":
            var passphrase = Data(count: 16 * 1024 * 1024)
            for index in stride(from: 0, to: passphrase.count, by: 511) { passphrase[index] = UInt8(truncatingIfNeeded: index | 1) }
            let cipher = CipherSettings(kdfIterations: 10)
            let db = try Database(path: path, key: .passphrase(passphrase), cipher: cipher)
            try await db.execute("CREATE TABLE t(v)")
            await db.close()
            let again = try Database(path: path, key: .passphrase(passphrase), cipher: cipher)
            _ = try await again.query("SELECT * FROM t")
            var other = passphrase
            other[other.count - 1] ^= 1
            do {
                _ = try Database(path: path, key: .passphrase(other), cipher: cipher)
                return "ANOTHER PASSPHRASE OPENED IT"
            } catch SqlCipherError.keyFailed {
                return "opens with the \(passphrase.count)-byte passphrase, not with one byte changed"
            }
        case "huge-identifier":
            let db = try Database(path: path, rawKey: key)
            _ = try await db.query(Select(.all).from(TableName(String(repeating: "x\"", count: 500_000))))
            return "no error"
        case "far-date", "nan-date":
            // Dates are stored as text with millisecond precision; a date whose milliseconds do not
            // fit in an Int64 (or NaN) has no such text.
            let db = try Database(path: path, rawKey: key)
            try await db.execute("CREATE TABLE t(v)")
            let date = name == "far-date" ? Date(timeIntervalSince1970: 1e300) : Date(timeIntervalSince1970: .nan)
            try await db.execute("INSERT INTO t(v) VALUES (?)", date)
            let stored = try await db.query("SELECT v FROM t").first
            let back = stored?.get(0, as: Date.self)
            let same = back.map {
                $0.timeIntervalSince1970.bitPattern == date.timeIntervalSince1970.bitPattern
                    || ($0.timeIntervalSince1970.isNaN && date.timeIntervalSince1970.isNaN)
            } ?? false
            return "stored as \(stored.map { "\($0[0])" } ?? "nothing"), read back as "
                + (same ? "the same date" : "\(back.map { "\($0.timeIntervalSince1970)" } ?? "no date")")
        case "deep-tokenizer":
            // FTS5 nests one tokenizer per `porter` word, recursively: 200,000 of them overflowed
            // the stack inside SQLite (SQLCipher 4.6.1) before the package bounded the chain.
            let db = try Database(path: path, rawKey: key)
            let words = String(repeating: "porter ", count: 200_000) + "unicode61"
            try await db.execute("CREATE VIRTUAL TABLE f USING fts5(x, tokenize='\(words)')")
            try await db.execute("INSERT INTO f VALUES ('hello')")
            return "created"
        default:
            throw HelperUsageError(message: "unknown case \(name)")
        }
    }
}

/// Runs one hostile case (see `HostileCases`) and prints its outcome as one JSON line.
let hostileCaseCommand = HelperCommand(
    name: "hostile-case",
    usage: "hostile-case NAME DIR RAWKEYHEX: runs one input that could crash or hang a process; prints the outcome"
) { arguments in
    guard arguments.count == 3, HostileCases.names.contains(arguments[0]) else {
        throw HelperUsageError(message: "usage: hostile-case \(HostileCases.names.joined(separator: "|")) DIR RAWKEYHEX")
    }
    let key = try helperBytes(fromHex: arguments[2])
    report("start \(arguments[0])")
    let result = try runBlocking { await HostileCases.run(arguments[0], directory: arguments[1], key: key) }
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    report(String(decoding: try encoder.encode(result), as: UTF8.self))
    return 0
}
