import Foundation

/// SQLCipher settings applied right after the key, before the first read
/// (https://www.zetetic.net/sqlcipher/sqlcipher-api/).
///
/// ```swift
/// // A file that SQLCipher 3.4.1 can read, from either library version:
/// let db = try Database(path: path, key: "secret", cipher: .sqlcipher3)
///
/// // Explicit page size and key-derivation work:
/// let tuned = try Database(path: path, key: "secret",
///                          cipher: CipherSettings(pageSize: 8192, kdfIterations: 100_000))
/// ```
///
/// Settings are never ignored silently: one the loaded library cannot honour throws
/// ``SqlCipherError/unsupported(feature:requires:loaded:)`` naming the version it needs.
/// The same settings must be given every time a file is opened: SQLCipher stores none of them in
/// the file.
public struct CipherSettings: Sendable, Hashable {
    /// The SQLCipher major version whose defaults to use (`PRAGMA cipher_compatibility`): 3 or 4,
    /// or nil for the loaded library's own defaults. 3 on SQLCipher 4 reads and writes files that
    /// SQLCipher 3.4.1 opens; 4 needs SQLCipher 4.
    public var compatibility: Int?
    /// The page size in bytes (`PRAGMA cipher_page_size`): a power of two from 1024 to 65536.
    /// (SQLite allows 512, but SQLCipher's per-page IV and HMAC leave too little of such a page.)
    public var pageSize: Int?
    /// PBKDF2 iterations for a passphrase (`PRAGMA kdf_iter`): 1 to `Int32.max`. SQLCipher stores
    /// the count in a 32-bit integer and would silently truncate a larger one (4294967297 would run
    /// one iteration), so anything outside that range is refused. Ignored for raw keys, which skip
    /// key derivation.
    public var kdfIterations: Int?
    /// Bytes of the file header left unencrypted (`PRAGMA cipher_plaintext_header_size`, SQLCipher
    /// 4 only): 0, or 32, 48, 64, 80 or 96, usually 32 (SQLCipher's value for iOS shared
    /// containers). The salt is then not stored in the file; pass it with
    /// ``Database/init(path:key:journalMode:cipher:readOnly:configuration:)-(_,DatabaseKey,_,_,_,_)``
    /// and ``DatabaseKey/passphrase(_:salt:)-(String,_)`` or ``DatabaseKey/rawKey(_:salt:)``. A key without
    /// its salt is refused with ``SqlCipherError/keyFailed(path:reason:)`` before anything is
    /// created: the random salt SQLCipher would take is never reported, and the file could not be
    /// opened again.
    ///
    /// The limit keeps the schema encrypted: the first page holds SQLite's 100-byte file header and
    /// then `sqlite_schema`, whose cells grow from the end of the page towards its start, so with a
    /// larger header the `CREATE` statements of a growing schema end up in the unencrypted bytes.
    /// A larger multiple of 16 (below the page size) is accepted only with `readOnly: true`, to
    /// read a file some other program wrote that way; <doc:RawSQLGuards> has the rule.
    public var plaintextHeaderSize: Int?
    /// The digest of the PBKDF2 key derivation for a passphrase (`PRAGMA cipher_kdf_algorithm`,
    /// SQLCipher 4 only): SHA-512 is SQLCipher 4's default, SHA-1 SQLCipher 3's. For files another
    /// program wrote with another choice, such as DB Browser for SQLCipher's custom settings.
    /// Ignored for raw keys, which skip key derivation.
    public var kdfAlgorithm: Digest?
    /// The digest of the per-page HMAC (`PRAGMA cipher_hmac_algorithm`, SQLCipher 4 only): SHA-512
    /// is SQLCipher 4's default, SHA-1 SQLCipher 3's.
    public var hmacAlgorithm: Digest?
    /// Whether every page carries an HMAC (`PRAGMA cipher_use_hmac`): nil or true, SQLCipher's
    /// default since 2.0, for files whose pages are checked for tampering when they are read;
    /// false only for a file another program wrote with `PRAGMA cipher_use_hmac = OFF`.
    ///
    /// Such a file is still encrypted, but a changed byte in it is no longer detected: the page
    /// decrypts to other bytes, which SQLite may read as other values or report as damage
    /// (``SqlCipherError/sqlite(code:extendedCode:message:sql:)`` with `SQLITE_CORRUPT`), and
    /// ``Database/verifyIntegrity(progress:)`` can only find the damage SQLite's own checks see.
    /// With `false`, ``hmacAlgorithm`` must be nil (there is no HMAC to choose a digest for):
    /// both together are ``SqlCipherError/invalidQuery(reason:)``.
    ///
    /// Keep `false` for the files that need it, and convert them with
    /// ``Database/export(to:key:cipher:progress:)`` to settings that keep the HMAC.
    ///
    /// ```swift
    /// let legacy = try Database(path: path, key: "secret", cipher: CipherSettings(usesHMAC: false))
    /// try await legacy.export(to: newPath, key: .passphrase("secret"), cipher: .default)
    /// ```
    public var usesHMAC: Bool?

    /// A digest SQLCipher 4 can use for its key derivation (``kdfAlgorithm``) and page HMAC
    /// (``hmacAlgorithm``).
    public enum Digest: Sendable, Hashable, CaseIterable {
        /// SHA-1: SQLCipher 3's choice, kept for files written with it.
        case sha1
        /// SHA-256.
        case sha256
        /// SHA-512: SQLCipher 4's default.
        case sha512

        /// The value `PRAGMA cipher_kdf_algorithm` takes.
        var kdfPragmaValue: String {
            switch self {
            case .sha1: return "PBKDF2_HMAC_SHA1"
            case .sha256: return "PBKDF2_HMAC_SHA256"
            case .sha512: return "PBKDF2_HMAC_SHA512"
            }
        }

        /// The value `PRAGMA cipher_hmac_algorithm` takes.
        var hmacPragmaValue: String {
            switch self {
            case .sha1: return "HMAC_SHA1"
            case .sha256: return "HMAC_SHA256"
            case .sha512: return "HMAC_SHA512"
            }
        }
    }

    /// Whether ``compatibility`` may also be 1 or 2 (SQLCipher 1.x and 2.x files): only for the
    /// package's own opening of a file that ``Database/upgradeFromSqlCipher3(path:key:progress:)``
    /// migrates, never for a file that is written. Not public: those formats are weaker (2.x
    /// derives keys with 4,000 iterations, 1.x has no HMAC).
    var allowsLegacyFormat = false

    /// Creates settings; every nil field keeps the library's default (or, with `compatibility`,
    /// that version's default).
    ///
    /// ```swift
    /// // DB Browser for SQLCipher's custom settings: SHA-256 for the KDF and the HMAC.
    /// let custom = CipherSettings(kdfAlgorithm: .sha256, hmacAlgorithm: .sha256)
    /// ```
    public init(compatibility: Int? = nil, pageSize: Int? = nil, kdfIterations: Int? = nil,
                plaintextHeaderSize: Int? = nil, kdfAlgorithm: Digest? = nil, hmacAlgorithm: Digest? = nil,
                usesHMAC: Bool? = nil) {
        self.compatibility = compatibility
        self.pageSize = pageSize
        self.kdfIterations = kdfIterations
        self.plaintextHeaderSize = plaintextHeaderSize
        self.kdfAlgorithm = kdfAlgorithm
        self.hmacAlgorithm = hmacAlgorithm
        self.usesHMAC = usesHMAC
    }

    /// The loaded library's defaults: SQLCipher 4 format on SQLCipher 4, SQLCipher 3 format on 3.4.1.
    public static let `default` = CipherSettings()

    /// SQLCipher 3 defaults (1024-byte pages, PBKDF2-HMAC-SHA1 with 64,000 iterations, HMAC-SHA1):
    /// files readable by SQLCipher 3.4.1, with either library.
    public static let sqlcipher3 = CipherSettings(compatibility: 3)

    /// SQLCipher 4 defaults (4096-byte pages, PBKDF2-HMAC-SHA512 with 256,000 iterations). Needs SQLCipher 4.
    public static let sqlcipher4 = CipherSettings(compatibility: 4)

    /// SQLCipher `version`'s defaults (1 or 2), for reading a file that an upgrade migrates.
    static func legacy(_ version: Int) -> CipherSettings {
        var settings = CipherSettings(compatibility: version)
        settings.allowsLegacyFormat = true
        return settings
    }

    /// The pragmas that apply these settings on `library`, in the order SQLCipher needs
    /// (compatibility first: it resets the others).
    /// - Throws: ``SqlCipherError/unsupported(feature:requires:loaded:)`` or
    ///   ``SqlCipherError/invalidQuery(reason:)`` for out-of-range values.
    ///
    /// `readOnly` is true only for connections that can never write the file, the one case that
    /// may name a plaintext header larger than ``largestWritablePlaintextHeader``.
    func pragmas(for library: SqlCipherLibrary, schema: String? = nil, readOnly: Bool = false) throws -> [String] {
        // `PRAGMA name.cipher_page_size` applies to one attached database (the export target).
        let prefix = schema.map { "PRAGMA \($0)." } ?? "PRAGMA "
        var pragmas: [String] = []
        if let compatibility {
            guard compatibility == 3 || compatibility == 4 || (allowsLegacyFormat && (1...2).contains(compatibility)) else {
                // A SQLCipher 1 or 2 file is readable only through the upgrade, which opens it with
                // the legacy settings itself: the bare range named no way to open one.
                let legacy = (1...2).contains(compatibility)
                    ? ": a SQLCipher \(compatibility) file is opened after Database.upgradeFromSqlCipher3(path:key:) has "
                        + "migrated it, in place, to SQLCipher 4's format (it needs SQLCipher 4; keep a copy first)"
                    : ""
                throw SqlCipherError.invalidQuery(reason: "cipher compatibility must be 3 or 4, not \(compatibility)" + legacy)
            }
            if library.cipherMajorVersion >= 4 {
                try library.require("cipher_compatibility", cipher: 4, 0, 1)
                pragmas.append(prefix + "cipher_compatibility = \(compatibility)")
            } else if compatibility > library.cipherMajorVersion {
                throw SqlCipherError.unsupported(
                    feature: "SQLCipher \(compatibility) file format", requires: "SQLCipher \(compatibility).0 or later",
                    loaded: library.cipherVersion)
            }
        }
        if let pageSize {
            guard pageSize >= 1024, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
                // 512 is a valid SQLite page size, but SQLCipher reserves 48 (3.x) or 80 (4.x) bytes of
                // each page for its IV and HMAC, and SQLite needs 480 usable bytes: 3.4.1 then fails
                // at the first write, and 4.6.1 writes pages that are not ciphertext (measured).
                let why = pageSize == 512 ? " (512 leaves too little room for SQLCipher's per-page IV and HMAC)" : ""
                throw SqlCipherError.invalidQuery(
                    reason: "cipher page size must be a power of two from 1024 to 65536, not \(pageSize)\(why)")
            }
            pragmas.append(prefix + "cipher_page_size = \(pageSize)")
        }
        if let kdfIterations {
            guard kdfIterations >= 1 && kdfIterations <= Int(Int32.max) else {
                throw SqlCipherError.invalidQuery(
                    reason: "KDF iterations must be from 1 to \(Int32.max), not \(kdfIterations) (SQLCipher keeps the count "
                        + "in 32 bits and would silently use fewer); pass a count in that range, such as 256000")
            }
            pragmas.append(prefix + "kdf_iter = \(kdfIterations)")
        }
        if let kdfAlgorithm {
            try library.require("a choice of KDF digest (cipher_kdf_algorithm)", cipher: 4)
            pragmas.append(prefix + "cipher_kdf_algorithm = \(kdfAlgorithm.kdfPragmaValue)")
        }
        if let hmacAlgorithm {
            try library.require("a choice of HMAC digest (cipher_hmac_algorithm)", cipher: 4)
            pragmas.append(prefix + "cipher_hmac_algorithm = \(hmacAlgorithm.hmacPragmaValue)")
        }
        if let usesHMAC {
            if !usesHMAC, hmacAlgorithm != nil {
                // SQLCipher ignores the digest of an HMAC the pages do not carry; a caller who gave
                // both misread one of them.
                throw SqlCipherError.invalidQuery(
                    reason: "hmacAlgorithm names the digest of the page HMAC, and usesHMAC: false writes and reads pages "
                        + "without one: give hmacAlgorithm for a file with page HMACs, or usesHMAC: false alone for a file "
                        + "written with PRAGMA cipher_use_hmac = OFF")
            }
            // Both libraries have it (SQLCipher 2.0 and later); it sets how many bytes each page
            // reserves, so it comes before the first read like every setting here.
            pragmas.append(prefix + "cipher_use_hmac = \(usesHMAC ? "ON" : "OFF")")
        }
        if let plaintextHeaderSize {
            try library.require("a plaintext header (cipher_plaintext_header_size)", cipher: 4)
            let writable = plaintextHeaderSize == 0
                || ((32...Self.largestWritablePlaintextHeader).contains(plaintextHeaderSize) && plaintextHeaderSize % 16 == 0)
            let readable = plaintextHeaderSize >= 32 && plaintextHeaderSize % 16 == 0
                && plaintextHeaderSize < (pageSize ?? 65536)
            guard writable || (readOnly && readable) else {
                let reading = readable
                    ? " (a larger header is accepted only with readOnly: true, to read a file written that way)" : ""
                throw SqlCipherError.invalidQuery(
                    reason: "a plaintext header must be 0, 32, 48, 64, 80 or 96 bytes, not \(plaintextHeaderSize)\(reading): "
                        + "a larger one leaves part of the schema unencrypted on disk; use 32 (the size SQLCipher documents "
                        + "for iOS shared containers)")
            }
            pragmas.append(prefix + "cipher_plaintext_header_size = \(plaintextHeaderSize)")
        }
        return pragmas
    }

    /// Throws unless `key` can open again what is written with these settings at `path`: with a
    /// plaintext header the file does not store the key-derivation salt (its first bytes hold
    /// SQLite's header), so only a raw key given with its salt names the key of such a file (a
    /// passphrase with its salt is one by now, ``DatabaseKey/resolved(for:library:readOnly:)``). A
    /// passphrase, or a raw key without a salt, would take a random salt that SQLCipher never
    /// reports: the file would be created and written, and no call could open it again. Every
    /// keyed opening and every conversion's target asks this before anything is created, as a
    /// ``DatabasePool`` does when it looks the salt up (KeySalt.swift).
    ///
    /// - Throws: ``SqlCipherError/keyFailed(path:reason:)``.
    func requireSaltedKey(_ key: KeyMaterial?, path: String) throws {
        guard let key, (plaintextHeaderSize ?? 0) > 0 else { return }
        // `x'` + 64 hex digits of key + 32 of salt + `'`: the only spelling that carries a salt.
        guard !(key.isRawKey && key.withBytes({ $0.count }) == 2 + 96 + 1) else { return }
        let given = key.isRawKey ? "a raw key without its salt" : "a passphrase"
        let exists = ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) > 0
        let what = exists
            ? "the file's first bytes hold SQLite's header, not the key-derivation salt, so \(given) does not give "
                + "its key. Open it with Database(path:key:cipher:) with key: .passphrase(passphrase, salt: salt) or .rawKey(key, salt: salt) and the salt kept when it was created "
                + "(PRAGMA cipher_salt)"
            : "the key-derivation salt is not stored in the file, so a file created with \(given) could not be "
                + "opened again. Create it with Database(path:key:cipher:) with key: .passphrase(passphrase, salt: salt) or .rawKey(key, salt: salt) (or export(to:key:cipher:) or backup(to:key:) "
                + "with such a key) and keep the salt"
        throw SqlCipherError.keyFailed(
            path: path, reason: "with a plaintext header (CipherSettings.plaintextHeaderSize) " + what)
    }

    /// The largest plaintext header a writable connection may use: it ends before byte 100, where
    /// page 1's b-tree (and with it `sqlite_schema`) starts, and is a multiple of SQLCipher's 16-byte
    /// block.
    static let largestWritablePlaintextHeader = 96
}
