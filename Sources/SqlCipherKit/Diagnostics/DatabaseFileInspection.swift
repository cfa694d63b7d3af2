/// What ``DatabaseFileInspector`` found out about one file, without a key.
///
/// ```swift
/// let report = DatabaseFileInspector.inspect("/data/store.db")
/// switch report.kind {
/// case .encrypted: print("encrypted (or random data): only the key can tell")
/// case .plaintext: print("plaintext SQLite, page size \(report.pageSize ?? 0)")
/// default: print(report.kind.rawValue, report.detail)
/// }
/// ```
public struct DatabaseFileInspection: Sendable, Equatable {
    /// The kinds of file the inspector tells apart. The raw values are the names the doctor
    /// prints and writes in its JSON.
    public enum Kind: String, Sendable, CaseIterable {
        /// Nothing exists at the path, or the path is a symbolic link that leads to no file (a
        /// dangling link, which ``DatabaseFileInspection/detail`` names with where it points: an
        /// opening would create a new database there).
        case missing
        /// A file of zero bytes: SQLite and SQLCipher treat it as a new, empty database.
        case empty
        /// A plaintext SQLite database: readable header, no space reserved for a cipher.
        case plaintext
        /// A SQLCipher database that keeps (a prefix of) its SQLite header readable
        /// (`PRAGMA cipher_plaintext_header_size`): the header reserves bytes per page for the IV
        /// and HMAC, and the rest of the first page is ciphertext.
        case plaintextHeader = "plaintext-header"
        /// No readable header, a whole number of pages and random-looking content: a SQLCipher
        /// database, or other random data. Only the right key can tell them apart.
        case encrypted
        /// Not a database; ``DatabaseFileInspection/detail`` gives the reason.
        case notADatabase = "not-a-database"
    }

    /// A file SQLite keeps beside a database (`-wal`, `-shm` or `-journal`).
    public struct CompanionFile: Sendable, Equatable {
        /// The suffix: `-wal`, `-shm` or `-journal`.
        public let suffix: String
        /// The companion's path.
        public let path: String
        /// Its size in bytes.
        public let size: Int
    }

    /// The path, as given.
    public let path: String
    /// What the file is.
    public let kind: Kind
    /// One or two sentences for a person: what the file is, the facts read and, for
    /// ``Kind/notADatabase``, why it is not a database.
    public let detail: String
    /// The size in bytes; nil for a missing file.
    public let size: Int?
    /// The page size, from a readable header or from the header of a `-wal` beside the file.
    public let pageSize: Int?
    /// The journal mode, from header bytes 18-19 of a readable header.
    public let journalMode: JournalMode?
    /// The bytes reserved at the end of each page (header byte 20), from a readable header.
    public let reservedBytes: Int?
    /// The database size in pages: from a readable header when SQLite's validity rule holds; for an
    /// ``Kind/encrypted`` file, whose header is ciphertext, the file size divided by
    /// ``assumedPageSize``. Nil when neither applies (or the size is not a whole number of pages).
    public let pageCount: Int?
    /// For an ``Kind/encrypted`` file: the page size ``pageCount`` assumes. The page size in the
    /// header of a `-wal` beside the file when there is one; else 4096 (SQLCipher 4's default) when
    /// the size is a multiple of it; else 1024 (SQLCipher 3's default). Nil for the other kinds,
    /// whose page size, when known, is ``pageSize``.
    public let assumedPageSize: Int?
    /// Whether ``pageCount`` is one of several readings: true for an encrypted file without a
    /// `-wal` whose size is a multiple of 4096, which is a multiple of 1024 as well (a SQLCipher 3
    /// file of four times as many pages). Only the key tells; `sqlcipher-doctor verify` reports
    /// the real count.
    public let pageCountIsAmbiguous: Bool
    /// The `-wal`, `-shm` and `-journal` files present beside the file.
    public let companionFiles: [CompanionFile]
}
