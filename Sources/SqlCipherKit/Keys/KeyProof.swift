import Foundation

/// Decides whether a key opened a file by what SQLCipher proved, never by one result code.
///
/// SQLCipher checks a key only when it reads the first page: page 1 decrypts with the right key
/// (its HMAC verifies and SQLite's header appears) and never with a wrong one. When that first
/// read fails, the result code depends on the release and the settings rather than on the cause:
/// 26 (`SQLITE_NOTADB`) and 1 were seen on 4.6.1, 7 ("out of memory") on 4.12.0 in WAL mode and 11
/// ("database disk image is malformed") on 4.19.0 for the same wrong key on a file with a
/// plaintext header; and 11 is also what the right key gets from a damaged later page. Reading
/// "malformed" as damage sends a user with a wrong key to restore a backup; reading it as a wrong
/// key hides real damage. So the code only says that the read failed, and reads of page 1 alone
/// decide, on the same connection with the same key and settings
/// (``keyDecryptsPageOne(_:path:keyed:afterFailure:)``).
///
/// A damaged page 1 with the right key fails like a wrong key: nothing but the HMAC tells them
/// apart, and it fails for both, so the error names both causes (``SqlCipherError/keyFailed(path:reason:)``).
enum KeyProof {
    /// The result codes that are about the file's surroundings (locks, permissions, the disk, an
    /// interrupt), not about the bytes that were read: after them nothing is proven about the key,
    /// and the error is reported as it is.
    static func saysNothingAboutTheKey(_ code: Int32) -> Bool {
        switch code & 0xff {
        case 3, 4, 5, 6, 8, 9, 10, 13, 14, 15, 23:
            // PERM, ABORT, BUSY, LOCKED, READONLY, INTERRUPT, IOERR, FULL, CANTOPEN, PROTOCOL, AUTH
            return true
        default:
            return false
        }
    }

    /// After the first read of `path` on `connection` (keyed, unless `keyed` is false) failed with
    /// `code`: `true` when page 1 decrypts, or without a key reads (the key is right; the failure
    /// lies behind page 1), `false` when it does not (a wrong key or salt, other cipher settings, a
    /// damaged page 1, or no database), `nil` when nothing is proven (the code, or a later read's
    /// code, is about the surroundings).
    ///
    /// What decides, as measured on 3.4.1, 4.6.1, 4.7.0, 4.9.0, 4.12.0 and 4.18.0:
    /// - `PRAGMA schema_version` reads page 1 alone. Without a plaintext header, a page 1 that does
    ///   not decrypt has no SQLite magic and the read fails. With one, the magic is in the clear and
    ///   the read can succeed on a page whose encrypted part SQLCipher zeroed after its HMAC failed:
    ///   the cookie is then 0. (A cookie of 0 after a failed first read means page 1 itself is
    ///   unreadable in any case: an empty schema lives on page 1 alone.)
    /// - From 4.7.0 on (not 4.6.1) a codec error sticks to the connection: after the failed
    ///   first read every read fails (7, "out of memory"), with the right key too. So a failed second read proves
    ///   nothing there; `PRAGMA cipher_integrity_check` (4.2+) still runs on such a connection and
    ///   checks each page's HMAC on its own: a row for page 1 means page 1 does not decrypt, none
    ///   means it does. It reads the whole file, once, and only after a failed opening.
    /// - SQLCipher 3 has no such check, and no sticky error: the second read decides alone. On a
    ///   truncated file it fails with SQLITE_CORRUPT although page 1 decrypted (SQLite compares the
    ///   header's page count with the file), so that failure counts as "decrypts".
    static func keyDecryptsPageOne(_ connection: SQLiteConnection, path: String, keyed: Bool = true,
                                   afterFailure code: Int32) -> Bool? {
        if saysNothingAboutTheKey(code) { return nil }
        if keyed, cookieProvesNothing(connection) {
            return schemaReads(connection).map { $0 && firstBlockDecrypts(connection) }
        }
        let readable: Bool
        do {
            let value = try connection.asPackage { try connection.scalar("PRAGMA schema_version") }
            readable = (Int64.fromDatabaseValue(value ?? .null) ?? 0) != 0
        } catch SqlCipherError.sqlite(let second, _, _, _) {
            if saysNothingAboutTheKey(second) { return nil }
            // SQLITE_CORRUPT from a read of page 1 alone is SQLite judging a header it could read
            // (e.g. more pages than the file holds: a truncated file), which needs page 1 decrypted;
            // a page 1 that does not decrypt fails its magic check first (SQLITE_NOTADB).
            readable = second & 0xFF == 11
        } catch {
            readable = false
        }
        // Without a key there is no HMAC to check: cipher_integrity_check has nothing to say. Nor
        // with a key whose settings turned the HMAC off (`CipherSettings.usesHMAC`): it answers
        // "HMAC is not enabled", which names no page, and the read above decides alone (without an
        // HMAC, SQLCipher never fails a page, so no codec error sticks to the connection either).
        guard keyed, (try? SqlCipherLibrary.shared)?.cipherVersionIsAtLeast(4, 2) == true,
              usesHMAC(connection) else { return readable }
        do {
            let problems = try connection.asPackage { try connection.query("PRAGMA cipher_integrity_check") }
                .compactMap { $0.get(0, as: String.self) }
            if problems.contains(where: namesPageOne) { return false }
            // No row for page 1: it passed its HMAC check, unless the main file has no page 1 yet
            // (everything still in the -wal), where only the second read can speak.
            let mainFileEmpty = (FileHeader(path: path)?.fileSize ?? 0) == 0
            return problems.isEmpty && mainFileEmpty ? readable : true
        } catch SqlCipherError.sqlite(let third, _, _, _) where saysNothingAboutTheKey(third) {
            return nil
        } catch {
            return readable
        }
    }

    /// Whether the schema cookie (`PRAGMA schema_version`) that a keyed `connection` reads proves
    /// nothing about its key: it reads pages without an HMAC (`CipherSettings.usesHMAC` false)
    /// through a plaintext header. Nothing zeroes a page that fails to decrypt (there is no HMAC to
    /// fail) and SQLite's header before it is in the clear, so any key or salt reads bytes 40-43 as
    /// some cookie other than 0 (measured on 4.6.1: 60 wrong keys of 60). ``schemaReads(_:)`` decides.
    static func cookieProvesNothing(_ connection: SQLiteConnection) -> Bool {
        !usesHMAC(connection) && hasPlaintextHeader(connection)
    }

    /// Whether the schema reads on `connection`, for a page 1 whose cookie proves nothing
    /// (``cookieProvesNothing(_:)``). A wrong key fails it ("unsupported file format", SQLite's
    /// check of byte 44, or a malformed b-tree at byte 100), as a damaged page 1 does with the right
    /// key: the error names both. Nil when the read's code is about the surroundings.
    static func schemaReads(_ connection: SQLiteConnection) -> Bool? {
        do {
            _ = try connection.asPackage { try connection.scalar("SELECT count(*) FROM sqlite_master") }
            return true
        } catch SqlCipherError.sqlite(let code, _, _, _) {
            return saysNothingAboutTheKey(code) ? nil : false
        } catch {
            return false
        }
    }

    /// After a read of the schema succeeded on `connection`: false when it reads pages without an
    /// HMAC (`CipherSettings.usesHMAC` false) through a plaintext header and page 1's first
    /// encrypted block did not decrypt.
    ///
    /// Without an HMAC nothing checks that block. A file written with page HMACs, read with the
    /// right key but without them, takes the last 16 bytes of each page's HMAC for its IV: in CBC
    /// mode only the first block of each page then decrypts to other bytes, and the rest reads
    /// right. On page 1 with a plaintext header that block is bytes 32-47 (the freelist, the schema
    /// cookie and format), which SQLite checks by the format's low byte alone: measured on 4.6.1,
    /// 5 such files of 600 read their schema, and the first write rewrote page 1 without its HMAC,
    /// so that the file no longer opened with its own settings. The freelist's length (bytes 36-39)
    /// is then any 32-bit number; a real one is shorter than the file. Without a plaintext header
    /// the block holds the page size and SQLite's fixed bytes 21-23, and the read fails by itself:
    /// the check is not made there, where it would only refuse a file whose freelist count alone
    /// was damaged (readable before).
    static func firstBlockDecrypts(_ connection: SQLiteConnection) -> Bool {
        guard cookieProvesNothing(connection) else { return true }
        guard let free = try? connection.asPackage({ try connection.integer("PRAGMA freelist_count") }),
              let pages = try? connection.asPackage({ try connection.integer("PRAGMA page_count") }) else { return true }
        return free >= 0 && free < max(pages, 1)
    }

    /// Whether `connection` has a plaintext header (`PRAGMA cipher_plaintext_header_size`; SQLCipher
    /// 3 has none and answers nothing).
    private static func hasPlaintextHeader(_ connection: SQLiteConnection) -> Bool {
        (codecSetting(connection, "cipher_plaintext_header_size") ?? 0) > 0
    }

    /// Whether `connection` checks page HMACs (`PRAGMA cipher_use_hmac`). True when it cannot
    /// tell: then the HMAC check runs as before.
    private static func usesHMAC(_ connection: SQLiteConnection) -> Bool {
        codecSetting(connection, "cipher_use_hmac") != 0
    }

    /// A numeric codec setting of `connection`, which SQLCipher answers from its codec without
    /// reading the file: 4.x answers with an integer, 3.4.1 with text. Nil when it answers nothing.
    private static func codecSetting(_ connection: SQLiteConnection, _ pragma: String) -> Int64? {
        guard let value = try? connection.asPackage({ try connection.scalar("PRAGMA \(pragma)") }) else { return nil }
        return Int64.fromDatabaseValue(value) ?? String.fromDatabaseValue(value).flatMap { Int64($0) }
    }

    /// Whether a `cipher_integrity_check` row is about page 1 ("HMAC verification failed for page
    /// 1"), not page 10 or 123.
    static func namesPageOne(_ row: String) -> Bool {
        var rest = Substring(row)
        while let found = rest.range(of: "page 1") {
            rest = rest[found.upperBound...]
            if rest.first?.isNumber != true { return true }
        }
        return false
    }
}
