import Foundation

/// Key bytes on their way to `sqlite3_key`, held in one buffer that is zeroed when used.
///
/// A passphrase goes to SQLCipher byte for byte (no SQL quoting, so any byte is allowed). A raw
/// key goes as SQLCipher's `x'<64 hex digits>'` form (or `x'<96 hex digits>'` with a salt), which
/// skips key derivation (https://www.zetetic.net/sqlcipher/sqlcipher-api/#key).
final class KeyMaterial {
    private var bytes: [UInt8]

    /// A passphrase. Throws ``SqlCipherError/emptyKey`` when empty.
    init(passphrase: some Collection<UInt8>) throws {
        guard !passphrase.isEmpty else { throw SqlCipherError.emptyKey }
        bytes = Array(passphrase)
    }

    /// A raw 32-byte key, with an optional 16-byte salt.
    /// Throws ``SqlCipherError/invalidRawKey(byteCount:)`` for any other length.
    init(rawKey: Data, salt: Data? = nil) throws {
        guard rawKey.count == 32 else { throw SqlCipherError.invalidRawKey(byteCount: rawKey.count) }
        if let salt, salt.count != 16 {
            throw SqlCipherError.invalidQuery(reason: "a salt must be exactly 16 bytes, not \(salt.count)")
        }
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = [UInt8(ascii: "x"), UInt8(ascii: "'")]
        text.reserveCapacity(2 + 96 + 1)
        for part in [rawKey, salt ?? Data()] {
            for byte in part {
                text.append(hex[Int(byte >> 4)])
                text.append(hex[Int(byte & 0x0F)])
            }
        }
        text.append(UInt8(ascii: "'"))
        bytes = text
    }

    /// Calls `body` with the key bytes.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }

    deinit {
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            // memset_s is not on Linux; a volatile-style loop through a raw pointer keeps the
            // stores from being removed as dead.
            let pointer = base.assumingMemoryBound(to: UInt8.self)
            for index in 0..<raw.count { pointer[index] = 0 }
            withExtendedLifetime(raw) {}
        }
    }
}
