import Foundation

/// A key: what every initialiser, rekey, export, conversion and backup takes. It is the one form
/// every key takes from the public entry point on: the initialisers that also take a `String`
/// passphrase or a `rawKey:` (the forms of the seed's README) make one at once.
///
/// ```swift
/// try Database.encrypt(plaintextAt: "/data/public.db", to: "/data/secret.db", key: "a passphrase")
/// try Database.encrypt(plaintextAt: "/data/public.db", to: "/data/raw.db", key: .rawKey(keyBytes))
/// ```
///
/// A passphrase is run through SQLCipher's PBKDF2; a raw key is exactly 32 bytes and skips it.
/// The value is checked when it is used (``SqlCipherError/emptyKey``,
/// ``SqlCipherError/invalidRawKey(byteCount:)``). The key bytes are copied at once into memory
/// that no other value shares and that is zeroed when the last copy of this value goes away; the
/// `String` or `Data` you passed in is yours to clear (see <doc:KeysInMemory>).
public struct DatabaseKey: Sendable, ExpressibleByStringInterpolation {
    enum Kind: Sendable {
        /// Bytes that go through SQLCipher's key derivation.
        case passphrase
        /// 32 key bytes (in `secret`), with the optional 16-byte `salt`.
        case raw
        /// SQLCipher's raw-key literal with its salt, `x'<key><salt>'` (in `secret`): a key a
        /// ``DatabasePool`` derived once from a passphrase for all its connections.
        case derived
    }

    let kind: Kind
    let secret: SecretBytes
    let salt: Data?

    init(kind: Kind, secret: SecretBytes, salt: Data?) {
        self.kind = kind
        self.secret = secret
        self.salt = salt
    }

    /// A passphrase; its UTF-8 bytes go through SQLCipher's key derivation. A passphrase spelled
    /// like SQLCipher's raw-key literal (`x'` and 64, 96 or 160 hexadecimal digits) is refused when
    /// used (``SqlCipherError/passphraseLooksLikeRawKey``): use ``rawKey(_:salt:)`` for raw keys.
    ///
    /// The bytes are compared as they are: a string equal to another only under Unicode canonical
    /// equivalence (NFC "é" and NFD "e" + U+0301) is a different key.
    ///
    /// `salt` is the 16-byte key-derivation salt kept outside the file, for files with a plaintext
    /// header (``CipherSettings/plaintextHeaderSize``), which do not store their salt: SQLCipher's
    /// shared-container setup, where a program wrote the file after `PRAGMA key`,
    /// `PRAGMA cipher_plaintext_header_size` and `PRAGMA cipher_salt = "x'…'"`. Leave it `nil` for
    /// every other file: SQLCipher reads the salt from the file's first 16 bytes.
    ///
    /// ```swift
    /// let db = try Database(path: path, key: .passphrase(passphrase, salt: salt),
    ///                       cipher: CipherSettings(plaintextHeaderSize: 32))
    /// ```
    ///
    /// With a salt, the package derives the key from the passphrase and the salt once, with the
    /// digest and iteration count the library reports for the settings, in the crypto library
    /// libsqlcipher itself uses (<doc:KeysInMemory>), and uses the result as ``rawKey(_:salt:)``
    /// would: what one opens, the other opens. Where that derivation is unavailable (a SQLCipher
    /// built on another crypto provider) the call throws
    /// ``SqlCipherError/unsupported(feature:requires:loaded:)`` rather than guess. SQLCipher proves,
    /// once per process, that it accepts a key derived here, with a scratch database in a private
    /// folder of the temporary folder (`TMPDIR`): when that folder cannot be written the call throws
    /// ``SqlCipherError/cannotOpen(path:reason:)`` naming it. A salt of another length throws
    /// ``SqlCipherError/invalidQuery(reason:)``.
    public static func passphrase(_ passphrase: String, salt: Data? = nil) -> DatabaseKey {
        DatabaseKey(kind: .passphrase, secret: SecretBytes(passphrase.utf8), salt: salt)
    }

    /// A passphrase given as bytes (any bytes, NUL and invalid UTF-8 included, but not the raw-key
    /// literal forms that ``passphrase(_:salt:)-(String,_)`` refuses), with the same optional
    /// out-of-file salt, derived and checked the same way.
    ///
    /// ```swift
    /// let db = try Database(path: path, key: .passphrase(passphraseBytes))
    /// ```
    public static func passphrase(_ passphrase: Data, salt: Data? = nil) -> DatabaseKey {
        DatabaseKey(kind: .passphrase, secret: SecretBytes(passphrase), salt: salt)
    }

    /// A raw key of exactly 32 bytes: no key derivation. `salt` is the 16-byte salt kept outside
    /// the file, for files with a plaintext header (``CipherSettings/plaintextHeaderSize``), which
    /// do not store their salt; leave it `nil` for every other file.
    ///
    /// ```swift
    /// let db = try Database(path: path, key: .rawKey(keyBytes))
    /// ```
    public static func rawKey(_ key: Data, salt: Data? = nil) -> DatabaseKey {
        DatabaseKey(kind: .raw, secret: SecretBytes(key), salt: salt)
    }

    /// A passphrase written as a string literal, `key: "secret"`, or built by interpolation,
    /// `rekey("\(prefix)-2026")` (the standard library's interpolation makes the `String`).
    public init(stringLiteral passphrase: String) {
        self.init(kind: .passphrase, secret: SecretBytes(passphrase.utf8), salt: nil)
    }

    /// A key derived once from a passphrase, kept as its raw-key literal (``Kind/derived``).
    static func derived(_ material: KeyMaterial) -> DatabaseKey {
        material.withBytes { DatabaseKey(kind: .derived, secret: SecretBytes($0), salt: nil) }
    }

    /// A copy whose bytes live in memory of their own, for an owner that zeroes them on its own
    /// schedule (``PoolKey``) without touching the memory of the value it was given.
    func copy() -> DatabaseKey {
        DatabaseKey(kind: kind, secret: SecretBytes(secret.bytes), salt: salt)
    }

    /// This key as SQLCipher will be given it for a file written with `cipher`: a passphrase with a
    /// salt becomes the raw key and salt that SQLCipher would derive from them (the passphrase's
    /// checks first, as for any passphrase); every other key is itself. Every entry point that
    /// takes a key and knows the file's settings calls this first, so that everything after it
    /// (the plaintext-header check, rekey's salt check, a pool's keying) sees a raw key with its
    /// salt, the one form of a key with a salt.
    ///
    /// `readOnly` when the key opens a connection that never writes (``CipherSettings/pragmas(for:schema:readOnly:)``):
    /// such a connection may read a file with a plaintext header larger than a writable one may have.
    ///
    /// - Throws: what ``material()`` throws for the passphrase; ``SqlCipherError/invalidQuery(reason:)``
    ///   for a salt that is not 16 bytes; ``SqlCipherError/unsupported(feature:requires:loaded:)``
    ///   when this process cannot derive keys the way SQLCipher does (``KeyDerivation``);
    ///   ``SqlCipherError/cannotOpen(path:reason:)`` naming the temporary folder when SQLCipher's
    ///   proof of the derivation cannot run for want of it.
    func resolved(for cipher: CipherSettings, library: SqlCipherLibrary, readOnly: Bool = false) throws -> DatabaseKey {
        guard kind == .passphrase, let salt else { return self }
        let passphrase = try KeyMaterial(passphrase: secret.bytes)
        guard salt.count == KeySalt.length else {
            throw SqlCipherError.invalidQuery(reason: "a salt must be exactly \(KeySalt.length) bytes, not \(salt.count)")
        }
        // Settings this library cannot honour (a plaintext header on SQLCipher 3) are refused as
        // such, not as a derivation that is unavailable.
        _ = try cipher.pragmas(for: library, readOnly: readOnly)
        // The plaintext header has no part in the key derivation; without it, the derivation's
        // own look at the settings does not refuse a header that only a read-only opening may name.
        var cipher = cipher
        cipher.plaintextHeaderSize = nil
        if case .failure(let error) = KeyDerivation.availability(library: library, settings: cipher) {
            // SQLCipher's proof that keys derived here are its own runs in a private folder made in
            // the temporary folder. Without one it cannot run, which says nothing about the library
            // (the passphrase alone opens files, SQLCipher deriving it): said as such, with what to
            // do, not as a library to replace.
            let temporary = FileManager.default.temporaryDirectory.path
            let unwritable = access(temporary, W_OK | X_OK) != 0 ? errno : 0
            if unwritable != 0 {
                throw SqlCipherError.cannotOpen(
                    path: temporary,
                    reason: "a passphrase with a salt (DatabaseKey.passphrase(_:salt:)) is derived in this process once "
                        + "SQLCipher has accepted a key derived here, which it shows with a scratch database in a private "
                        + "folder made in the temporary folder, and that folder cannot be written ("
                        + String(cString: strerror(unwritable)) + "). Point TMPDIR at a writable folder, or pass the key "
                        + "SQLCipher derives as .rawKey(key, salt: salt)")
            }
            let requires: String
            if case .unsupported(_, let reason, _) = error { requires = reason } else { requires = error.description }
            throw SqlCipherError.unsupported(
                feature: "Deriving the key of a passphrase with a salt (DatabaseKey.passphrase(_:salt:)) in this process",
                requires: requires + "; without it, pass the key SQLCipher derives as .rawKey(key, salt: salt)",
                loaded: library.cipherVersion)
        }
        let parameters = try KeyDerivation.parameters(for: cipher, library: library)
        let derived = try passphrase.withBytes { try KeyDerivation.derive($0, salt: salt, parameters: parameters) }
        return try derived.withRawKeyAndSalt { key, salt in
            DatabaseKey(kind: .raw, secret: SecretBytes(key), salt: salt)
        }
    }

    /// This key with the salt of the file it rekeys, when it names none and the file keeps its
    /// salt outside itself (a plaintext header). A rekey keeps the file's salt, as SQLCipher's own
    /// `PRAGMA rekey` does, so a new passphrase or raw key given alone means that salt: the file
    /// then opens with the new key and the salt it always had. Every other key is itself (a file
    /// without a plaintext header stores its salt, which a key without one takes from there).
    func keepingSalt(_ fileSalt: Data?, of cipher: CipherSettings) -> DatabaseKey {
        guard salt == nil, kind != .derived, (cipher.plaintextHeaderSize ?? 0) > 0, let fileSalt else { return self }
        return DatabaseKey(kind: kind, secret: secret, salt: fileSalt)
    }

    /// The bytes to hand to SQLCipher, checked: the one conversion of a key into what
    /// ``SQLiteConnection/applyKey(_:)`` takes. A passphrase with a salt must have been
    /// ``resolved(for:library:readOnly:)`` first: the package hands SQLCipher a salt only inside a raw key.
    func material() throws -> KeyMaterial {
        switch kind {
        case .passphrase:
            guard salt == nil else {
                throw SqlCipherError.invalidQuery(
                    reason: "a passphrase with a salt is for files with a plaintext header (SQLCipher 4), which this "
                        + "call neither reads nor writes; pass the passphrase without the salt")
            }
            return try KeyMaterial(passphrase: secret.bytes)
        case .raw: return try KeyMaterial(rawKey: secret.view, salt: salt)
        case .derived: return try KeyMaterial(literal: secret.bytes)
        }
    }

    /// Clears the key bytes now rather than when the last copy goes away.
    func zero() {
        secret.zero()
    }
}
