import Foundation
import Testing
@testable import SqlCipherKit

/// A program that exits while its own tasks still read: a service stopping, a command-line tool
/// returning from its top-level code with a detached task still querying. libcrypto's cleanup at
/// exit used to free its ciphers while those tasks still decrypted pages with them, and the
/// process died in malloc or with SIGSEGV in about half of such exits (this suite's first runs
/// without the fix: 5 to 11 of 20 per case). The bridge turns that cleanup off when libcrypto
/// comes with the library, and otherwise holds the exit until the calls in progress end
/// (docs/reliability.md, "A process that exits while it reads"): every exit ends with status 0.
@Suite struct ProcessExitTests {
    /// The libcrypto file the loaded library uses, as the dynamic linker names it.
    static var libcrypto: String? {
        _ = try? SqlCipherLibrary.shared  // the search runs on the loaded library
        return KeyDerivation.cryptoLibraryPath.map { URL(fileURLWithPath: $0).lastPathComponent }
    }

    /// The protection of a process where libcrypto came with the library: its cleanup turned off,
    /// unless the library is SQLCipher 4.7 or later, which registers an atexit cleanup of its own
    /// (its private heap and mutexes), so the exit gate holds the exit for it too.
    static var plainProtection: String {
        let version = (try? SqlCipherLibrary.shared)?.cipherVersionComponents ?? []
        return version.lexicographicallyPrecedes([4, 7]) ? "cleanup-off" : "exit-gate"
    }

    @Test(arguments: ["database", "pool", "reopen"])
    func exitingWhileTasksReadEndsCleanly(_ kind: String) async throws {
        try await expectCleanExits(kind, libcrypto: nil, protection: Self.plainProtection)
    }

    /// Another component loaded and initialised libcrypto first (as libcurl does for
    /// FoundationNetworking), so OpenSSL's cleanup is registered and runs at exit: the bridge's
    /// exit handler interrupts the connections and waits for the calls in progress first.
    @Test(arguments: ["database", "pool", "reopen"])
    func exitingWhileTasksReadEndsCleanlyWhenLibcryptoWasThereFirst(_ kind: String) async throws {
        let libcrypto = try #require(Self.libcrypto, "the loaded library's libcrypto was not found")
        try await expectCleanExits(kind, libcrypto: libcrypto, protection: "exit-gate")
    }

    /// The doctor and the library say which protection applies: the cleanup is off in a process
    /// where libcrypto came with the library, and the exit gate is used where it was preloaded.
    @Test func theProtectionInUseIsReported() throws {
        let plain = try runHelper(["library-info"])
        let expected = Self.plainProtection
        #expect(plain.stdout.contains("\"exit_protection\":\"\(expected)\"") || plain.stdout.contains("\"exit_protection\": \"\(expected)\""),
                "\(plain.stdout)")
        _ = try SqlCipherLibrary.shared
        let path = try #require(KeyDerivation.cryptoLibraryPath)
        let preloaded = try runChild(productPath("sqlcipher-doctor"), ["--json"], environment: ["LD_PRELOAD": path])
        #expect(preloaded.status == 0, "\(preloaded.stdout) \(preloaded.stderr)")
        #expect(preloaded.stdout.contains("\"exit_protection\" : \"exit-gate\""), "\(preloaded.stdout)")
    }

    private func expectCleanExits(_ kind: String, libcrypto: String?, protection: String,
                                  sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("exit-\(kind).db")
        // A passphrase for `reopen`, so that each opening derives the key; raw keys elsewhere.
        let key: DatabaseKey = kind == "reopen" ? .passphrase("exit test") : .rawKey(rawKey(61))
        let argument = kind == "reopen" ? "pass:exit test" : "raw:" + hex(rawKey(61))
        let db = try Database(path: path, key: key)
        try await fill(db, rows: 2000, size: 300)
        await db.close()
        var failures: [String] = []
        // Without the fix a quarter to a half of such exits crashed: 6 rounds per case (40 in
        // the long run) miss it in one case with a chance of at most (3/4)^6, about 0.18, and in
        // all six cases of a run together about once in 30,000 runs.
        let rounds = Reliability.count(short: 6, long: 40)
        for round in 1...rounds {
            let result = try await runHelperOffThePool(["exit-while-reading", path, argument, kind, "4"] + (libcrypto.map { [$0] } ?? []))
            #expect(result.stdout.contains("reading \(protection)"), "round \(round): \(result.stdout) \(result.stderr)",
                    sourceLocation: sourceLocation)
            if result.status != 0 || result.signaled {
                failures.append("round \(round): status \(result.status), signal \(result.signaled): "
                    + String(result.stderr.prefix(300)))
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(rounds) exits failed:\n\(failures.joined(separator: "\n"))",
                sourceLocation: sourceLocation)
        // The file the readers were reading at the moment of exit is intact.
        let reopened = try Database(path: path, key: key)
        #expect(try await countRows(reopened) == 2000, sourceLocation: sourceLocation)
        #expect(try await reopened.query("PRAGMA integrity_check")[0].decode(0, as: String.self) == "ok",
                sourceLocation: sourceLocation)
        await reopened.close()
    }
}
