import Dispatch
import Foundation
import Synchronization
import Testing
@testable import SqlCipherKit

/// Opening a pool: bad reader counts and paths, key mismatches, key material kept out of errors,
/// rollback files, other cipher settings, plaintext headers.
@Suite("DatabasePool: opening")
struct PoolOpeningTests: PoolFixture {
    @Test func badReaderCountsAndPathsGetTypedErrors() async throws {
        let dir = TemporaryDirectory()
        for count in [0, -1, Int.min] {
            #expect(throws: SqlCipherError.self) { try DatabasePool(path: dir.path("n.db"), rawKey: rawKey(), maximumReaderCount: count) }
        }
        let huge = try DatabasePool(path: dir.path("huge.db"), rawKey: rawKey(), maximumReaderCount: Int.max)
        try await huge.execute("CREATE TABLE t(a)")
        #expect(try await huge.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 0)
        await huge.close()
        try FileManager.default.createDirectory(atPath: dir.path("folder"), withIntermediateDirectories: true)
        // (URIs are not interpreted: SQLite opens without SQLITE_OPEN_URI, so only these spell memory.)
        for path in ["", ":memory:", "file::memory:?cache=shared", dir.path("folder"), dir.path("nul") + "\0.db"] {
            #expect(throws: SqlCipherError.self, "\(path)") { try DatabasePool(path: path, rawKey: rawKey()) }
        }
    }

    @Test func keyMismatchesGetTypedErrorsAndNeverTheKey() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("k.db")
        let made = try DatabasePool(path: path, key: "right horse")
        try await made.execute("CREATE TABLE t(a)")
        await made.close()
        do {
            _ = try DatabasePool(path: path, key: "wrong horse")
            Issue.record("a wrong passphrase opened the pool")
        } catch let error as SqlCipherError {
            guard case .keyFailed = error else { Issue.record("\(error)"); return }
        }
        #expect(throws: SqlCipherError.emptyKey) { try DatabasePool(path: path, key: "") }
        #expect(throws: SqlCipherError.passphraseLooksLikeRawKey) {
            try DatabasePool(path: path, key: "x'" + String(repeating: "ab", count: 32) + "'")
        }
        #expect(throws: SqlCipherError.self) { try DatabasePool(unencryptedPath: path) }
        #expect(throws: SqlCipherError.self) { try DatabasePool(path: path, rawKey: rawKey()) }
        // A plaintext file with a key.
        let plain = try DatabasePool(unencryptedPath: dir.path("plain.db"))
        try await plain.execute("CREATE TABLE t(a)")
        await plain.close()
        #expect(throws: SqlCipherError.self) { try DatabasePool(path: dir.path("plain.db"), key: "x") }
    }

    /// No error or description of a pool shows the key derived from the passphrase.
    @Test func theDerivedKeyNeverReachesAnErrorOrADescription() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("d.db")
        let pool = try DatabasePool(path: path, key: "secret words")
        try await pool.execute("CREATE TABLE t(a)")
        await pool.close()
        let salt = try Data(FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 16) ?? Data())
        let material = try KeyMaterial(passphrase: Array("secret words".utf8))
        guard case .derived(let derived) = try KeyDerivation.derivedKey(
            passphrase: material, path: path, settings: .default, library: SqlCipherLibrary.shared) else { return }
        let literal = derived.key.withBytes { String(decoding: $0, as: UTF8.self) }
        let keyHex = String(literal.dropFirst(2).prefix(64)).lowercased()
        #expect(derived.salt == salt)
        var texts: [String] = ["\(pool)", String(reflecting: pool)]
        do { _ = try DatabasePool(path: path, key: "wrong words") } catch { texts.append("\(error)"); texts.append(String(reflecting: error)) }
        do {
            let again = try DatabasePool(path: path, key: "secret words")
            do { try await again.execute("SELEC nonsense") } catch { texts.append("\(error)") }
            do { try await again.read { conn in try conn.execute("INSERT INTO t VALUES (1)") } } catch { texts.append("\(error)") }
            texts.append(String(reflecting: again))
            await again.close()
        }
        for text in texts {
            #expect(!text.lowercased().contains(keyHex), "\(text)")
            #expect(!text.contains("secret words"), "\(text)")
        }
    }

    /// A file in rollback mode is refused, also while a `Database` has it open, and is left in it.
    @Test func aRollbackFileIsRefusedAndLeftAsItWas() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("r.db")
        let db = try Database(path: path, rawKey: rawKey(), journalMode: .rollback)
        try await db.execute("CREATE TABLE t(a)")
        #expect(throws: SqlCipherError.self) { try DatabasePool(path: path, rawKey: rawKey()) }
        #expect(try await db.query("PRAGMA journal_mode")[0].get(0, as: String.self)?.lowercased() == "delete")
        await db.close()
        #expect(throws: SqlCipherError.self) { try DatabasePool(path: path, rawKey: rawKey()) }
        let check = try Database(path: path, rawKey: rawKey(), journalMode: .rollback)
        #expect(try await check.query("PRAGMA journal_mode")[0].get(0, as: String.self)?.lowercased() == "delete")
        await check.close()
    }

    /// Files created with non-default settings open in a pool with the same settings.
    @Test func poolsOnFilesWithOtherCipherSettings() async throws {
        let dir = TemporaryDirectory()
        var settings: [CipherSettings] = [CipherSettings(kdfIterations: 1000)]
        if isSQLCipher4() { settings.append(.sqlcipher3) }
        for (index, setting) in settings.enumerated() {
            let path = dir.path("s\(index).db")
            let db = try Database(path: path, key: "pw", cipher: setting)
            try await db.execute("CREATE TABLE t(a)")
            try await db.execute("INSERT INTO t VALUES (42)")
            await db.close()
            let pool = try DatabasePool(path: path, key: "pw", cipher: setting)
            #expect(try await pool.query("SELECT a FROM t")[0].get(0, as: Int.self) == 42)
            try await pool.execute("INSERT INTO t VALUES (43)")
            await pool.close()
            let again = try Database(path: path, key: "pw", cipher: setting)
            #expect(try await again.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 2)
            await again.close()
            #expect(throws: SqlCipherError.self) { try DatabasePool(path: path, key: "pX", cipher: setting) }
        }
    }

    /// A pool rekeyed to a passphrase (keyed internally with the key derived from it) leaves a
    /// file that SQLCipher's own derivation opens with that passphrase, and the old one fails.
    @Test func aPassphraseRekeyOpensWithThePassphraseElsewhere() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("rk.db")
        let pool = try DatabasePool(path: path, key: "old words")
        try await pool.execute("CREATE TABLE t(a)")
        try await pool.execute("INSERT INTO t VALUES (1)")
        try await pool.rekey("new words")
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await pool.close()
        let db = try Database(path: path, key: "new words")
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await db.close()
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "old words") }
    }

    /// A plaintext-header file: the pool needs the salt with the raw key, and every reader uses it.
    @Test(.enabled(if: isSQLCipher4(), "plaintext headers are SQLCipher 4 only")) func aPlaintextHeaderFileInAPool() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("ph.db")
        let settings = CipherSettings(plaintextHeaderSize: 32)
        let salt = Data((0..<16).map { UInt8($0) &+ 100 })
        let pool = try DatabasePool(path: path, key: .rawKey(rawKey(), salt: salt), cipher: settings, maximumReaderCount: 3)
        try await pool.execute("CREATE TABLE t(a)")
        try await pool.execute("INSERT INTO t VALUES (1)")
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 { group.addTask { try await pool.read { conn in try conn.query("SELECT count(*) FROM t")[0].decode(0, as: Int.self) } } }
            for try await value in group { #expect(value == 1) }
        }
        try await pool.rekey(rawKey: rawKey(2))
        #expect(try await pool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await pool.close()
        let header = try Data(FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 16) ?? Data())
        #expect(header == Data("SQLite format 3\0".utf8))
        let db = try Database(path: path, key: .rawKey(rawKey(2), salt: salt), cipher: settings)
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await db.close()
    }
}
