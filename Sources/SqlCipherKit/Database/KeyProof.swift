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
/// key hides real damage. So the code only says that the read failed, and a second read of page 1
/// alone decides: `PRAGMA schema_version` reads the header of page 1 and nothing else (it does not
/// load the schema), on the same connection, with the same key and settings.
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

    /// After the first read on the keyed `connection` failed with `code`: `true` when page 1
    /// decrypts (the key is right; the failure lies behind page 1), `false` when it does not (a
    /// wrong key, other cipher settings, a damaged page 1, or no database), `nil` when nothing is
    /// proven (the code, or the second read's code, is about the surroundings).
    ///
    /// A pager left in its error state by the failed read returns to a clean state once no page is
    /// referenced (SQLite's pager_unlock), so the second read decrypts page 1 anew.
    static func keyDecryptsPageOne(_ connection: SQLiteConnection, afterFailure code: Int32) -> Bool? {
        if saysNothingAboutTheKey(code) { return nil }
        do {
            _ = try connection.asPackage { try connection.scalar("PRAGMA schema_version") }
            return true
        } catch SqlCipherError.sqlite(let second, _, _, _) {
            return saysNothingAboutTheKey(second) ? nil : false
        } catch {
            return nil
        }
    }
}
