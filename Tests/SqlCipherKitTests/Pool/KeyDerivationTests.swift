import Foundation
import Testing
@testable import SqlCipherKit

/// Deriving a file's key once, in Swift, exactly as the loaded libsqlcipher does (Keys/KeyDerivation.swift):
/// files made by the real `sqlcipher` CLI open with the derived raw key and salt and the reverse,
/// through the crypto library libsqlcipher itself links.
@Suite struct KeyDerivationTests {
    init() { KeyDerivation.recordDerivationsByPath() }

    /// The CLI of the loaded library's major version.
    var cli: String { isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3 }

    /// A derived key, or a failure naming the fallback's reason.
    func derived(_ passphrase: String, path: String, settings: CipherSettings = .default, salt: Data? = nil)
        throws -> KeyDerivation.Derived {
        let outcome = try KeyDerivation.derivedKey(
            passphrase: try KeyMaterial(passphrase: Array(passphrase.utf8)), path: path, settings: settings,
            library: try loadedLibrary(), salt: salt)
        switch outcome {
        case .derived(let derived): return derived
        case .fallback(let reason): throw FallbackTaken(reason: reason)
        }
    }

    struct FallbackTaken: Error, CustomStringConvertible {
        let reason: String
        var description: String { "fell back: \(reason)" }
    }

    /// The raw key and salt inside an `x'<64 hex><32 hex>'` key text.
    func parts(_ key: KeyMaterial) -> (key: Data, salt: Data) {
        let text = key.withBytes { String(decoding: $0, as: UTF8.self) }
        let digits = Array(text.dropFirst(2).dropLast())
        var bytes: [UInt8] = []
        var index = 0
        while index + 1 < digits.count {
            bytes.append(UInt8(String(digits[index...index + 1]), radix: 16)!)
            index += 2
        }
        return (Data(bytes.prefix(32)), Data(bytes.dropFirst(32)))
    }

    // MARK: The crypto library

    @Test func theCryptoLibraryIsTheOneLibsqlcipherLinks() throws {
        let library = try loadedLibrary()
        try KeyDerivation.availability(library: library).get()
        let found = try #require(KeyDerivation.cryptoLibraryPath)
        let real = URL(fileURLWithPath: found).resolvingSymlinksInPath().path

        // It is mapped into this process (it came with libsqlcipher; nothing linked it).
        // /proc files report no size: read to the end rather than by the size.
        let mapsHandle = try #require(FileHandle(forReadingAtPath: "/proc/self/maps"))
        let maps = String(decoding: mapsHandle.readDataToEndOfFile(), as: UTF8.self)
        try mapsHandle.close()
        #expect(maps.split(separator: "\n").contains { $0.hasSuffix(" " + real) }, "\(real) not in /proc/self/maps")

        // It is what libsqlcipher's DT_NEEDED entry resolves to.
        let needed = try Linking.neededLibraries(library.path)
        let ldd = try Linking.tool("ldd", [library.path]).split(separator: "\n")
        let resolved = ldd.compactMap { line -> (String, String)? in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 3, fields[1] == "=>" else { return nil }
            return (String(fields[0]), URL(fileURLWithPath: String(fields[2])).resolvingSymlinksInPath().path)
        }
        let entry = try #require(resolved.first { $0.1 == real }, "ldd \(library.path): \(ldd)")
        #expect(needed.contains(entry.0), "DT_NEEDED \(needed) lacks \(entry.0)")
        #expect(entry.0.hasPrefix("libcrypto"), "\(entry.0)")

        // The PBKDF2 function checked is one libsqlcipher itself imports.
        let imported = try #require(KeyDerivation.checkedImport)
        let undefined = try Linking.tool("nm", ["-D", "--undefined-only", library.path])
        #expect(undefined.split(separator: "\n").contains { $0.hasSuffix(" " + imported) || $0.contains(" \(imported)@") })
    }

    // MARK: Asking the library

    @Test func theParametersComeFromTheLibrary() throws {
        let library = try loadedLibrary()
        let defaults = try KeyDerivation.parameters(for: .default, library: library)
        let custom = try KeyDerivation.parameters(for: CipherSettings(kdfIterations: 12_345), library: library)
        #expect(custom.iterations == 12_345)
        #expect(custom.algorithm == defaults.algorithm)
        if isSQLCipher4() {
            #expect(defaults == .init(algorithm: .sha512, iterations: 256_000, pageSize: 4096))
            #expect(try KeyDerivation.parameters(for: .sqlcipher3, library: library)
                    == .init(algorithm: .sha1, iterations: 64_000, pageSize: 1024))
            #expect(try KeyDerivation.parameters(for: .sqlcipher4, library: library) == defaults)
            // kdf_iter after compatibility: the settings' order.
            #expect(try KeyDerivation.parameters(for: CipherSettings(compatibility: 3, kdfIterations: 7), library: library)
                    == .init(algorithm: .sha1, iterations: 7, pageSize: 1024))
            #expect(try KeyDerivation.parameters(for: CipherSettings(pageSize: 8192), library: library).pageSize == 8192)
        } else {
            #expect(defaults == .init(algorithm: .sha1, iterations: 64_000, pageSize: 1024))
            #expect(try KeyDerivation.parameters(for: .sqlcipher3, library: library) == defaults)
        }
    }

    @Test func readingTheParametersDerivesNothing() throws {
        // 50 million iterations would take SQLCipher tens of seconds (256,000 take about 180 ms):
        // the answer coming back at once shows that no derivation ran. Counted in this thread's
        // processor time, which a loaded machine does not stretch.
        let start = threadCPUSeconds()
        let parameters = try KeyDerivation.parameters(for: CipherSettings(kdfIterations: 50_000_000),
                                                      library: try loadedLibrary())
        #expect(parameters.iterations == 50_000_000)
        #expect(threadCPUSeconds() - start < 2)
    }

    @Test func theKDFPragmasAnswerOnlyWithAKey() throws {
        // Measured fact the probe relies on: without a key no codec is attached and SQLCipher's
        // pragmas return no row, on both libraries.
        _ = try loadedLibrary()
        let connection = try SQLiteConnection(path: ":memory:")
        defer { connection.close() }
        #expect(try connection.query("PRAGMA kdf_iter").isEmpty)
        #expect(try connection.query("PRAGMA cipher_kdf_algorithm").isEmpty)
    }

    // MARK: The known-answer check

    @Test func theKnownAnswerCheckPassesForEveryDigestTheLibraryHas() throws {
        let library = try loadedLibrary()
        let digests: [KeyDerivation.Algorithm] = isSQLCipher4() ? [.sha1, .sha256, .sha512] : [.sha1]
        for digest in digests {
            try KeyDerivation.selfCheck(digest, library: library).get()
        }
        // A second call returns the first outcome (the check runs once per process and digest).
        try KeyDerivation.selfCheck(digests[0], library: library).get()
        // SQLCipher 3 has only PBKDF2-HMAC-SHA1: a check for another digest cannot pass there
        // (no pragma selects it, so the file is made with SHA-1 and the SHA-512 key is refused).
        if !isSQLCipher4() {
            #expect(throws: SqlCipherError.self) { try KeyDerivation.selfCheck(.sha512, library: library).get() }
        }
    }

    @Test func theKnownAnswerCheckRefusesAWrongMapping() throws {
        let library = try loadedLibrary()
        let digests: [KeyDerivation.Algorithm] = isSQLCipher4() ? [.sha1, .sha256, .sha512] : [.sha1]
        for made in digests {
            for derived in KeyDerivation.Algorithm.allCases where derived != made {
                // SQLCipher makes the file with one digest, the key is derived with another: refused.
                #expect(throws: SqlCipherError.self, "\(made) file, \(derived) key") {
                    try KeyDerivation.runSelfCheck(made, derivingWith: derived, library: library)
                }
            }
            try KeyDerivation.runSelfCheck(made, derivingWith: made, library: library)
        }
    }

    @Test(arguments: [
        (KeyDerivation.Algorithm.sha1, "f6d0ee787450939262e452e8f1b7ceca4ccc4cbac8a0f5a544d5f1e8fc7cb91e"),
        (.sha256, "b3a65a254dd590fab9aacfabd5695a0bd79727d2899a6a519d26f13b52d8e6f4"),
        (.sha512, "4dfa5258b4acd6db7d276988daf21d61ea07d44d370d81a9bc17709628296890"),
    ])
    func theDerivationIsPBKDF2(algorithm: KeyDerivation.Algorithm, expected: String) throws {
        // Vectors from `openssl kdf -keylen 32 -kdfopt digest:<SHA1|SHA256|SHA512> -kdfopt pass:password
        // -kdfopt salt:saltsaltsaltsalt -kdfopt iter:2 PBKDF2` (the SHA-1 one starts like RFC 6070's).
        try KeyDerivation.availability(library: try loadedLibrary()).get()
        let key = try Array("password".utf8).withUnsafeBytes {
            try KeyDerivation.derive($0, salt: Data("saltsaltsaltsalt".utf8),
                                     parameters: .init(algorithm: algorithm, iterations: 2, pageSize: 0))
        }
        #expect(hex(parts(key).key) == expected)
        #expect(parts(key).salt == Data("saltsaltsaltsalt".utf8))
    }

    // MARK: Files of the real CLI

    /// Settings and the CLI statements that make the same file.
    struct Variant: CustomTestStringConvertible, Sendable {
        let name: String
        let settings: CipherSettings
        let pragmas: [String]
        let needs4: Bool
        var testDescription: String { name }
    }

    static let variants: [Variant] = [
        Variant(name: "defaults", settings: .default, pragmas: [], needs4: false),
        Variant(name: "compatibility 3", settings: .sqlcipher3, pragmas: ["PRAGMA cipher_compatibility = 3"], needs4: true),
        Variant(name: "kdf_iter 5000", settings: CipherSettings(kdfIterations: 5000), pragmas: ["PRAGMA kdf_iter = 5000"],
                needs4: false),
        Variant(name: "compatibility 3, kdf_iter 3000, 4096-byte pages",
                settings: CipherSettings(compatibility: 3, pageSize: 4096, kdfIterations: 3000),
                pragmas: ["PRAGMA cipher_compatibility = 3", "PRAGMA cipher_page_size = 4096", "PRAGMA kdf_iter = 3000"],
                needs4: true),
    ]

    /// The variants the loaded library can run (the others need SQLCipher 4).
    static var runnableVariants: [Variant] { variants.filter { !$0.needs4 || isSQLCipher4() } }

    @Test(arguments: runnableVariants)
    func aCLIFileOpensWithTheDerivedKey(variant: Variant) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("cli.db")
        _ = try SqlcipherCLI.run(cli, path, [SqlcipherCLI.keyPragma(passphrase: "from the cli ☕")] + variant.pragmas + [
            "CREATE TABLE t(x TEXT)", "INSERT INTO t VALUES ('written by sqlcipher')",
        ])
        let before = KeyDerivation.derivationCount(path: path)
        let key = try derived("from the cli ☕", path: path, settings: variant.settings)
        #expect(KeyDerivation.derivationCount(path: path) == before + 1)
        #expect(key.saltOrigin == .databaseFile)
        #expect(key.salt == FileManager.default.contents(atPath: path)!.prefix(16))
        let (raw, salt) = parts(key.key)
        #expect(salt == key.salt)
        let db = try Database(path: path, key: .rawKey(raw, salt: salt), cipher: variant.settings)
        #expect(try await db.query("SELECT x FROM t")[0].get(0, as: String.self) == "written by sqlcipher")
        await db.close()

        // A wrong passphrase derives a key that does not open the file.
        let wrong = parts(try derived("from the cli ☕!", path: path, settings: variant.settings).key)
        #expect(wrong.salt == salt)
        #expect(wrong.key != raw)
        #expect {
            try Database(path: path, key: .rawKey(wrong.key, salt: wrong.salt), cipher: variant.settings)
        } throws: { error in
            if case SqlCipherError.keyFailed = error { return true }
            return false
        }
    }

    @Test(arguments: runnableVariants)
    func aFileKeyedWithTheDerivedKeyOpensInTheCLI(variant: Variant) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pool.db")
        let first = try derived("made in swift", path: path, settings: variant.settings)
        #expect(first.saltOrigin == .fresh)
        // Two calls for a new file: two random salts, two keys.
        let second = try derived("made in swift", path: path, settings: variant.settings)
        #expect(second.saltOrigin == .fresh)
        #expect(first.salt != second.salt)
        #expect(parts(first.key).key != parts(second.key).key)

        let (raw, salt) = parts(first.key)
        let db = try Database(path: path, key: .rawKey(raw, salt: salt), cipher: variant.settings)
        try await db.execute("CREATE TABLE t(x TEXT)")
        try await db.execute("INSERT INTO t VALUES ('written with a derived key')")
        await db.close()
        #expect(FileManager.default.contents(atPath: path)!.prefix(16) == salt)

        let lines = try SqlcipherCLI.run(cli, path, [SqlcipherCLI.keyPragma(passphrase: "made in swift")] + variant.pragmas
            + ["SELECT x FROM t"])
        #expect(lines == ["written with a derived key"])
        #expect(throws: SqlcipherCLI.CLIError.self) {
            try SqlcipherCLI.run(cli, path, [SqlcipherCLI.keyPragma(passphrase: "made in swift?")] + variant.pragmas
                + ["SELECT x FROM t"])
        }
        // And the package's own passphrase path agrees.
        let again = try Database(path: path, key: "made in swift", cipher: variant.settings)
        #expect(try await again.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await again.close()
    }

    // MARK: Salts

    /// A WAL database written to and copied while still open, before any checkpoint: the state a
    /// crash leaves. Returns the copy's path and the original salt.
    func crashCopy(in dir: TemporaryDirectory, passphrase: String) async throws -> (String, Data) {
        let path = dir.path("live.db")
        let db = try Database(path: path, key: passphrase, journalMode: .wal, cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x TEXT)")
        try await db.execute("INSERT INTO t VALUES ('only in the wal')")
        let copy = dir.path("crash.db")
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        await db.close()
        let salt = FileManager.default.contents(atPath: path)!.prefix(16)
        return (copy, Data(salt))
    }

    @Test(arguments: [8, 100])
    func aDatabaseFileShorterThanAPageTakesTheSaltFromTheWAL(mainLength: Int) async throws {
        let dir = TemporaryDirectory()
        let (copy, salt) = try await crashCopy(in: dir, passphrase: "wal only")
        let wal = try #require(FileManager.default.contents(atPath: copy + "-wal"))
        #expect(wal.count > KeySalt.walHeaderLength, "the copy's -wal holds frames")
        let handle = try #require(FileHandle(forUpdatingAtPath: copy))
        try handle.truncate(atOffset: UInt64(mainLength))
        try handle.close()

        let key = try derived("wal only", path: copy, settings: fastCipher)
        #expect(key.saltOrigin == .walFrame)
        #expect(key.salt == salt)
        let (raw, keySalt) = parts(key.key)
        let db = try Database(path: copy, key: .rawKey(raw, salt: keySalt), cipher: fastCipher)
        #expect(try await db.query("SELECT x FROM t")[0].get(0, as: String.self) == "only in the wal")
        await db.close()
    }

    @Test func aShortFileWithoutAWALFallsBack() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("short.db")
        try Data(repeating: 0xA5, count: 100).write(to: URL(fileURLWithPath: path))
        #expect(throws: FallbackTaken.self) { try derived("x", path: path) }
        // A -wal whose checksum chain breaks at the first frame holds no committed page 1 either.
        var wal = Data(repeating: 0, count: 32 + 24 + 4096)
        wal.replaceSubrange(0..<4, with: [0x37, 0x7F, 0x06, 0x82])
        try wal.write(to: URL(fileURLWithPath: path + "-wal"))
        #expect(throws: FallbackTaken.self) { try derived("x", path: path) }
    }

    @Test func aTornWALFrameIsNotTrusted() async throws {
        let dir = TemporaryDirectory()
        let (copy, salt) = try await crashCopy(in: dir, passphrase: "torn")
        #expect(KeySalt.committedPageOneSalt(walPath: copy + "-wal") == salt)
        // Flip one byte of the first frame's page image: its checksum fails, so SQLite's recovery
        // stops there and so does the salt lookup.
        var wal = try #require(FileManager.default.contents(atPath: copy + "-wal"))
        wal[KeySalt.walHeaderLength + KeySalt.walFrameHeaderLength + 200] ^= 0xFF
        try wal.write(to: URL(fileURLWithPath: copy + "-wal"))
        #expect(KeySalt.committedPageOneSalt(walPath: copy + "-wal") == nil)
    }

    @Test func anEmptyDatabaseFileGetsAFreshSalt() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("empty.db")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let key = try derived("empty", path: path)
        #expect(key.saltOrigin == .fresh)
        #expect(key.salt.count == 16)
    }

    @Test func aPlaintextHeaderNeedsTheSaltFromTheCaller() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("header.db")
        let settings = CipherSettings(plaintextHeaderSize: 32)
        guard isSQLCipher4() else {
            #expect(throws: SqlCipherError.self) { try derived("p", path: path, settings: settings) }
            return
        }
        #expect {
            try derived("p", path: path, settings: settings)
        } throws: { error in
            guard case SqlCipherError.keyFailed(let failedPath, let reason) = error else { return false }
            return failedPath == path && reason.contains(".rawKey(key, salt: salt)") && reason.contains("plaintext header")
        }
        // With the salt given, the derived key creates a file the CLI opens with the passphrase
        // and that salt.
        let salt = KeySalt.fresh()
        let key = try derived("p", path: path, settings: settings, salt: salt)
        #expect(key.saltOrigin == .given)
        let (raw, keySalt) = parts(key.key)
        #expect(keySalt == salt)
        let db = try Database(path: path, key: .rawKey(raw, salt: keySalt), cipher: settings)
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (42)")
        await db.close()
        #expect(FileManager.default.contents(atPath: path)!.prefix(16) == Data("SQLite format 3\0".utf8))
        let lines = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [
            SqlcipherCLI.keyPragma(passphrase: "p"), "PRAGMA cipher_plaintext_header_size = 32",
            "PRAGMA cipher_salt = \"x'\(hex(salt))'\"", "SELECT x FROM t",
        ])
        #expect(lines == ["42"])
        // The existing file without the salt: the same typed error.
        #expect(throws: SqlCipherError.self) { try derived("p", path: path, settings: settings) }
    }

    @Test func aPlaintextFileIsRefusedAsDatabaseRefusesIt() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("plain.db")
        let plain = try Database(unencryptedPath: path)
        try await plain.execute("CREATE TABLE t(x)")
        await plain.close()
        var derivationError: SqlCipherError?
        do { _ = try derived("k", path: path) } catch let error as SqlCipherError { derivationError = error }
        var openError: SqlCipherError?
        do { _ = try Database(path: path, key: "k") } catch let error as SqlCipherError { openError = error }
        guard case .keyFailed(_, let reason)? = derivationError else {
            Issue.record("expected keyFailed, got \(String(describing: derivationError))")
            return
        }
        #expect(reason.contains("plaintext SQLite database"))
        #expect(derivationError == openError)
    }

    // MARK: Counting and misuse

    @Test func eachDerivationCountsOnce() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("count.db")
        let library = try loadedLibrary()
        #expect(KeyDerivation.derivationCount(path: path) == 0)
        let globalBefore = KeyDerivation.derivationCount
        _ = try derived("one", path: path, settings: fastCipher)
        #expect(KeyDerivation.derivationCount(path: path) == 1)
        _ = try derived("two", path: path, settings: fastCipher)
        #expect(KeyDerivation.derivationCount(path: path) == 2)
        #expect(KeyDerivation.derivationCount >= globalBefore + 2)
        // Asking for the parameters, the check and a fallback derive nothing.
        _ = try KeyDerivation.parameters(for: fastCipher, library: library)
        try KeyDerivation.availability(library: library, settings: fastCipher).get()
        #expect(throws: FallbackTaken.self) { try derived("three", path: ":memory:") }
        #expect(KeyDerivation.derivationCount(path: path) == 2)
        #expect(KeyDerivation.derivationCount(path: ":memory:") == 0)
    }

    @Test func aRawKeyIsNotDerivedAgain() throws {
        #expect(throws: SqlCipherError.self) {
            try KeyDerivation.derivedKey(passphrase: try KeyMaterial(rawKey: rawKey(), salt: nil), path: "/tmp/x.db",
                                         settings: .default, library: try loadedLibrary())
        }
    }
}
