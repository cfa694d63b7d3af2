/// What ``DatabaseVerifier`` found out about one file with a key: whether the key opens it, with
/// which settings, and whether every page and the SQLite structure are intact.
///
/// Package API: `sqlcipher-doctor verify` prints it. An application checks an open database
/// with ``Database/verifyIntegrity(progress:)`` instead.
package struct DatabaseVerification: Sendable {
    /// The verdict for one file.
    package enum Status: String, Sendable, CaseIterable {
        /// The key opened the file and every check that ran passed.
        case verified
        /// The key opened the file (or was proven right by the pages it decrypts), but a check
        /// found damage.
        case damaged
        /// No settings set opened the file with the key.
        case keyRejected = "key-rejected"
        /// Nothing exists at the path.
        case missing
        /// A plaintext SQLite database: there is nothing for a key to open.
        case notEncrypted = "not-encrypted"
        /// The file could not be verified: not a database, empty, a plaintext-header file, changed
        /// while it was read, or an error that says nothing about the key.
        case notVerifiable = "not-verifiable"
    }

    /// One settings set tried, and what SQLCipher answered.
    package struct Attempt: Sendable, Equatable {
        /// ``DatabaseVerifier/SettingsCandidate/name`` of the set.
        package let settings: String
        /// Whether the key decrypted page 1 with these settings.
        package let accepted: Bool
        /// SQLCipher's answer, e.g. `opened`, or `file is not a database (SQLite error 26)`.
        package let result: String
    }

    /// The result of one check.
    package struct Check: Sendable, Equatable {
        /// Whether the check passed, found problems, or did not run.
        package enum Status: String, Sendable {
            case pass, fail, skipped
        }

        /// Whether the check passed, found problems, or did not run.
        package let status: Status
        /// What the check reported, one line each; empty when it passed or did not run.
        package let problems: [String]
        /// Why the check did not run, or what a pass covers; nil otherwise.
        package let reason: String?

        static func skipped(_ reason: String) -> Check { Check(status: .skipped, problems: [], reason: reason) }
    }

    /// A table of the schema and its row count.
    package struct Table: Sendable, Equatable {
        /// The table's name.
        package let name: String
        /// `count(*)`, or nil when the table could not be read.
        package let rows: Int?
        /// Why the table could not be read.
        package let error: String?
    }

    /// How the file was read.
    package enum Access: String, Sendable {
        /// The file itself, opened read-only as immutable: no lock, no journal or WAL, nothing
        /// created or written. Used when no `-wal` frames or hot `-journal` exist.
        case inPlace = "in-place"
        /// A private copy of the file with its `-wal` and `-journal`, in a new folder under the
        /// temporary directory, removed afterwards: SQLite may recover the WAL or roll back the
        /// journal in the copy, never in the original.
        case snapshot
    }

    /// The path, as given.
    package let path: String
    /// The verdict.
    package let status: Status
    /// What the file is, read without the key.
    package let inspection: DatabaseFileInspection
    /// Whether the key opens the file; nil when the file was never tried (missing, plaintext ...).
    package let keyAccepted: Bool?
    /// The settings set that opened the file.
    package let settings: DatabaseVerifier.SettingsCandidate?
    /// Every settings set tried, in order.
    package let attempts: [Attempt]
    /// How the file was read, when it was opened.
    package let access: Access?
    /// `PRAGMA page_size` once opened.
    package let pageSize: Int?
    /// `PRAGMA page_count` once opened.
    package let pageCount: Int?
    /// `PRAGMA user_version` once opened.
    package let userVersion: Int?
    /// `PRAGMA cipher_integrity_check`: every page's HMAC (SQLCipher 4.2 and later).
    package let cipherIntegrity: Check
    /// `PRAGMA integrity_check`: SQLite's structure.
    package let integrity: Check
    /// The tables of the schema (`sqlite_*` tables left out), by name, with their row counts.
    package let tables: [Table]
    /// How many indexes, views and triggers the schema has.
    package let indexCount: Int?, viewCount: Int?, triggerCount: Int?
    /// Remarks that are not failures.
    package let notes: [String]
    /// What went wrong and what to do; nil when ``status`` is ``Status/verified``.
    package let error: String?

    /// Whether the file was verified.
    package var ok: Bool { status == .verified }
}
