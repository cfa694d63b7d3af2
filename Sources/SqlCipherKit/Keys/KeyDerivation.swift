import CSqlCipherBridge
import Foundation
import Synchronization

/// SQLCipher's key derivation, run once in Swift so that many connections to one file can be keyed
/// with the result instead of each running it again (about 180 ms per connection with SQLCipher 4's
/// defaults).
///
/// SQLCipher derives a file's 32-byte encryption key as PBKDF2-HMAC(digest, passphrase, salt,
/// iterations), the salt being the file's first 16 bytes; keyed as `x'<64 hex key><32 hex salt>'`
/// a connection skips that step and reads the same file (the HMAC key is derived from the
/// encryption key inside SQLCipher either way). Four things make the shortcut exact:
///
/// 1. **The same code.** PBKDF2 runs in the crypto library that the loaded libsqlcipher itself
///    links, found from its link map and proven to be what its own calls are bound to (kdf.c);
///    nothing is linked or loaded for it.
/// 2. **The same parameters.** The digest and the iteration count are asked of the library for the
///    given settings (``parameters(for:library:)``), never inferred from its version.
/// 3. **Proof by SQLCipher.** Once per process and digest, SQLCipher creates a scratch file from a
///    passphrase with one iteration, and a key derived here from the same passphrase must open it
///    while one from another passphrase must not (``selfCheck(_:library:)``). Until that holds,
///    nothing derived here is used.
/// 4. **The same salt** (KeySalt.swift).
///
/// Whenever one of them cannot be established the answer is a fallback, never a guess: the caller
/// keys each connection with the passphrase, which is slower but always right. Every buffer that
/// held key bytes is zeroed (the derived key's, and the key text inside ``KeyMaterial``).
enum KeyDerivation {
    /// A PBKDF2 digest, named as `PRAGMA cipher_kdf_algorithm` names it.
    enum Algorithm: String, Sendable, Hashable, CaseIterable {
        case sha1 = "PBKDF2_HMAC_SHA1"
        case sha256 = "PBKDF2_HMAC_SHA256"
        case sha512 = "PBKDF2_HMAC_SHA512"

        var bridgeValue: Int32 {
            switch self {
            case .sha1: return Int32(SCB_KDF_PBKDF2_HMAC_SHA1.rawValue)
            case .sha256: return Int32(SCB_KDF_PBKDF2_HMAC_SHA256.rawValue)
            case .sha512: return Int32(SCB_KDF_PBKDF2_HMAC_SHA512.rawValue)
            }
        }
    }

    /// What SQLCipher would use for a connection keyed with a passphrase under some settings.
    struct Parameters: Sendable, Hashable {
        let algorithm: Algorithm
        let iterations: Int
        /// `PRAGMA cipher_page_size`: how long a database file must be to hold page 1.
        let pageSize: Int
    }

    /// A key derived for one file.
    struct Derived {
        /// `x'<64 hex key><32 hex salt>'`, for `sqlite3_key` on every connection to the file.
        let key: KeyMaterial
        let salt: Data
        let saltOrigin: KeySalt.Origin
        let parameters: Parameters
    }

    /// What ``derivedKey(passphrase:path:settings:library:salt:)`` gives.
    enum Outcome {
        case derived(Derived)
        /// This process cannot derive for this file; `reason` says why. Key each connection with
        /// the passphrase.
        case fallback(reason: String)
    }

    // MARK: Availability

    /// The path of the crypto library the derivation runs in (as the dynamic linker recorded it),
    /// or nil when none was found.
    static var cryptoLibraryPath: String? {
        guard case .success = cryptoAvailability(), let path = scb_kdf_library_path() else { return nil }
        return String(cString: path)
    }

    /// The import of the loaded library that was checked against the PBKDF2 function found
    /// (`PKCS5_PBKDF2_HMAC` on SQLCipher 4, `PKCS5_PBKDF2_HMAC_SHA1` on 3.4.1), or nil.
    static var checkedImport: String? {
        guard case .success = cryptoAvailability(), let name = scb_kdf_checked_import() else { return nil }
        return String(cString: name)
    }

    /// Whether this process can derive keys for files opened with `settings` on `library`: the
    /// crypto library is found, the library reports a digest this file knows, and SQLCipher's
    /// own known-answer check for that digest passed. A failure carries the reason, as
    /// ``SqlCipherError/unsupported(feature:requires:loaded:)``; the caller then keys each
    /// connection with the passphrase. Cheap after the first call (the check runs once per
    /// process and digest).
    static func availability(library: SqlCipherLibrary, settings: CipherSettings = .default) -> Result<Void, SqlCipherError> {
        if case .failure(let error) = cryptoAvailability() { return .failure(error) }
        do {
            let parameters = try self.parameters(for: settings, library: library)
            return selfCheck(parameters.algorithm, library: library)
        } catch let error as SqlCipherError {
            return .failure(error)
        } catch {
            return .failure(unavailable(String(describing: error), library: library))
        }
    }

    /// The crypto library lookup of kdf.c; its outcome is final once a library is loaded.
    private static func cryptoAvailability() -> Result<Void, SqlCipherError> {
        var message = [CChar](repeating: 0, count: 1024)
        let status = scb_kdf_prepare(&message, message.count)
        guard status == Int32(SCB_KDF_OK.rawValue) else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(.unsupported(
                feature: "deriving the key once for many connections",
                requires: "a SQLCipher that derives keys with PBKDF2 from OpenSSL's libcrypto (\(reason))",
                loaded: scb_cipher_version().map { String(cString: $0) } ?? "none"))
        }
        return .success(())
    }

    private static func unavailable(_ reason: String, library: SqlCipherLibrary) -> SqlCipherError {
        .unsupported(feature: "deriving the key once for many connections", requires: reason, loaded: library.cipherVersion)
    }

    // MARK: Parameters

    /// Asks `library` which digest, iteration count and page size a connection keyed with a
    /// passphrase uses under `settings`: an in-memory connection is keyed with a throwaway
    /// passphrase, the settings' pragmas are applied, and `PRAGMA cipher_kdf_algorithm`,
    /// `PRAGMA kdf_iter` and `PRAGMA cipher_page_size` are read. SQLCipher derives keys lazily, at
    /// the first page read, and these reads read no page: no derivation runs (measured with
    /// 20,000,000 iterations: 2 ms, both libraries). SQLCipher 3 has no `cipher_kdf_algorithm`;
    /// its only KDF is PBKDF2-HMAC-SHA1, which ``selfCheck(_:library:)`` then proves.
    ///
    /// - Throws: what ``CipherSettings`` throws for settings the library cannot honour, and
    ///   ``SqlCipherError/unsupported(feature:requires:loaded:)`` when the library's answers are
    ///   not understood.
    static func parameters(for settings: CipherSettings, library: SqlCipherLibrary) throws -> Parameters {
        let pragmas = try settings.pragmas(for: library)
        let connection = try SQLiteConnection(path: ":memory:")
        defer { connection.close() }
        let probe = Array("sqlcipherkit kdf parameters probe".utf8)
        try probe.withUnsafeBytes { try connection.applyKey($0) }
        return try connection.asPackage {
            for pragma in pragmas { try connection.execute(pragma) }
            let named = try connection.query("PRAGMA cipher_kdf_algorithm").first.flatMap { $0.get(0, as: String.self) }
            let algorithm: Algorithm
            if let named {
                guard let known = Algorithm(rawValue: named.trimmingCharacters(in: .whitespaces).uppercased()) else {
                    throw unavailable("a KDF this package knows; the library reports \(named)", library: library)
                }
                algorithm = known
            } else if library.cipherMajorVersion < 4 {
                algorithm = .sha1
            } else {
                throw unavailable("PRAGMA cipher_kdf_algorithm to answer; it returned no row", library: library)
            }
            guard let iterations = try integer(connection, "PRAGMA kdf_iter"), iterations >= 1,
                  iterations <= Int(Int32.max) else {
                throw unavailable("PRAGMA kdf_iter to report an iteration count", library: library)
            }
            guard let pageSize = try integer(connection, "PRAGMA cipher_page_size"), pageSize >= 512 else {
                throw unavailable("PRAGMA cipher_page_size to report a page size", library: library)
            }
            return Parameters(algorithm: algorithm, iterations: iterations, pageSize: pageSize)
        }
    }

    /// A pragma's single answer as an integer; SQLCipher answers its own pragmas as text.
    private static func integer(_ connection: SQLiteConnection, _ sql: String) throws -> Int? {
        switch try connection.scalar(sql) {
        case .integer(let value)?: return Int(value)
        case .text(let text)?: return Int(text.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    // MARK: The known-answer check

    private static let checks = Mutex<[Algorithm: Result<Void, SqlCipherError>]>([:])

    /// SQLCipher's own proof that a key derived here with `algorithm` is the key it derives, run
    /// once per process and digest (later calls return the first verdict):
    /// 1. in a private temporary folder (mode 0700), SQLCipher creates a file keyed with a
    ///    passphrase, the digest (`PRAGMA cipher_kdf_algorithm`, SQLCipher 4) and one iteration
    ///    (`PRAGMA kdf_iter = 1`), so that its derivations cost nothing, and writes a row;
    /// 2. the key derived here from that passphrase and the file's salt, given as raw key and
    ///    salt, must read the row back;
    /// 3. the key derived from another passphrase must be refused (`SQLITE_NOTADB`), which shows
    ///    that the raw key is what decides.
    /// The folder is removed. Not counted in ``derivationCount``. A check that could not run (no
    /// temporary folder, a full disk) is not remembered: the next call tries again.
    static func selfCheck(_ algorithm: Algorithm, library: SqlCipherLibrary) -> Result<Void, SqlCipherError> {
        if case .failure(let error) = cryptoAvailability() { return .failure(error) }
        // The check runs SQL and derives keys (the bridge's lock), so not under `checks`: two
        // first calls at once may both run it; the first verdict recorded is the one kept.
        if let outcome = checks.withLock({ $0[algorithm] }) { return outcome }
        let outcome: Result<Void, SqlCipherError>
        // A verdict (success, a refused key, a wrong answer) is final for the process; a check
        // that could not run (no temporary folder, a full disk) is tried again next time.
        var final = true
        do {
            try runSelfCheck(algorithm, library: library)
            outcome = .success(())
        } catch let error as SqlCipherError {
            switch error {
            case .unsupported: final = true
            case .sqlite(let code, _, _, _): final = code == 26
            default: final = false
            }
            outcome = .failure(unavailable(
                "SQLCipher to accept a key derived here with \(algorithm.rawValue) (the known-answer check "
                    + "failed: \(error.description))", library: library))
        } catch {
            final = false
            outcome = .failure(unavailable("the known-answer check to run (\(error))", library: library))
        }
        guard final else { return outcome }
        return checks.withLock { done in
            if let first = done[algorithm] { return first }
            done[algorithm] = outcome
            return outcome
        }
    }

    /// One known-answer check, not cached: SQLCipher makes the file with `algorithm`, the keys are
    /// derived here with `derivingWith` (the same digest, except in tests that prove a wrong
    /// mapping is refused).
    static func runSelfCheck(_ algorithm: Algorithm, derivingWith: Algorithm? = nil, library: SqlCipherLibrary) throws {
        let folder = try PrivateFolder()
        defer { folder.remove() }
        let path = folder.path + "/known-answer.db"
        let passphrase = Array("sqlcipherkit known answer \(algorithm.rawValue)".utf8)
        let marker = "derived by SQLCipher, read with a key derived by SqlCipherKit"
        let algorithmPragmas = library.cipherMajorVersion >= 4 ? ["PRAGMA cipher_kdf_algorithm = \(algorithm.rawValue)"] : []

        do {
            let writer = try SQLiteConnection(path: path)
            defer { writer.close() }
            try passphrase.withUnsafeBytes { try writer.applyKey($0) }
            // The refused key below would otherwise be logged to standard error by 4.5.1 and later,
            // as the opener silences it for every Database (process-wide).
            if library.cipherVersionIsAtLeast(4, 5, 1) { try writer.execute("PRAGMA cipher_log = off") }
            try writer.asPackage {
                for pragma in algorithmPragmas + ["PRAGMA kdf_iter = 1"] { try writer.execute(pragma) }
                if let named = try writer.query("PRAGMA cipher_kdf_algorithm").first.flatMap({ $0.get(0, as: String.self) }),
                   named.uppercased() != algorithm.rawValue {
                    throw unavailable("\(algorithm.rawValue) to be settable; the library uses \(named)", library: library)
                }
                try writer.execute("CREATE TABLE known_answer(v TEXT)")
                try writer.execute("INSERT INTO known_answer VALUES (?)", [.text(marker)])
            }
        }
        guard let header = FileHeader(path: path), header.bytes.count >= KeySalt.length, !header.hasPlaintextMagic else {
            throw unavailable("the known-answer file to start with a salt", library: library)
        }
        let salt = Data(header.bytes.prefix(KeySalt.length))
        let parameters = Parameters(algorithm: derivingWith ?? algorithm, iterations: 1, pageSize: 0)

        func read(with passphrase: [UInt8]) throws -> String? {
            let key = try passphrase.withUnsafeBytes { try derive($0, salt: salt, parameters: parameters) }
            let reader = try SQLiteConnection(path: path, flags: 0x0000_0001 | SQLiteConnection.noMutex)  // read-only
            defer { reader.close() }
            try reader.applyKey(key)
            return try reader.asPackage {
                for pragma in algorithmPragmas { try reader.execute(pragma) }
                return try reader.scalar("SELECT v FROM known_answer").flatMap { String.fromDatabaseValue($0) }
            }
        }
        guard try read(with: passphrase) == marker else {
            throw unavailable("the known-answer row to read back", library: library)
        }
        do {
            _ = try read(with: passphrase + Array(" (another)".utf8))
            throw unavailable("a key from another passphrase to be refused; it was accepted", library: library)
        } catch SqlCipherError.sqlite(let code, _, _, _) where code == 26 {
            // Refused as SQLCipher refuses every wrong key: the raw key decides.
        }
    }

    /// A folder only this user can enter, removed by ``remove()``.
    private struct PrivateFolder {
        let path: String

        init() throws {
            var template = Array((FileManager.default.temporaryDirectory.path + "/sqlcipherkit-kdf-XXXXXX").utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw SqlCipherError.cannotOpen(
                    path: FileManager.default.temporaryDirectory.path,
                    reason: "no private folder could be made for the key-derivation check (errno \(errno))")
            }
            path = String(cString: made)
        }

        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    // MARK: Deriving

    /// Counts for tests that prove "one derivation per pool" by counting rather than timing.
    /// Nothing is recorded until a test calls ``recordDerivationsByPath()``: until then a
    /// derivation or a keying pays one relaxed atomic load and takes no lock, and a long-running
    /// process keeps no list of the files it opened.
    private static let isRecording = Atomic<Bool>(false)
    private static let recorded = Mutex(Recorded())

    private struct Recorded {
        var derivations = 0
        var derivationsByPath: [String: Int] = [:]
        /// Connections keyed with a passphrase: each runs SQLCipher's own key derivation at its
        /// first read. Counted where the key is applied (DatabaseOpener).
        var passphraseKeyingsByPath: [String: Int] = [:]
    }

    /// Starts recording derivations and passphrase keyings (for tests). Idempotent.
    package static func recordDerivationsByPath() {
        isRecording.store(true, ordering: .releasing)
    }

    /// How many keys ``derivedKey(passphrase:path:settings:library:salt:)`` has derived in this
    /// process since ``recordDerivationsByPath()`` (the known-answer checks are not counted).
    package static var derivationCount: Int { recorded.withLock { $0.derivations } }

    /// How many keys were derived for `path` (spelled as given to
    /// ``derivedKey(passphrase:path:settings:library:salt:)``) since ``recordDerivationsByPath()``.
    /// Tests that run in parallel with other derivations count this way: the process-wide
    /// ``derivationCount`` moves with every other test's derivations too.
    package static func derivationCount(path: String) -> Int { recorded.withLock { $0.derivationsByPath[path] ?? 0 } }

    /// How many connections to `path` were keyed with a passphrase since ``recordDerivationsByPath()``.
    package static func passphraseKeyingCount(path: String) -> Int {
        recorded.withLock { $0.passphraseKeyingsByPath[path] ?? 0 }
    }

    /// Records that a connection to `path` was keyed with a passphrase, when a test asked for it.
    static func notePassphraseKeying(path: String) {
        guard isRecording.load(ordering: .relaxed) else { return }
        recorded.withLock { $0.passphraseKeyingsByPath[path, default: 0] += 1 }
    }

    private static func noteDerivation(path: String) {
        guard isRecording.load(ordering: .relaxed) else { return }
        recorded.withLock { recorded in
            recorded.derivations += 1
            recorded.derivationsByPath[path, default: 0] += 1
        }
    }

    /// The raw key and salt equivalent to keying `path` with `passphrase` under `settings`, or a
    /// fallback with its reason.
    ///
    /// `salt` is for files with a plaintext header (``CipherSettings/plaintextHeaderSize``), which
    /// do not store theirs. A `.derived` outcome ran PBKDF2 once and counts one in
    /// ``derivationCount``; a fallback ran none.
    ///
    /// - Throws: ``SqlCipherError/keyFailed(path:reason:)`` for a plaintext SQLite file, a file
    ///   with a plaintext header opened without the setting, or a plaintext header without a salt
    ///   (KeySalt.swift); what ``CipherSettings`` throws for settings the library cannot honour;
    ///   ``SqlCipherError/invalidQuery(reason:)`` when `passphrase` holds a raw key.
    static func derivedKey(passphrase: KeyMaterial, path: String, settings: CipherSettings,
                           library: SqlCipherLibrary, salt given: Data? = nil) throws -> Outcome {
        guard !passphrase.isRawKey else {
            throw SqlCipherError.invalidQuery(reason: "a raw key is used as it is; only a passphrase is derived")
        }
        let parameters: Parameters
        do {
            parameters = try self.parameters(for: settings, library: library)
        } catch SqlCipherError.unsupported(let feature, let requires, _) where feature.hasPrefix("deriving the key") {
            return .fallback(reason: "the library does not say how it derives keys: it lacks \(requires)")
        }
        if case .failure(let error) = selfCheck(parameters.algorithm, library: library) {
            return .fallback(reason: error.description)
        }
        let salt: Data
        let origin: KeySalt.Origin
        switch try KeySalt.lookup(path: path, settings: settings, pageSize: parameters.pageSize, given: given) {
        case .fallback(let reason): return .fallback(reason: reason)
        case .salt(let found, let from): (salt, origin) = (found, from)
        }
        let key = try passphrase.withBytes { try derive($0, salt: salt, parameters: parameters) }
        noteDerivation(path: path)
        return .derived(Derived(key: key, salt: salt, saltOrigin: origin, parameters: parameters))
    }

    /// PBKDF2 into a 32-byte buffer that is zeroed and freed before returning; the result exists
    /// only as the key text inside the returned ``KeyMaterial``, which zeroes it in turn.
    static func derive(_ passphrase: UnsafeRawBufferPointer, salt: Data, parameters: Parameters) throws -> KeyMaterial {
        guard case .success = cryptoAvailability() else {
            throw SqlCipherError.invalidQuery(reason: "key derivation is not available in this process")
        }
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 16)
        defer {
            // In C through a volatile pointer: stores the optimizer cannot drop as dead.
            scb_kdf_zero(output.baseAddress, output.count)
            output.deallocate()
        }
        guard passphrase.count > 0, passphrase.count <= Int(Int32.max), parameters.iterations <= Int(Int32.max) else {
            throw SqlCipherError.invalidQuery(reason: "a passphrase of \(passphrase.count) bytes cannot be derived")
        }
        let ok = salt.withUnsafeBytes { saltBytes in
            scb_kdf_pbkdf2(parameters.algorithm.bridgeValue, passphrase.baseAddress, Int32(passphrase.count),
                           saltBytes.baseAddress, Int32(saltBytes.count), Int32(parameters.iterations),
                           output.baseAddress, Int32(output.count))
        }
        guard ok == 1 else {
            // The exit gate refuses a derivation that another thread starts once exit() has
            // begun (docs/reliability.md): say so, as a refused statement does.
            if scb_exit_refusing() != 0 {
                let interrupted = SQLiteConnection.sqliteInterrupt
                throw SqlCipherError.sqlite(code: interrupted, extendedCode: interrupted,
                                            message: SQLiteConnection.exitingMessage, sql: nil)
            }
            throw SqlCipherError.invalidQuery(reason: "the crypto library refused to derive the key")
        }
        return try KeyMaterial(rawKeyBytes: UnsafeRawBufferPointer(output), salt: salt)
    }
}
