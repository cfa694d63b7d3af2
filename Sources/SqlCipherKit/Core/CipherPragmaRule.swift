import Foundation

/// What raw SQL may do with each pragma that SQLCipher handles: the rule behind
/// ``SqlCipherError/unsafePragma(name:value:sql:)`` and the table in <doc:RawSQLGuards>
/// (`CipherPragmaTableTests` checks that the table is these rules, row for row).
///
/// SQLCipher applies most of these pragmas while the statement is *compiled* (its
/// `sqlcipher_codec_pragma` runs from SQLite's pragma parser), after the authorizer was asked, so
/// the connection's authorizer is the one place where a refusal comes before the effect. The list
/// is every pragma that `sqlcipher_codec_pragma` and SQLite's pragma table recognise in SQLCipher
/// 3.4.1 (`src/crypto.c`, `src/pragma.h`) and 4.6.1 (`src/sqlcipher.c`, `src/pragma.h`); a
/// `cipher*` pragma that is not in it (a later version's, a test build's) is refused, read or set.
struct CipherPragmaRule: Sendable {
    /// Which of the two libraries the package is tested with have the pragma.
    enum Versions: Sendable {
        /// SQLCipher 3.4.1 and 4.6.1.
        case both
        /// SQLCipher 4.x only (4.6.1 here).
        case sqlcipher4
    }

    /// What setting the pragma (`PRAGMA name = value`, `PRAGMA name(value)`) does.
    enum Setting: Sendable, Equatable {
        /// Allowed with any value.
        case allowed
        /// Refused with any value.
        case refused
        /// Allowed only with the value `off` (any case), which turns an output off.
        case onlyOff
        /// Refused on an encrypted database, allowed on a plaintext one (`page_size`).
        case refusedWhenEncrypted
    }

    let name: String
    let versions: Versions
    /// Whether `PRAGMA name` without a value is allowed.
    let readAllowed: Bool
    let setting: Setting
    /// Why the rule is what it is, finishing the sentence "…, which …" for refusals.
    let why: String
    /// What to use instead; empty where nothing is needed.
    let instead: String
    /// Whether the value is key material, kept out of error descriptions.
    var isKeyPragma: Bool { Self.keyPragmas.contains(name) }

    static let keyPragmas: Set<String> = ["key", "hexkey", "textkey", "rekey", "hexrekey", "textrekey"]

    private static let openWithKey = "Open the file with Database(path:key:) or Database(path:rawKey:), and change its key "
        + "with rekey(_:) or rekey(rawKey:), which checks the new key with a fresh connection."
    private static let useRekey = "Use rekey(_:) or rekey(rawKey:), which takes the lock, rewrites every page and checks the "
        + "new key with a fresh connection."
    private static let settingsAtOpen = "Give the setting to every open with CipherSettings (Database(path:key:cipher:)), "
        + "and convert an existing file with export(to:key:cipher:)."
    private static let perDatabaseSettings = "Give CipherSettings to each Database that needs other settings "
        + "(Database(path:key:cipher:))."

    /// Every rule, in the order of the table in <doc:RawSQLGuards>.
    static let all: [CipherPragmaRule] = [
        // Keys.
        .init(name: "key", versions: .both, readAllowed: true, setting: .refused,
              why: "would change the key of the open connection: SQLCipher 3.4.1 writes the pages that change "
                + "afterwards with the new key and keeps the others, so neither key opens the file, and on a plaintext "
                + "database it would start encrypting some pages of a plaintext file",
              instead: openWithKey),
        .init(name: "hexkey", versions: .both, readAllowed: true, setting: .refused,
              why: "is PRAGMA key with the key in hexadecimal, with the same effect", instead: openWithKey),
        .init(name: "textkey", versions: .sqlcipher4, readAllowed: true, setting: .refused,
              why: "is PRAGMA key with the key as text, with the same effect", instead: openWithKey),
        .init(name: "rekey", versions: .both, readAllowed: true, setting: .refused,
              why: "would re-encrypt the file without a lock taken first and without proof that the new key opens it "
                + "(SQLCipher can report success for a rekey that did not happen)",
              instead: useRekey),
        .init(name: "hexrekey", versions: .both, readAllowed: true, setting: .refused,
              why: "is PRAGMA rekey with the key in hexadecimal, with the same effect", instead: useRekey),
        .init(name: "textrekey", versions: .sqlcipher4, readAllowed: true, setting: .refused,
              why: "is PRAGMA rekey with the key as text, with the same effect", instead: useRekey),
        // The format of the open database.
        .init(name: "cipher", versions: .both, readAllowed: true, setting: .refused,
              why: "would switch the cipher of the open connection on SQLCipher 3.4.1 (4.x ignores it), leaving pages "
                + "that the file's settings cannot decrypt",
              instead: "SqlCipherKit uses SQLCipher's default cipher (AES-256-CBC); there is nothing to set."),
        .init(name: "rekey_cipher", versions: .both, readAllowed: true, setting: .refused,
              why: "would change the cipher of the pages written from now on (SQLCipher 3.4.1; 4.x ignores it), "
                + "mixing two ciphers in one file",
              instead: "Write a copy in another format with export(to:key:cipher:)."),
        .init(name: "cipher_page_size", versions: .both, readAllowed: true, setting: .refused,
              why: "would change the page size SQLCipher decrypts with after the file was opened, so later reads fail "
                + "and later writes do not match the file",
              instead: settingsAtOpen),
        .init(name: "page_size", versions: .both, readAllowed: true, setting: .refusedWhenEncrypted,
              why: "on an encrypted database is SQLCipher 4's cipher_page_size: the open connection switches page size "
                + "and every later statement fails with \"file is not a database\"",
              instead: "Give the page size when the file is created with CipherSettings(pageSize:), and change an "
                + "existing file's with export(to:key:cipher:). On a plaintext database PRAGMA page_size works as in SQLite."),
        .init(name: "kdf_iter", versions: .both, readAllowed: true, setting: .refused,
              why: "would change the key derivation of the open connection, so the pages written afterwards use a key "
                + "that the file's settings do not derive",
              instead: settingsAtOpen),
        .init(name: "fast_kdf_iter", versions: .both, readAllowed: true, setting: .refused,
              why: "would change how the HMAC key is derived, so the HMAC of every page written afterwards fails to "
                + "verify with the file's settings",
              instead: "Nothing needs it: SQLCipher's own value is the only one its files use."),
        .init(name: "rekey_kdf_iter", versions: .both, readAllowed: true, setting: .refused,
              why: "would change the key derivation of the pages written from now on (SQLCipher 3.4.1; 4.x ignores it)",
              instead: "Write a copy with other settings with export(to:key:cipher:)."),
        .init(name: "cipher_use_hmac", versions: .both, readAllowed: true, setting: .refused,
              why: "would switch the per-page HMAC of the open connection off or on: tamper detection is lost and the "
                + "pages no longer match the file's format",
              instead: "Open a file written without HMAC with CipherSettings(usesHMAC: false), and convert it with "
                + "export(to:key:cipher:)."),
        .init(name: "cipher_hmac_algorithm", versions: .sqlcipher4, readAllowed: true, setting: .refused,
              why: "would change the HMAC of the pages written afterwards (HMAC_SHA1 weakens it), leaving pages that the "
                + "file's settings cannot verify",
              instead: "Open a file written with another HMAC digest with CipherSettings(hmacAlgorithm:), and convert "
                + "a file with export(to:key:cipher:)."),
        .init(name: "cipher_kdf_algorithm", versions: .sqlcipher4, readAllowed: true, setting: .refused,
              why: "would change the key derivation of the open connection (PBKDF2_HMAC_SHA1 weakens it), so the pages "
                + "written afterwards use a key that the file's settings do not derive",
              instead: "Open a file written with another KDF digest with CipherSettings(kdfAlgorithm:), and convert "
                + "a file with export(to:key:cipher:)."),
        .init(name: "cipher_hmac_pgno", versions: .both, readAllowed: true, setting: .refused,
              why: "would change how page numbers enter the HMAC (deprecated), so pages fail to verify",
              instead: "Nothing needs it: the default is the only value SqlCipherKit's files use."),
        .init(name: "cipher_hmac_salt_mask", versions: .both, readAllowed: true, setting: .refused,
              why: "would change, for the whole process, the mask that derives HMAC salts (deprecated), so no file "
                + "opens with its settings afterwards",
              instead: "Nothing needs it: the default is the only value SqlCipherKit's files use."),
        .init(name: "cipher_plaintext_header_size", versions: .sqlcipher4, readAllowed: true, setting: .refused,
              why: "would write the start of page 1 in the clear over the key-derivation salt, after which no key and no "
                + "settings open the file",
              instead: "Create the file with CipherSettings(plaintextHeaderSize:) and Database(path:key:cipher:) with key: .passphrase(passphrase, salt: salt) or .rawKey(key, salt: salt), "
                + "and keep the salt."),
        .init(name: "cipher_salt", versions: .sqlcipher4, readAllowed: true, setting: .refused,
              why: "would change the key-derivation salt of the open connection, so the pages written afterwards use "
                + "another key",
              instead: "Give the salt with Database(path:key:cipher:) with key: .passphrase(passphrase, salt: salt) or .rawKey(key, salt: salt) (files with a plaintext header)."),
        .init(name: "cipher_compatibility", versions: .sqlcipher4, readAllowed: true, setting: .refused,
              why: "would switch the open connection to another version's page size, key derivation and HMAC, so the "
                + "pages no longer match the file",
              instead: "Open with CipherSettings(compatibility:) or CipherSettings.sqlcipher3, and convert with "
                + "export(to:key:cipher:) or Database.upgradeFromSqlCipher3(path:key:)."),
        // Process-wide defaults.
        .init(name: "cipher_default_kdf_iter", versions: .both, readAllowed: true, setting: .refused,
              why: "would change SQLCipher's default key derivation for every connection the process opens afterwards, "
                + "weakening new files and breaking the opening of existing ones",
              instead: perDatabaseSettings),
        .init(name: "cipher_default_page_size", versions: .both, readAllowed: true, setting: .refused,
              why: "would change SQLCipher's default page size for every connection the process opens afterwards, so "
                + "existing files no longer open with their settings",
              instead: perDatabaseSettings),
        .init(name: "cipher_default_use_hmac", versions: .both, readAllowed: true, setting: .refused,
              why: "would switch the per-page HMAC off for every connection the process opens afterwards",
              instead: perDatabaseSettings),
        .init(name: "cipher_default_plaintext_header_size", versions: .sqlcipher4, readAllowed: true, setting: .refused,
              why: "would give every connection the process opens afterwards a plaintext header, which overwrites "
                + "the salt of existing files",
              instead: perDatabaseSettings),
        .init(name: "cipher_default_hmac_algorithm", versions: .sqlcipher4, readAllowed: true, setting: .refused,
              why: "would change the default HMAC for every connection the process opens afterwards",
              instead: perDatabaseSettings),
        .init(name: "cipher_default_kdf_algorithm", versions: .sqlcipher4, readAllowed: true, setting: .refused,
              why: "would change the default key derivation for every connection the process opens afterwards",
              instead: perDatabaseSettings),
        .init(name: "cipher_default_compatibility", versions: .sqlcipher4, readAllowed: true, setting: .refused,
              why: "would switch every connection the process opens afterwards to another version's format",
              instead: perDatabaseSettings),
        .init(name: "cipher_default_settings", versions: .sqlcipher4, readAllowed: true, setting: .allowed,
              why: "only lists the process-wide defaults (a value is ignored)", instead: ""),
        // Data, SQL and key material leaving the encrypted file.
        .init(name: "cipher_migrate", versions: .both, readAllowed: false, setting: .refused,
              why: "rewrites the open file in place to the newest format, with no copy to fall back to and no check "
                + "of the result",
              instead: "Use Database.upgradeFromSqlCipher3(path:key:), which migrates a copy, verifies it and then "
                + "replaces the file in one rename."),
        .init(name: "cipher_profile", versions: .both, readAllowed: true, setting: .onlyOff,
              why: "would write the text of every statement, with the values written into it, to a file or a "
                + "standard stream in the clear",
              instead: "Measure statements in your own code. PRAGMA cipher_profile = off is accepted."),
        .init(name: "cipher_log", versions: .sqlcipher4, readAllowed: true, setting: .onlyOff,
              why: "would send SQLCipher's log, which at debug level includes pragma values such as hexadecimal keys, "
                + "to a file or a standard stream, for the whole process",
              instead: "SqlCipherKit keeps it off on every connection; PRAGMA cipher_log = off is accepted."),
        .init(name: "cipher_store_pass", versions: .both, readAllowed: true, setting: .refused,
              why: "would keep the passphrase in the connection's memory for as long as it is open (deprecated in 4.x)",
              instead: "Nothing needs it: SqlCipherKit hands the key over once and zeroes its copy."),
        // Allowed: information, and settings that cannot weaken anything.
        .init(name: "cipher_version", versions: .both, readAllowed: true, setting: .allowed,
              why: "only reports the library's version (a value is ignored)", instead: ""),
        .init(name: "cipher_provider", versions: .both, readAllowed: true, setting: .allowed,
              why: "only reports the crypto provider (a value is ignored)", instead: ""),
        .init(name: "cipher_provider_version", versions: .both, readAllowed: true, setting: .allowed,
              why: "only reports the crypto provider's version (a value is ignored)", instead: ""),
        .init(name: "cipher_fips_status", versions: .both, readAllowed: true, setting: .allowed,
              why: "only reports whether the provider runs in FIPS mode (a value is ignored)", instead: ""),
        .init(name: "cipher_settings", versions: .sqlcipher4, readAllowed: true, setting: .allowed,
              why: "only lists the open database's settings (a value is ignored)", instead: ""),
        .init(name: "cipher_integrity_check", versions: .sqlcipher4, readAllowed: true, setting: .allowed,
              why: "only checks every page's HMAC (verifyIntegrity() runs it)", instead: ""),
        .init(name: "cipher_memory_security", versions: .sqlcipher4, readAllowed: true, setting: .allowed,
              why: "can only turn SQLCipher's wiping of its memory on (4.6.1 ignores off)", instead: ""),
        .init(name: "cipher_add_random", versions: .both, readAllowed: true, setting: .allowed,
              why: "only adds entropy to the crypto provider's random generator (its value is masked in trace events and errors)",
              instead: ""),
        .init(name: "cipher_log_level", versions: .sqlcipher4, readAllowed: true, setting: .allowed,
              why: "only changes the log's verbosity; the log itself stays off, since cipher_log accepts only off", instead: ""),
        .init(name: "cipher_log_source", versions: .sqlcipher4, readAllowed: true, setting: .allowed,
              why: "only filters the log's sources; the log itself stays off, since cipher_log accepts only off", instead: ""),
    ]

    private static let byName: [String: CipherPragmaRule] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The rule for `name` (any case), or nil for a pragma SQLCipher does not handle.
    static func rule(named name: String) -> CipherPragmaRule? {
        byName[name.lowercased()]
    }

    /// Whether the rule refuses the pragma with this value (nil when it is only read) on a database
    /// that is or is not encrypted.
    func refuses(value: String?, encrypted: Bool) -> Bool {
        guard let value else { return !readAllowed }
        switch setting {
        case .allowed: return false
        case .refused: return true
        case .onlyOff: return value.lowercased() != "off"
        case .refusedWhenEncrypted: return encrypted
        }
    }

    /// Whether the authorizer must refuse `PRAGMA <name> [= <value>]`. Called on every pragma a
    /// connection compiles: names outside SQLCipher's (almost all of them) cost a few byte
    /// comparisons and allocate nothing; a `cipher*` name not in ``all`` is refused.
    static func refuses(_ name: UnsafePointer<CChar>, value: UnsafePointer<CChar>?, encrypted: Bool) -> Bool {
        if strncasecmp(name, "cipher", 6) != 0 {
            guard value != nil else { return false }
            guard strcasecmp(name, "page_size") == 0 || strcasecmp(name, "key") == 0 || strcasecmp(name, "rekey") == 0
                || strcasecmp(name, "hexkey") == 0 || strcasecmp(name, "hexrekey") == 0 || strcasecmp(name, "textkey") == 0
                || strcasecmp(name, "textrekey") == 0 || strcasecmp(name, "kdf_iter") == 0
                || strcasecmp(name, "fast_kdf_iter") == 0 || strcasecmp(name, "rekey_cipher") == 0
                || strcasecmp(name, "rekey_kdf_iter") == 0 else { return false }
        }
        guard let rule = rule(named: String(cString: name)) else { return true }
        return rule.refuses(value: value.map { String(cString: $0) }, encrypted: encrypted)
    }

    /// The description of ``SqlCipherError/unsafePragma(name:value:sql:)`` for a pragma of this table.
    static func refusalDescription(name: String, value: String, sql: String) -> String {
        // Redacted again, for an error made by hand (the package's own already are).
        let sql = SQLRedaction.text(of: sql)
        let value = SQLRedaction.pragmaValue(name: name, value: value)
        guard let rule = rule(named: name) else {
            return "`\(sql)` uses PRAGMA \(name), which SqlCipherKit does not know; pragmas of SQLCipher that it does "
                + "not know are refused rather than guessed at, so the statement was not run. SqlCipherKit's "
                + "documentation (the article \"Raw SQL cannot undo the encryption\") lists the cipher pragmas that can be "
                + "read and set."
        }
        if rule.isKeyPragma {
            // The statement holds key material: keep it out of a text that ends up in logs.
            return "A statement that sets PRAGMA \(name) was not run (it is not repeated here because it holds key "
                + "material): it \(rule.why). \(rule.instead)"
        }
        let action = value.isEmpty ? "runs PRAGMA \(name)" : "sets PRAGMA \(name) = \(value)"
        let reading = rule.readAllowed && !value.isEmpty ? " Reading PRAGMA \(name) is allowed." : ""
        return "`\(sql)` \(action), which \(rule.why), so the statement was not run.\(reading) \(rule.instead)"
    }
}
