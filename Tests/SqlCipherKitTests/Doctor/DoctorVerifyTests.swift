import Foundation
import SqlCipherKit
import Testing

/// `sqlcipher-doctor verify`, run as a user would, against the library under test: the fixtures
/// made by the real CLIs, files made here (a hot journal, a crashed WAL), every key source, and
/// proof that no byte of any file changes.
@Suite struct DoctorVerifyTests {
    static let passphrase3 = "fixture-passphrase-3"
    static let passphrase4 = "fixture-passphrase-4"
    static let rawKeyHex = "7a1c3e5f9b2d4f60a8c6e4b2d0f1e3c5a7b9d1f3e5c7a9b1d3f5e7c9a1b3d5f7"

    private func doctor(_ arguments: [String], environment: [String: String?] = [:], input: Data? = nil) throws -> ChildResult {
        let result = try runChild(productPath("sqlcipher-doctor"), ["verify"] + arguments,
                                  environment: try Linking.childEnvironment(environment), input: input)
        #expect(!result.signaled, "the doctor crashed: \(result.stderr)")
        return result
    }

    /// Runs `verify --json --key-env` with `key` and returns the status and the file entries.
    private func verify(_ files: [String], key: String, extra: [String] = [],
                        environment: [String: String?] = [:]) throws -> (ChildResult, [[String: Any]]) {
        let result = try doctor(["--json", "--key-env", "DOCTOR_TEST_KEY"] + extra + files,
                                environment: environment.merging(["DOCTOR_TEST_KEY": key]) { $1 })
        let report = try Linking.jsonObject(result.stdout)
        #expect(report["ok"] as? Bool == (result.status == 0), "\(result.stdout)")
        let entries = try #require(report["files"] as? [[String: Any]], "\(result.stdout)\n\(result.stderr)")
        #expect(entries.count == files.count)
        return (result, entries)
    }

    /// A copy of a fixture (with its -wal) in `directory`.
    private func fixture(_ name: String, in directory: TemporaryDirectory) throws -> String {
        let manifest = try FixtureManifest.shared.get()
        return try #require(manifest.file(named: name)).copy(into: directory)
    }

    private func check(_ entry: [String: Any], _ name: String) -> [String: Any] {
        entry[name] as? [String: Any] ?? [:]
    }

    private func tables(_ entry: [String: Any]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for table in entry["tables"] as? [[String: Any]] ?? [] {
            if let name = table["name"] as? String, let rows = table["rows"] as? Int { counts[name] = rows }
        }
        return counts
    }

    /// The fixtures the loaded library opens with a settings set it tries by itself, the key, and
    /// the set that must open them.
    private var readableFixtures: [(file: String, key: String, raw: Bool, settings: String)] {
        var list: [(String, String, Bool, String)] = [
            ("sqlcipher3-default.db", Self.passphrase3, false, "sqlcipher3"),
            ("sqlcipher3-rawkey.db", Self.rawKeyHex, true, "sqlcipher3"),
            ("sqlcipher3-wal.db", Self.passphrase3, false, "sqlcipher3"),
            ("sqlcipher4-compat3.db", Self.passphrase4, false, "sqlcipher3"),
        ]
        if isSQLCipher4() {
            list += [("sqlcipher4-default.db", Self.passphrase4, false, "sqlcipher4"),
                     ("sqlcipher4-rawkey.db", Self.rawKeyHex, true, "sqlcipher4"),
                     ("sqlcipher4-wal.db", Self.passphrase4, false, "sqlcipher4")]
        }
        return list
    }

    @Test func rightKeyVerifiesEveryReadableFixture() throws {
        let library = try loadedLibrary()
        let directory = TemporaryDirectory()
        for fixture in readableFixtures {
            let path = try self.fixture(fixture.file, in: directory)
            let option = fixture.raw ? "--raw-key-env" : "--key-env"
            let result = try doctor(["--json", option, "K", path], environment: ["K": fixture.key])
            #expect(result.status == 0, "\(fixture.file): \(result.stdout)\n\(result.stderr)")
            let report = try Linking.jsonObject(result.stdout)
            #expect(report["ok"] as? Bool == true)
            #expect(check(report, "library")["cipher_version"] as? String == library.cipherVersion)
            #expect(check(report, "key")["kind"] as? String == (fixture.raw ? "raw" : "passphrase"))
            let entry = try #require((report["files"] as? [[String: Any]])?.first)
            #expect(entry["status"] as? String == "verified", "\(fixture.file): \(entry)")
            #expect(entry["key_accepted"] as? Bool == true)
            #expect(check(entry, "settings")["name"] as? String == fixture.settings, "\(fixture.file)")
            let pageSize = fixture.settings == "sqlcipher4" ? 4096 : 1024
            #expect(entry["page_size"] as? Int == pageSize)
            #expect(entry["page_count"] as? Int == (fixture.settings == "sqlcipher4" ? 15 : 54))
            // The WAL fixtures keep rows 16-20 and user_version 7 only in their -wal.
            #expect(entry["user_version"] as? Int == 7, "\(fixture.file)")
            #expect(tables(entry) == ["items": 20, "filler": 200], "\(fixture.file)")
            #expect(entry["index_count"] as? Int == 1)
            #expect(check(entry, "integrity_check")["status"] as? String == "pass")
            #expect(entry["access"] as? String == (fixture.file.contains("-wal") ? "snapshot" : "in-place"))
            let hmac = check(entry, "cipher_integrity_check")
            if library.cipherVersionIsAtLeast(4, 2) {
                #expect(hmac["status"] as? String == "pass")
            } else {
                // 3.4.1 has no such check: it must say so, never pass on "no rows".
                #expect(hmac["status"] as? String == "skipped")
                #expect((hmac["reason"] as? String)?.contains("4.2.0") == true)
            }
            #expect(entry["error"] is NSNull)
        }
    }

    @Test func textReportOfAVerifiedFile() throws {
        let directory = TemporaryDirectory()
        let path = try fixture("sqlcipher3-default.db", in: directory)
        let result = try doctor(["--key-env", "K", path], environment: ["K": Self.passphrase3])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("\(path): VERIFIED"))
        #expect(result.stdout.contains("54 pages of 1024 bytes"))
        #expect(result.stdout.contains("20 rows"))
        #expect(result.stdout.contains("1 index,"))
        #expect(result.stdout.contains("Result: OK. 1 file verified."))
        #expect(result.stdout.contains("CipherSettings.sqlcipher3") || !isSQLCipher4())
        #expect(!result.stdout.contains(Self.passphrase3), "the key must never be printed")
        // Standard error is a pipe here, not a terminal: no progress bar, nothing at all.
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    @Test func wrongKeyIsRejected() throws {
        let directory = TemporaryDirectory()
        let name = isSQLCipher4() ? "sqlcipher4-default.db" : "sqlcipher3-default.db"
        let path = try fixture(name, in: directory)
        let (result, entries) = try verify([path], key: "wrong-passphrase")
        #expect(result.status == 1)
        let entry = entries[0]
        #expect(entry["status"] as? String == "key-rejected")
        #expect(entry["key_accepted"] as? Bool == false)
        let attempts = entry["attempts"] as? [[String: Any]] ?? []
        #expect(attempts.count == (isSQLCipher4() ? 2 : 1))
        #expect(attempts.allSatisfy { $0["accepted"] as? Bool == false })
        #expect(entry["settings"] is NSNull)
        #expect(check(entry, "integrity_check")["status"] as? String == "skipped")
        let error = try #require(entry["error"] as? String)
        if isSQLCipher4() {
            // Every page failed its HMAC with every set: a wrong key, not a damaged first page.
            #expect(error.contains("verified no page"), "\(error)")
        } else {
            #expect(error.contains("cannot tell these apart"), "\(error)")
        }
        let raw = try doctor(["--raw-key-env", "K", path], environment: ["K": String(repeating: "0", count: 64)])
        #expect(raw.status == 1)
        #expect(raw.stdout.contains("KEY-REJECTED"))
        #expect(raw.stdout.contains("Result: FAILED. 1 of 1 file did not verify."))
    }

    @Test func sqlcipher3FileNeedsCompatibilityOnSQLCipher4() throws {
        let directory = TemporaryDirectory()
        if isSQLCipher4() {
            let path = try fixture("sqlcipher3-default.db", in: directory)
            let (result, entries) = try verify([path], key: Self.passphrase3)
            #expect(result.status == 0)
            let entry = entries[0]
            let attempts = entry["attempts"] as? [[String: Any]] ?? []
            #expect(attempts.map { $0["settings"] as? String } == ["sqlcipher4", "sqlcipher3"])
            #expect(attempts.map { $0["accepted"] as? Bool } == [false, true])
            let settings = check(entry, "settings")
            #expect(settings["name"] as? String == "sqlcipher3")
            #expect(settings["swift"] as? String == "CipherSettings.sqlcipher3")
            #expect(settings["pragmas"] as? [String] == ["PRAGMA cipher_compatibility = 3"])
            #expect((settings["readable_by"] as? String)?.contains("cipher_compatibility = 3") == true)
            #expect((entry["notes"] as? [String])?.contains { $0.contains("did not open it; sqlcipher3 did") } == true)
        } else {
            // SQLCipher 3.4.1 knows only the SQLCipher 3 format: a 4.x file is not its to open.
            let path = try fixture("sqlcipher4-default.db", in: directory)
            let (result, entries) = try verify([path], key: Self.passphrase4)
            #expect(result.status == 1)
            #expect(entries[0]["status"] as? String == "key-rejected")
            #expect((entries[0]["attempts"] as? [[String: Any]])?.map { $0["settings"] as? String } == ["sqlcipher3"])
            #expect((entries[0]["error"] as? String)?.contains("cannot be read by SQLCipher 3") == true)
        }
    }

    @Test func damagedFiles() throws {
        let library = try loadedLibrary()
        let directory = TemporaryDirectory()
        var names = ["sqlcipher3-default-damaged-middle.db", "sqlcipher3-default-damaged-last.db",
                     "sqlcipher3-default-truncated.db"]
        if isSQLCipher4() { names += ["sqlcipher4-default-damaged-middle.db", "sqlcipher4-default-truncated.db"] }
        for name in names {
            let path = try fixture(name, in: directory)
            let key = name.hasPrefix("sqlcipher3") ? Self.passphrase3 : Self.passphrase4
            let (result, entries) = try verify([path], key: key)
            #expect(result.status == 1, "\(name)")
            let entry = entries[0]
            #expect(entry["status"] as? String == "damaged", "\(name): \(entry)")
            #expect(entry["key_accepted"] as? Bool == true)
            #expect((entry["error"] as? String)?.contains("The key is right") == true)
            #expect(check(entry, "integrity_check")["status"] as? String == "fail", "\(name)")
            let hmac = check(entry, "cipher_integrity_check")
            if library.cipherVersionIsAtLeast(4, 2) {
                #expect(hmac["status"] as? String == "fail", "\(name)")
                let problems = hmac["problems"] as? [String] ?? []
                let page = name.contains("sqlcipher3") ? (name.contains("last") ? 54 : 27) : 8
                #expect(problems.contains { $0.contains("page \(page)") }, "\(name): \(problems)")
            } else {
                #expect(hmac["status"] as? String == "skipped")
            }
            if name.contains("middle") || name.contains("last") {
                // items sits before the damage and still counts; filler holds the damaged page.
                let entryTables = entry["tables"] as? [[String: Any]] ?? []
                #expect(tables(entry)["items"] == 20, "\(name)")
                #expect(entryTables.first { $0["name"] as? String == "filler" }?["error"] is String, "\(name)")
            }
        }
    }

    /// Another database's -wal beside a file (left by a killed CLI): the key opens the file
    /// itself, so the report names the -wal and the way out rather than "the file is damaged,
    /// restore it from a backup". Nothing is changed.
    @Test func aForeignWALIsNamed() throws {
        let directory = TemporaryDirectory()
        let cli = isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3
        let path = directory.path("mine.db"), other = directory.path("other.db")
        let key = SqlcipherCLI.keyPragma(passphrase: "owner")
        _ = try SqlcipherCLI.run(cli, path, [key, "PRAGMA journal_mode = WAL", "CREATE TABLE t(x)", "INSERT INTO t VALUES (1)"])
        try SqlcipherCLI.runAndKill(cli, other, [key, "PRAGMA journal_mode = WAL", "CREATE TABLE o(y)", "INSERT INTO o VALUES (2)"])
        try FileManager.default.copyItem(atPath: other + "-wal", toPath: path + "-wal")
        let before = try directory.snapshot()
        let (result, entries) = try verify([path], key: "owner")
        #expect(result.status == 1)
        #expect(entries[0]["key_accepted"] as? Bool == true)
        let error = entries[0]["error"] as? String ?? ""
        #expect(error.contains("not the newest pages in its -wal") && error.contains("another database"), "\(error)")
        #expect(try directory.snapshot().mapValues(\.0) == before.mapValues(\.0))
    }

    /// A file whose schema a newer SQLite wrote (a generated column, an index on it), read by an
    /// older library: the key is right and the file intact, so the report says a newer SQLite
    /// wrote it, as an opening does, rather than "damaged, restore it from a backup".
    @Test func aSchemaFromANewerSQLiteIsNotCalledDamaged() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("newer.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [
            SqlcipherCLI.keyPragma(passphrase: "newer"), "PRAGMA cipher_compatibility = 3",
            "CREATE TABLE g(a INT, b INT GENERATED ALWAYS AS (a * 2) STORED)", "CREATE INDEX g_a ON g(a)",
            "INSERT INTO g(a) VALUES (21)",
        ])
        let before = try directory.snapshot()
        let (result, entries) = try verify([path], key: "newer")
        if try loadedLibrary().sqliteVersionNumber >= 3_031_000 {
            #expect(result.status == 0 && entries[0]["status"] as? String == "verified", "\(entries[0])")
            return
        }
        #expect(result.status == 1)
        #expect(entries[0]["status"] as? String == "not-verifiable", "\(entries[0])")
        #expect(entries[0]["key_accepted"] as? Bool == true)
        let error = entries[0]["error"] as? String ?? ""
        #expect(error.contains("The key is right") && error.contains("newer SQLite") && !error.contains("backup"), "\(error)")
        #expect(try directory.snapshot().mapValues(\.0) == before.mapValues(\.0))
    }

    @Test func damagedFirstPage() throws {
        let library = try loadedLibrary()
        let directory = TemporaryDirectory()
        let path = try fixture("sqlcipher3-default-damaged-page1.db", in: directory)
        let (result, entries) = try verify([path], key: Self.passphrase3)
        #expect(result.status == 1)
        let entry = entries[0]
        if library.cipherVersionIsAtLeast(4, 2) {
            // The other 53 pages pass their HMAC with the right key: page 1 is damaged, the key is right.
            #expect(entry["status"] as? String == "damaged", "\(entry)")
            #expect(entry["key_accepted"] as? Bool == true)
            #expect(check(entry, "settings")["name"] as? String == "sqlcipher3")
            #expect((entry["error"] as? String)?.contains("page 1 is damaged") == true)
            #expect((entry["error"] as? String)?.contains("53 of 54") == true)
            // A wrong key on the same file is still a wrong key.
            let (_, wrong) = try verify([path], key: "wrong-passphrase")
            #expect(wrong[0]["status"] as? String == "key-rejected")
        } else {
            #expect(entry["status"] as? String == "key-rejected")
            #expect((entry["error"] as? String)?.contains("first page is damaged") == true)
        }
    }

    @Test func plaintextMissingAndOtherFiles() throws {
        let directory = TemporaryDirectory()
        let plaintext = try fixture("plaintext.db", in: directory)
        let good = try fixture("sqlcipher3-default.db", in: directory)
        let empty = directory.path("empty.db")
        try Data().write(to: URL(fileURLWithPath: empty))
        let notes = directory.path("notes.txt")
        try Data(String(repeating: "plain text\n", count: 400).utf8).write(to: URL(fileURLWithPath: notes))
        let missing = directory.path("missing.db")
        let (result, entries) = try verify([plaintext, missing, good, empty, notes, directory.url.path], key: Self.passphrase3)
        #expect(result.status == 1)
        #expect(entries.map { $0["status"] as? String } == ["not-encrypted", "missing", "verified", "not-verifiable",
                                                           "not-verifiable", "not-verifiable"])
        #expect(entries.map { $0["kind"] as? String } == ["plaintext", "missing", "encrypted", "empty", "not-a-database",
                                                         "not-a-database"])
        #expect((entries[0]["error"] as? String)?.contains("not encrypted") == true)
        #expect((entries[1]["error"] as? String)?.contains("No file at this path") == true)
        #expect((entries[3]["error"] as? String)?.contains("empty") == true)
        #expect(entries.allSatisfy { !($0["error"] is NSNull) || $0["status"] as? String == "verified" })
        // Only the good file was given the key.
        #expect(entries.filter { $0["key_accepted"] as? Bool == true }.count == 1)
    }

    /// A file with a plaintext header is not verifiable (its salt is not in the file), and the
    /// advice names the key in the form it was given: a passphrase opens such a file with its salt
    /// (`DatabaseKey.passphrase(_:salt:)`) as a raw key does. It named `.rawKey(key, salt: salt)`
    /// to a user who had a passphrase.
    @Test func aPlaintextHeaderFileIsNamedWithTheFormOfTheKeyGiven() throws {
        let directory = TemporaryDirectory()
        let file = try fixture("sqlcipher4-plaintext-header.db", in: directory)
        for (arguments, form, other) in [
            (["--key-env", "K"], ".passphrase(passphrase, salt: salt)", ".rawKey("),
            (["--raw-key-env", "K"], ".rawKey(key, salt: salt)", ".passphrase("),
        ] {
            let value = arguments[0] == "--key-env" ? Self.passphrase4 : Self.rawKeyHex
            let result = try doctor(["--json"] + arguments + [file], environment: ["K": value])
            #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
            let report = try Linking.jsonObject(result.stdout)
            let entry = try #require((report["files"] as? [[String: Any]])?.first, "\(result.stdout)")
            #expect(entry["status"] as? String == "not-verifiable")
            #expect(entry["kind"] as? String == "plaintext-header")
            let error = entry["error"] as? String ?? ""
            #expect(error.contains("key: \(form)"), "\(error)")
            #expect(!error.contains(other), "\(error)")
            #expect(error.contains("CipherSettings(plaintextHeaderSize:)"), "\(error)")
        }
    }

    /// With `--salt` (and `--plaintext-header-size`), a file with a plaintext header verifies: the
    /// fixture's raw key, a passphrase the CLI wrote such a file with (SQLCipher's shared-container
    /// setup), and the same file left with frames in its `-wal` (verified on a private copy). A
    /// wrong salt is a rejected key that names the salt; `--salt` on a file that stores its salt,
    /// a salt that is not 32 hex digits, and a header size without a salt are refused. Before,
    /// every such file was "not verifiable".
    @Test(.enabled(if: isSQLCipher4(), "plaintext headers are SQLCipher 4's"))
    func aPlaintextHeaderFileVerifiesWithItsSalt() throws {
        let directory = TemporaryDirectory()
        let fixtureFile = try fixture("sqlcipher4-plaintext-header.db", in: directory)
        let fixtureSalt = "73616c742d666978747572652d303031"
        let raw = try doctor(["--json", "--raw-key-env", "K", "--salt", fixtureSalt, fixtureFile],
                             environment: ["K": Self.rawKeyHex])
        #expect(raw.status == 0, "\(raw.stdout)\n\(raw.stderr)")
        let rawEntry = try #require((try Linking.jsonObject(raw.stdout)["files"] as? [[String: Any]])?.first)
        #expect(rawEntry["status"] as? String == "verified")
        #expect(check(rawEntry, "settings")["swift"] as? String == "CipherSettings(plaintextHeaderSize: 32)")
        #expect(check(rawEntry, "integrity_check")["status"] as? String == "pass")

        let salt = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
        let file = directory.path("shared.db")
        let statements = [SqlcipherCLI.keyPragma(passphrase: Self.passphrase4), "PRAGMA cipher_plaintext_header_size = 32",
                          "PRAGMA cipher_salt = \"x'\(salt)'\""]
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, file, statements + [
            "CREATE TABLE notes(body TEXT)", "INSERT INTO notes VALUES ('one'), ('two'), ('three')"])
        let walFile = directory.path("shared-wal.db")
        try SqlcipherCLI.runAndKill(SqlcipherCLI.version4, walFile, statements + [
            "PRAGMA journal_mode = WAL", "PRAGMA wal_autocheckpoint = 0", "CREATE TABLE notes(body TEXT)",
            "INSERT INTO notes VALUES ('in the wal')"])
        let before = try Data(contentsOf: URL(fileURLWithPath: walFile + "-wal"))
        for (path, rows, access) in [(file, 3, "in-place"), (walFile, 1, "snapshot")] {
            for spelled in [salt, "x'\(salt.uppercased())'"] {
                let (result, entries) = try verify([path], key: Self.passphrase4,
                                                   extra: ["--salt", spelled, "--plaintext-header-size", "32"])
                #expect(result.status == 0, "\(path): \(result.stdout)")
                #expect(entries[0]["access"] as? String == access, "\(path)")
                #expect(tables(entries[0]) == ["notes": rows], "\(path)")
            }
        }

        let (wrong, wrongEntries) = try verify([file], key: Self.passphrase4, extra: ["--salt", String(repeating: "ab", count: 16)])
        #expect(wrong.status == 1)
        #expect(wrongEntries[0]["status"] as? String == "key-rejected")
        #expect((wrongEntries[0]["error"] as? String ?? "").contains("the salt (--salt)"), "\(wrongEntries[0])")

        // A header size other than the file's: every page but the first decrypts, which damage to
        // page 1 would also give; the message names the header's size first.
        let sized = try doctor(["--json", "--raw-key-env", "K", "--salt", fixtureSalt, "--plaintext-header-size", "48",
                                fixtureFile], environment: ["K": Self.rawKeyHex])
        #expect(sized.status == 1)
        let sizedEntry = try #require((try Linking.jsonObject(sized.stdout)["files"] as? [[String: Any]])?.first)
        #expect((sizedEntry["error"] as? String ?? "").contains("another size than the 48 bytes tried"), "\(sizedEntry)")

        let stored = directory.path("stored-salt.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, stored, [SqlcipherCLI.keyPragma(passphrase: Self.passphrase4),
                                                                 "CREATE TABLE t(x)"])
        let (misplaced, misplacedEntries) = try verify([stored], key: Self.passphrase4, extra: ["--salt", salt])
        #expect(misplaced.status == 1)
        #expect((misplacedEntries[0]["error"] as? String ?? "").contains("verify it without --salt"), "\(misplacedEntries[0])")

        for (arguments, message) in [(["--salt", "0011"], "32 hex digits"), (["--salt", String(repeating: "zz", count: 16)], "not all hex digits"),
                                     (["--plaintext-header-size", "32"], "needs --salt"),
                                     (["--salt", salt, "--plaintext-header-size", "0"], "32 or more")] {
            let usage = try doctor(["--key-env", "K"] + arguments + [file], environment: ["K": Self.passphrase4])
            #expect(usage.status == 2, "\(arguments)")
            #expect(usage.stderr.contains(message), "\(arguments): \(usage.stderr)")
        }
        // Verifying changed nothing: the -wal the CLI left is as it was.
        #expect(try Data(contentsOf: URL(fileURLWithPath: walFile + "-wal")) == before)
    }

    @Test func keyFromEachSource() throws {
        let directory = TemporaryDirectory()
        let passphraseFile = try fixture("sqlcipher3-default.db", in: directory)
        let rawFile = try fixture("sqlcipher3-rawkey.db", in: directory)
        let keyFile = directory.path("key.txt"), rawKeyFile = directory.path("raw.txt")
        // What `echo` writes: a final newline, which is not part of the key.
        try Data((Self.passphrase3 + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        try Data(("  x'" + Self.rawKeyHex.uppercased() + "'\r\n").utf8).write(to: URL(fileURLWithPath: rawKeyFile))
        chmod(keyFile, 0o600)
        chmod(rawKeyFile, 0o600)
        let cases: [(arguments: [String], environment: [String: String?], input: Data?, file: String)] = [
            (["--key-env", "K"], ["K": Self.passphrase3], nil, passphraseFile),
            (["--key-file", keyFile], [:], nil, passphraseFile),
            (["--key-file=\(keyFile)"], [:], nil, passphraseFile),
            // A pipe, as `--key-file <(pass show db)` gives.
            (["--key-file", "/dev/stdin"], [:], Data((Self.passphrase3 + "\n").utf8), passphraseFile),
            (["--key-stdin"], [:], Data((Self.passphrase3 + "\n").utf8), passphraseFile),
            (["--key-stdin"], [:], Data(Self.passphrase3.utf8), passphraseFile),
            (["--raw-key-env", "K"], ["K": Self.rawKeyHex], nil, rawFile),
            (["--raw-key-file", rawKeyFile], [:], nil, rawFile),
            (["--raw-key-stdin"], [:], Data((Self.rawKeyHex + "\n").utf8), rawFile),
        ]
        for item in cases {
            let result = try doctor(["--json"] + item.arguments + [item.file], environment: item.environment, input: item.input)
            #expect(result.status == 0, "\(item.arguments): \(result.stdout)\n\(result.stderr)")
            let report = try Linking.jsonObject(result.stdout)
            let key = check(report, "key")
            #expect(key["source"] as? String == item.arguments[0].split(separator: "=").first.map(String.init))
            #expect(result.stderr.isEmpty, "\(item.arguments): \(result.stderr)")
        }
        // A key with the newline kept is another key: the file is not opened with it.
        let withNewline = try doctor(["--key-stdin", passphraseFile], input: Data((Self.passphrase3 + "\n\n").utf8))
        #expect(withNewline.status == 1)
        // A key file other users can read opens the file, with a warning.
        chmod(keyFile, 0o644)
        let open = try doctor(["--key-file", keyFile, passphraseFile])
        #expect(open.status == 0)
        #expect(open.stderr.contains("can be read by other users"), "\(open.stderr)")
    }

    @Test(arguments: [["--key", "s3cret-value"], ["--key=s3cret-value"], ["--raw-key", "s3cret-value"],
                      ["--passphrase", "s3cret-value"], ["--password=s3cret-value"]])
    func keyOnTheCommandLineIsRefused(arguments: [String]) throws {
        let result = try doctor(arguments + ["some.db"])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("sqlcipher-doctor: "))
        #expect(result.stderr.contains("/proc/PID/cmdline"))
        #expect(result.stderr.contains("--key-env NAME"))
        #expect(!result.stderr.contains("s3cret-value"), "the refusal must not repeat the key")
    }

    /// An argument the doctor does not know was repeated in full: a key glued to a short option as
    /// other tools take it (`-pS3cret`, `-k'…'`), or typed where a command belongs, was printed
    /// back (found by the attack review). Such arguments are named by their position; words and
    /// long options spelled like options are still repeated.
    @Test(arguments: [["verify", "-pS3cret-value", "some.db"], ["verify", "--key-env", "K", "--S3cret-value=x", "f.db"],
                      ["-kS3cret-value"], ["S3cret-value"], ["--json", "my s3cret-value"], ["inspect", "-ps3cret-value", "f.db"]])
    func unknownArgumentsThatMayBeKeysAreNotRepeated(arguments: [String]) throws {
        let result = try runChild(productPath("sqlcipher-doctor"), arguments, environment: try Linking.childEnvironment())
        #expect(!result.signaled && result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("sqlcipher-doctor: "))
        #expect(!result.stderr.lowercased().contains("s3cret"), "the usage error repeats the key: \(result.stderr)")
        #expect(result.stderr.contains("not repeated here in case it is a key"), "\(result.stderr)")
        for (shown, word) in [(["verify", "--bogus", "f.db"], "'--bogus'"), (["frobnicate"], "'frobnicate'"), (["-x"], "'-x'")] {
            let other = try runChild(productPath("sqlcipher-doctor"), shown, environment: try Linking.childEnvironment())
            #expect(other.status == 2 && other.stderr.contains(word), "\(other.stderr)")
        }
    }

    /// A file named as a SQLite `file:` URI with a key parameter was printed back whole by
    /// `verify` and `inspect` (found by the attack review): it is refused, and shown masked.
    @Test func aFileURIWithAKeyIsShownMasked() throws {
        let uri = "file:/tmp/no-such-folder-x/x.db?key=s3cret-uri-value"
        for arguments in [["verify", "--key-env", "K", uri], ["verify", "--json", "--key-env", "K", uri], ["inspect", uri],
                          ["inspect", "--json", uri]] {
            let result = try runChild(productPath("sqlcipher-doctor"), arguments,
                                      environment: try Linking.childEnvironment(["K": "passphrase"]))
            #expect(!result.signaled && result.status != 0, "\(arguments): \(result.stdout) \(result.stderr)")
            #expect(!(result.stdout + result.stderr).contains("s3cret-uri-value"), "\(arguments): \(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("key=***"), "\(arguments): \(result.stdout)")
        }
    }

    /// A key source that never ends, or holds far more than any key, was read whole into memory:
    /// `--key-stdin < /dev/zero` grew until the process trapped or the system killed it, and a
    /// `--key-file` naming a large sparse file (or a pipe from a program that keeps writing) ran
    /// until killed. Each is now a usage error (exit 2) after at most 1 MiB, naming the source and
    /// no key bytes; a key of a sensible size from the same kinds of source still works.
    @Test func aKeySourceThatNeverEndsIsRefusedAfterOneMebibyte() throws {
        let directory = TemporaryDirectory()
        let file = try fixture("sqlcipher3-default.db", in: directory)
        let sparse = directory.path("sparse-key")
        #expect(FileManager.default.createFile(atPath: sparse, contents: nil, attributes: [.posixPermissions: 0o600]))
        #expect(truncate(sparse, 50 << 30) == 0)
        let doctorPath = productPath("sqlcipher-doctor")
        let cases: [(script: String, option: String)] = [
            ("exec \"$0\" verify --key-stdin \"$1\" < /dev/zero", "--key-stdin"),
            ("exec \"$0\" verify --raw-key-stdin \"$1\" < /dev/zero", "--raw-key-stdin"),
            ("exec \"$0\" verify --key-file \"$2\" \"$1\"", "--key-file \(sparse)"),
            // A pipe whose writer never stops, as `--key-file <(yes)` gives.
            ("yes | exec \"$0\" verify --key-file /dev/stdin \"$1\"", "--key-file /dev/stdin"),
        ]
        for (script, option) in cases {
            let result = try runChild("/usr/bin/timeout", ["-s", "KILL", "60", "/bin/sh", "-c", script, doctorPath, file, sparse],
                                      environment: try Linking.childEnvironment())
            #expect(!result.signaled && result.status == 2, "\(option): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("\(option): it gives more than 1 MiB, and no key is that long"),
                    "\(option): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        // A passphrase of 100 KiB read from a file: long, and a key all the same.
        let longKey = directory.path("long-key")
        #expect(FileManager.default.createFile(atPath: longKey, contents: Data(repeating: 0x61, count: 100 << 10),
                                               attributes: [.posixPermissions: 0o600]))
        let result = try doctor(["--key-file", longKey, file])
        #expect(result.status == 1 && result.stdout.contains("FAILED"), "\(result.stdout) \(result.stderr)")
        #expect(!result.stderr.contains("MiB"), "\(result.stderr)")
    }

    @Test func keySourceUsageErrors() throws {
        let directory = TemporaryDirectory()
        let file = try fixture("sqlcipher3-default.db", in: directory)
        let empty = directory.path("empty-key"), shortRaw = directory.path("short-raw")
        try Data("\n".utf8).write(to: URL(fileURLWithPath: empty))
        try Data("abcdef-secret".utf8).write(to: URL(fileURLWithPath: shortRaw))
        let cases: [([String], [String: String?], String)] = [
            ([file], [:], "verify needs a key"),
            (["--key-env", "A", "--key-stdin", file], ["A": "x"], "verify takes one key"),
            (["--key-env", "DOCTOR_UNSET_VARIABLE", file], ["DOCTOR_UNSET_VARIABLE": nil], "is set"),
            // A key typed where the name of its variable or file belongs: not repeated (the raw
            // key was printed back, twice, before the adversarial review).
            (["--raw-key-env", String(repeating: "abcdef-secret", count: 4), file], [:], "no environment variable"),
            (["--key-env", "abcdef-secret", file], ["abcdef-secret": nil], "no environment variable"),
            (["--raw-key-file", "x'\(String(repeating: "abcdef-secret", count: 4))'", file], [:], "No such file"),
            (["--key-file", "my abcdef-secret phrase", file], [:], "No such file"),
            (["--key-env", "A", file], ["A": ""], "the key is empty"),
            // An assignment where the variable's name belongs: the value may be the key.
            (["--key-env", "DB_KEY=abcdef-secret", file], [:], "takes the name of an environment variable"),
            (["--raw-key-env=DB_KEY=abcdef-secret", file], [:], "takes the name of an environment variable"),
            (["--key-file", empty, file], [:], "the key is empty"),
            (["--key-file", directory.path("nope"), file], [:], "No such file"),
            (["--raw-key-file", shortRaw, file], [:], "64 hex digits"),
            (["--raw-key-env", "A", file], ["A": String(repeating: "g", count: 64)], "not all hex digits"),
            (["--key-env", "A"], ["A": "x"], "at least one FILE"),
            (["--key-env", "A", "--cipher-page-size", "big", file], ["A": "x"], "whole number"),
            (["--key-env", "A", "--cipher-page-size", "1000", file], ["A": "x"], "power of two"),
            // SQLite's smallest page size, which CipherSettings refuses: the help must not offer it.
            (["--key-env", "A", "--cipher-page-size", "512", file], ["A": "x"], "from 1024 to 65536"),
            (["--key-env", "A", "--kdf-iter", "0", file], ["A": "x"], "must be from 1 to 2147483647"),
            (["--key-env", "A", "--kdf-iter", "4294967297", file], ["A": "x"], "must be from 1 to 2147483647"),
            (["--key-env", "A", "--kdf-algorithm", "md5", file], ["A": "x"], "needs sha1, sha256 or sha512"),
            (["--key-env", "A", "--hmac-algorithm", "HMAC_SHA384", file], ["A": "x"], "not 'HMAC_SHA384'"),
            (["--key-env", "A", "--kdf-iter", "1e6", file], ["A": "x"], "not '1e6'"),
            // A key typed where the option's value belongs (its number left out): not repeated,
            // as a key standing where a command belongs is not (it was, before the attack review).
            (["--key-env", "A", "--kdf-iter", "my abcdef-secret phrase", file], ["A": "x"], "not repeated here"),
            (["--key-env", "A", "--cipher-page-size=abcdef-secret", file], ["A": "x"], "not repeated here"),
            (["--key-env", "A", "--kdf-algorithm", "abcdef-secret", file], ["A": "x"], "not repeated here"),
        ]
        for (arguments, environment, message) in cases {
            let result = try doctor(arguments, environment: environment)
            #expect(result.status == 2, "\(arguments): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("usage: sqlcipher-doctor verify"))
            #expect(!result.stderr.contains("abcdef-secret"))
            #expect(result.stdout.isEmpty)
        }
        for arguments in [["--raw-key-env", Self.rawKeyHex], ["--raw-key-file", Self.rawKeyHex],
                          ["--raw-key-file=x'\(Self.rawKeyHex)'"], ["--json", "--raw-key-env", Self.rawKeyHex]] {
            let result = try doctor(arguments + [file])
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(!(result.stdout + result.stderr).contains(Self.rawKeyHex), "\(arguments): \(result.stdout) \(result.stderr)")
        }
        let help = try doctor(["--help"]).stdout
        #expect(help.contains("a power of two from 1024 to 65536"), "\(help)")
    }

    @Test func givenSettingsOpenCustomFiles() throws {
        let directory = TemporaryDirectory()
        let custom3 = try fixture("sqlcipher3-custom.db", in: directory)
        // Without the settings, the defaults do not open it.
        let (plain, _) = try verify([custom3], key: Self.passphrase3)
        #expect(plain.status == 1)
        let (result, entries) = try verify([custom3], key: Self.passphrase3,
                                           extra: ["--cipher-compatibility", "3", "--cipher-page-size=4096", "--kdf-iter", "4000"])
        #expect(result.status == 0, "\(result.stdout)")
        let settings = check(entries[0], "settings")
        #expect(settings["name"] as? String == "custom")
        #expect(settings["swift"] as? String == "CipherSettings(compatibility: 3, pageSize: 4096, kdfIterations: 4000)")
        #expect(entries[0]["page_size"] as? Int == 4096)
        #expect(tables(entries[0]) == ["items": 20, "filler": 200])
        if isSQLCipher4() {
            let custom4 = try fixture("sqlcipher4-custom.db", in: directory)
            let (result4, entries4) = try verify([custom4], key: Self.passphrase4,
                                                 extra: ["--cipher-page-size", "8192", "--kdf-iter", "10000"])
            #expect(result4.status == 0, "\(result4.stdout)")
            #expect(entries4[0]["page_size"] as? Int == 8192)
        } else {
            let refused = try doctor(["--key-env", "A", "--cipher-compatibility", "4", custom3], environment: ["A": "x"])
            #expect(refused.status == 2)
            #expect(refused.stderr.contains("SQLCipher 4"), "\(refused.stderr)")
        }
    }

    /// A file written with other digests (DB Browser for SQLCipher's custom settings) verifies with
    /// `--kdf-algorithm` and `--hmac-algorithm`, in the doctor's names or SQLCipher's, and the
    /// report gives the `CipherSettings` that open it; without them the key is rejected.
    @Test func givenDigestsOpenFilesWrittenWithThem() throws {
        let directory = TemporaryDirectory()
        let file = directory.path("digests.db")
        guard isSQLCipher4() else {
            let refused = try doctor(["--key-env", "A", "--kdf-algorithm", "sha256", file], environment: ["A": "x"])
            #expect(refused.status == 2)
            #expect(refused.stderr.contains("SQLCipher 4"), "\(refused.stderr)")
            return
        }
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, file, [
            SqlcipherCLI.keyPragma(passphrase: Self.passphrase4), "PRAGMA cipher_kdf_algorithm = PBKDF2_HMAC_SHA256",
            "PRAGMA cipher_hmac_algorithm = HMAC_SHA256", "CREATE TABLE items(x)", "INSERT INTO items VALUES (1), (2)",
        ])
        let (plain, _) = try verify([file], key: Self.passphrase4)
        #expect(plain.status == 1)
        for extra in [["--kdf-algorithm", "sha256", "--hmac-algorithm", "sha256"],
                      ["--kdf-algorithm=PBKDF2_HMAC_SHA256", "--hmac-algorithm", "HMAC_SHA256"]] {
            let (result, entries) = try verify([file], key: Self.passphrase4, extra: extra)
            #expect(result.status == 0, "\(extra): \(result.stdout)")
            let settings = check(entries[0], "settings")
            #expect(settings["swift"] as? String == "CipherSettings(kdfAlgorithm: .sha256, hmacAlgorithm: .sha256)")
            #expect(tables(entries[0]) == ["items": 2])
        }
    }

    /// A file written with `PRAGMA cipher_use_hmac = OFF` verifies with `--no-hmac`, on either
    /// library: the report gives `CipherSettings(usesHMAC: false)` and says why
    /// `cipher_integrity_check` did not run, never that it passed; without the flag the key is
    /// rejected, and the advice names the flag.
    @Test func noHMACVerifiesAFileWrittenWithoutPageHMACs() throws {
        let directory = TemporaryDirectory()
        let file = directory.path("no-hmac.db")
        let cli = isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3
        _ = try SqlcipherCLI.run(cli, file, [
            SqlcipherCLI.keyPragma(passphrase: Self.passphrase4), "PRAGMA cipher_use_hmac = OFF",
            "CREATE TABLE items(x)", "INSERT INTO items VALUES (1), (2), (3)",
        ])
        let (plain, rejected) = try verify([file], key: Self.passphrase4)
        #expect(plain.status == 1)
        #expect(rejected[0]["key_accepted"] as? Bool == false, "\(plain.stdout)")
        #expect((rejected[0]["error"] as? String)?.contains("--no-hmac") == true, "\(plain.stdout)")

        let (result, entries) = try verify([file], key: Self.passphrase4, extra: ["--no-hmac"])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(check(entries[0], "settings")["swift"] as? String == "CipherSettings(usesHMAC: false)")
        #expect(tables(entries[0]) == ["items": 3])
        #expect(check(entries[0], "integrity_check")["status"] as? String == "pass")
        let hmac = check(entries[0], "cipher_integrity_check")
        #expect(hmac["status"] as? String == "skipped")
        #expect((hmac["reason"] as? String)?.contains("cipher_use_hmac = OFF") == true, "\(hmac)")

        // A wrong key with the flag is still a rejected key, and the advice claims no HMAC check:
        // "cipher_integrity_check verified no page" was said of pages that carry no HMAC.
        let (wrong, wrongEntries) = try verify([file], key: "another", extra: ["--no-hmac"])
        #expect(wrong.status == 1)
        #expect(wrongEntries[0]["key_accepted"] as? Bool == false, "\(wrong.stdout)")
        let advice = wrongEntries[0]["error"] as? String ?? ""
        #expect(!advice.contains("cipher_integrity_check") && advice.contains("without page HMACs"), "\(advice)")
    }

    /// `--no-hmac` with `--salt` (a plaintext header): a wrong key or salt is a rejected key, not
    /// a key accepted on a page 1 whose cookie (any key reads one: the header is in the clear and
    /// no HMAC zeroes the rest) was taken for proof, and the file then reported damaged.
    @Test(.enabled(if: isSQLCipher4(), "3.4.1 has no plaintext header"))
    func noHMACWithASaltRejectsAWrongKey() async throws {
        let directory = TemporaryDirectory()
        let file = directory.path("headed-no-hmac.db")
        let salt = Data((0..<16).map { UInt8($0) &+ 40 })
        let saltHex = salt.map { String(format: "%02x", $0) }.joined()
        let db = try Database(path: file, key: .passphrase(Self.passphrase4, salt: salt), journalMode: .rollback,
                              cipher: CipherSettings(plaintextHeaderSize: 32, usesHMAC: false))
        try await db.execute("CREATE TABLE items(x)")
        try await db.execute("INSERT INTO items VALUES (1), (2)")
        await db.close()

        let (result, entries) = try verify([file], key: Self.passphrase4, extra: ["--no-hmac", "--salt", saltHex])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(tables(entries[0]) == ["items": 2])
        for (key, salt) in [("another", saltHex), (Self.passphrase4, String(repeating: "ab", count: 16))] {
            let (wrong, wrongEntries) = try verify([file], key: key, extra: ["--no-hmac", "--salt", salt])
            #expect(wrong.status == 1)
            #expect(wrongEntries[0]["key_accepted"] as? Bool == false, "\(wrong.stdout)")
        }
    }

    /// A folder of files in every state a database can be left in, verified twice (text and JSON):
    /// no byte, modification time or file name may change.
    @Test func filesAreLeftByteForByteUnchanged() async throws {
        let directory = TemporaryDirectory()
        var files = [try fixture("sqlcipher3-default.db", in: directory), try fixture("sqlcipher3-wal.db", in: directory),
                     try fixture("sqlcipher3-default-damaged-middle.db", in: directory),
                     try fixture("plaintext.db", in: directory)]

        // A WAL database closed cleanly (no -wal): SQLite's read-only mode would create -wal and -shm.
        let maker = TemporaryDirectory()
        let closedWAL = maker.path("closed-wal.db")
        let closed = try Database(path: closedWAL, key: Self.passphrase3, journalMode: .wal)
        try await closed.execute("CREATE TABLE t(v); INSERT INTO t VALUES (1), (2), (3)")
        await closed.close()

        // A database left by a crash in WAL mode: -wal with frames and a -shm.
        let live = try Database(path: maker.path("crashed-wal.db"), key: Self.passphrase3, journalMode: .wal)
        try await live.execute("PRAGMA wal_autocheckpoint = 0")
        try await live.execute("CREATE TABLE t(v)")
        for value in 0..<50 { try await live.execute("INSERT INTO t VALUES (?)", value) }

        // A database left by a crash in the middle of a transaction: a hot -journal, and pages of
        // the transaction already written to the file (the cache holds 2 pages).
        let journaled = try Database(path: maker.path("hot-journal.db"), key: Self.passphrase3, journalMode: .rollback)
        try await journaled.execute("PRAGMA cache_size = 2")
        try await journaled.execute("CREATE TABLE t(v TEXT)")
        for value in 0..<200 { try await journaled.execute("INSERT INTO t VALUES (?)", String(repeating: "x", count: 300) + "\(value)") }
        let target = directory
        try await journaled.transaction { connection in
            try connection.execute("UPDATE t SET v = upper(v) || 'changed'")
            try connection.execute("DELETE FROM t WHERE rowid % 2 = 0")
            for suffix in ["", "-journal"] {
                try FileManager.default.copyItem(atPath: maker.path("hot-journal.db") + suffix,
                                                 toPath: target.path("hot-journal.db") + suffix)
            }
        }
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: maker.path("crashed-wal.db") + suffix,
                                             toPath: directory.path("crashed-wal.db") + suffix)
        }
        try FileManager.default.copyItem(atPath: closedWAL, toPath: directory.path("closed-wal.db"))
        files += [directory.path("closed-wal.db"), directory.path("crashed-wal.db"), directory.path("hot-journal.db")]
        await live.close()
        await journaled.close()
        #expect(FileManager.default.fileExists(atPath: directory.path("hot-journal.db-journal")))
        #expect(FileManager.default.fileExists(atPath: directory.path("crashed-wal.db-shm")))
        #expect(!FileManager.default.fileExists(atPath: directory.path("closed-wal.db-wal")))

        let before = try directory.snapshot()
        // Let a modification, if any, show up in the mtime (a minimum wait: load only lengthens it;
        // the contents are compared too).
        try await Task.sleep(for: .milliseconds(20))

        // The private copies go to a temporary folder of this test's own, to prove none is left.
        let temporary = TemporaryDirectory()
        let text = try doctor(["--key-env", "K"] + files, environment: ["K": Self.passphrase3, "TMPDIR": temporary.url.path])
        #expect(text.status == 1, "the damaged and plaintext files fail: \(text.stdout)")
        let (json, entries) = try verify(files, key: Self.passphrase3, environment: ["TMPDIR": temporary.url.path])
        #expect(json.status == 1)
        var byName: [String: [String: Any]] = [:]
        for entry in entries {
            byName[URL(fileURLWithPath: entry["path"] as? String ?? "").lastPathComponent] = entry
        }
        #expect(byName["closed-wal.db"]?["status"] as? String == "verified")
        #expect(byName["closed-wal.db"]?["access"] as? String == "in-place")
        #expect(tables(byName["closed-wal.db"] ?? [:]) == ["t": 3])
        // The crashed WAL's 50 rows exist only in its -wal: the copy recovered them.
        #expect(byName["crashed-wal.db"]?["status"] as? String == "verified", "\(byName["crashed-wal.db"] ?? [:])")
        #expect(byName["crashed-wal.db"]?["access"] as? String == "snapshot")
        #expect(tables(byName["crashed-wal.db"] ?? [:]) == ["t": 50])
        // The interrupted transaction is rolled back in the copy: all 200 rows, unchanged.
        #expect(byName["hot-journal.db"]?["status"] as? String == "verified", "\(byName["hot-journal.db"] ?? [:])")
        #expect(byName["hot-journal.db"]?["access"] as? String == "snapshot")
        #expect(tables(byName["hot-journal.db"] ?? [:]) == ["t": 200])
        #expect(byName["sqlcipher3-wal.db"]?["user_version"] as? Int == 7)

        let after = try directory.snapshot()
        #expect(after.keys.sorted() == before.keys.sorted(), "no file may appear (e.g. a -shm) or disappear")
        for (name, state) in before {
            #expect(after[name]?.0 == state.0, "\(name) changed")
            #expect(after[name]?.1 == state.1, "\(name) mtime changed")
        }
        // Nothing of the private copies is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.url.path).isEmpty)
    }

    @Test func helpOfVerify() throws {
        let result = try doctor(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("usage: sqlcipher-doctor verify KEY-SOURCE"))
        #expect(result.stdout.contains("--raw-key-stdin"))
        #expect(result.stdout.contains("/proc/PID/cmdline"))
    }
}

/// `verify` of a file whose key the settings tried do not accept names the page size the file
/// gives away (its `-wal`'s header), as the openings do (`PageSizeMismatchTests`); it listed every
/// setting's option, without the digests'.
@Suite struct DoctorPageSizeAdviceTests {
    @Test func aRejectedKeyNamesThePageSizeOfTheWAL() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("wal-pages.db")
        try SqlcipherCLI.runAndKill(PageSizeMismatchTests.cli, path, [
            PageSizeMismatchTests.key, "PRAGMA cipher_page_size = 8192", "PRAGMA kdf_iter = 2", "PRAGMA journal_mode = WAL",
            "CREATE TABLE t(x)", "INSERT INTO t VALUES (1)",
        ])
        try Self.expectRejectedThenVerified(path, pageSize: 8192)
    }

    /// The same for a hot `-journal` (a writer killed inside a transaction whose pages spilled into
    /// the file), whose header records the page size too: the file's size, a whole number of
    /// 4096-byte pages, shows nothing, and the report listed every setting.
    @Test func aRejectedKeyNamesThePageSizeOfAHotJournal() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("journal-pages.db")
        try SqlcipherCLI.runAndKill(PageSizeMismatchTests.cli, path, [
            PageSizeMismatchTests.key, "PRAGMA cipher_page_size = 16384", "PRAGMA kdf_iter = 2", "PRAGMA journal_mode = DELETE",
            "CREATE TABLE t(x)", "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 400) "
                + "INSERT INTO t SELECT randomblob(100) FROM c",
            "PRAGMA cache_size = 2", "BEGIN", "UPDATE t SET x = randomblob(100)",
        ])
        let journal = try #require(FileManager.default.contents(atPath: path + "-journal"))
        #expect(journal.count > 512, "a hot journal was left")
        try Self.expectRejectedThenVerified(path, pageSize: 16384)
        #expect(FileManager.default.contents(atPath: path + "-journal") == journal, "the journal was changed")
    }

    /// `verify` without the page size is rejected with advice naming `pageSize`, and with it
    /// verifies the file.
    static func expectRejectedThenVerified(_ path: String, pageSize: Int) throws {
        func verify(_ settings: [String]) throws -> ChildResult {
            try runChild(productPath("sqlcipher-doctor"), ["verify", "--key-env", "DOCTOR_TEST_KEY"] + settings + ["--", path],
                         environment: try Linking.childEnvironment(["DOCTOR_TEST_KEY": "secret"]))
        }
        let rejected = try verify(["--kdf-iter", "2"])
        #expect(rejected.status == 1, "\(rejected.stdout)")
        #expect(rejected.stdout.contains("--cipher-page-size \(pageSize)"), "\(rejected.stdout)")
        let verified = try verify(["--kdf-iter", "2", "--cipher-page-size", "\(pageSize)"])
        #expect(verified.status == 0, "\(verified.stdout)")
    }
}
