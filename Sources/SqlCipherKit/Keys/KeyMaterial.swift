import CSqlCipherBridge
import Foundation

/// Key bytes on their way to `sqlite3_key`, held in one ``SecretBytes`` that is zeroed when used.
///
/// A passphrase goes to SQLCipher byte for byte (no SQL quoting, so any byte is allowed). A raw
/// key goes as SQLCipher's `x'<64 hex digits>'` form (or `x'<96 hex digits>'` with a salt), which
/// skips key derivation (https://www.zetetic.net/sqlcipher/sqlcipher-api/#key).
///
/// Every instance holds at most `Int32.max` bytes, so its count fits the C `int` that
/// `sqlite3_key` and `sqlite3_rekey` take.
final class KeyMaterial {
    private let secret: SecretBytes

    /// A passphrase.
    ///
    /// SQLCipher reads some byte strings given as a passphrase as a raw key instead: exactly 67
    /// bytes that start with `x'` or `X'` followed by 64 hexadecimal digits (in either case), or
    /// exactly 99 bytes that start the same way followed by 96 digits (key and salt). The last
    /// byte is not checked, so `x'<64 hex>'` and `x'<64 hex>!` are both raw keys (SQLCipher's
    /// `sqlcipher_cipher_ctx_key_derive`, 3.4.1 and 4.6.1 alike). SQLCipher 4.7 and later add a
    /// third form, 163 bytes: `x'`, 160 digits (key, HMAC key and salt), `'`; a passphrase
    /// spelled so derives a key on 4.6.1 and is the key itself on 4.7+, so the same passphrase
    /// would open a file on one release and not on the other. Such a passphrase would skip
    /// key derivation and open or create a raw-key file, which the API promises a passphrase
    /// never does, so every one of these forms is refused, on every release, with any last byte.
    ///
    /// - Throws: ``SqlCipherError/emptyKey`` when empty,
    ///   ``SqlCipherError/passphraseLooksLikeRawKey`` for the raw-key forms, and `SQLITE_TOOBIG` as
    ///   ``SqlCipherError/sqlite(code:extendedCode:message:sql:)`` beyond `Int32.max` bytes.
    init(passphrase: some Collection<UInt8>) throws {
        guard !passphrase.isEmpty else { throw SqlCipherError.emptyKey }
        _ = try CLength.value(passphrase.count, kind: "a passphrase", sql: nil)
        if Self.isRawKeyLiteral(passphrase) { throw SqlCipherError.passphraseLooksLikeRawKey }
        secret = SecretBytes(passphrase)
    }

    /// Whether some SQLCipher release would take `key` as a raw key rather than a passphrase: 67,
    /// 99 or 163 bytes, `x'` (any case of `x`), then 64, 96 or 160 hexadecimal digits, then any one
    /// byte. 160 digits (key, HMAC key, salt) is a raw key from SQLCipher 4.7 on.
    static func isRawKeyLiteral(_ key: some Collection<UInt8>) -> Bool {
        let count = key.count
        guard count == 2 + 64 + 1 || count == 2 + 96 + 1 || count == 2 + 160 + 1 else { return false }
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
        secret = rawKey.withUnsafeBytes { Self.literal(key: $0, salt: salt ?? Data()) }
    }

    /// A raw 32-byte key read from memory the caller zeroes afterwards, with its 16-byte salt: the
    /// key derived once for many connections (Keys/KeyDerivation.swift), which never exists as a
    /// `Data` that could not be zeroed.
    init(rawKeyBytes key: UnsafeRawBufferPointer, salt: Data) throws {
        guard key.count == 32 else { throw SqlCipherError.invalidRawKey(byteCount: key.count) }
        guard salt.count == 16 else {
            throw SqlCipherError.invalidQuery(reason: "a salt must be exactly 16 bytes, not \(salt.count)")
        }
        secret = Self.literal(key: key, salt: salt)
    }

    /// A copy of a raw-key literal (`x'…'`) kept elsewhere, for one more connection keyed with it
    /// (a ``DatabasePool`` keeps its derived key this way for readers opened later).
    init(literal: some Collection<UInt8>) throws {
        guard Self.isRawKeyLiteral(literal) else {
            throw SqlCipherError.invalidQuery(reason: "a stored key is not a raw-key literal")
        }
        secret = SecretBytes(literal)
    }

    /// The 32 key bytes and the salt of a raw-key literal with a salt (`x'<64 hex><32 hex>'`),
    /// passed to `body` in memory that is zeroed afterwards.
    func withRawKeyAndSalt<R>(_ body: (UnsafeRawBufferPointer, Data) throws -> R) throws -> R {
        guard secret.count == 2 + 96 + 1, isRawKey else {
            throw SqlCipherError.invalidQuery(reason: "the key is not a raw key with a salt")
        }
        func nibble(_ byte: UInt8) -> UInt8 { byte <= 57 ? byte - 48 : (byte | 0x20) - 87 }
        let text = secret.bytes
        let raw = SecretBytes(count: 48) { raw in
            for index in 0..<48 {
                raw[index] = nibble(text[2 + 2 * index]) << 4 | nibble(text[3 + 2 * index])
            }
        }
        return try withExtendedLifetime(raw) {
            try body(UnsafeRawBufferPointer(rebasing: raw.bytes[0..<32]), Data(raw.bytes[32..<48]))
        }
    }

    /// `x'<key hex><salt hex>'`, written straight into the ``SecretBytes`` that keeps it, so that no
    /// other copy of the key's hex digits exists.
    private static func literal(key: UnsafeRawBufferPointer, salt: Data) -> SecretBytes {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        return SecretBytes(count: 2 + 2 * key.count + 2 * salt.count + 1) { text in
            var index = 0
            func append(_ byte: UInt8) {
                text[index] = byte
                index += 1
            }
            append(UInt8(ascii: "x"))
            append(UInt8(ascii: "'"))
            for byte in key {
                append(hex[Int(byte >> 4)])
                append(hex[Int(byte & 0x0F)])
            }
            for byte in salt {
                append(hex[Int(byte >> 4)])
                append(hex[Int(byte & 0x0F)])
            }
            append(UInt8(ascii: "'"))
        }
    }

    /// Whether this holds a raw key (`x'…'`) rather than a passphrase: a passphrase spelled like
    /// one is refused by ``init(passphrase:)``, so the spelling tells them apart.
    var isRawKey: Bool { Self.isRawKeyLiteral(secret.bytes) }

    /// Calls `body` with the key bytes.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(secret.bytes)
    }
}

/// Secret bytes (a passphrase, a key, a key's hex text) in memory of their own: the one type that
/// holds them inside the package, from the public entry point on.
///
/// A Swift `Array`, `Data` or `String` can be duplicated by copy-on-write behind the code's back
/// (zeroing a `var` copy writes into a fresh buffer and leaves the original to be freed intact), and
/// freed without being cleared. This class owns one allocation that nothing else references, so
/// there is exactly one copy, and ``zero()`` (also run before the memory is freed) clears it through
/// ``zeroKeyBytes(_:)``. The caller's own value (a `String` or `Data` passed in) is the caller's to
/// clear; <doc:KeysInMemory> says so.
final class SecretBytes: @unchecked Sendable {
    // Written only at creation and by zero(); the owners (KeyMaterial, DatabaseKey, PoolKey under
    // its lock) never zero bytes another thread still reads.
    private let buffer: UnsafeMutableRawBufferPointer
    /// The number of secret bytes (the allocation has at least one byte).
    let count: Int

    /// A copy of `bytes`, written straight into the secret's own memory.
    init(_ bytes: some Collection<UInt8>) {
        let count = bytes.count
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, count), alignment: 16)
        memory.initializeMemory(as: UInt8.self, repeating: 0)
        // One copy of contiguous bytes (Data, [UInt8], a native String's UTF-8): the loop below
        // reads byte by byte through the collection's iterator, which took minutes for a 2 GiB
        // passphrase that was then refused as too long.
        let copied: Void? = bytes.withContiguousStorageIfAvailable { source in
            guard let base = source.baseAddress, let target = memory.baseAddress else { return }
            target.copyMemory(from: base, byteCount: Swift.min(count, source.count))
        }
        if copied == nil {
            var index = 0
            for byte in bytes where index < count {
                memory[index] = byte
                index += 1
            }
        }
        buffer = memory
        self.count = count
    }

    /// `count` bytes written by `fill` (which receives zeroed memory), for secrets computed in place.
    init(count: Int, fill: (UnsafeMutableRawBufferPointer) -> Void) {
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, count), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        self.count = count
        fill(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// The bytes, valid while this object lives.
    var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count])
    }

    /// A `Data` that views these bytes without copying them, valid while this object lives.
    var view: Data {
        guard count > 0, let base = buffer.baseAddress else { return Data() }
        return Data(bytesNoCopy: base, count: count, deallocator: .none)
    }

    /// The bytes as a collection of `UInt8`, valid while this object lives.
    var collection: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: UnsafeBufferPointer(buffer.assumingMemoryBound(to: UInt8.self))[0..<count])
    }

    /// Clears the bytes; the object keeps its size, so a later reader sees zeros, never freed memory.
    func zero() {
        zeroKeyBytes(buffer)
    }

    deinit {
        zero()
        buffer.deallocate()
    }
}

/// Zeroes memory that held key bytes with ``scb_kdf_zero`` (volatile stores, in C), which the
/// optimizer cannot remove as dead even when the memory is freed right after: the one way the
/// package clears a key.
func zeroKeyBytes(_ memory: UnsafeMutableRawBufferPointer) {
    guard let base = memory.baseAddress else { return }
    scb_kdf_zero(base, memory.count)
}
