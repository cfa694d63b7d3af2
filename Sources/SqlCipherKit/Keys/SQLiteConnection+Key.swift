import CSqlCipherBridge

extension SQLiteConnection {
    /// Hands key bytes to SQLCipher (`sqlite3_key`, https://www.zetetic.net/sqlcipher/sqlcipher-api/#sqlite3_key):
    /// the one place a key reaches a connection, so that no key ever travels as SQL text (no
    /// `PRAGMA key`, nothing a tracer or an error could show). The bytes are used during the call
    /// only; SQLCipher derives or copies what it keeps.
    ///
    /// `bytes` are a passphrase, SQLCipher's raw-key literal (`x'…'`) or a probe's bytes. Throws
    /// SQLite's error when SQLCipher refuses them (it does so only for an unusable handle: a
    /// wrong key shows at the first read, which ``KeyProof`` judges).
    func applyKey(_ bytes: UnsafeRawBufferPointer) throws {
        let rc = scb_key(handle, bytes.baseAddress, Int32(bytes.count))
        guard rc == 0 else { throw error(rc, sql: nil) }
    }

    /// Applies `key`'s bytes (see ``applyKey(_:)-(UnsafeRawBufferPointer)``).
    func applyKey(_ key: KeyMaterial) throws {
        try key.withBytes { try applyKey($0) }
    }
}
