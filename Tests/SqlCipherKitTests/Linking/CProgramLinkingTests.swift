import Foundation
import Testing
@testable import SqlCipherKit

/// Scenarios that need a program linked differently from the Swift products: small C programs
/// built by the test from the bridge's own C files, with a sanitizer, or linking libsqlite3 and
/// libsqlcipher in a given order.
@Suite struct CProgramLinkingTests {
    /// Loads argv[1] with scb_load and prints the report; on success writes argv[4] into a new
    /// table of the database argv[2] keyed with argv[3], through the bridge.
    private static let program = """
        #include "CSqlCipherBridge.h"
        #include <stdio.h>
        #include <string.h>

        static int run(scb_db *db, const char *sql) {
            scb_stmt *stmt = NULL;
            int rc = scb_prepare(db, sql, -1, 0, &stmt, NULL);
            if (rc != 0) return rc;
            while ((rc = scb_step(stmt)) == 100) {}
            scb_finalize(stmt);
            return rc == 101 ? 0 : rc;
        }

        int main(int argc, char **argv) {
            scb_load_report r;
            int status = scb_load(argv[1], &r);
            printf("status=%d\\nchecked=%d\\nforeign=%d\\nsymbol=%s\\nobject=%s\\nmessage=%s\\n", status,
                   r.audit_checked, r.audit_foreign, r.symbol, r.object, r.message);
            if (status != SCB_LOAD_OK || argc < 5) return 0;
            printf("already_loaded=%d\\ncipher_version=%s\\n", scb_library_was_already_loaded(), scb_cipher_version());
            scb_db *db = NULL;
            if (scb_open_v2(argv[2], &db, 0x2 | 0x4, NULL) != 0) return 1;
            if (scb_key(db, argv[3], (int)strlen(argv[3])) != 0) return 1;
            char sql[512];
            snprintf(sql, sizeof sql, "INSERT INTO t VALUES ('%s')", argv[4]);
            int rc = run(db, "CREATE TABLE t(v TEXT)");
            if (rc == 0) rc = run(db, sql);
            scb_close_v2(db);
            printf("written=%d\\n", rc == 0);
            return rc == 0 ? 0 : 1;
        }

        """

    /// The `key=value` lines a program printed.
    private struct Outcome {
        let values: [String: String]
        let result: ChildResult
        subscript(_ key: String) -> String? { values[key] }
    }

    /// Builds the program with `flags` and `libraries`, runs it against the library under test
    /// and, when it loads, has it write an encrypted file that is then verified here.
    private func runProgram(flags: [String] = [], libraries: [String] = [],
                            verifyFile: Bool = true) async throws -> Outcome {
        let directory = TemporaryDirectory()
        let source = directory.path("program.c"), binary = directory.path("program")
        try Data(Self.program.utf8).write(to: URL(fileURLWithPath: source))
        try Linking.compile([source] + Linking.bridgeCFiles, output: binary, flags: flags,
                            libraries: libraries + ["-ldl", "-lpthread"])
        let database = directory.path("written.db"), keyHex = Linking.randomKeyHex(), marker = Linking.marker("CPROG")
        let result = try runChild(binary, [try Linking.libraryUnderTest(), database, "x'\(keyHex)'", marker])
        #expect(!result.signaled, "the program crashed: \(result.stderr)")
        var values: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        if verifyFile && values["status"] == "0" {
            #expect(values["written"] == "1", "\(result.stdout)\n\(result.stderr)")
            #expect(!Linking.hasPlaintextHeader(database))
            #expect(!Linking.anyFileContains(Linking.databaseFiles(database), marker))
            let db = try Database(path: database, rawKey: Linking.keyBytes(keyHex))
            #expect(try await db.query("SELECT v FROM t").first?.get("v", as: String.self) == marker)
            await db.close()
        }
        return Outcome(values: values, result: result)
    }

    private var libraryPath: String { get throws { try Linking.libraryUnderTest() } }

    @Test func nothingElseLinked() async throws {
        let outcome = try await runProgram()
        #expect(outcome["status"] == "0", "\(outcome.result.stdout)")
        #expect(outcome["already_loaded"] == "0")
        #expect(outcome["cipher_version"] == (try SqlCipherLibrary.shared).cipherVersion)
    }

    @Test func libsqlite3Linked() async throws {
        let outcome = try await runProgram(flags: ["-Wl,--no-as-needed"], libraries: ["-lsqlite3"])
        #expect(outcome["status"] == "0", "\(outcome.result.stdout)")
        #expect(Int(outcome["checked"] ?? "") ?? 0 > 100)
        #expect(outcome["foreign"] == "0")
    }

    @Test func executableLinksLibsqlcipher() async throws {
        // The executable links the very library the bridge is asked for: dlopen returns the
        // loaded copy, DEEPBIND no longer applies, and the audit proves its bindings are its own.
        let outcome = try await runProgram(flags: ["-Wl,--no-as-needed"], libraries: [try libraryPath])
        #expect(outcome["status"] == "0", "\(outcome.result.stdout)")
        #expect(outcome["already_loaded"] == "1")
        #expect(outcome["foreign"] == "0")
    }

    @Test func executableLinksLibsqlite3BeforeLibsqlcipherIsABindingConflict() async throws {
        // libsqlite3 comes first in the global scope, so libsqlcipher's own references bound to it
        // when the executable started: the bridge refuses, before running any SQL on it.
        let outcome = try await runProgram(flags: ["-Wl,--no-as-needed"], libraries: ["-lsqlite3", try libraryPath])
        // 4 = SCB_LOAD_BINDING_CONFLICT
        #expect(outcome["status"] == "4", "\(outcome.result.stdout)")
        #expect(outcome["object"]?.hasSuffix("/libsqlite3.so.0") == true)
        #expect(outcome["symbol"]?.hasPrefix("sqlite3_") == true)
        #expect(Int(outcome["foreign"] ?? "") ?? 0 > 0)
        #expect(outcome["message"]?.contains("already loaded in this process without isolation") == true)
    }

    @Test func executableLinksLibsqlcipherBeforeLibsqlite3() async throws {
        // libsqlcipher first: its own references bind to itself and the bridge accepts it (it is
        // libsqlite3's references that now bind into libsqlcipher: see docs/linking.md).
        let outcome = try await runProgram(flags: ["-Wl,--no-as-needed"], libraries: [try libraryPath, "-lsqlite3"])
        #expect(outcome["status"] == "0", "\(outcome.result.stdout)")
        #expect(outcome["already_loaded"] == "1")
    }

    @Test(arguments: ["address", "thread"])
    func sanitizerRuntimeIsRefusedNotAborted(sanitizer: String) async throws {
        // Both runtimes abort the process on a RTLD_DEEPBIND dlopen; the bridge must see them first.
        let outcome = try await runProgram(flags: ["-fsanitize=\(sanitizer)", "-g"])
        #expect(outcome.result.status == 0, "\(outcome.result.stdout)\n\(outcome.result.stderr)")
        // 6 = SCB_LOAD_UNSUPPORTED_RUNTIME
        #expect(outcome["status"] == "6", "\(outcome.result.stdout)")
        let name = sanitizer == "address" ? "AddressSanitizer" : "ThreadSanitizer"
        #expect(outcome["message"]?.contains(name) == true)
        #expect(!outcome.result.stderr.contains("RTLD_DEEPBIND flag which is incompatible"))
    }

    @Test(arguments: ["-static", "-static-pie"])
    func fullyStaticProgramIsRefusedBeforeAnythingIsLoaded(flag: String) async throws {
        // A program whose C library is linked in (swiftc -static-executable is one) would get a
        // second, uninitialised libc and libcrypto with libsqlcipher, and a Swift one crashed in
        // libcrypto at its first encrypted read (SIGSEGV in pthread_rwlock_rdlock). The bridge
        // refuses before dlopen: before the fix this program loaded the library (status 0).
        let outcome = try await runProgram(flags: [flag])
        #expect(outcome.result.status == 0, "\(outcome.result.stdout)\n\(outcome.result.stderr)")
        // 8 = SCB_LOAD_STATIC_EXECUTABLE
        #expect(outcome["status"] == "8", "\(outcome.result.stdout)")
        #expect(outcome["message"]?.contains("fully static executable") == true)
        #expect(outcome["checked"] == "0", "nothing was loaded, so nothing was audited")
        #expect(outcome["written"] == nil)
        // The Swift layer's error for that status says what to build instead.
        let error = SqlCipherError.unsupportedRuntime(reason: outcome["message"] ?? "")
        #expect(error.description.contains("--static-swift-stdlib"))
    }

    @Test func theBridgeCompilesForMusl() throws {
        // musl has no RTLD_DEEPBIND and no dladdr1; the bridge must still build there (it then
        // relies on the audit alone). Only compiled: there is no musl libsqlcipher to run against.
        let musl = try #require(["/usr/bin/musl-gcc", "/usr/local/bin/musl-gcc"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }, "musl-gcc is missing: run scripts/install-deps.sh (package musl-tools)")
        let directory = TemporaryDirectory()
        for file in Linking.bridgeCFiles {
            let object = directory.path((file as NSString).lastPathComponent + ".o")
            let result = try runChild(musl, ["-std=c11", "-Werror=implicit-function-declaration", "-I",
                                             Linking.bridgeSources.appendingPathComponent("include").path,
                                             "-c", file, "-o", object])
            #expect(result.status == 0, "\(file): \(result.stderr)")
        }
    }
}
