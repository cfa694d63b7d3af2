import Foundation
import SqlCipherKit
import Testing

/// The built `sqlcipher-doctor`, run as a user would: exit codes, the report, the JSON keys.
@Suite struct DoctorCommandTests {
    private func doctor(_ arguments: [String], environment: [String: String?] = [:]) throws -> ChildResult {
        let result = try runChild(productPath("sqlcipher-doctor"), arguments, environment: try Linking.childEnvironment(environment))
        #expect(!result.signaled, "the doctor crashed: \(result.stderr)")
        return result
    }

    private func section(_ report: [String: Any], _ name: String) throws -> [String: Any] {
        try #require(report[name] as? [String: Any], "no \(name) in \(report)")
    }

    @Test func jsonReportPassesWithTheLibraryUnderTest() throws {
        let library = try SqlCipherLibrary.shared
        let result = try doctor(["--json"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let report = try Linking.jsonObject(result.stdout)
        #expect(report["ok"] as? Bool == true)
        #expect(report["error"] == nil)
        #expect(report["error_kind"] == nil)

        let lib = try section(report, "library")
        #expect(lib["exit_protection"] as? String == ProcessExitTests.plainProtection)
        #expect(lib["path"] as? String == library.path)
        #expect(lib["source"] as? String == "SQLCIPHERKIT_LIBRARY")
        #expect(lib["sqlite_version"] as? String == library.sqliteVersion)
        #expect(lib["sqlite_version_number"] as? Int == library.sqliteVersionNumber)
        let cipher = try #require(lib["cipher_version"] as? String)
        #expect(cipher == library.cipherVersion)
        #expect(cipher.hasPrefix(library.cipherMajorVersion >= 4 ? "4." : "3."))
        #expect(lib["cipher_provider"] as? String == library.cipherProvider)
        #expect(lib["load_method"] as? String == "RTLD_NOW|RTLD_LOCAL|RTLD_DEEPBIND")

        let audit = try section(report, "binding_audit")
        #expect(audit["status"] as? String == "pass")
        #expect(audit["checked"] as? Int == library.bindingAudit.checked)
        #expect((audit["foreign"] as? [Any])?.isEmpty == true)

        let process = try section(report, "process")
        // The doctor links no SQLite: without a preload there is nothing else in its process.
        #expect(process["other_sqlite_libraries"] as? [String] == [])

        let selfTest = try section(report, "self_test")
        #expect(selfTest["status"] as? String == "pass")
        #expect(selfTest["header_encrypted"] as? Bool == true)
        let checks = try #require(selfTest["checks"] as? [[String: Any]])
        #expect(checks.compactMap { $0["name"] as? String } == EncryptionSelfTest.Check.Name.allCases.map(\.rawValue))
        #expect(checks.allSatisfy { $0["passed"] as? Bool == true })
    }

    @Test func textReportPasses() throws {
        let result = try doctor([])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("Binding audit           PASS"))
        #expect(result.stdout.contains("Encryption self-test    PASS"))
        #expect(result.stdout.contains("Result: OK"))
        #expect(result.stdout.contains((try SqlCipherLibrary.shared).cipherVersion))
    }

    @Test func preloadedLibsqlite3StillPassesAndIsListed() throws {
        let result = try doctor(["--json"], environment: ["LD_PRELOAD": Linking.libsqlite3])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let report = try Linking.jsonObject(result.stdout)
        #expect(report["ok"] as? Bool == true)
        let others = try section(report, "process")["other_sqlite_libraries"] as? [String] ?? []
        #expect(others.contains(Linking.libsqlite3), "\(others)")
        #expect(try section(report, "self_test")["status"] as? String == "pass")
    }

    @Test func preloadedLibsqlite3AndLibsqlcipherIsABindingConflict() throws {
        // Preloaded after libsqlite3, libsqlcipher's own references bind to libsqlite3 at start-up.
        let library = try Linking.libraryUnderTest()
        let result = try doctor(["--json"], environment: ["LD_PRELOAD": "\(Linking.libsqlite3) \(library)"])
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        let report = try Linking.jsonObject(result.stdout)
        #expect(report["ok"] as? Bool == false)
        let audit = try section(report, "binding_audit")
        #expect(audit["status"] as? String == "fail")
        #expect(audit["checked"] as? Int ?? 0 > 100)
        #expect(audit["foreign_count"] as? Int ?? 0 > 0)
        let foreign = try #require((audit["foreign"] as? [[String: Any]])?.first)
        #expect((foreign["object"] as? String)?.hasSuffix("libsqlite3.so.0") == true)
        #expect((foreign["symbol"] as? String)?.hasPrefix("sqlite3_") == true)
        #expect(try section(report, "self_test")["status"] as? String == "skipped")
        #expect((report["error"] as? String)?.contains("Binding conflict") == true)
        #expect(report["error_kind"] as? String == "bindingConflict")
    }

    @Test func pointedAtLibsqlite3ExitsOneWithAClearMessage() throws {
        let json = try doctor(["--json", "--library", Linking.libsqlite3])
        #expect(json.status == 1)
        let report = try Linking.jsonObject(json.stdout)
        #expect(report["ok"] as? Bool == false)
        #expect(try section(report, "library")["status"] as? String == "fail")
        #expect(try section(report, "library")["path"] as? String == Linking.libsqlite3)
        #expect(try section(report, "library")["source"] as? String == "--library")
        #expect(try section(report, "self_test")["status"] as? String == "skipped")
        #expect(try section(report, "self_test")["header_encrypted"] as? Bool == false)
        let error = try #require(report["error"] as? String)
        #expect(error.contains("is not a usable SQLCipher library") && error.contains("sqlite3_key"), "\(error)")
        #expect(report["error_kind"] as? String == "notSQLCipher")

        let text = try doctor(["--library", Linking.libsqlite3])
        #expect(text.status == 1)
        #expect(text.stdout.contains("Result: FAILED"))
        #expect(text.stdout.contains("plain SQLite"))
    }

    @Test(arguments: ["/etc/passwd", "/nonexistent/libsqlcipher.so.1", "/tmp"])
    func pointedAtSomethingElseExitsOne(path: String) throws {
        let result = try doctor(["--json", "--library", path])
        #expect(result.status == 1)
        let report = try Linking.jsonObject(result.stdout)
        #expect(report["ok"] as? Bool == false)
        let error = report["error"] as? String ?? ""
        // The path came from --library, so that is what the message tells to change.
        #expect(error.hasPrefix("--library \(path): "), "\(error)")
        #expect(error.contains("Give --library the path of libsqlcipher"), "\(error)")
        #expect(!error.contains("Point SQLCIPHERKIT_LIBRARY"), "\(error)")
        #expect(try section(report, "binding_audit")["status"] as? String == "skipped")
        // A script tells the causes apart without reading the sentence.
        #expect(report["error_kind"] as? String == (path.hasPrefix("/nonexistent") ? "libraryNotFound" : "notSQLCipher"),
                "\(report)")

        let text = try doctor(["--library", path])
        #expect(text.stdout.contains("Result: FAILED. --library \(path): "), "\(text.stdout)")
    }

    /// A library cut short (an interrupted copy or install) raised SIGBUS inside dlopen: the
    /// doctor died by the signal instead of reporting. It now fails the library check and says why.
    @Test func pointedAtATruncatedLibraryExitsOneWithoutACrash() throws {
        let library = try SqlCipherLibrary.shared
        let directory = TemporaryDirectory()
        let cut = directory.path("libsqlcipher.so.1")
        try Data(try Data(contentsOf: URL(fileURLWithPath: library.path)).prefix(5000)).write(to: URL(fileURLWithPath: cut))
        let result = try doctor(["--json"], environment: [SqlCipherLibrary.environmentVariable: cut])
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        let report = try Linking.jsonObject(result.stdout)
        #expect(report["ok"] as? Bool == false)
        #expect(try section(report, "library")["status"] as? String == "fail")
        #expect(report["error_kind"] as? String == "notSQLCipher")
        let error = report["error"] as? String ?? ""
        #expect(error.contains("cut short") && error.contains(SqlCipherLibrary.environmentVariable), "\(error)")
        #expect(try section(report, "self_test")["status"] as? String == "skipped")
    }

    @Test func libraryFromTheEnvironmentNamesTheEnvironment() throws {
        let result = try doctor(["--json"], environment: [SqlCipherLibrary.environmentVariable: "/etc/passwd"])
        #expect(result.status == 1)
        let error = try Linking.jsonObject(result.stdout)["error"] as? String ?? ""
        #expect(error.contains(SqlCipherLibrary.environmentVariable), "\(error)")
        #expect(!error.contains("--library"), "\(error)")
    }

    @Test func jsonIsTheSameOnEveryRunWithSortedKeys() throws {
        let first = try doctor(["--json", "--library", "/etc/passwd"]).stdout
        let second = try doctor(["--json", "--library", "/etc/passwd"]).stdout
        #expect(first == second)
        let keys = first.split(separator: "\n").filter { $0.hasPrefix("  \"") }.map { $0.split(separator: "\"")[1] }
        #expect(keys == ["binding_audit", "error", "error_kind", "library", "ok", "process", "self_test", "warnings"], "\(keys)")
    }

    @Test func libraryOptionOverridesTheEnvironment() throws {
        let library = try SqlCipherLibrary.shared
        let result = try doctor(["--json", "--library=\(library.path)"], environment: [SqlCipherLibrary.environmentVariable: "/nonexistent"])
        #expect(result.status == 0, "\(result.stdout)")
        let lib = try section(try Linking.jsonObject(result.stdout), "library")
        #expect(lib["source"] as? String == "--library")
        #expect(lib["cipher_version"] as? String == library.cipherVersion)
    }

    @Test(arguments: [["--bogus"], ["frobnicate"], ["--library"], ["--json", "--json", "extra"], ["inspect"],
                      ["inspect", "--library", "/x", "f.db"], ["--library", "a", "--library", "b"], ["-x"],
                      ["--", "file"], ["inspect", "--json=yes", "f.db"], ["verify", "--key-env", "K"], ["--key-env", "K"],
                      ["verify", "--bogus", "f.db"]])
    func usageErrorsExitTwo(arguments: [String]) throws {
        let result = try doctor(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stdout)")
        #expect(result.stderr.contains("usage: sqlcipher-doctor"))
        #expect(result.stderr.hasPrefix("sqlcipher-doctor: "))
        #expect(result.stdout.isEmpty)
    }

    @Test(arguments: [["--help"], ["-h"], ["--json", "--help"], ["--help", "--bogus"]])
    func helpExitsZero(arguments: [String]) throws {
        let result = try doctor(arguments)
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("usage: sqlcipher-doctor [--json] [--library PATH]"))
        #expect(result.stdout.contains("sqlcipher-doctor inspect [--json] FILE..."))
        #expect(result.stdout.contains("sqlcipher-doctor verify KEY-SOURCE"))
    }

    @Test(arguments: [(["inspect", "--help"], "inspect"), (["inspect", "-h", "f.db"], "inspect"),
                      (["verify", "--help"], "verify"), (["--json", "verify", "-h"], "verify")])
    func helpPerCommand(arguments: [String], command: String) throws {
        let result = try doctor(arguments)
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("usage: sqlcipher-doctor \(command) "), "\(result.stdout)")
        #expect(result.stderr.isEmpty)
    }
}
