import Foundation
import Testing
@testable import SqlCipherKit

/// Libraries that pretend to be SQLCipher, built from C by the test with gcc, and what the bridge
/// (and the doctor) make of them. Each is loaded in a child process.
@Suite struct FakeLibraryTests {
    /// A `sqlite3_key` and `sqlite3_rekey` that accept any key and do nothing.
    private static let noOpKeyFunctions = """
        int sqlite3_key(void *db, const void *key, int n) { (void)db; (void)key; (void)n; return 0; }
        int sqlite3_rekey(void *db, const void *key, int n) { (void)db; (void)key; (void)n; return 0; }

        """

    /// Builds a shared library from C source in `directory`.
    private func buildLibrary(_ name: String, source: String, in directory: TemporaryDirectory,
                              libraries: [String] = []) throws -> String {
        let sourcePath = directory.path(name + ".c"), output = directory.path(name + ".so")
        try Data(source.utf8).write(to: URL(fileURLWithPath: sourcePath))
        try Linking.compile([sourcePath], output: output, flags: ["-shared", "-fPIC", "-Wl,--no-as-needed"],
                            libraries: libraries)
        return output
    }

    /// The function names libsqlite3 exports, except the two SQLCipher adds.
    private func libsqlite3Functions() throws -> [String] {
        let names = try Linking.tool("nm", ["-D", "--defined-only", Linking.libsqlite3]).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            return fields.count == 3 && fields[1] == "T" && fields[2].hasPrefix("sqlite3_") ? String(fields[2]) : nil
        }
        return Set(names).subtracting(["sqlite3_key", "sqlite3_rekey"]).sorted()
    }

    /// A library that defines every libsqlite3 function itself, as a jump to libsqlite3's
    /// (loaded privately from its constructor), plus no-op key functions. `overrides` are C
    /// definitions replacing trampolines of the same names; `real(name)` returns libsqlite3's.
    private func forwardingSource(overriding overrides: [String: String] = [:], preamble: String = "") throws -> String {
        let names = try libsqlite3Functions().filter { overrides[$0] == nil }
        let all = try libsqlite3Functions()
        var lines = [
            "#define _GNU_SOURCE", "#include <dlfcn.h>", "#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>",
            "__attribute__((visibility(\"hidden\"))) void *fake_slots[\(all.count)];",
            "static const char *const fake_names[\(all.count)] = {\(all.map { "\"\($0)\"" }.joined(separator: ","))};",
            "static void *real(const char *name) {",
            "  for (int i = 0; i < \(all.count); i++) if (strcmp(fake_names[i], name) == 0) return fake_slots[i];",
            "  abort();",
            "}",
            "__attribute__((constructor)) static void fake_init(void) {",
            "  void *lib = dlopen(\"libsqlite3.so.0\", RTLD_NOW | RTLD_LOCAL);",
            "  if (lib == NULL) { fprintf(stderr, \"fake: %s\\n\", dlerror()); abort(); }",
            "  for (int i = 0; i < \(all.count); i++) fake_slots[i] = dlsym(lib, fake_names[i]);",
            "}",
            Self.noOpKeyFunctions,
            preamble,
        ]
        lines += overrides.values.sorted()
        for name in names {
            let slot = all.firstIndex(of: name)! * 8
            lines.append("""
                #if defined(__x86_64__)
                __asm__(".globl \(name)\\n.type \(name),@function\\n\(name):\\n\\tjmp *fake_slots+\(slot)(%rip)\\n");
                #elif defined(__aarch64__)
                __asm__(".globl \(name)\\n.type \(name),%function\\n\(name):\\n\\tadrp x16, fake_slots+\(slot)\\n\\tldr x16, [x16, #:lo12:fake_slots+\(slot)]\\n\\tbr x16\\n");
                #endif
                """)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func load(_ path: String) throws -> [String: Any] {
        let result = try runHelper(["load-library", path], environment: [SqlCipherLibrary.environmentVariable: nil])
        #expect(!result.signaled, "the child crashed: \(result.stderr)")
        return try #require(try Linking.jsonLines(result.stdout).first, "\(result.stdout)\n\(result.stderr)")
    }

    @Test func aKeyFunctionOverLinkedLibsqlite3IsRefusedByTheOwnershipCheck() throws {
        let directory = TemporaryDirectory()
        // Exports sqlite3_key; every other sqlite3_* symbol comes from its dependency libsqlite3.
        let fake = try buildLibrary("fake-key-over-sqlite3", source: Self.noOpKeyFunctions, in: directory,
                                    libraries: ["-lsqlite3"])
        #expect(try Linking.neededLibraries(fake).contains("libsqlite3.so.0"))
        let outcome = try load(fake)
        #expect(outcome["case"] as? String == "notSQLCipher")
        let reason = outcome["reason"] as? String ?? ""
        #expect(reason.contains("does not define sqlite3_"), "\(reason)")
        #expect(reason.contains("libsqlite3"), "\(reason)")
    }

    @Test func aKeyFunctionAloneIsMissingSymbols() throws {
        let directory = TemporaryDirectory()
        let fake = try buildLibrary("fake-key-only", source: Self.noOpKeyFunctions, in: directory)
        let outcome = try load(fake)
        #expect(outcome["case"] as? String == "missingSymbol")
        #expect(outcome["symbol"] as? String == "sqlite3_libversion")
        #expect((outcome["description"] as? String)?.contains("does not export sqlite3_libversion") == true)
    }

    @Test func aCompleteSQLiteWhoseKeyDoesNothingIsRefusedByTheIdentityProof() throws {
        let directory = TemporaryDirectory()
        // Defines all of SQLite's functions itself (the ownership check and the audit pass) and
        // accepts sqlite3_key, but nothing encrypts: a keyed database has no cipher_version.
        let fake = try buildLibrary("fake-forwarding", source: try forwardingSource(), in: directory, libraries: ["-ldl"])
        #expect(try !Linking.neededLibraries(fake).contains("libsqlite3.so.0"))
        let outcome = try load(fake)
        #expect(outcome["case"] as? String == "notSQLCipher")
        #expect((outcome["reason"] as? String)?.contains("accepts a key but does not encrypt") == true)
    }

    /// A forwarding fake that also lies: it answers `PRAGMA cipher_version` with a made-up version.
    private func lyingLibrary(in directory: TemporaryDirectory) throws -> String {
        let rewrite = """
            static const char *fake_rewrite(const char *sql, int *n) {
              if (sql != NULL && strncmp(sql, "PRAGMA cipher_version", 21) == 0) { *n = -1; return "SELECT '4.99.0 fake'"; }
              return sql;
            }
            """
        let prepareV2 = """
            int sqlite3_prepare_v2(void *db, const char *sql, int n, void **stmt, const char **tail) {
              sql = fake_rewrite(sql, &n);
              return ((int (*)(void *, const char *, int, void **, const char **))real("sqlite3_prepare_v2"))(db, sql, n, stmt, tail);
            }
            """
        let prepareV3 = """
            int sqlite3_prepare_v3(void *db, const char *sql, int n, unsigned f, void **stmt, const char **tail) {
              sql = fake_rewrite(sql, &n);
              return ((int (*)(void *, const char *, int, unsigned, void **, const char **))real("sqlite3_prepare_v3"))(db, sql, n, f, stmt, tail);
            }
            """
        let source = try forwardingSource(overriding: ["sqlite3_prepare_v2": prepareV2, "sqlite3_prepare_v3": prepareV3],
                                          preamble: rewrite)
        return try buildLibrary("fake-lying", source: source, in: directory, libraries: ["-ldl"])
    }

    @Test func aLibraryThatLiesAboutItsCipherIsCaughtByTheOnDiskCheck() throws {
        let directory = TemporaryDirectory()
        let fake = try lyingLibrary(in: directory)
        // The load-time proof only asks the library; a liar gets through it...
        let outcome = try load(fake)
        #expect(outcome["outcome"] as? String == "loaded")
        #expect(outcome["cipher_version"] as? String == "4.99.0 fake")
        // ...but creating a database checks the disk, and the doctor's self-test fails.
        let result = try runChild(productPath("sqlcipher-doctor"), ["--json", "--library", fake],
                                  environment: [SqlCipherLibrary.environmentVariable: nil])
        #expect(!result.signaled, "the doctor crashed: \(result.stderr)")
        #expect(result.status == 1)
        let report = try Linking.jsonObject(result.stdout)
        #expect(report["ok"] as? Bool == false)
        let selfTest = try #require(report["self_test"] as? [String: Any])
        #expect(selfTest["status"] as? String == "fail")
        let error = report["error"] as? String ?? ""
        #expect(error.contains("create_database") && error.contains("Refusing to use"), "\(error)")
    }

    /// Creates a database through `library` in a child process: raw key and salt, `mode`, and a
    /// plaintext header of `header` bytes (none when 0). Returns the JSON line it printed.
    private func createDatabase(_ path: String, library: String, mode: JournalMode, header: Int,
                                value: String) throws -> [String: Any] {
        let salt = String(Linking.randomKeyHex().prefix(32))
        let result = try runHelper(["create-database", path, mode.rawValue, "\(header)", Linking.randomKeyHex(), salt, value],
                                   environment: [SqlCipherLibrary.environmentVariable: library])
        #expect(!result.signaled, "the child crashed: \(result.stderr)")
        return try #require(try Linking.jsonLines(result.stdout).last, "\(result.stdout)\n\(result.stderr)")
    }

    /// The files in a folder, with their sizes.
    private func listing(_ folder: TemporaryDirectory) throws -> [String: Int] {
        var sizes: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.url.path) {
            sizes[name] = (try FileManager.default.attributesOfItem(atPath: folder.path(name))[.size] as? Int) ?? -1
        }
        return sizes
    }

    @Test(arguments: JournalMode.allCases, [0, 32])
    func aLyingLibraryCannotCreateAPlaintextDatabase(mode: JournalMode, header: Int) throws {
        // The issue's case is .rollback with a 32-byte plaintext header: the old check looked for a
        // dropped probe table's name, which secure delete had erased, and found a header it had
        // been told to expect. Every journal mode and header setting must now be refused.
        let build = TemporaryDirectory(), folder = TemporaryDirectory()
        let fake = try lyingLibrary(in: build)
        let value = Linking.marker("LIAR")
        let outcome = try createDatabase(folder.path("liar.db"), library: fake, mode: mode, header: header, value: value)
        #expect(outcome["outcome"] as? String == "error", "\(outcome)")
        #expect(outcome["case"] as? String == "plaintextDetected", "\(outcome)")
        let description = outcome["description"] as? String ?? ""
        #expect(description.contains("readable") || description.contains("does not look like ciphertext")
                || description.contains("SQLite format 3"), "\(description)")
        // Nothing remains: the database and its companions were created by the refused call, and
        // are gone (their plaintext overwritten with zeros first). The caller's value was never written.
        let left = try listing(folder)
        #expect(left.isEmpty, "\(left)")
    }

    @Test(arguments: JournalMode.allCases)
    func aRefusedCreationLeavesAnExistingEmptyFileEmpty(mode: JournalMode) throws {
        // An empty file that was there before is the caller's: it stays, and stays empty.
        let build = TemporaryDirectory(), folder = TemporaryDirectory()
        let fake = try lyingLibrary(in: build)
        let path = folder.path("given.db")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let outcome = try createDatabase(path, library: fake, mode: mode, header: 32, value: Linking.marker("LIAR"))
        #expect(outcome["case"] as? String == "plaintextDetected", "\(outcome)")
        #expect(try listing(folder) == ["given.db": 0])
    }

    /// (Plaintext headers are SQLCipher 4 only: on 3.4.1 the header size 32 is no case.)
    @Test(arguments: JournalMode.allCases, isSQLCipher4() ? [0, 32] : [0])
    func theRealLibraryCreatesInEveryModeAndHeaderSetting(mode: JournalMode, header: Int) throws {
        // The same child, the same command, the real library: created, written, read back.
        let library = try Linking.libraryUnderTest()
        let folder = TemporaryDirectory()
        let value = Linking.marker("REAL")
        let path = folder.path("real.db")
        let outcome = try createDatabase(path, library: library, mode: mode, header: header, value: value)
        #expect(outcome["outcome"] as? String == "created", "\(outcome)")
        #expect(outcome["read_back"] as? String == value)
        #expect(!Linking.anyFileContains(Linking.databaseFiles(path), value))
        #expect(Linking.hasPlaintextHeader(path) == (header > 0))
    }

    @Test func theDoctorReportsEachFakeWithoutCrashing() throws {
        let directory = TemporaryDirectory()
        let fakes = [
            try buildLibrary("doctor-key-over-sqlite3", source: Self.noOpKeyFunctions, in: directory, libraries: ["-lsqlite3"]),
            try buildLibrary("doctor-key-only", source: Self.noOpKeyFunctions, in: directory),
            try buildLibrary("doctor-forwarding", source: try forwardingSource(), in: directory, libraries: ["-ldl"]),
        ]
        for fake in fakes {
            let result = try runChild(productPath("sqlcipher-doctor"), ["--json", "--library", fake],
                                      environment: [SqlCipherLibrary.environmentVariable: nil])
            #expect(!result.signaled, "the doctor crashed on \(fake): \(result.stderr)")
            #expect(result.status == 1)
            let report = try Linking.jsonObject(result.stdout)
            #expect(report["ok"] as? Bool == false)
            #expect((report["library"] as? [String: Any])?["status"] as? String == "fail")
            #expect((report["self_test"] as? [String: Any])?["status"] as? String == "skipped")
            #expect(!(report["error"] as? String ?? "").isEmpty)
        }
    }
}
