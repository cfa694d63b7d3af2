import Foundation
import Testing
@testable import SqlCipherKit

/// Settings that SQLCipher would take and silently make weaker are refused before anything is
/// opened or created: a KDF iteration count outside 1...Int32.max (SQLCipher keeps it in 32 bits,
/// so 4294967297 ran one iteration), and a plaintext header large enough to leave `sqlite_schema`
/// readable on disk.
@Suite struct WeakeningSettingsTests {
    static let outOfRange: [Int] = [4_294_967_297, 0, -1, Int(Int32.max) + 1, Int.max, Int.min]

    private static func isIterationRefusal(_ error: any Error) -> Bool {
        guard case SqlCipherError.invalidQuery(let reason) = error else { return false }
        return reason.contains("KDF iterations must be from 1 to 2147483647")
    }

    @Test(arguments: outOfRange)
    func iterationsOutsideInt32AreRefusedByDatabase(iterations: Int) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let cipher = CipherSettings(kdfIterations: iterations)
        #expect { try Database(path: path, key: "a passphrase", cipher: cipher) } throws: { Self.isIterationRefusal($0) }
        #expect(!FileManager.default.fileExists(atPath: path))
        // Read-only opening of an existing file refuses the same.
        await (try Database(path: path, key: "a passphrase", cipher: fastCipher)).close()
        #expect {
            try Database(path: path, key: "a passphrase", cipher: cipher, readOnly: true)
        } throws: { Self.isIterationRefusal($0) }
    }

    @Test(arguments: outOfRange)
    func iterationsOutsideInt32AreRefusedByThePool(iterations: Int) throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pool.db")
        #expect {
            try DatabasePool(path: path, key: "a passphrase", cipher: CipherSettings(kdfIterations: iterations))
        } throws: { Self.isIterationRefusal($0) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func theLimitsThemselvesAreAccepted() throws {
        let library = try loadedLibrary()
        for iterations in [1, Int(Int32.max)] {
            let pragmas = try CipherSettings(kdfIterations: iterations).pragmas(for: library)
            #expect(pragmas == ["PRAGMA kdf_iter = \(iterations)"])
        }
    }

    /// The largest writable header, with a schema that fills page 1 to its end and beyond: no
    /// `CREATE` text reaches the disk.
    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only"), arguments: [1024, 4096])
    func theLargestWritableHeaderKeepsTheSchemaEncrypted(pageSize: Int) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("header.db")
        let salt = Data((0..<16).map { UInt8($0 &* 3) })
        let cipher = CipherSettings(pageSize: pageSize, plaintextHeaderSize: CipherSettings.largestWritablePlaintextHeader)
        let db = try Database(path: path, key: .rawKey(rawKey(), salt: salt), journalMode: .rollback, cipher: cipher)
        for index in 0..<40 {
            try await db.execute("CREATE TABLE schema_marker_\(index)(schema_column_marker TEXT)")
        }
        await db.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.count >= 2 * pageSize)
        for needle in ["CREATE", "schema_marker", "schema_column_marker"] {
            #expect(bytes.range(of: Data(needle.utf8)) == nil, "\(needle) is readable on disk")
        }
        let again = try Database(path: path, key: .rawKey(rawKey(), salt: salt), cipher: cipher)
        #expect(try await again.query("SELECT count(*) FROM sqlite_master").first?.get(0, as: Int.self) == 40)
        await again.close()
    }

    @Test(arguments: [16, 24, 40, 112, 128, 2048, 3072])
    func headersThatWouldExposeTheSchemaAreRefused(size: Int) throws {
        let dir = TemporaryDirectory()
        let path = dir.path("refused.db")
        let salt = Data(count: 16)
        let error = try #require(throws: SqlCipherError.self) {
            try Database(path: path, key: .rawKey(rawKey(), salt: salt), cipher: CipherSettings(plaintextHeaderSize: size))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        guard isSQLCipher4() else {
            // SQLCipher 3.4.1 has no plaintext header at all: the setting is unsupported, as before.
            guard case .unsupported = error else { throw error }
            return
        }
        guard case .invalidQuery(let reason) = error else { throw error }
        #expect(reason.contains("must be 0, 32, 48, 64, 80 or 96 bytes, not \(size)"), "\(reason)")
        #expect(reason.contains("unencrypted on disk"))
        // A pool refuses it too.
        #expect(throws: SqlCipherError.self) {
            try DatabasePool(path: path, key: .rawKey(rawKey(), salt: salt), cipher: CipherSettings(plaintextHeaderSize: size))
        }
    }

    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func aLargerHeaderIsAcceptedOnlyForReadingAFileWrittenThatWay() throws {
        let library = try loadedLibrary()
        let large = CipherSettings(plaintextHeaderSize: 2048)
        #expect(throws: SqlCipherError.self) { try large.pragmas(for: library) }
        #expect(try large.pragmas(for: library, readOnly: true) == ["PRAGMA cipher_plaintext_header_size = 2048"])
        #expect(throws: SqlCipherError.self) {
            try CipherSettings(pageSize: 1024, plaintextHeaderSize: 1024).pragmas(for: library, readOnly: true)
        }
    }
}
