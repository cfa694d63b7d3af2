import Foundation
import SqlCipherKit
import Synchronization
import Testing

// A seeded, grammar-based generator of hostile SQL and the invariants every case must keep
// (SQLFuzzTests runs a fixed, bounded set of seeds). Each case opens a database in a fresh folder,
// stores a marker row, runs statements assembled from dangerous pieces (cipher and key pragmas in
// every spelling SQLite accepts, ATTACH with every name and KEY form, VACUUM INTO, sqlcipher_export,
// triggers, views, CTEs, transaction control inside bodies, NUL bytes, huge values, ...) through the
// public API, and then checks that:
// - every failure is a typed SqlCipherError, and a refusal by the package says what to do;
// - no secret of the case reaches an error's description, a trace event or any file;
// - no file of the folder is plaintext SQLite, and the marker is in no file's bytes;
// - the connection's cipher settings, and the process-wide defaults and memory limits, are unchanged;
// - the file opens again with its key and holds the marker row.

/// SplitMix64: a tiny deterministic generator, so that a seed names one case for ever.
struct FuzzRandom {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
    mutating func oneIn(_ n: Int) -> Bool { below(n) == 0 }
    mutating func pick<T>(_ values: [T]) -> T { values[below(values.count)] }
}

/// A value bound to a generated statement.
enum FuzzArgument: Sendable, CustomStringConvertible {
    case int(Int64), real(Double), text(String), blob(Data), null

    var value: (any DatabaseValueConvertible)? {
        switch self {
        case .int(let v): return v
        case .real(let v): return v
        case .text(let v): return v
        case .blob(let v): return v
        case .null: return nil
        }
    }

    var databaseValue: DatabaseValue {
        switch self {
        case .int(let v): return .integer(v)
        case .real(let v): return .real(v)
        case .text(let v): return .text(v)
        case .blob(let v): return .blob(v)
        case .null: return .null
        }
    }

    var description: String {
        switch self {
        case .int(let v): return "\(v)"
        case .real(let v): return "\(v)"
        case .text(let v): return "text(\(v.utf8.count) bytes: \(v.prefix(40).debugDescription))"
        case .blob(let v): return "blob(\(v.count))"
        case .null: return "NULL"
        }
    }
}

/// How a generated step reaches the database.
enum FuzzSurface: String, Sendable, CaseIterable {
    case execute, executeArguments, query, transaction, savepoint, read, prepare, cursor, stream, liveValues
    case literal, importPlaintext, backup, export, rekey, migrate, namedArguments
}

/// A migration that runs one generated text.
struct FuzzMigration: Migration {
    let id: String
    let sql: String
    func up(_ ctx: MigrationContext) throws { _ = try ctx.execute(sql) }
}

/// One call of a case.
struct FuzzStep: Sendable, CustomStringConvertible {
    var surface: FuzzSurface
    var sql: String
    var arguments: [FuzzArgument]?
    /// For `.literal`: which template, and its pieces.
    var literal: Int = 0
    var names: [String] = []

    var description: String {
        let shown = sql.utf8.count > 300 ? String(sql.prefix(300)) + "…(\(sql.utf8.count) bytes)" : sql
        return "\(surface.rawValue)\(surface == .literal ? "#\(literal) \(names.map { $0.prefix(60) })" : ""): "
            + "\(shown.debugDescription)\(arguments.map { " args \($0)" } ?? "")"
    }
}

/// What kind of database a case opens.
enum FuzzDatabaseKind: String, Sendable {
    case passphrase, rawKey, pool, plaintext
}

/// One generated case: everything it does is decided by its seed.
struct FuzzCase: Sendable, CustomStringConvertible {
    var seed: UInt64
    var kind: FuzzDatabaseKind
    var journalMode: JournalMode
    var steps: [FuzzStep]

    var description: String {
        "seed \(seed) \(kind.rawValue) \(journalMode)\n" + steps.enumerated().map { "  \($0.offset): \($0.element)" }.joined(separator: "\n")
    }
}

/// Builds hostile statements from dangerous pieces. Every secret it writes into a key position
/// contains ``secretMark``, so the checks find any of them by one needle.
struct FuzzGrammar {
    static let secretMark = "S3CRETqz"
    static let marker = "MARKERvw9"
    var random: FuzzRandom
    let folder: String
    let sqlcipher4: Bool
    /// The main database's passphrase, so that an ATTACH can name the main file itself with its key.
    var mainKey = ""

    mutating func secret() -> String { "\(Self.secretMark)\(random.below(1000))" }

    // MARK: Lexical pieces

    /// Whitespace or a comment between two tokens, sometimes one SQLite reads as a space (a
    /// byte-order mark on 3.46) or one it does not (a Unicode space: a syntax error).
    mutating func gap() -> String {
        random.pick([" ", " ", " ", "  ", "\t", "\n", "\r\n", "/**/", "/* a;b */", "-- c\n", " /*x*/ ", "\u{FEFF}",
                     " \u{FEFF}", "\u{00A0}", "\u{2003}", "\u{000C}", "\u{000B}"])
    }

    mutating func spelled(_ word: String) -> String {
        switch random.below(6) {
        case 0: return word.uppercased()
        case 1: return word.lowercased()
        case 2: return String(word.enumerated().map { $0.offset % 2 == 0 ? Character($0.element.uppercased()) : $0.element })
        default: return word
        }
    }

    /// A name as SQLite accepts it: bare, in double quotes, brackets, backticks or single quotes.
    mutating func quoted(_ name: String) -> String {
        let name = spelled(name)
        switch random.below(7) {
        case 0: return "\"\(name)\""
        case 1: return "[\(name)]"
        case 2: return "`\(name)`"
        case 3: return "'\(name)'"
        default: return name
        }
    }

    mutating func schemaPrefix() -> String {
        switch random.below(8) {
        case 0: return quoted("main") + "."
        case 1: return quoted("temp") + "."
        case 2: return quoted("aux") + gap() + "." + gap()
        case 3: return "main" + gap() + "."
        default: return ""
        }
    }

    /// A string literal of `text`, in a form SQLite reads as text or as a blob of its bytes.
    mutating func stringLiteral(_ text: String) -> String {
        let escaped = text.replacingOccurrences(of: "'", with: "''")
        switch random.below(6) {
        case 0: return "x'" + text.utf8.map { String(format: "%02x", $0) }.joined() + "'"
        case 1: return "\"\(text)\""
        case 2: return "'\(escaped)' || ''"
        default: return "'\(escaped)'"
        }
    }

    // MARK: Pragmas

    static let dangerousPragmas = [
        "key", "hexkey", "textkey", "rekey", "hexrekey", "textrekey", "cipher", "rekey_cipher", "cipher_page_size",
        "page_size", "kdf_iter", "fast_kdf_iter", "rekey_kdf_iter", "cipher_use_hmac", "cipher_hmac_algorithm",
        "cipher_kdf_algorithm", "cipher_hmac_pgno", "cipher_hmac_salt_mask", "cipher_plaintext_header_size", "cipher_salt",
        "cipher_compatibility", "cipher_default_kdf_iter", "cipher_default_page_size", "cipher_default_use_hmac",
        "cipher_default_plaintext_header_size", "cipher_default_hmac_algorithm", "cipher_default_kdf_algorithm",
        "cipher_default_compatibility", "cipher_default_settings", "cipher_migrate", "cipher_profile", "cipher_log",
        "cipher_store_pass", "cipher_version", "cipher_provider", "cipher_settings", "cipher_integrity_check",
        "cipher_memory_security", "cipher_add_random", "cipher_log_level", "cipher_log_source", "cipher_nonsense",
        "journal_mode", "writable_schema", "temp_store", "temp_store_directory", "data_store_directory", "mmap_size",
        "locking_mode", "query_only", "trusted_schema", "secure_delete", "synchronous", "wal_checkpoint",
        "schema_version", "user_version", "application_id", "integrity_check", "quick_check", "foreign_keys",
        "recursive_triggers", "cell_size_check", "auto_vacuum", "incremental_vacuum", "shrink_memory", "optimize",
        "legacy_alter_table", "reverse_unordered_selects", "max_page_count", "journal_size_limit", "cache_size",
        "hard_heap_limit", "soft_heap_limit", "threads",
    ]

    /// A value for a pragma; secrets only for the pragmas that take a key.
    mutating func pragmaValue(key: Bool) -> String {
        switch random.below(14) {
        case 0, 1: return stringLiteral(key ? secret() : "plain-value")
        case 2: return "x'" + (0..<32).map { _ in String(format: "%02x", random.below(256)) }.joined() + "'"
        case 3: return "\"x'" + String(repeating: "ab", count: 32) + "'\""
        case 4: return random.pick(["on", "ON", "off", "OFF", "yes", "no", "true", "false", "'off'", "\"off\"", "Off"])
        case 5: return random.pick(["0", "1", "2", "-1", "+5", "4096", "1024", "512", "65536", "00", "0x1", "2abc", "' 1'"])
        case 6: return random.pick(["9223372036854775808", "-9223372036854775809", "4294967297", "1e999", "2147483648"])
        case 7: return random.pick(["memory", "file", "default", "'memory'", "MEMORY", "'2'"])
        case 8: return random.pick(["delete", "wal", "off", "memory", "truncate", "persist", "exclusive", "normal"])
        case 9: return random.pick(["PBKDF2_HMAC_SHA1", "HMAC_SHA1", "'HMAC_SHA512'", "3", "4", "1"])
        case 10: return stringLiteral(folder + "/store")
        case 11: return "'" + String(repeating: "A", count: random.pick([0, 1, 100, 5000])) + "'"
        default: return random.pick(["full", "restart", "passive", "truncate", "reset", "fast"])
        }
    }

    mutating func pragma() -> String {
        let name = random.pick(Self.dangerousPragmas)
        let key = ["key", "hexkey", "textkey", "rekey", "hexrekey", "textrekey"].contains(name)
        var text = spelled("PRAGMA") + gap() + schemaPrefix() + quoted(name)
        switch random.below(4) {
        // Only read: set, SQLCipher 4's memory wiping stays on for the whole process (4.6.1 ignores
        // `off`) and slows every later test of the process several times over.
        case _ where name == "cipher_memory_security": break
        case 0: break
        case 1: text += gap() + "(" + gap() + pragmaValue(key: key) + gap() + ")"
        default: text += gap() + random.pick(["=", "==", "= "]) + gap() + pragmaValue(key: key)
        }
        return text
    }

    // MARK: Files, ATTACH, VACUUM, export

    mutating func filePath() -> String {
        let name = random.pick(["a.db", "b.db", "attached.db", "main.db", "plain.db", "new\(random.below(4)).db", "x y.db",
                                "é.db", "v.db"])
        return folder + "/" + name
    }

    mutating func fileName() -> String {
        let path = filePath()
        switch random.below(13) {
        case 0: return "'file:\(path)?key=\(secret())'"
        case 1: return "'file:\(path)?hexkey=" + String(repeating: "0f", count: 32) + "'"
        case 2: return "'file:\(path)?cipher_plaintext_header_size=32&key=\(secret())'"
        case 3: return "'file:\(path)?mode=ro'"
        case 4: return "':memory:'"
        case 5: return "''"
        // Every name stays inside the case's folder: without URI processing SQLite takes a
        // `file:%2F…` name literally, as a file in the working directory.
        case 6: return "'file:\(path)?mode=rwc&cache=private'"
        case 7: return "'\(path)' || ''"
        case 8: return "'file:\(path)?vfs=unix-none&key=\(secret())'"
        case 9: return random.pick(["'file:\(path)?key='", "'file:\(path)?k%65y=\(secret())'", "'file:\(path)?hexkey='",
                                    "'file:\(path)?immutable=1'", "'file:\(path)?nolock=1&key=\(secret())'",
                                    "'file:\(path)?vfs=unix-dotfile'", "'file:\(path)?mode=memory&cache=shared'",
                                    "'file://localhost\(path)?KEY=\(secret())'", "'file:\(path)#key=\(secret())'"])
        default: return "'\(path)'"
        }
    }

    mutating func keyClause() -> String {
        switch random.below(10) {
        case 0: return ""
        case 1: return gap() + spelled("KEY") + gap() + "''"
        case 2: return gap() + spelled("KEY") + gap() + "x'" + String(repeating: "1f", count: 32) + "'"
        case 3: return gap() + spelled("KEY") + gap() + "NULL"
        case 4: return gap() + spelled("KEY") + gap() + "\"x'" + String(repeating: "2e", count: 48) + "'\""
        case 5: return gap() + spelled("KEY") + gap() + "'\(secret())' || '\(secret())'"
        case 6, 7: return gap() + spelled("KEY") + gap() + "'\(mainKey)'"
        default: return gap() + spelled("KEY") + gap() + stringLiteral(secret())
        }
    }

    mutating func attach() -> String {
        spelled("ATTACH") + gap() + (random.oneIn(2) ? spelled("DATABASE") + gap() : "") + fileName() + gap()
            + spelled("AS") + gap() + quoted(random.pick(["aux", "aux", "main", "temp", "x y", "AUX", "plain"])) + keyClause()
    }

    mutating func vacuum() -> String {
        var text = spelled("VACUUM")
        if random.oneIn(2) { text += gap() + quoted(random.pick(["main", "temp", "aux"])) }
        if random.below(3) != 0 { text += gap() + spelled("INTO") + gap() + fileName() }
        return text
    }

    mutating func exportCall() -> String {
        let name = random.pick(["sqlcipher_export", "SQLCIPHER_EXPORT", "\"sqlcipher_export\"", "sqlcipher_nonsense",
                                "sqlcipher_export "])
        let arguments = random.pick(["'aux'", "'main'", "'aux', 'main'", "'temp'", "'main', 'aux'", ""])
        return "\(name)(\(arguments))"
    }

    // MARK: Expressions

    mutating func expression(depth: Int = 0) -> String {
        if depth > 3 { return random.pick(["1", "'a'", "NULL", "x'00'", "a"]) }
        switch random.below(22) {
        case 0: return exportCall()
        case 1: return "load_extension('/usr/lib/x86_64-linux-gnu/libm.so.6')"
        case 2: return String(repeating: "(", count: random.pick([10, 200, 1100, 5000])) + "1"
            + String(repeating: ")", count: random.pick([10, 200, 1100, 5000]))
        case 3: return "'" + String(repeating: random.pick(["a", "é", "'" + "'"]), count: random.pick([1000, 100_000, 1_500_000])) + "'"
        case 4: return "zeroblob(\(random.pick(["-1", "0", "100000", "2147483647", "9223372036854775807", "1e10"])))"
        case 5: return "randomblob(\(random.pick(["-5", "16", "3000000", "9223372036854775807"])))"
        case 6: return random.pick(["9223372036854775807 + 1", "-9223372036854775808 - 1", "abs(-9223372036854775808)",
                                    "9223372036854775808", "0x8000000000000000", "0xFFFFFFFFFFFFFFFFF", "1e999",
                                    "-9223372036854775808 / -1", "-9223372036854775808 % -1", "1/0"])
        case 7: return "printf('%.*c', \(random.pick(["1000", "20000000", "2147483647"])), 'x')"
        case 8: return "char(0)"
        case 9: return "'a' || char(0) || '\(Self.secretMark)-not-a-key'".replacingOccurrences(of: Self.secretMark, with: "nokey")
        case 10: return "json('" + String(repeating: "[", count: random.pick([10, 1000, 3000]))
            + String(repeating: "]", count: random.pick([10, 1000, 3000])) + "')"
        case 11: return "substr('abc', -9223372036854775808, 9223372036854775807)"
        case 12: return "replace(hex(zeroblob(\(random.pick([10, 1000, 2_000_000])))), '00', 'ab')"
        case 13: return "(SELECT count(*) FROM t)"
        case 14: return "(SELECT v FROM marker)"
        case 15: return "sqlite_compileoption_get(0)"
        case 16: return expression(depth: depth + 1) + " " + random.pick(["+", "||", "IS", "LIKE", "GLOB", "AND", "*", "="])
            + " " + expression(depth: depth + 1)
        case 17: return "CASE " + expression(depth: depth + 1) + " WHEN 1 THEN " + expression(depth: depth + 1) + " END"
        case 18: return "?"
        case 19: return random.pick([":a", "@b", "$c", "?1", "?999", "?32767", "?32768", "?0"])
        case 20: return "cast(" + expression(depth: depth + 1) + " AS " + random.pick(["INTEGER", "REAL", "BLOB", "TEXT"]) + ")"
        default: return random.pick(["1", "'x'", "NULL", "-0.0", "1.5e308", "a", "rowid"])
        }
    }

    // MARK: Statements

    mutating func body() -> String {
        random.pick([
            "SELECT \(exportCall())", "INSERT INTO t(a) VALUES (\(expression()))", "UPDATE t SET a = \(expression())",
            "DELETE FROM t WHERE a = 1", "SELECT load_extension('x')", "INSERT INTO t(a) SELECT \(exportCall())",
        ])
    }

    mutating func statement() -> String {
        switch random.below(30) {
        case 0, 1, 2, 3, 4, 5: return pragma()
        case 6, 7, 8: return attach()
        case 9: return spelled("DETACH") + gap() + (random.oneIn(2) ? spelled("DATABASE") + gap() : "")
            + quoted(random.pick(["aux", "main", "temp", "plain", "x y"]))
        case 10, 11: return vacuum()
        case 12: return "SELECT " + exportCall()
        case 13: return "SELECT " + expression()
        case 14: return "CREATE " + random.pick(["", "TEMP "]) + "TRIGGER IF NOT EXISTS tr\(random.below(3)) AFTER "
            + random.pick(["INSERT", "UPDATE", "DELETE"]) + " ON " + random.pick(["t", "main.t", "marker"]) + " BEGIN "
            + body() + "; END"
        case 15: return "CREATE " + random.pick(["", "TEMP "]) + "VIEW IF NOT EXISTS v\(random.below(3)) AS SELECT "
            + expression()
        case 16: return "SELECT * FROM " + random.pick(["v0", "v1", "v2", "temp.v0", "t", "sqlite_master", "pragma_table_info('t')",
                                                         "pragma_database_list", "pragma_cipher_settings", "pragma_key('x')"])
        case 17: return "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT \(random.pick([10, 10_000, 50_000]))) "
            + random.pick(["SELECT count(*) FROM c", "SELECT \(exportCall()) FROM c LIMIT 1",
                           "INSERT INTO t(a) SELECT x FROM c", "SELECT group_concat(x) FROM c"])
        case 18: return random.pick([
            "UPDATE sqlite_master SET sql = 'CREATE TABLE t(a, b, c' WHERE name = 't'",
            "INSERT INTO sqlite_master VALUES('table', 'z', 'z', 0, 'CREATE TABLE z(')",
            "DELETE FROM sqlite_master", "UPDATE sqlite_temp_master SET sql = NULL", "DROP TABLE sqlite_master",
            "CREATE TABLE sqlite_x(a)", "ALTER TABLE t RENAME TO sqlite_master",
        ])
        case 19: return random.pick(["BEGIN", "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE", "COMMIT", "END", "ROLLBACK", "SAVEPOINT s",
                                     "RELEASE s", "ROLLBACK TO s", "RELEASE SAVEPOINT s", "END TRANSACTION", "begin deferred transaction"])
        case 20: return "CREATE VIRTUAL TABLE " + random.pick(["IF NOT EXISTS f", "f", "temp.f", "aux.f"]) + " USING "
            + random.pick(["fts5", "FTS5", "\"fts5\"", "fts4", "rtree", "nonsense"]) + "(" + random.pick([
                "a", "a, tokenize = '" + Array(repeating: "porter", count: random.pick([2, 50, 2000])).joined(separator: " ")
                    + " ascii'", "a, content = 'marker', content_rowid = 'rowid'", "a, prefix = '0'", "a, prefix = '9999999999'",
                "a, columnsize = 2", "a, detail = nonsense", "rank", "a, a", "a, tokenize = 'unicode61 remove_diacritics 9'",
                "a, content = ''", "a, tokenize = \"trigram\"", "",
            ]) + ")"
        case 21: return random.pick([
            "INSERT INTO f(f) VALUES('rebuild')", "INSERT INTO f(f) VALUES('integrity-check')",
            "INSERT INTO f(f, rank) VALUES('rank', 'bm25(10.0, 5.0)')", "INSERT INTO f(f, rank) VALUES('pgsz', 9999999)",
            "INSERT INTO f(f, rank) VALUES('automerge', -1)", "INSERT INTO f(a) VALUES (\(expression()))",
            "SELECT * FROM f WHERE f MATCH '" + random.pick(["\"", "NEAR(", "a*", "^", "(((((", "a AND", "{a}: b", "\u{0}"]) + "'",
            "SELECT highlight(f, 9999999999, '[', ']') FROM f", "SELECT bm25(f, 1e308, -1e308) FROM f",
            "SELECT snippet(f, -1, '', '', '', 999999999) FROM f",
        ])
        case 22: return "INSERT INTO t(a, b) VALUES (" + expression() + ", " + expression() + ")"
        case 23: return "UPDATE t SET b = " + expression() + " WHERE a " + random.pick(["IS NULL", "= 1", "> 0"])
        case 24: return "SELECT " + (0..<random.below(4)).map { _ in expression() }.joined(separator: ", ") + (random.oneIn(2) ? "" : "1")
        case 25: return "CREATE TABLE IF NOT EXISTS " + schemaPrefix() + "t\(random.below(3))(a DEFAULT ("
            + random.pick([exportCall(), "1 IS \(exportCall())", "CASE \(exportCall()) WHEN 1 THEN 2 END", "1"]) + "), b)"
        case 26: return "REINDEX; ANALYZE; " + random.pick(["VACUUM", "PRAGMA optimize", "SELECT 1"])
        case 27: return "DROP " + random.pick(["TABLE", "VIEW", "TRIGGER", "INDEX"]) + " IF EXISTS "
            + random.pick(["t", "v0", "tr0", "f", "aux.t", "temp.v1", "t1"])
        case 28: return "ALTER TABLE t ADD COLUMN " + random.pick(["c", "d"]) + " DEFAULT ("
            + random.pick([exportCall(), "1", "load_extension('x')"]) + ")"
        default: return "SELECT * FROM t; " + pragma()
        }
    }

    /// A text of one to four statements, joined as scripts are: `;`, empty statements, comments,
    /// sometimes a NUL byte or a byte-order mark at the front.
    mutating func script() -> String {
        var parts: [String] = []
        for _ in 0..<(random.oneIn(3) ? 1 + random.below(4) : 1) { parts.append(statement()) }
        var text = parts.joined(separator: random.pick([";", "; ", ";\n-- next\n", ";;", " ; /* ; */ "]))
        if random.oneIn(4) { text = random.pick([";", " ", "\u{FEFF}", "/* lead */", "-- lead\n", ";;\n"]) + text }
        if random.oneIn(4) { text += random.pick([";", "; ", " -- tail", ";;", "\n"]) }
        if random.oneIn(25) {
            let cut = text.index(text.startIndex, offsetBy: random.below(text.count + 1))
            text.insert("\u{0}", at: cut)
        }
        return text
    }

    /// What a body of `importPlaintext` may try against the plaintext file it reads, attached as
    /// `plain`: every write to it must be refused, so that no byte of the encrypted database reaches it.
    mutating func plaintextBodyStatement() -> String {
        let plain = quoted("plain")
        return random.pick([
            "INSERT INTO \(plain).p SELECT v FROM main.marker", "UPDATE \(plain).p SET x = (SELECT v FROM marker)",
            "CREATE TABLE \(plain).copy AS SELECT * FROM main.marker", "REPLACE INTO \(plain).p(rowid, x) SELECT 1, v FROM marker",
            "CREATE TEMP TRIGGER leak AFTER INSERT ON main.t BEGIN INSERT INTO plain.p SELECT v FROM main.marker; END; "
                + "INSERT INTO t(a) VALUES (5)",
            "CREATE TEMP VIEW pv AS SELECT * FROM plain.p; INSERT INTO pv VALUES ((SELECT v FROM marker))",
            "PRAGMA \(plain).user_version = 7", "PRAGMA \(plain).journal_mode = wal", "PRAGMA \(plain).key = '\(secret())'",
            "PRAGMA \(plain).application_id = 1", "VACUUM \(plain)", "VACUUM \(plain) INTO '\(folder)/plaincopy.db'",
            "DETACH \(plain)", "DETACH plain; ATTACH '\(folder)/plain.db' AS plain; INSERT INTO plain.p SELECT v FROM marker",
            "DROP TABLE \(plain).p", "ALTER TABLE \(plain).p ADD COLUMN y", "CREATE INDEX \(plain).i ON p(x)",
            "INSERT INTO \(plain).sqlite_master VALUES('table', 'z', 'z', 0, 'CREATE TABLE z(a)')",
            "SELECT * FROM plain.p", "INSERT INTO main.t(a) SELECT x FROM plain.p", "PRAGMA plain.wal_checkpoint",
            "DELETE FROM \(plain).p", "PRAGMA \(plain).writable_schema = 1", "PRAGMA \(plain).page_size = 512; VACUUM plain",
        ])
    }

    mutating func argumentList(for sql: String) -> [FuzzArgument] {
        (0..<random.pick([0, 0, 1, 1, 2, 3, 5])).map { _ in
            switch random.below(10) {
            case 0: return .int(random.pick([Int64.max, Int64.min, 0, -1]))
            case 1: return .real(random.pick([Double.nan, .infinity, -.infinity, 1e308, -0.0]))
            case 2: return .text(String(repeating: "z", count: random.pick([0, 10, 300_000])))
            case 3: return .blob(Data(count: random.pick([0, 16, 1_000_000])))
            case 4: return .text("a\u{0}b")
            case 5: return .text(folder + "/bound.db")
            case 6: return .null
            default: return .int(Int64(random.below(100)))
            }
        }
    }

    mutating func step() -> FuzzStep {
        let surface: FuzzSurface = random.pick([
            .execute, .execute, .execute, .execute, .executeArguments, .executeArguments, .query, .query, .transaction, .transaction,
            .savepoint, .read, .prepare, .cursor, .stream, .liveValues, .literal, .literal, .importPlaintext, .importPlaintext,
            .backup, .export, .rekey, .migrate, .namedArguments,
        ])
        var step = FuzzStep(surface: surface, sql: script())
        if surface == .importPlaintext, random.below(3) != 0 { step.sql = plaintextBodyStatement() }
        if surface == .namedArguments {
            step.sql = random.pick(["SELECT :a, @b, $c", "SELECT ?, :a", "INSERT INTO t(a, b) VALUES (:a, :a)", "SELECT ?1, ?1, :a",
                                    "ATTACH :file AS aux KEY :key", "SELECT $a(b), :a::b", step.sql])
            step.names = (0..<random.below(4)).map { _ in random.pick([":a", "a", "@b", "$c", "1", "?1", "", "\u{0}", "file", "key"]) }
            step.arguments = step.names.map { name in
                name == "key" ? .text(secret()) : name == "file" ? .text(filePath()) : .int(Int64(random.below(9)))
            }
        }
        if surface == .executeArguments, random.oneIn(3) {
            // An ATTACH whose file and key are bound: the key is a secret only in that position.
            step.sql = spelled("ATTACH") + gap() + "?" + gap() + "AS" + gap() + quoted(random.pick(["aux", "main", "x y"]))
                + gap() + spelled("KEY") + gap() + random.pick(["?", "?2", ":k", "? || ?"])
            step.arguments = [.text(random.pick([filePath(), "file:\(filePath())?key=\(secret())", ":memory:", ""])),
                              .text(random.pick([secret(), "", "x'" + String(repeating: "3c", count: 32) + "'"]))]
                + (random.oneIn(3) ? [.text(secret())] : [])
            return step
        }
        switch surface {
        case .executeArguments, .query, .prepare, .cursor, .stream:
            if random.below(3) != 0 || step.sql.contains("?") { step.arguments = argumentList(for: step.sql) }
        case .literal:
            step.literal = random.below(FuzzRunner.literalTemplates)
            step.names = [random.pick(["t", "aux", "main", "key", "sqlite_master", "x\"y", "a]b", "", "\u{0}", "temp",
                                       String(repeating: "n", count: 70_000), "marker", "rekey", "cipher_page_size", fileNameText()]),
                          random.pick([secret(), "\(Self.secretMark)\u{0}", "", "x'" + String(repeating: "00", count: 32) + "'"]),
                          random.pick([fileNameText(), "file:\(fileNameText())?key=\(secret())", ":memory:"])]
        case .backup, .export:
            step.names = [random.pick([folder + "/copy\(random.below(3)).db", folder + "/main.db", folder + "/plain.db",
                                       folder + "/copy.db-wal", folder]), secret()]
        case .rekey:
            step.names = [secret()]
        case .migrate:
            step.names = [random.pick(["m1", "m1", "", "m\u{0}", "_migrations", String(repeating: "m", count: 5000)])]
        default: break
        }
        return step
    }

    mutating func fileNameText() -> String { folder + "/lit\(random.below(2)).db" }
}

/// Runs cases and checks the invariants; collects every violation as text.
final class FuzzRunner: @unchecked Sendable {
    static let literalTemplates = 9
    let folder: TemporaryDirectory
    let sqlcipher4: Bool
    private let events = Mutex<[String]>([])
    private(set) var violations: [String] = []
    /// Per error kind, how often it was seen (for the report of a long run).
    private(set) var errorKinds: [String: Int] = [:]

    init(folder: TemporaryDirectory) {
        self.folder = folder
        sqlcipher4 = isSQLCipher4()
    }

    static func generate(seed: UInt64, folder: String, sqlcipher4: Bool, steps: Int = 4) -> FuzzCase {
        var grammar = FuzzGrammar(random: FuzzRandom(state: seed), folder: folder, sqlcipher4: sqlcipher4)
        grammar.mainKey = Self.passphrase(seed: seed)
        let kind: FuzzDatabaseKind = grammar.random.pick([.passphrase, .passphrase, .passphrase, .rawKey, .pool, .pool, .plaintext])
        let journal: JournalMode = kind == .pool || grammar.random.oneIn(2) ? .wal : .rollback
        let count = 1 + grammar.random.below(steps)
        return FuzzCase(seed: seed, kind: kind, journalMode: journal, steps: (0..<count).map { _ in grammar.step() })
    }

    /// The passphrase a case's database is created with.
    static func passphrase(seed: UInt64) -> String { "pass-\(FuzzGrammar.secretMark)-\(seed)" }

    private func violation(_ fuzzCase: FuzzCase, _ what: String) {
        violations.append("\(what)\n\(fuzzCase)")
    }

    // MARK: Opening

    private func open(_ kind: FuzzDatabaseKind, path: String, key: DatabaseKey, journal: JournalMode) throws -> any DatabaseAccess {
        switch kind {
        case .passphrase, .rawKey: return try Database(path: path, key: key, journalMode: journal, cipher: fastCipher)
        case .pool: return try DatabasePool(path: path, key: key, cipher: fastCipher)
        case .plaintext: return try Database(unencryptedPath: path, journalMode: journal)
        }
    }

    private static func close(_ db: any DatabaseAccess) async {
        if let database = db as? Database { await database.close() } else if let pool = db as? DatabasePool { await pool.close() }
    }

    /// The cipher settings of the connection and the process-wide defaults and memory limits, as text.
    private func cipherState(_ db: any DatabaseAccess) async throws -> String {
        var names = ["cipher_page_size", "kdf_iter", "cipher_use_hmac", "cipher_hmac_pgno", "cipher_hmac_salt_mask",
                     "cipher_default_kdf_iter", "cipher_default_page_size", "cipher_default_use_hmac", "temp_store",
                     "hard_heap_limit", "soft_heap_limit"]
        if sqlcipher4 {
            names += ["cipher_hmac_algorithm", "cipher_kdf_algorithm", "cipher_plaintext_header_size", "cipher_default_hmac_algorithm",
                      "cipher_default_kdf_algorithm", "cipher_default_plaintext_header_size", "cipher_default_compatibility",
                      "cipher_compatibility"]
        }
        var state: [String] = []
        for name in names {
            let rows = try await db.query("PRAGMA \(name)")
            state.append("\(name)=" + rows.map { row in (0..<row.count).map { "\(row[$0])" }.joined(separator: ",") }.joined(separator: ";"))
        }
        return state.joined(separator: " ")
    }

    // MARK: Running

    func run(seed: UInt64, steps: Int = 4, only: Set<Int>? = nil, log: ((String) -> Void)? = nil) async {
        let dir = TemporaryDirectory("fuzz\(seed)")
        var fuzzCase = Self.generate(seed: seed, folder: dir.url.path, sqlcipher4: sqlcipher4, steps: steps)
        if let only { fuzzCase.steps = fuzzCase.steps.enumerated().filter { only.contains($0.offset) }.map(\.element) }
        log?("\(fuzzCase)")
        let path = dir.path("main.db")
        var passphrase = Self.passphrase(seed: seed)
        var key: DatabaseKey = fuzzCase.kind == .rawKey ? .rawKey(rawKey(UInt8(truncatingIfNeeded: seed))) : .passphrase(passphrase)
        var secrets = [FuzzGrammar.secretMark]
        if case .rawKey = fuzzCase.kind {
            let hex = rawKey(UInt8(truncatingIfNeeded: seed)).map { String(format: "%02x", $0) }.joined()
            secrets.append(hex)
            secrets.append(hex.uppercased())
        }
        let encrypted = fuzzCase.kind != .plaintext
        // The plaintext file importPlaintext reads, with a table of its own.
        do {
            let plain = try Database(unencryptedPath: dir.path("plain.db"), journalMode: .rollback)
            try await plain.execute("CREATE TABLE p(x); INSERT INTO p VALUES ('plain row')")
            await plain.close()
        } catch {
            violation(fuzzCase, "setup of plain.db failed: \(error)")
            return
        }
        let db: any DatabaseAccess
        let baseline: String
        do {
            db = try open(fuzzCase.kind, path: path, key: key, journal: fuzzCase.journalMode)
            try await db.execute("CREATE TABLE marker(v TEXT); INSERT INTO marker VALUES ('\(FuzzGrammar.marker)')")
            try await db.execute("CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 'row'), (2, NULL)")
            baseline = encrypted ? try await cipherState(db) : ""
        } catch {
            violation(fuzzCase, "setup failed: \(error)")
            return
        }
        events.withLock { $0.removeAll() }
        let token = try? await db.trace(options: TraceOptions(includeArguments: true)) { [self] event in
            self.events.withLock { $0.append(event.description) }
        }
        for (index, step) in fuzzCase.steps.enumerated() {
            do {
                if let newKey = try await perform(step, on: db, folder: dir.url.path) {
                    key = .passphrase(newKey)
                    passphrase = newKey
                }
            } catch {
                log?("ERROR step \(index): \(error)")
                check(error, step: index, fuzzCase, secrets: secrets)
            }
        }
        token?.cancel()
        if encrypted {
            do {
                let after = try await cipherState(db)
                if after != baseline { violation(fuzzCase, "cipher settings changed:\n  before \(baseline)\n  after  \(after)") }
            } catch {
                // A connection left unusable by an attachment it could not detach: its error is checked.
                check(error, step: -1, fuzzCase, secrets: secrets)
            }
        }
        for event in events.withLock({ $0 }) where secrets.contains(where: { event.contains($0) }) {
            violation(fuzzCase, "a secret reached a trace event: \(event.prefix(400))")
        }
        await Self.close(db)
        checkFiles(dir, encrypted: encrypted, secrets: secrets + [passphrase], fuzzCase)
        // The file opens again with its key and holds the marker.
        do {
            let again = try open(fuzzCase.kind == .pool ? .passphrase : fuzzCase.kind, path: path, key: key, journal: fuzzCase.journalMode)
            let rows = try await again.query("SELECT v FROM marker")
            if rows.first?.get(0, as: String.self) != FuzzGrammar.marker { violation(fuzzCase, "the marker row is gone: \(rows)") }
            await Self.close(again)
        } catch {
            violation(fuzzCase, "the file does not open again with its key: \(error)")
        }
    }

    /// Runs one step; returns the new passphrase when the step rekeyed.
    private func perform(_ step: FuzzStep, on db: any DatabaseAccess, folder: String) async throws -> String? {
        let sql = step.sql
        let arguments = step.arguments.map { StatementArguments($0.map(\.value)) }
        switch step.surface {
        case .execute: try await db.execute(sql)
        case .executeArguments: try await db.execute(sql, arguments: arguments ?? [])
        case .query: _ = try await db.query(sql, arguments: arguments ?? [])
        case .transaction: try await db.transaction { conn in _ = try conn.execute(sql, arguments: arguments ?? []) }
        case .savepoint:
            try await db.savepoint { conn in
                try conn.savepoint { inner in _ = try inner.execute(sql) }
            }
        case .read: _ = try await db.read { conn in try conn.query(sql, arguments: arguments ?? []).count }
        case .prepare:
            try await db.transaction { conn in
                let statement = try conn.prepare(sql)
                _ = try statement.execute(arguments: arguments ?? [])
            }
        case .cursor:
            _ = try await db.read { conn in
                var count = 0
                try conn.cursor(sql, arguments: arguments ?? []).forEach { _ in count += 1 }
                return count
            }
        case .stream:
            var seen = 0
            for try await _ in db.stream(sql, arguments: arguments ?? [], batchSize: 2) {
                seen += 1
                if seen > 5 { break }
            }
        case .liveValues:
            for try await _ in db.values(of: .query(sql, arguments: arguments ?? [])) { break }
        case .literal: try await runLiteral(step, on: db)
        case .migrate: try await db.migrate([FuzzMigration(id: step.names[0], sql: sql)])
        case .namedArguments:
            var seen: Set<String> = []
            let bindings = zip(step.names, step.arguments ?? []).filter { seen.insert($0.0).inserted }
            let arguments = StatementArguments(bindings.map { ParameterBinding(name: $0.0, value: $0.1.databaseValue) })
            _ = try await db.query(sql, arguments: arguments)
        case .importPlaintext:
            try await db.importPlaintext(from: folder + "/plain.db") { conn in
                _ = try conn.execute(sql)
            }
        case .backup:
            if let database = db as? Database {
                try await database.backup(to: step.names[0], key: .passphrase(step.names[1]))
            } else if let pool = db as? DatabasePool {
                try await pool.backup(to: step.names[0], key: .passphrase(step.names[1]))
            }
        case .export:
            guard let database = db as? Database else { return nil }
            try await database.export(to: step.names[0], key: .passphrase(step.names[1]), cipher: fastCipher)
        case .rekey:
            if let database = db as? Database {
                try await database.rekey(.passphrase(step.names[0]))
            } else if let pool = db as? DatabasePool {
                try await pool.rekey(.passphrase(step.names[0]))
            }
            return step.names[0]
        }
        return nil
    }

    private func runLiteral(_ step: FuzzStep, on db: any DatabaseAccess) async throws {
        // A name, a key (secret, empty or raw) and a file; the key goes only where a key goes.
        let name = step.names[0]
        let key = step.names[1]
        let file = step.names[2]
        switch step.literal {
        case 0: try await db.execute(literal: "ATTACH \(file) AS \(identifier: name) KEY \(key)")
        case 1: try await db.execute(literal: "PRAGMA \(identifier: name) = \(key)")
        case 2: _ = try await db.query(literal: "SELECT * FROM \(identifier: name) WHERE a = \(file)")
        case 3: try await db.execute(literal: "VACUUM INTO \(file)")
        case 4: _ = try await db.query(literal: "SELECT sqlcipher_export(\(name))")
        case 5: try await db.execute(literal: "INSERT INTO t(a, b) VALUES (\(name), \(list: [name, file]))")
        case 6: try await db.execute(literal: "CREATE TEMP VIEW IF NOT EXISTS \(identifier: name) AS SELECT 1")
        case 7: try await db.execute(literal: "ATTACH \(file) AS aux KEY \(key)")
        default: try await db.execute(literal: "DETACH \(identifier: name)")
        }
    }

    // MARK: Checks

    private func check(_ error: any Error, step: Int, _ fuzzCase: FuzzCase, secrets: [String]) {
        if error is CancellationError { return }
        guard let error = error as? SqlCipherError else {
            violation(fuzzCase, "step \(step): an untyped error: \(type(of: error)) \(error)")
            return
        }
        let description = error.description
        let kind = "\(error)".prefix(while: { $0 != "(" })
        errorKinds[String(kind), default: 0] += 1
        for secret in secrets where description.contains(secret) || "\(error)".contains(secret) || String(reflecting: error).contains(secret) {
            violation(fuzzCase, "step \(step): a secret reached an error: \(description.prefix(600))")
            break
        }
        if case let .sqlite(code, _, message, _) = error {
            // The package's refusals are typed; SQLite's own "not authorized" means one surfaced bare.
            let bare = message.trimmingCharacters(in: .whitespaces)
            if code & 0xFF == 23 || bare.hasSuffix("not authorized") || bare.hasSuffix("prohibited") {
                violation(fuzzCase, "step \(step): a refusal surfaced as a bare SQLite error: \(description.prefix(600))")
            }
            let key = "sqlite \(code & 0xFF): " + message.prefix(50)
            errorKinds[key, default: 0] += 1
        }
    }

    private func checkFiles(_ dir: TemporaryDirectory, encrypted: Bool, secrets: [String], _ fuzzCase: FuzzCase) {
        let header = Data("SQLite format 3\u{0}".utf8)
        var pending = [dir.url.path]
        while let folder = pending.popLast() {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                let file = folder + "/" + name
                var info = stat()
                guard lstat(file, &info) == 0 else { continue }
                if (info.st_mode & S_IFMT) == S_IFDIR { pending.append(file); continue }
                guard (info.st_mode & S_IFMT) == S_IFREG, let bytes = FileManager.default.contents(atPath: file) else { continue }
                let isPlainFixture = name.hasPrefix("plain.db")
                if encrypted, !isPlainFixture, bytes.starts(with: header) {
                    violation(fuzzCase, "a plaintext SQLite file appeared: \(name) (\(bytes.count) bytes)")
                }
                if encrypted || isPlainFixture, bytes.range(of: Data(FuzzGrammar.marker.utf8)) != nil {
                    violation(fuzzCase, "the marker is readable in \(name)")
                }
                for secret in secrets where bytes.range(of: Data(secret.utf8)) != nil {
                    violation(fuzzCase, "a secret is readable in \(name)")
                    break
                }
            }
        }
    }
}
