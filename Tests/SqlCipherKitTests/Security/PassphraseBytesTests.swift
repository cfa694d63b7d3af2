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
}
