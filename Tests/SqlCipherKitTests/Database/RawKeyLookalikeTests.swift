import Foundation
import Testing
@testable import SqlCipherKit

/// Passphrases spelled like SQLCipher's raw-key literal (issue 12, item 7). SQLCipher 3.4.1 and
/// 4.6.1 take key bytes of exactly 67 bytes, `x'` or `X'`, then 64 hex digits (either case), then
/// any byte, as a raw key, and 99 bytes with 96 digits as a raw key plus salt
/// (`sqlcipher_cipher_ctx_key_derive`). Given as a passphrase, such a string opened a raw-key file
/// and skipped key derivation; it must be refused on open and on rekey, pointing to `rawKey:`.
/// SQLCipher 4.7 and later add 163 bytes, `x'`, 160 digits (key, HMAC key, salt), `'`: a passphrase
/// on 4.6.1, the key itself on 4.7+, so the same text would open a file on one release only.
@Suite struct RawKeyLookalikeTests {
    static let key = rawKey(9)
    static let salt = Data((0..<16).map { UInt8($0 * 3 + 1) })
    static let hmacKey = rawKey(11)
    static var lower: String { hex(key) }
    static var upper: String { hex(key).uppercased() }

    /// Every spelling SQLCipher reads as a raw key.
    static var lookalikes: [(String, String)] {
        let mixed = String(lower.enumerated().map { $0.offset % 2 == 0 ? Character($0.element.uppercased()) : $0.element })
        return [
            ("x' lower-case hex '", "x'\(lower)'"),
            ("X' upper-case hex '", "X'\(upper)'"),
            ("x' mixed-case hex '", "x'\(mixed)'"),
            ("last byte not a quote", "x'\(lower)!"),
            ("last byte a space", "X'\(lower) "),
            ("last byte a NUL", "x'\(lower)\u{0}"),
            ("key and salt", "x'\(lower)\(hex(salt))'"),
            ("key and salt, upper case, any last byte", "X'\(upper)\(hex(salt).uppercased())z"),
            ("key, HMAC key and salt (SQLCipher 4.7+)", "x'\(lower)\(hex(hmacKey))\(hex(salt))'"),
            ("key, HMAC key and salt, upper case, any last byte",
             "X'\(upper)\(hex(hmacKey).uppercased())\(hex(salt).uppercased())!"),
        ]
    }

    /// Spellings SQLCipher takes as passphrases: they must keep working as passphrases.
    static var nearMisses: [(String, String)] {
        [
            ("leading space", " x'\(lower)'"),
            ("one digit short", "x'\(lower.dropLast())'"),
            ("one digit more", "x'\(lower)0'"),
            ("double quote", "x\"\(lower)'"),
            ("no x", "''\(lower)'"),
            ("a non-hex digit", "x'\(lower.dropLast())g'"),
            ("80 digits", "x'\(lower)\(hex(salt).prefix(16))'"),
            ("key and salt with a non-hex digit", "x'\(lower)\(hex(salt).dropLast())g'"),
            ("key, HMAC key and salt, one digit short", "x'\(lower)\(hex(hmacKey))\(hex(salt).dropLast())'"),
            ("key, HMAC key and salt, one digit more", "x'\(lower)\(hex(hmacKey))\(hex(salt))0'"),
        ]
    }

    static func isRefusal(_ error: any Error) -> Bool {
        guard case SqlCipherError.passphraseLooksLikeRawKey = error else { return false }
        let text = "\(error)"
        return text.contains("rawKey:") && text.contains("rekey(rawKey:)") && !text.contains(lower)
    }

    @Test func everySpellingSQLCipherTakesAsARawKeyIsDetected() {
        for (label, text) in Self.lookalikes {
            #expect(KeyMaterial.isRawKeyLiteral(Array(text.utf8)), "\(label)")
            #expect(KeyMaterial.isRawKeyLiteral(Data(text.utf8)), "\(label)")
        }
        for (label, text) in Self.nearMisses {
            #expect(!KeyMaterial.isRawKeyLiteral(Array(text.utf8)), "\(label)")
        }
        // A slice of a larger buffer, whose indices do not start at zero.
        let framed = Data(("--" + Self.lookalikes[0].1).utf8).dropFirst(2)
        #expect(KeyMaterial.isRawKeyLiteral(framed))
    }

    @Test func aRawKeyFileNoLongerOpensWithItsHexAsAPassphrase() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("raw.db")
        let db = try Database(path: path, rawKey: Self.key)
        try await db.execute("CREATE TABLE secret(x)")
        try await db.execute("INSERT INTO secret VALUES ('raw')")
        await db.close()
        let before = dir.allFileContents().map(\.1)

        for (label, text) in Self.lookalikes {
            for (form, open) in [("String", { try Database(path: path, key: text) }),
                                 ("Data", { try Database(path: path, key: .passphrase(Data(text.utf8))) }),
                                 ("readOnly", { try Database(path: path, key: text, readOnly: true) })] {
                do {
                    _ = try open()
                    Issue.record("\(label) (\(form)) opened the raw-key file as a passphrase")
                } catch {
                    #expect(Self.isRefusal(error), "\(label) (\(form)): \(error)")
                }
            }
        }
        #expect(dir.allFileContents().map(\.1) == before, "a refused open touched the files")
        // The raw key itself still opens it.
        let again = try Database(path: path, rawKey: Self.key)
        #expect(try await again.query("SELECT x FROM secret")[0].get(0, as: String.self) == "raw")
    }

    @Test func noNewFileIsCreatedWithARawKeySpelledAsAPassphrase() throws {
        let dir = TemporaryDirectory()
        for (index, (label, text)) in Self.lookalikes.enumerated() {
            do {
                _ = try Database(path: dir.path("new\(index).db"), key: text)
                Issue.record("\(label): a new file was created")
            } catch {
                #expect(Self.isRefusal(error), "\(label): \(error)")
            }
        }
        #expect(dir.allFileContents().isEmpty)
    }

    @Test func nearMissesStayPassphrases() async throws {
        let dir = TemporaryDirectory()
        for (index, (label, text)) in Self.nearMisses.enumerated() {
            let path = dir.path("near\(index).db")
            let db = try Database(path: path, key: text, cipher: fastCipher)
            try await db.execute("CREATE TABLE t(x)")
            await db.close()
            // Key derivation ran: the hex inside the passphrase is not the key.
            #expect(throws: SqlCipherError.self, "\(label)") { try Database(path: path, rawKey: Self.key) }
            _ = try Database(path: path, key: .passphrase(Data(text.utf8)), cipher: fastCipher)
        }
    }

    @Test func rekeyRefusesARawKeySpelledAsAPassphrase() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("rekey.db")
        let db = try Database(path: path, key: "old", cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (1)")
        for (label, text) in Self.lookalikes {
            for (form, rekey) in [("String", { try await db.rekey(.passphrase(text)) }),
                                  ("Data", { try await db.rekey(.passphrase(Data(text.utf8))) })] {
                do {
                    try await rekey()
                    Issue.record("\(label) (\(form)): rekeyed to a raw key spelled as a passphrase")
                } catch {
                    #expect(Self.isRefusal(error), "\(label) (\(form)): \(error)")
                }
            }
        }
        // Nothing was changed, and the Database is still open.
        try await db.execute("INSERT INTO t VALUES (2)")
        await db.close()
        let again = try Database(path: path, key: "old", cipher: fastCipher)
        #expect(try await countRows(again) == 2)
        #expect(throws: SqlCipherError.self) { try Database(path: path, rawKey: Self.key) }
        // The supported way: rekey(rawKey:).
        try await again.rekey(rawKey: Self.key)
        await again.close()
        _ = try Database(path: path, rawKey: Self.key)
    }

    @Test func conversionsRefuseItToo() async throws {
        let dir = TemporaryDirectory()
        let plain = try Database(unencryptedPath: dir.path("plain.db"))
        try await plain.execute("CREATE TABLE t(x)")
        await plain.close()
        let text = Self.lookalikes[0].1
        do {
            try Database.encrypt(plaintextAt: dir.path("plain.db"), to: dir.path("enc.db"), key: .passphrase(text))
            Issue.record("encrypt used a raw key spelled as a passphrase")
        } catch {
            #expect(Self.isRefusal(error), "\(error)")
        }
        do {
            try Database.encrypt(plaintextAt: dir.path("plain.db"), to: dir.path("enc.db"), key: DatabaseKey(stringLiteral: text))
            Issue.record("encrypt used a raw key spelled as a passphrase")
        } catch {
            #expect(Self.isRefusal(error), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("enc.db")))
        let db = try Database(path: dir.path("source.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE t(x)")
        do {
            try await db.export(to: dir.path("copy.db"), key: .passphrase(Data(text.utf8)))
            Issue.record("export used a raw key spelled as a passphrase")
        } catch {
            #expect(Self.isRefusal(error), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("copy.db")))
    }
}
