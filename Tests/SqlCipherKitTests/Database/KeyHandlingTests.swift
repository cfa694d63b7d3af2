import Foundation
import Testing
@testable import SqlCipherKit

/// The key bytes handed to SQLCipher, and the on-disk check that fails closed on plaintext.
@Suite struct KeyHandlingTests {
    @Test func rawKeyIsHandedOverInSQLCipherHexForm() throws {
        let key = Data((0..<32).map { UInt8($0) })
        let material = try KeyMaterial(rawKey: key)
        let text = material.withBytes { String(decoding: $0, as: UTF8.self) }
        #expect(text == "x'" + hex(key) + "'")
        let salted = try KeyMaterial(rawKey: key, salt: Data(repeating: 0xAB, count: 16))
        let saltedText = salted.withBytes { String(decoding: $0, as: UTF8.self) }
        #expect(saltedText == "x'" + hex(key) + String(repeating: "ab", count: 16) + "'")
    }

    @Test func passphraseBytesAreHandedOverUnchanged() throws {
        let bytes: [UInt8] = [0x27, 0x00, 0xFF, 0x22, 0x3B]   // quote, NUL, invalid UTF-8, quote, semicolon
        let material = try KeyMaterial(passphrase: bytes)
        #expect(material.withBytes { Array($0) } == bytes)
    }

    @Test func databaseKeyValidatesWhenUsed() throws {
        #expect(throws: SqlCipherError.emptyKey) { try DatabaseKey.passphrase("").material() }
        #expect(throws: SqlCipherError.invalidRawKey(byteCount: 3)) { try DatabaseKey.rawKey(Data(count: 3)).material() }
        let literal: DatabaseKey = "from a literal"
        #expect(try literal.material().withBytes { Array($0) } == Array("from a literal".utf8))
    }

    @Test func onDiskCheckRefusesAPlaintextFile() throws {
        // A connection without a key writes plaintext: the check that every new encrypted file
        // gets must fail on it, naming the header.
        let dir = TemporaryDirectory()
        let path = dir.path("plain.db")
        _ = try loadedLibrary()   // a bare connection needs the library loaded first
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        try connection.execute("PRAGMA journal_mode = DELETE")
        #expect {
            try DatabaseOpener.verifyCiphertextOnDisk(connection, path: path, cipher: .default)
        } throws: { error in
            guard case SqlCipherError.plaintextDetected(let failed, let reason) = error else { return false }
            return failed == path && reason.contains("SQLite format 3")
        }
    }

    @Test func onDiskCheckFindsTheProbeNameInAPlaintextWAL() throws {
        // With a plaintext header asked for, the header alone proves nothing; the probe name
        // written to the WAL is what gives plaintext away.
        let dir = TemporaryDirectory()
        let path = dir.path("plain-wal.db")
        _ = try loadedLibrary()   // a bare connection needs the library loaded first
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        _ = try connection.query("PRAGMA journal_mode = WAL")
        #expect {
            try DatabaseOpener.verifyCiphertextOnDisk(connection, path: path, cipher: CipherSettings(plaintextHeaderSize: 32))
        } throws: { error in
            guard case SqlCipherError.plaintextDetected(_, let reason) = error else { return false }
            return reason.contains("readable")
        }
    }
}
