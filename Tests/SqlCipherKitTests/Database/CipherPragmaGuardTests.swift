import Foundation
import Testing
@testable import SqlCipherKit

/// Raw SQL that would defeat the encryption: one test per row of the cipher pragma table
/// (SqlCipherKit.docc/RawSQLGuards.md), on the library that has the pragma, in every spelling and through every
/// path; the dangerous ones are followed by writes, a close and a reopen with the key, and a scan
/// of the file for the rows' marker.
@Suite struct CipherPragmaGuardTests {
    /// The value each pragma's set form is tried with: for refused rows the value that does the
    /// harm the row's "why" describes, for allowed rows one that changes nothing in this process
    /// (the process-wide ones would otherwise reach other tests).
    static let setValues: [String: String] = [
        "key": "'B'", "hexkey": "'" + String(repeating: "0b", count: 32) + "'", "textkey": "'B'",
        "rekey": "'B'", "hexrekey": "'" + String(repeating: "0c", count: 32) + "'", "textrekey": "'B'",
        "cipher": "'aes-128-cbc'", "rekey_cipher": "'aes-128-cbc'",
        "cipher_page_size": "8192", "page_size": "8192", "kdf_iter": "1000", "fast_kdf_iter": "1",
        "rekey_kdf_iter": "1000", "cipher_use_hmac": "OFF", "cipher_hmac_algorithm": "HMAC_SHA1",
        "cipher_kdf_algorithm": "PBKDF2_HMAC_SHA1", "cipher_hmac_pgno": "be", "cipher_hmac_salt_mask": "\"x'00'\"",
        "cipher_plaintext_header_size": "32", "cipher_salt": "\"x'00112233445566778899aabbccddeeff'\"",
        "cipher_compatibility": "3",
        "cipher_default_kdf_iter": "1", "cipher_default_page_size": "512", "cipher_default_use_hmac": "OFF",
        "cipher_default_plaintext_header_size": "32", "cipher_default_hmac_algorithm": "HMAC_SHA1",
        "cipher_default_kdf_algorithm": "PBKDF2_HMAC_SHA1", "cipher_default_compatibility": "1",
        "cipher_default_settings": "1", "cipher_migrate": "1", "cipher_store_pass": "ON",
        "cipher_version": "1", "cipher_provider": "1", "cipher_provider_version": "1", "cipher_fips_status": "1",
        "cipher_settings": "1", "cipher_integrity_check": "1", "cipher_memory_security": "OFF",
        "cipher_add_random": "\"x'00112233445566778899aabbccddeeff'\"",
        // The output pragmas get a file (checked to stay absent); their level and source pragmas
        // get the value read before, so the process keeps its state.
        "cipher_profile": "FILE", "cipher_log": "FILE", "cipher_log_level": "CURRENT", "cipher_log_source": "CURRENT",
    ]

    /// The process-wide defaults, read with every available pragma, to prove that refused sets
    /// changed none of them.
    static func processDefaults(_ db: Database) async throws -> [String] {
        var names = ["cipher_default_kdf_iter", "cipher_default_page_size", "cipher_default_use_hmac"]
        if isSQLCipher4() { names += ["cipher_default_settings", "cipher_hmac_salt_mask"] } else { names += ["cipher_hmac_salt_mask"] }
        var values: [String] = []
        for name in names {
            values += try await db.query("PRAGMA \(name)").map { row in (0..<row.count).map { "\(row[$0])" }.joined() }
        }
        return values
    }

    @Test func everyRowHasATestValueAndTheTableCoversTheLibrary() throws {
        for rule in CipherPragmaRule.all {
            #expect(Self.setValues[rule.name] != nil, "no test value for \(rule.name)")
            #expect(!rule.why.isEmpty)
            #expect(rule.setting == .allowed || !rule.instead.isEmpty, "\(rule.name) refuses without saying what to use")
        }
        #expect(Set(CipherPragmaRule.all.map(\.name)).count == CipherPragmaRule.all.count)
        // Every cipher_* name in the loaded library's strings is a row (or a deprecated alias the
        // library only mentions in a message); an unknown one would be refused anyway.
        let library = try loadedLibrary()
        let data = try #require(FileManager.default.contents(atPath: library.path))
        let names = Self.cipherPragmaNames(in: data)
        #expect(names.contains("cipher_version") && names.contains("cipher_use_hmac"), "\(names.sorted())")
        let known = Set(CipherPragmaRule.all.map(\.name))
        for name in names where !known.contains(name) {
            Issue.record("the library knows \(name), which the table does not list")
        }
    }

    /// The `cipher_*` words that appear alone as C strings in the library (pragma names).
    static func cipherPragmaNames(in data: Data) -> Set<String> {
        var names = Set<String>()
        var current: [UInt8] = []
        for byte in data {
            if byte == 0 {
                if current.count > 7, let word = String(bytes: current, encoding: .ascii), word.hasPrefix("cipher_"),
                   word.allSatisfy({ $0.isLowercase || $0 == "_" }) {
                    names.insert(word)
                }
                current.removeAll(keepingCapacity: true)
            } else {
                current.append(byte)
            }
        }
        // C strings that are not pragmas: internal function names and log prefixes.
        return names.filter { !["cipher_ctx_free", "cipher_ctx_key_derive", "cipher_test"].contains($0) && !$0.hasSuffix("_") }
    }

    /// The rows the loaded library can run (the others name SQLCipher 4 pragmas).
    static var runnableRows: [String] {
        CipherPragmaRule.all.filter { $0.versions == .both || isSQLCipher4() }.map(\.name)
    }

    @Test(arguments: runnableRows)
    func pragmaRow(_ name: String) async throws {
        let rule = try #require(CipherPragmaRule.rule(named: name))
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let key = rawKey(3)
        let marker = "PRAGMAMARK" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let db = try Database(path: path, rawKey: key)
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)")
        try await db.execute("INSERT INTO t(body) VALUES (?)", marker + "-0")
        let defaultsBefore = try await Self.processDefaults(db)

        // The read form.
        let read = "PRAGMA \(name)"
        if rule.readAllowed {
            _ = try await db.query(read)
            _ = try await db.query("PRAGMA main.\(name)")
        } else {
            await #expect(throws: SqlCipherError.unsafePragma(name: name, value: "", sql: read)) { try await db.query(read) }
            await #expect(throws: SqlCipherError.unsafePragma(name: name, value: "", sql: read)) { try await db.execute(read) }
        }

        // The set forms.
        var value = try #require(Self.setValues[name])
        let output = dir.path("\(name).out")
        if value == "FILE" { value = "'\(output)'" }
        if value == "CURRENT" {
            value = "'" + (try await db.query(read).first?.get(0, as: String.self) ?? "") + "'"
        }
        let refused = rule.refuses(value: value, encrypted: true)
        for sql in Self.spellings(name, value) {
            if refused {
                try await expectRefused(db, name: name, sql: sql)
            } else {
                try await db.execute(sql)
            }
        }
        if rule.setting == .onlyOff {
            for sql in ["PRAGMA \(name) = off", "PRAGMA \(name) = 'OFF'", "PRAGMA \(name)(Off)"] { try await db.execute(sql) }
            #expect(!FileManager.default.fileExists(atPath: output), "\(name) opened \(output)")
        }
        if rule.setting == .refusedWhenEncrypted {
            // On a plaintext database the same statement is SQLite's own and works.
            let plain = try Database(unencryptedPath: dir.path("plain.db"))
            try await plain.execute("PRAGMA \(name) = \(value)")
            #expect(try await plain.query("PRAGMA \(name)").first?.get(0, as: Int.self) != nil)
        } else if refused {
            // A plaintext database refuses the same statements: no key on plaintext files, no
            // process-wide default changed from any connection.
            let plain = try Database(unencryptedPath: dir.path("plain.db"))
            try await expectRefused(plain, name: name, sql: "PRAGMA \(name) = \(value)")
        }

        // Nothing happened: the process defaults are the same, the connection still works, and the
        // file opens with its key, holds every row, and is ciphertext.
        #expect(try await Self.processDefaults(db) == defaultsBefore, "\(name) changed a process-wide default")
        try await db.transaction { conn in
            for index in 1...40 { try conn.execute("INSERT INTO t(body) VALUES (?)", marker + "-\(index)") }
        }
        await db.close()
        try await Self.expectIntact(path: path, key: key, rows: 41, marker: marker)
    }

    /// The ways to write `PRAGMA name = value`: forms, case, schema, quoting, comments, EXPLAIN,
    /// scripts, and a transaction's body.
    static func spellings(_ name: String, _ value: String) -> [String] {
        [
            "PRAGMA \(name) = \(value)",
            "PRAGMA \(name)(\(value))",
            "PRAGMA main.\(name) = \(value)",
            "pragma \(name.uppercased())=\(value)",
            "PRAGMA \"\(name)\" = \(value)",
            "  /* a comment */ PRAGMA [\(name)] = \(value) -- and another",
            "EXPLAIN PRAGMA \(name) = \(value)",
            "SELECT 1; PRAGMA \(name) = \(value);",
        ]
    }

    func expectRefused(_ db: Database, name: String, sql: String) async throws {
        let error = await #expect(throws: SqlCipherError.self, "\(sql)") { try await db.execute(sql) }
        guard case .unsafePragma(let refusedName, let refusedValue, let refusedSQL)? = error else {
            Issue.record("\(sql): expected unsafePragma, got \(String(describing: error))")
            return
        }
        #expect(refusedName.lowercased() == name, "\(sql)")
        if SQLRedaction.hidesValue(ofPragma: name) {
            // The error keeps only the redacted text, and no value (SqlCipherKit.docc/RawSQLGuards.md):
            // the key family, and the salt of cipher_salt.
            #expect(refusedSQL == SQLRedaction.text(of: sql))
            #expect(refusedSQL != sql && refusedSQL.contains("'***'"), "\(refusedSQL)")
            #expect(refusedValue == "***")
        } else {
            #expect(refusedSQL == sql)
        }
        if !sql.hasPrefix("SELECT 1;") {
            await #expect(throws: SqlCipherError.self, "\(sql) as a query") { try await db.query(sql) }
            await #expect(throws: SqlCipherError.self, "\(sql) in a transaction") {
                try await db.transaction { conn in try conn.execute(sql) }
            }
            let migration = StepMigration("pragma-\(UUID().uuidString)") { ctx in _ = try ctx.execute(sql) }
            await #expect(throws: SqlCipherError.self, "\(sql) in a migration") { try await db.migrate([migration]) }
        }
    }

    /// Opens `path` with `key` and checks every row, SQLite's integrity check, the header and the
    /// absence of the marker from the file and its companions.
    static func expectIntact(path: String, key: Data, rows: Int, marker: String) async throws {
        let reopened = try Database(path: path, rawKey: key)
        #expect(try await reopened.query("SELECT count(*) FROM t").first?.get(0, as: Int.self) == rows)
        #expect(try await reopened.query("PRAGMA integrity_check").first?.get(0, as: String.self) == "ok")
        #expect(try await reopened.query("SELECT count(*) FROM t WHERE body LIKE ?", marker + "%").first?.get(0, as: Int.self) == rows)
        await reopened.close()
        let header = try #require(FileHeader(path: path))
        #expect(!header.hasPlaintextMagic, "\(path) starts with a plaintext SQLite header")
        #expect(filesContain([path, path + "-wal", path + "-journal"], marker).isEmpty, "the marker is readable on disk")
    }

    // MARK: The issue's examples

    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func plaintextHeaderThenWritesDoesNotLockTheFileOut() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, key: "passphrase", cipher: fastCipher)
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)")
        let sql = "PRAGMA cipher_plaintext_header_size = 32"
        await #expect(throws: SqlCipherError.unsafePragma(name: "cipher_plaintext_header_size", value: "32", sql: sql)) {
            try await db.execute(sql)
        }
        try await db.execute("INSERT INTO t(body) VALUES ('SECRETROW')")
        await db.close()
        #expect(FileHeader(path: path)?.hasPlaintextMagic == false)
        let reopened = try Database(path: path, key: "passphrase", cipher: fastCipher)
        #expect(try await reopened.query("SELECT body FROM t").first?.get(0, as: String.self) == "SECRETROW")
    }

    @Test func hmacOffOrSha1IsRefusedAndTheFileKeepsItsHMAC() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, rawKey: rawKey())
        var statements = ["PRAGMA cipher_use_hmac = OFF", "PRAGMA cipher_use_hmac = 0", "PRAGMA cipher_use_hmac = false"]
        if isSQLCipher4() { statements += ["PRAGMA cipher_hmac_algorithm = HMAC_SHA1", "PRAGMA cipher_hmac_algorithm = 'hmac_sha256'"] }
        for sql in statements {
            await #expect(throws: SqlCipherError.self, "\(sql)") { try await db.execute(sql) }
        }
        #expect(try await db.query("PRAGMA cipher_use_hmac").first?.get(0, as: String.self) == "1")
        if isSQLCipher4() {
            #expect(try await db.query("PRAGMA cipher_hmac_algorithm").first?.get(0, as: String.self) == "HMAC_SHA512")
        }
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        await db.close()
        let reopened = try Database(path: path, rawKey: rawKey())
        #expect(try await reopened.query("SELECT x FROM t").first?.get(0, as: Int.self) == 1)
        if isSQLCipher4() { #expect(try await reopened.verifyIntegrity().isOK) }
    }

    @Test func aSecondKeyNeverReachesTheFile() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, key: "A", cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        for sql in ["PRAGMA key = 'B'", "PRAGMA main.key = 'B'", "PRAGMA KEY('B')", "PRAGMA hexkey = '0102'",
                    "PRAGMA rekey = 'B'", "PRAGMA main.rekey('B')"] {
            let error = await #expect(throws: SqlCipherError.self, "\(sql)") { try await db.execute(sql) }
            guard case .unsafePragma? = error else {
                Issue.record("\(sql): \(String(describing: error))")
                continue
            }
            // The description names the API, and never repeats the key.
            #expect(error?.description.contains("rekey(") == true)
            #expect(error?.description.contains("'B'") == false)
            #expect(error?.description.contains("0102") == false)
        }
        try await db.execute("INSERT INTO t VALUES (1)")
        await db.close()
        let reopened = try Database(path: path, key: "A", cipher: fastCipher)
        #expect(try await reopened.query("SELECT count(*) FROM t").first?.get(0, as: Int.self) == 1)
        #expect(throws: SqlCipherError.self) { _ = try Database(path: path, key: "B", cipher: fastCipher) }
    }

    @Test func keyPragmasOnAPlaintextDatabaseAreRefused() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("plain.db")
        let db = try Database(unencryptedPath: path)
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('PLAINROW')")
        for sql in ["PRAGMA key = 'k'", "PRAGMA rekey = 'k'", "PRAGMA hexkey = '0102'"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") { try await db.execute(sql) }
        }
        try await db.execute("INSERT INTO t VALUES ('PLAINROW2')")
        await db.close()
        let reopened = try Database(unencryptedPath: path)
        #expect(try await reopened.query("SELECT count(*) FROM t").first?.get(0, as: Int.self) == 2)
        #expect(try await reopened.query("PRAGMA integrity_check").first?.get(0, as: String.self) == "ok")
    }

    @Test func unknownCipherPragmasAreRefused() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        for sql in ["PRAGMA cipher_test_on = fail_encrypt", "PRAGMA cipher_something_new = 1", "PRAGMA cipher_test",
                    "PRAGMA ciphers"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") { try await db.execute(sql) }
        }
        let error = SqlCipherError.unsafePragma(name: "cipher_something_new", value: "1", sql: "PRAGMA cipher_something_new = 1")
        #expect(error.description.contains("does not know"))
    }

    @Test func tableValuedPragmaFunctionsCannotSetCipherPragmas() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE t(x)")
        // SQLite offers pragma_<name> tables only for pragmas of its own table that return rows
        // and have no side effect; SQLCipher's are not among them.
        for sql in ["SELECT * FROM pragma_cipher_use_hmac('OFF')", "SELECT * FROM pragma_key('B')",
                    "SELECT * FROM pragma_kdf_iter(1)", "SELECT * FROM pragma_cipher_plaintext_header_size(32)",
                    "SELECT * FROM pragma_rekey('B')"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") { try await db.query(sql) }
        }
        #expect(try await db.query("PRAGMA cipher_use_hmac").first?.get(0, as: String.self) == "1")
        // SQLite's own table-valued pragmas keep working where the library has them (3.16+).
        if isSQLCipher4() {
            #expect(try await db.query("SELECT name FROM pragma_table_info('t')").first?.get(0, as: String.self) == "x")
            _ = try await db.query("SELECT * FROM pragma_page_size")
        }
    }

    // MARK: Statements the package runs itself

    @Test func theSettingsThePackageAppliedAreNotReusableByUserSQL() async throws {
        let library = try loadedLibrary()
        let dir = TemporaryDirectory()
        let cipher = CipherSettings(pageSize: 8192, kdfIterations: 2)
        let db = try Database(path: dir.path("a.db"), key: "k", cipher: cipher)
        // The exact texts the package ran when opening, cached by text if anything is.
        for sql in try cipher.pragmas(for: library) {
            await #expect(throws: SqlCipherError.self, "\(sql)") { try await db.execute(sql) }
        }
        #expect(try await db.query("PRAGMA cipher_page_size").first?.get(0, as: String.self) == "8192")
        #expect(try await db.query("PRAGMA kdf_iter").first?.get(0, as: String.self) == "2")
        // Exports and conversions, which run the same kinds of statements, keep working.
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('row')")
        try await db.export(to: dir.path("copy.db"), key: "k2", cipher: fastCipher)
        try await db.exportDecrypted(to: dir.path("plain.db"))
        // The export's own statements cannot be reused either.
        let export = "SELECT sqlcipher_export('\(Exporter.schema)')"
        await #expect(throws: SqlCipherError.unsafeFunction(name: "sqlcipher_export", sql: export)) { try await db.query(export) }
        let copy = try Database(path: dir.path("copy.db"), key: "k2", cipher: fastCipher)
        #expect(try await copy.query("SELECT x FROM t").first?.get(0, as: String.self) == "row")
        let plain = try Database(unencryptedPath: dir.path("plain.db"))
        #expect(try await plain.query("SELECT x FROM t").first?.get(0, as: String.self) == "row")
    }

    @Test func readingSettingsStaysAllowed() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        var reads = ["cipher_version", "cipher_provider", "cipher_provider_version", "cipher_page_size", "kdf_iter",
                     "cipher_use_hmac", "cipher_default_kdf_iter", "cipher_default_page_size", "cipher_fips_status",
                     "page_size", "cipher_store_pass", "key", "rekey"]
        if isSQLCipher4() {
            reads += ["cipher_settings", "cipher_default_settings", "cipher_integrity_check", "cipher_hmac_algorithm",
                      "cipher_kdf_algorithm", "cipher_plaintext_header_size", "cipher_salt", "cipher_memory_security",
                      "cipher_log_level", "cipher_compatibility"]
        }
        for name in reads {
            _ = try await db.query("PRAGMA \(name)")
        }
        #expect(try await db.query("PRAGMA cipher_version").first?.get(0, as: String.self)?.isEmpty == false)
        if isSQLCipher4() {
            #expect(try await db.query("PRAGMA cipher_settings").count >= 5)
        }
    }
}
