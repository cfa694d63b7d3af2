import Foundation
import SqlCipherKit
import Testing

/// Passphrases are compared byte for byte, as SQLCipher sees them: two Swift strings that are
/// equal under Unicode canonical equivalence but spelled with different code points are different
/// keys (README.md and the article "Opening a database" say so, with this example).
@Suite struct PassphraseBytesTests {
    @Test func canonicallyEqualStringsInOtherFormsAreDifferentKeys() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("nfc.db")
        let composed = "caf\u{E9} au lait"  // NFC: é is U+00E9
        let decomposed = "cafe\u{301} au lait"  // NFD: e + U+0301 COMBINING ACUTE ACCENT
        #expect(composed == decomposed)  // equal as Swift Strings...
        #expect(Array(composed.utf8) != Array(decomposed.utf8))  // ...but not as bytes

        let db = try Database(path: path, key: composed, cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        await db.close()

        #expect {
            try Database(path: path, key: decomposed, cipher: fastCipher)
        } throws: { error in
            if case SqlCipherError.keyFailed = error { return true }
            return false
        }
        let again = try Database(path: path, key: composed, cipher: fastCipher)
        await again.close()
        // Normalizing at both ends (here to NFC) makes either spelling open the file.
        let normalized = try Database(path: path, key: decomposed.precomposedStringWithCanonicalMapping, cipher: fastCipher)
        await normalized.close()
    }

    /// SQLCipher derives the key with PBKDF2-HMAC, and HMAC pads a key shorter than its block
    /// (128 bytes for SHA-512, 64 for SHA-1) with zero bytes: a passphrase and the same passphrase
    /// followed by NUL bytes derive the same key and open the same file. The article "Keys in
    /// memory and key derivation" says so; a program that builds passphrases from fixed-size
    /// buffers must not pad them with zeros and count on the padding to differ.
    @Test func trailingNULBytesOfAShortPassphraseDeriveTheSameKey() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("nul.db")
        let db = try Database(path: path, key: .passphrase(Data("short".utf8)), cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        let padded = try Database(path: path, key: .passphrase(Data("short".utf8) + Data(repeating: 0, count: 3)), cipher: fastCipher)
        #expect(try await padded.query("SELECT count(*) FROM sqlite_master")[0].get(0, as: Int.self) == 1)
        await padded.close()
        // A NUL anywhere else is a different passphrase.
        #expect(throws: SqlCipherError.self) {
            _ = try Database(path: path, key: .passphrase(Data("sh\0ort".utf8)), cipher: fastCipher)
        }
    }
}
