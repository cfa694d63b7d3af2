import CSqlCipherBridge
import Foundation

/// Key bytes on their way to `sqlite3_key`, held in one buffer that is zeroed when used.
///
/// A passphrase goes to SQLCipher byte for byte (no SQL quoting, so any byte is allowed). A raw
/// key goes as SQLCipher's `x'<64 hex digits>'` form (or `x'<96 hex digits>'` with a salt), which
/// skips key derivation (https://www.zetetic.net/sqlcipher/sqlcipher-api/#key).
///
/// Every instance holds at most `Int32.max` bytes, so its count fits the C `int` that
/// `sqlite3_key` and `sqlite3_rekey` take.
final class KeyMaterial {
    private var bytes: [UInt8]

    /// A passphrase.
    ///
    /// SQLCipher reads some byte strings given as a passphrase as a raw key instead: exactly 67
    /// bytes that start with `x'` or `X'` followed by 64 hexadecimal digits (in either case), or
    /// exactly 99 bytes that start the same way followed by 96 digits (key and salt). The last
    /// byte is not checked, so `x'<64 hex>'` and `x'<64 hex>!` are both raw keys (SQLCipher's
    /// `sqlcipher_cipher_ctx_key_derive`, 3.4.1 and 4.6.1 alike). Such a passphrase would skip
    /// key derivation and open or create a raw-key file, which the API promises a passphrase
    /// never does, so it is refused.
    ///
    /// - Throws: ``SqlCipherError/emptyKey`` when empty,
    ///   ``SqlCipherError/passphraseLooksLikeRawKey`` for the raw-key forms, and `SQLITE_TOOBIG` as
    ///   ``SqlCipherError/sqlite(code:extendedCode:message:sql:)`` beyond `Int32.max` bytes.
    init(passphrase: some Collection<UInt8>) throws {
        guard !passphrase.isEmpty else { throw SqlCipherError.emptyKey }
        _ = try CLength.value(passphrase.count, kind: "a passphrase", sql: nil)
        if Self.isRawKeyLiteral(passphrase) { throw SqlCipherError.passphraseLooksLikeRawKey }
        bytes = Array(passphrase)
    }

    /// Whether SQLCipher would take `key` as a raw key rather than a passphrase: 67 or 99 bytes,
    /// `x'` (any case of `x`), then 64 or 96 hexadecimal digits, then any one byte.
    static func isRawKeyLiteral(_ key: some Collection<UInt8>) -> Bool {
        let count = key.count
        guard count == 2 + 64 + 1 || count == 2 + 96 + 1 else { return false }
        var index = key.startIndex
        guard key[index] | 0x20 == UInt8(ascii: "x") else { return false }
        index = key.index(after: index)
        guard key[index] == UInt8(ascii: "'") else { return false }
        index = key.index(after: index)
        for _ in 0..<(count - 3) {
            let byte = key[index]
            let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            let folded = byte | 0x20
            guard isDigit || (folded >= UInt8(ascii: "a") && folded <= UInt8(ascii: "f")) else { return false }
            index = key.index(after: index)
        }
        return true
    }

    /// A raw 32-byte key, with an optional 16-byte salt.
    /// Throws ``SqlCipherError/invalidRawKey(byteCount:)`` for any other length.
    init(rawKey: Data, salt: Data? = nil) throws {
        guard rawKey.count == 32 else { throw SqlCipherError.invalidRawKey(byteCount: rawKey.count) }
        if let salt, salt.count != 16 {
            throw SqlCipherError.invalidQuery(reason: "a salt must be exactly 16 bytes, not \(salt.count)")
        }
        bytes = rawKey.withUnsafeBytes { Self.literal(key: $0, salt: salt ?? Data()) }
    }

    /// A raw 32-byte key read from memory the caller zeroes afterwards, with its 16-byte salt: the
    /// key derived once for many connections (Pool/KeyDerivation.swift), which never exists as a
    /// `Data` that could not be zeroed.
    init(rawKeyBytes key: UnsafeRawBufferPointer, salt: Data) throws {
        guard key.count == 32 else { throw SqlCipherError.invalidRawKey(byteCount: key.count) }
        guard salt.count == 16 else {
            throw SqlCipherError.invalidQuery(reason: "a salt must be exactly 16 bytes, not \(salt.count)")
        }
        bytes = Self.literal(key: key, salt: salt)
    }

    /// A copy of a raw-key literal (`x'…'`) kept elsewhere, for one more connection keyed with it
    /// (a ``DatabasePool`` keeps its derived key this way for readers opened later).
    init(literal: some Collection<UInt8>) throws {
        guard Self.isRawKeyLiteral(literal) else {
            throw SqlCipherError.invalidQuery(reason: "a stored key is not a raw-key literal")
        }
        bytes = Array(literal)
    }

    /// The 32 key bytes and the salt of a raw-key literal with a salt (`x'<64 hex><32 hex>'`),
    /// passed to `body` in memory that is zeroed afterwards.
    func withRawKeyAndSalt<R>(_ body: (UnsafeRawBufferPointer, Data) throws -> R) throws -> R {
        guard bytes.count == 2 + 96 + 1, isRawKey else {
            throw SqlCipherError.invalidQuery(reason: "the key is not a raw key with a salt")
        }
        func nibble(_ byte: UInt8) -> UInt8 { byte <= 57 ? byte - 48 : (byte | 0x20) - 87 }
        var raw = [UInt8](repeating: 0, count: 48)
        defer { raw.zeroKeyBytes() }
        for index in 0..<48 {
            raw[index] = nibble(bytes[2 + 2 * index]) << 4 | nibble(bytes[3 + 2 * index])
        }
        return try raw.withUnsafeBytes { all in
            try body(UnsafeRawBufferPointer(rebasing: all[0..<32]), Data(all[32..<48]))
        }
    }

    /// `x'<key hex><salt hex>'`, written into one buffer reserved at its final size, so that no
    /// copy of the key's hex digits is left behind by a reallocation.
    private static func literal(key: UnsafeRawBufferPointer, salt: Data) -> [UInt8] {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = [UInt8(ascii: "x"), UInt8(ascii: "'")]
        text.reserveCapacity(2 + 96 + 1)
        for byte in key {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        for byte in salt {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        text.append(UInt8(ascii: "'"))
        return text
    }

    /// Whether this holds a raw key (`x'…'`) rather than a passphrase: a passphrase spelled like
    /// one is refused by ``init(passphrase:)``, so the spelling tells them apart.
    var isRawKey: Bool { Self.isRawKeyLiteral(bytes) }

    /// Calls `body` with the key bytes.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }

    deinit {
        bytes.zeroKeyBytes()
    }
}

/// Zeroes memory that held key bytes with ``scb_kdf_zero`` (volatile stores, in C), which the
/// optimizer cannot remove as dead even when the memory is freed right after: the one way the
/// package clears a key.
func zeroKeyBytes(_ memory: UnsafeMutableRawBufferPointer) {
    guard let base = memory.baseAddress else { return }
    scb_kdf_zero(base, memory.count)
}

extension [UInt8] {
    /// Zeroes the array's bytes in place (see ``zeroKeyBytes(_:)``).
    mutating func zeroKeyBytes() {
        withUnsafeMutableBytes { SqlCipherKit.zeroKeyBytes($0) }
    }
}
