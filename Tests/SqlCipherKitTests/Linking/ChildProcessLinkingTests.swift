import Foundation
import Testing
@testable import SqlCipherKit

/// Linking scenarios, each in a fresh child process (the helper executable, which links
/// libsqlite3). Each ends with a verified encrypted file or the right typed error, and no child
/// is ended by a signal.
@Suite struct ChildProcessLinkingTests {
    @Test func theHelperReallyLinksLibsqlite3() throws {
        let helper = productPath("sqlcipherkit-test-helper")
        #expect(try Linking.neededLibraries(helper).contains("libsqlite3.so.0"))
        #expect(try !Linking.undefinedSymbols(helper).isEmpty)
        #expect(try !Linking.neededLibraries(helper).contains { $0.hasPrefix("libsqlcipher") })
    }

    /// Runs linked-sqlite3 and verifies everything it reports and every file it leaves.
    private func verifyLinkedScenario(environment: [String: String?]) async throws -> [String: Any] {
        let directory = TemporaryDirectory()
        let keyHex = Linking.randomKeyHex(), marker = Linking.marker("LINKED")
        let result = try runHelper(["linked-sqlite3", directory.url.path, keyHex, marker],
                                   environment: try Linking.childEnvironment(environment))
        #expect(!result.signaled, "the child crashed: \(result.stderr)")
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let facts = try #require(try Linking.jsonLines(result.stdout).last)
        let library = try SqlCipherLibrary.shared

        #expect(facts["cipher_version"] as? String == library.cipherVersion)
        #expect(facts["library_path"] as? String == library.path)
        #expect(facts["checked"] as? Int == library.bindingAudit.checked)
        // libsqlite3 was in the process before the bridge loaded, and is listed after.
        let before = facts["sqlite_libraries_before_load"] as? [String] ?? []
        #expect(before.contains { $0.hasSuffix("/libsqlite3.so.0") })
        #expect(!before.contains { $0.contains("libsqlcipher") })
        #expect((facts["other_libraries"] as? [String] ?? []).contains { $0.hasSuffix("/libsqlite3.so.0") })
        // Both keep working, each on its own files.
        #expect(facts["plain_before_read_after_load"] as? String == "\(marker)-plain")
        #expect(facts["libsqlite3_on_encrypted"] as? String == "error 26")
        #expect(facts["sqlcipherkit_reads_plain"] as? String == "\(marker)-after")
        #expect(facts["sqlcipherkit_reads_encrypted"] as? String == "\(marker)-encrypted")

        // The files, verified here: plaintext ones plaintext, the encrypted one encrypted and
        // readable with its key only.
        let encrypted = directory.path("encrypted.db")
        for plain in ["plain-before.db", "plain-after.db"] {
            #expect(Linking.hasPlaintextHeader(directory.path(plain)))
        }
        #expect(Linking.anyFileContains([directory.path("plain-before.db")], marker))
        #expect(!Linking.hasPlaintextHeader(encrypted))
        #expect(!Linking.anyFileContains(Linking.databaseFiles(encrypted), marker))
        let db = try Database(path: encrypted, rawKey: Linking.keyBytes(keyHex))
        #expect(try await db.query("SELECT v FROM t").first?.get("v", as: String.self) == "\(marker)-encrypted")
        await db.close()
        return facts
    }

    @Test func libsqlite3Linked() async throws {
        _ = try await verifyLinkedScenario(environment: [:])
    }

    @Test func libsqlite3Preloaded() async throws {
        let facts = try await verifyLinkedScenario(environment: ["LD_PRELOAD": Linking.libsqlite3])
        // The preloaded copy is the one listed (the same file the executable links).
        #expect((facts["other_libraries"] as? [String] ?? []).contains(Linking.libsqlite3))
    }

    /// The other SQLCipher version on the dynamic linker's path (`libsqlcipher.so.0` beside 4.x,
    /// `.so.1` beside 3.4.1).
    private static func otherSQLCipherVersion() throws -> String {
        let library = try SqlCipherLibrary.shared
        return Linking.libraryDirectory + (library.cipherMajorVersion >= 4 ? "/libsqlcipher.so.0" : "/libsqlcipher.so.1")
    }

    /// The other SQLCipher version preloaded (LD_PRELOAD), as a program that links it, or an
    /// environment that preloads it, would put it first in the global scope: the library under
    /// test, loaded apart with RTLD_DEEPBIND, binds to itself, encrypts, and both stay usable.
    @Test func theOtherSQLCipherVersionPreloadedLeavesTheLibraryUnderTestWorking() async throws {
        let other = try Self.otherSQLCipherVersion()
        try #require(FileManager.default.fileExists(atPath: other))
        let directory = TemporaryDirectory()
        let keyHex = Linking.randomKeyHex(), marker = Linking.marker("OTHER")
        let result = try runHelper(["linked-sqlite3", directory.url.path, keyHex, marker],
                                   environment: try Linking.childEnvironment(["LD_PRELOAD": other]))
        #expect(!result.signaled, "the child crashed: \(result.stderr)")
        try #require(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let facts = try #require(try Linking.jsonLines(result.stdout).last)
        let library = try SqlCipherLibrary.shared
        #expect(facts["cipher_version"] as? String == library.cipherVersion)
        #expect(facts["library_path"] as? String == library.path)
        #expect(facts["foreign"] as? Int == 0)
        #expect((facts["sqlite_libraries_before_load"] as? [String] ?? []).contains(other), "\(facts)")
        #expect(facts["sqlcipherkit_reads_encrypted"] as? String == "\(marker)-encrypted")
        let encrypted = directory.path("encrypted.db")
        #expect(!Linking.hasPlaintextHeader(encrypted))
        #expect(!Linking.anyFileContains(Linking.databaseFiles(encrypted), marker))
        let db = try Database(path: encrypted, rawKey: Linking.keyBytes(keyHex))
        #expect(try await db.query("SELECT v FROM t").first?.get("v", as: String.self) == "\(marker)-encrypted")
        await db.close()
    }

    /// The library under test preloaded after another SQLite (libsqlite3, or the other SQLCipher
    /// version): its own references bind into the one before it. Refused with `bindingConflict`
    /// before any file is made: never a crash, never a plaintext file.
    @Test(arguments: ["libsqlite3", "other SQLCipher"])
    func theLibraryPreloadedAfterAnotherSQLiteIsRefused(first: String) throws {
        let before = first == "libsqlite3" ? Linking.libsqlite3 : try Self.otherSQLCipherVersion()
        let library = try Linking.libraryUnderTest()
        let directory = TemporaryDirectory()
        let result = try runHelper(["linked-sqlite3", directory.url.path, Linking.randomKeyHex(), Linking.marker("PRELOAD")],
                                   environment: try Linking.childEnvironment(["LD_PRELOAD": before + ":" + library]))
        #expect(!result.signaled, "the child crashed: \(result.stderr)")
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        let said = result.stdout + result.stderr
        #expect(said.contains("Binding conflict") && said.contains("sqlcipher-doctor"), "\(said)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("encrypted.db")))
    }

    @Test func libsqlcipherAlreadyLoadedWithoutIsolationIsABindingConflict() throws {
        let directory = TemporaryDirectory()
        let library = try Linking.libraryUnderTest()
        let result = try runHelper(["already-loaded", library, directory.url.path],
                                   environment: try Linking.childEnvironment())
        #expect(!result.signaled, "the child crashed: \(result.stderr)")
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let facts = try #require(try Linking.jsonLines(result.stdout).last)
        for step in ["load", "database"] {
            let error = try #require(facts[step] as? [String: Any], "\(step) missing in \(facts)")
            #expect(error["case"] as? String == "bindingConflict")
            let checked = error["checked"] as? Int ?? 0, foreign = error["foreign"] as? Int ?? 0
            #expect(checked > 100)
            #expect(foreign > 0 && foreign <= checked)
            #expect((error["boundTo"] as? String)?.hasSuffix("/libsqlite3.so.0") == true)
            #expect((error["symbol"] as? String)?.hasPrefix("sqlite3_") == true)
            #expect((error["description"] as? String)?.contains("sqlcipher-doctor") == true)
        }
        // Refused before any file was touched; the process's libsqlite3 is unharmed.
        #expect(facts["database_file_created"] as? Bool == false)
        #expect(facts["libsqlite3_still_works"] as? Bool == true)
        #expect(!FileManager.default.fileExists(atPath: directory.path("refused.db")))
    }

    /// Runs load-library with the paths and returns one outcome per path.
    private func loadOutcomes(_ paths: [String]) throws -> [[String: Any]] {
        let result = try runHelper(["load-library"] + paths, environment: [SqlCipherLibrary.environmentVariable: nil])
        #expect(!result.signaled, "the child crashed: \(result.stderr)")
        let outcomes = try Linking.jsonLines(result.stdout)
        #expect(outcomes.count == paths.count, "\(result.stdout)\n\(result.stderr)")
        let failures = outcomes.filter { $0["outcome"] as? String == "error" }.count
        #expect(result.status == (failures == 0 ? 0 : 1))
        return outcomes
    }

    @Test func pointedAtLibsqlite3IsNotSQLCipher() throws {
        let outcome = try #require(try loadOutcomes([Linking.libsqlite3]).first)
        #expect(outcome["case"] as? String == "notSQLCipher")
        #expect((outcome["reason"] as? String)?.contains("sqlite3_key") == true)
        #expect((outcome["description"] as? String)?.contains("Point SQLCIPHERKIT_LIBRARY") == true)
    }

    @Test func pointedAtAFileThatIsNotALibrary() throws {
        let directory = TemporaryDirectory()
        let text = directory.path("not-a-library.so")
        try Data("just text, not ELF\n".utf8).write(to: URL(fileURLWithPath: text))
        let outcomes = try loadOutcomes([text, directory.url.path])
        #expect(outcomes[0]["case"] as? String == "notSQLCipher")
        #expect((outcomes[0]["reason"] as? String)?.contains("dlopen refused") == true)
        // A directory is not a library either.
        #expect(outcomes[1]["case"] as? String == "notSQLCipher")
        #expect((outcomes[1]["reason"] as? String)?.contains("not a regular file") == true)
    }

    /// A copy of the library cut short, as an interrupted copy, download or install leaves it:
    /// dlopen maps its segments by their headers and the first page past the end raised SIGBUS
    /// inside dlopen, killing the child. Refused before dlopen, with the reason; the whole
    /// library, and one cut only in its section headers (no segment reaches past the end), still load.
    @Test func pointedAtATruncatedLibraryIsRefusedWithoutACrash() throws {
        let library = try SqlCipherLibrary.shared
        let whole = try Data(contentsOf: URL(fileURLWithPath: library.path))
        let directory = TemporaryDirectory()
        var paths: [String] = []
        for size in [100, 5000, whole.count / 2, whole.count - 40_000] {
            let path = directory.path("cut-\(size)/libsqlcipher.so.1")
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try whole.prefix(size).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        let empty = directory.path("libsqlcipher-empty.so.1")
        try Data().write(to: URL(fileURLWithPath: empty))
        let sectionsCut = directory.path("libsqlcipher-sections-cut.so.1")
        try whole.prefix(whole.count - 1).write(to: URL(fileURLWithPath: sectionsCut))
        let outcomes = try loadOutcomes(paths + [empty, sectionsCut])
        for outcome in outcomes.prefix(paths.count) {
            #expect(outcome["case"] as? String == "notSQLCipher", "\(outcome)")
            #expect((outcome["reason"] as? String)?.contains("cut short") == true, "\(outcome)")
            #expect((outcome["description"] as? String)?.contains("reinstall the package") == true, "\(outcome)")
        }
        #expect(outcomes[paths.count]["case"] as? String == "notSQLCipher")
        #expect((outcomes[paths.count]["reason"] as? String)?.contains("file too short") == true)
        #expect(outcomes[paths.count + 1]["outcome"] as? String == "loaded", "\(outcomes[paths.count + 1])")
        #expect(outcomes[paths.count + 1]["cipher_version"] as? String == library.cipherVersion)
    }

    @Test func pointedAtAMissingPath() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/libsqlcipher.so.1"
        let outcome = try #require(try loadOutcomes([missing]).first)
        #expect(outcome["case"] as? String == "libraryNotFound")
        #expect(outcome["searched"] as? [String] == [missing])
        #expect((outcome["description"] as? String)?.contains("apt-get install") == true)
    }

    @Test func aFailedLoadLeavesRoomForTheRightLibrary() throws {
        let library = try Linking.libraryUnderTest()
        let outcomes = try loadOutcomes([Linking.libsqlite3, "/nonexistent-\(UUID().uuidString)", library])
        #expect(outcomes[0]["case"] as? String == "notSQLCipher")
        #expect(outcomes[1]["case"] as? String == "libraryNotFound")
        #expect(outcomes[2]["outcome"] as? String == "loaded")
        #expect(outcomes[2]["cipher_version"] as? String == (try SqlCipherLibrary.shared).cipherVersion)
    }

    @Test func aSecondDifferentLibraryInTheSameProcessIsRefused() throws {
        let library = try SqlCipherLibrary.shared
        let other = Linking.libraryDirectory + (library.cipherMajorVersion >= 4 ? "/libsqlcipher.so.0" : "/libsqlcipher.so.1")
        try #require(FileManager.default.fileExists(atPath: other))
        let first = try Linking.libraryUnderTest()
        // The same file under its resolved name is the same library; the other version is refused.
        let outcomes = try loadOutcomes([first, library.path, other])
        #expect(outcomes[0]["outcome"] as? String == "loaded")
        #expect(outcomes[1]["outcome"] as? String == "loaded")
        #expect(outcomes[1]["path"] as? String == library.path)
        #expect(outcomes[2]["case"] as? String == "libraryAlreadyLoaded")
        #expect(outcomes[2]["loaded"] as? String == library.path)
        #expect(outcomes[2]["requested"] as? String == other)
    }
}
