import Foundation
import Testing
@testable import SqlCipherKit

/// A wrong key (or salt) is `keyFailed`, decided by whether page 1 decrypts, never by the result
/// code: releases return 1, 7, 11 or 26 for the same wrong key (KeyProof.swift). And the right key
/// on a file damaged behind page 1 is damage, never `keyFailed`.
///
/// The codes that made the old mapping wrong come from SQLCipher 4.12.0 (7, WAL) and 4.19.0 (11);
/// Debian's 4.6.1 and 3.4.1 give 26 or 1. The same suite runs against any library named by
/// `SQLCIPHERKIT_LIBRARY`, so pointing it at a newer build checks those releases too.
@Suite struct WrongKeyTests {
    private static let salt = Data((0..<16).map { UInt8($0) &* 3 &+ 5 })
    private static let otherSalt = Data((0..<16).map { UInt8($0) &* 5 &+ 1 })
    private static let header = CipherSettings(plaintextHeaderSize: 32)

    /// Whether `error` is `keyFailed` for `path`.
    private func isKeyFailed(_ error: any Error, _ path: String) -> Bool {
        guard case SqlCipherError.keyFailed(let failed, let reason) = error else { return false }
        return failed == path && reason.contains("key is wrong")
    }

    /// A database with one table and a few rows, closed (WAL checkpointed into the file).
    private func makeDatabase(_ path: String, mode: JournalMode, key: Data = rawKey(), salt: Data? = nil,
                              cipher: CipherSettings = .default) async throws {
        let db = try salt.map { try Database(path: path, key: .rawKey(key, salt: $0), journalMode: mode, cipher: cipher) }
            ?? Database(path: path, rawKey: key, journalMode: mode, cipher: cipher)
        try await fill(db, rows: 20)
        await db.close()
    }

    @Test(arguments: [JournalMode.wal, .rollback])
    func wrongKeyIsKeyFailed(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        try await makeDatabase(path, mode: mode)
        #expect { try Database(path: path, rawKey: rawKey(2), journalMode: mode) } throws: { isKeyFailed($0, path) }
        #expect { try Database(path: path, key: "wrong", journalMode: mode, cipher: fastCipher) } throws: {
            isKeyFailed($0, path)
        }
        #expect { try Database(path: path, rawKey: rawKey(2), readOnly: true) } throws: { isKeyFailed($0, path) }
        // The refusal changed nothing: the right key still reads every row.
        let db = try Database(path: path, rawKey: rawKey(), journalMode: mode)
        #expect(try await db.query("SELECT id FROM t").count == 20)
        await db.close()
    }

    /// A -wal with committed frames left by another program (the real CLIs' WAL fixtures): a
    /// refused key leaves both files byte for byte as they were. Closing the refused connection
    /// used to checkpoint the frames into the database file and delete the -wal. SQLite 3.15.2
    /// (SQLCipher 3.4.1) has no way to close without that checkpoint: there the key is proven on a
    /// read-only connection first, which cannot checkpoint.
    /// (SQLCipher 3.4.1 cannot read a 4.x file with any key: there the 4.x fixture is no case.)
    @Test(arguments: isSQLCipher4() ? ["sqlcipher4-wal.db", "sqlcipher3-wal.db"] : ["sqlcipher3-wal.db"])
    func aRefusedKeyLeavesAnotherProgramsWALAsItWas(_ name: String) async throws {
        let manifest = try FixtureManifest.shared.get()
        let fixture = try #require(manifest.file(named: name))
        let dir = TemporaryDirectory()
        let path = try fixture.copy(into: dir)
        let before = [try Data(contentsOf: URL(fileURLWithPath: path)), try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))]
        #expect { try fixture.openWithWrongKey(at: path) } throws: { isKeyFailed($0, path) }
        let after = [FileManager.default.contents(atPath: path), FileManager.default.contents(atPath: path + "-wal")]
        #expect(after == before)
        // The right key still finds the rows that exist only in the -wal.
        let db = try fixture.open(at: path)
        #expect(try await db.query("SELECT count(*) FROM items")[0].get(0, as: Int.self) == 20)
        await db.close()
    }

    @Test func wrongKeyWithPageOneInTheWALIsKeyFailed() async throws {
        // Page 1 is read from a WAL frame here, not from the file: the path where 4.12.0 answers 7.
        let dir = TemporaryDirectory()
        let path = dir.path("a.db"), copy = dir.path("copy.db")
        let db = try Database(path: path, rawKey: rawKey(), journalMode: .wal)
        try await fill(db, rows: 20)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        await db.close()
        #expect(((try? FileManager.default.attributesOfItem(atPath: copy + "-wal")[.size] as? Int) ?? 0) > 0)
        #expect { try Database(path: copy, rawKey: rawKey(2)) } throws: { isKeyFailed($0, copy) }
        let right = try Database(path: copy, rawKey: rawKey())
        #expect(try await right.query("SELECT id FROM t").count == 20)
        await right.close()
    }

    @Test(arguments: [JournalMode.wal, .rollback])
    func wrongKeyOrSaltOnAPlaintextHeaderIsKeyFailed(mode: JournalMode) async throws {
        guard isSQLCipher4() else {
            // cipher_plaintext_header_size and cipher_salt arrived in SQLCipher 4.0; 3.4.1 refuses
            // the setting with `unsupported` (CipherSettingsTests), so there is no such file to open.
            return
        }
        let dir = TemporaryDirectory()
        let path = dir.path("header.db")
        try await makeDatabase(path, mode: mode, salt: Self.salt, cipher: Self.header)
        #expect {
            try Database(path: path, key: .rawKey(rawKey(), salt: Self.otherSalt), journalMode: mode, cipher: Self.header)
        } throws: { isKeyFailed($0, path) }
        #expect {
            try Database(path: path, key: .rawKey(rawKey(2), salt: Self.salt), journalMode: mode, cipher: Self.header)
        } throws: { isKeyFailed($0, path) }
        #expect {
            try Database(path: path, key: .rawKey(rawKey(2), salt: Self.otherSalt), cipher: Self.header, readOnly: true)
        } throws: { isKeyFailed($0, path) }
        if mode == .wal {
            #expect {
                try DatabasePool(path: path, key: .rawKey(rawKey(), salt: Self.otherSalt), cipher: Self.header)
            } throws: { isKeyFailed($0, path) }
        }
        let db = try Database(path: path, key: .rawKey(rawKey(), salt: Self.salt), journalMode: mode, cipher: Self.header)
        #expect(try await db.query("SELECT id FROM t").count == 20)
        await db.close()
    }

    @Test func wrongKeyOnAPoolIsKeyFailed() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pool.db")
        try await makeDatabase(path, mode: .wal)
        #expect { try DatabasePool(path: path, rawKey: rawKey(2)) } throws: { isKeyFailed($0, path) }
    }

    /// A database whose schema fills more pages than page 1, with every page but page 1 damaged:
    /// the opening's first read (the schema) fails behind a page 1 that decrypts.
    private func damagedBehindPageOne(_ path: String, salt: Data? = nil, cipher: CipherSettings = .default)
        async throws -> Int {
        let db = try salt.map { try Database(path: path, key: .rawKey(rawKey(), salt: $0), journalMode: .rollback, cipher: cipher) }
            ?? Database(path: path, rawKey: rawKey(), journalMode: .rollback, cipher: cipher)
        try await db.transaction { conn in
            for index in 0..<80 {
                try conn.execute("CREATE TABLE table_with_a_rather_long_name_\(index)(first_column_name TEXT, "
                    + "second_column_name TEXT, third_column_name INTEGER)")
            }
        }
        await db.close()
        let pageSize = isSQLCipher4() ? 4096 : 1024  // each version's default
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size % pageSize == 0 && size / pageSize > 2, "the schema must reach past page 1")
        for offset in stride(from: pageSize + 100, to: size, by: pageSize) {
            try flip(path, at: offset, mask: 0xFF)
        }
        return pageSize
    }

    private func isDamageNotKeyFailed(_ error: any Error) -> Bool {
        if case SqlCipherError.keyFailed = error { return false }
        guard case SqlCipherError.sqlite(let code, _, _, _) = error else { return false }
        return code & 0xFF == 11  // SQLITE_CORRUPT: "database disk image is malformed"
    }

    @Test func rightKeyOnAFileDamagedBehindPageOneIsNotKeyFailed() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("damaged.db")
        _ = try await damagedBehindPageOne(path)
        #expect { try Database(path: path, rawKey: rawKey()) } throws: { isDamageNotKeyFailed($0) }
        #expect { try Database(path: path, rawKey: rawKey(), readOnly: true) } throws: { isDamageNotKeyFailed($0) }
        // The same file with a wrong key is still a wrong key.
        #expect { try Database(path: path, rawKey: rawKey(2)) } throws: { isKeyFailed($0, path) }
    }

    @Test(.enabled(if: isSQLCipher4(), "no plaintext header before SQLCipher 4.0")) func rightKeyOnAPlaintextHeaderFileDamagedBehindPageOneIsNotKeyFailed() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("damaged-header.db")
        _ = try await damagedBehindPageOne(path, salt: Self.salt, cipher: Self.header)
        #expect {
            try Database(path: path, key: .rawKey(rawKey(), salt: Self.salt), journalMode: .rollback, cipher: Self.header)
        } throws: { isDamageNotKeyFailed($0) }
        #expect {
            try Database(path: path, key: .rawKey(rawKey(), salt: Self.otherSalt), journalMode: .rollback, cipher: Self.header)
        } throws: { isKeyFailed($0, path) }
    }

    @Test(.enabled(if: isSQLCipher4(), "no plaintext header before SQLCipher 4.0")) func rightKeyOnADamagedPlaintextHeaderIsNotKeyFailed() async throws {
        // The 32 plaintext bytes are outside the HMAC: with a page size field that SQLite rejects,
        // 4.6.1 answers SQLITE_NOTADB (26) although page 1 decrypts with this key. The former
        // code-based mapping called that a wrong key; the proof reports the damage as it is.
        let dir = TemporaryDirectory()
        let path = dir.path("header-damaged.db")
        try await makeDatabase(path, mode: .rollback, salt: Self.salt, cipher: Self.header)
        try flip(path, at: 16, mask: 0x7F)  // the page size, bytes 16-17 of the header
        #expect {
            try Database(path: path, key: .rawKey(rawKey(), salt: Self.salt), journalMode: .rollback, cipher: Self.header)
        } throws: { error in
            if case SqlCipherError.keyFailed = error { return false }
            if case SqlCipherError.sqlite(_, _, let message, _) = error { return message.contains("header is damaged") }
            return false
        }
        #expect {
            try Database(path: path, key: .rawKey(rawKey(2), salt: Self.salt), journalMode: .rollback, cipher: Self.header)
        } throws: { isKeyFailed($0, path) }
    }

    @Test func theProofReadsPageOneOnTheConnectionThatFailed() throws {
        // KeyProof itself, on raw connections: the second read decides, whatever the first code was.
        let dir = TemporaryDirectory()
        let path = dir.path("proof.db")
        let library = try loadedLibrary()
        func keyed(_ key: Data) throws -> SQLiteConnection {
            let connection = try SQLiteConnection(path: path)
            try connection.asPackage {
                try connection.execute("PRAGMA key = \"x'\(hex(key))'\"")
                if library.cipherVersionIsAtLeast(4, 5, 1) { try connection.execute("PRAGMA cipher_log = off") }
            }
            return connection
        }
        let writer = try keyed(rawKey())
        try writer.execute("CREATE TABLE t(x)")
        writer.close()
        let wrong = try keyed(rawKey(2))
        defer { wrong.close() }
        #expect(throws: SqlCipherError.self) { try wrong.scalar("SELECT count(*) FROM sqlite_master") }
        // Any code counts as "the read failed"; only the environment's codes leave it unproven.
        for code: Int32 in [1, 7, 11, 26] {
            #expect(KeyProof.keyDecryptsPageOne(wrong, path: path, afterFailure: code) == false)
        }
        #expect(KeyProof.keyDecryptsPageOne(wrong, path: path, afterFailure: 5) == nil)  // SQLITE_BUSY
        let right = try keyed(rawKey())
        defer { right.close() }
        #expect(KeyProof.keyDecryptsPageOne(right, path: path, afterFailure: 11) == true)
    }

    /// An opening whose three tries each proved page 1 and then failed with SQLCipher's bare "file
    /// is not a database" (26): a key changing under it on every try (seen once in 25 openings
    /// beside a rekey loop in another process, which no test can time), or a damaged plaintext
    /// header (``rightKeyOnADamagedPlaintextHeaderIsNotKeyFailed``). The error stays SQLite's, and
    /// its message names both causes. Other last errors (damage behind page 1, code 11) stay as
    /// they were.
    @Test func anOpeningWhoseEveryTryFoundPageOneDecryptingYetNotADatabaseSaysWhy() {
        let raced = DatabaseOpener.FirstReadContradicted(
            error: .sqlite(code: 26, extendedCode: 26, message: "file is not a database", sql: nil))
        guard case .sqlite(26, _, let message, _) = raced.lastTry(path: "/tmp/x.db") else {
            Issue.record("expected SQLite error 26, got \(raced.lastTry(path: "/tmp/x.db"))")
            return
        }
        #expect(message.hasPrefix("file is not a database") && message.contains("kept changing the key (rekey)")
                    && message.contains("header is damaged"), "\(message)")
        let damaged = DatabaseOpener.FirstReadContradicted(
            error: .sqlite(code: 11, extendedCode: 11, message: "database disk image is malformed", sql: nil))
        #expect(damaged.lastTry(path: "/tmp/x.db") == damaged.error)
    }
}
