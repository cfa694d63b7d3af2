import CSqlCipherBridge
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Proves that a key opens an encrypted database file and that the file is intact, without
/// changing a byte of it or creating a file beside it: the engine of `sqlcipher-doctor verify`.
///
/// Package API rather than public: an application opens its database with ``Database`` and checks
/// it with ``Database/verifyIntegrity(progress:)``; this is the operator's view of a file at rest.
///
/// Why the file is opened the way it is (measured with both libraries, docs/doctor.md):
/// - `SQLITE_OPEN_READONLY` (or `mode=ro`) is not enough: on a database in WAL mode SQLite creates
///   the `-shm` (and a `-wal` when there is none) even for a read-only connection, and writes to an
///   existing `-shm`. With a hot journal it refuses to read (`SQLITE_READONLY_ROLLBACK`).
/// - `immutable=1` reads the main file alone: no lock, no journal, no WAL, nothing created. That is
///   the whole database exactly when no `-wal` holds frames and no hot `-journal` exists, so the
///   verifier reads the file in place only then.
/// - Otherwise it copies the file with its `-wal` and `-journal` into a new private folder and opens
///   the copy: SQLite recovers the WAL or rolls back the journal there, as the next program to open
///   the original would, and the original is only ever read with `read(2)`. The copy is of bytes,
///   never of links, and a `-wal` only as far as its valid frames (``SnapshotFiles``); a symlinked
///   path is resolved to its target first, and a named pipe, socket or device among the files is
///   refused before anything is opened.
/// - The key check itself always reads the original's page 1 in place (immutable), so settings
///   that do not fit never get to replay a journal, not even into the copy.
package enum DatabaseVerifier {
    /// A settings set to try when opening a file with a key.
    package struct SettingsCandidate: Sendable, Equatable {
        /// A short name: `sqlcipher4`, `sqlcipher3` or `custom`.
        package let name: String
        /// The settings, as ``Database`` takes them.
        package let settings: CipherSettings
        /// What the settings are, for a person.
        package let summary: String
        /// How to open the file with SqlCipherKit, e.g. `CipherSettings.sqlcipher3`.
        package let swift: String
        /// Which SQLCipher versions read a file with these settings, and how.
        package let readableBy: String
        /// The page size these settings read, for counting the pages of the file.
        package let pageSize: Int
        /// The pragmas run after the key on the loaded library.
        package let pragmas: [String]
    }

    /// The settings sets to try on `library`, in order: the library's defaults first, then, on
    /// SQLCipher 4, SQLCipher 3's (`cipher_compatibility = 3`). With `given` settings, only those.
    /// SQLCipher 3.4.1 knows only SQLCipher 3's format (it has no SHA-512), so it tries only that.
    ///
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` or ``SqlCipherError/unsupported(feature:requires:loaded:)``
    ///   for given settings the library cannot apply.
    package static func candidates(for library: SqlCipherLibrary, given: CipherSettings? = nil) throws -> [SettingsCandidate] {
        let v4 = library.cipherMajorVersion >= 4
        if let given {
            let compatibility = given.compatibility ?? (v4 ? 4 : 3)
            let pageSize = given.pageSize ?? (compatibility >= 4 ? 4096 : 1024)
            // Each setting given, as the pragma SQLCipher runs and as the Swift argument that sets it.
            let fields: [(pragma: String, swift: String)] = [
                given.compatibility.map { ("cipher_compatibility = \($0)", "compatibility: \($0)") },
                given.pageSize.map { ("cipher_page_size = \($0)", "pageSize: \($0)") },
                given.kdfIterations.map { ("kdf_iter = \($0)", "kdfIterations: \($0)") },
                given.kdfAlgorithm.map { ("cipher_kdf_algorithm = \($0.kdfPragmaValue)", "kdfAlgorithm: .\($0)") },
                given.hmacAlgorithm.map { ("cipher_hmac_algorithm = \($0.hmacPragmaValue)", "hmacAlgorithm: .\($0)") },
                given.plaintextHeaderSize.map { ("cipher_plaintext_header_size = \($0)", "plaintextHeaderSize: \($0)") },
                given.usesHMAC.map { ("cipher_use_hmac = \($0 ? "ON" : "OFF")", "usesHMAC: \($0)") },
            ].compactMap { $0 }
            let parts = fields.map(\.pragma), swiftArguments = fields.map(\.swift)
            let base = compatibility >= 4 ? "SQLCipher 4" : "SQLCipher 3"
            return [SettingsCandidate(
                name: "custom", settings: given,
                summary: "the settings given (\(parts.joined(separator: ", "))) over \(base)'s defaults",
                swift: "CipherSettings(\(swiftArguments.joined(separator: ", ")))",
                readableBy: "\(base == "SQLCipher 4" || given.kdfAlgorithm != nil || given.hmacAlgorithm != nil || (given.plaintextHeaderSize ?? 0) > 0 ? "SQLCipher 4.0 or later" : "SQLCipher 3.x or 4.x (4.x with cipher_compatibility = 3)"), "
                    + "with these settings given after the key every time the file is opened (SQLCipher stores none of "
                    + "them in the file)",
                pageSize: pageSize, pragmas: try given.pragmas(for: library))]
        }
        let sqlcipher3 = SettingsCandidate(
            name: "sqlcipher3", settings: v4 ? .sqlcipher3 : .default,
            summary: "SQLCipher 3 defaults: 1024-byte pages, PBKDF2-HMAC-SHA1 with 64,000 iterations, HMAC-SHA1"
                + (v4 ? " (PRAGMA cipher_compatibility = 3 on SQLCipher 4)" : ""),
            swift: v4 ? "CipherSettings.sqlcipher3" : "CipherSettings.default on SQLCipher 3, CipherSettings.sqlcipher3 on either version",
            readableBy: "SQLCipher 3.x with its defaults, and SQLCipher 4.x with PRAGMA cipher_compatibility = 3 right "
                + "after the key (CipherSettings.sqlcipher3), or after an upgrade to SQLCipher 4's format "
                + "(Database.upgradeFromSqlCipher3)",
            pageSize: 1024, pragmas: try (v4 ? CipherSettings.sqlcipher3 : .default).pragmas(for: library))
        guard v4 else { return [sqlcipher3] }
        let sqlcipher4 = SettingsCandidate(
            name: "sqlcipher4", settings: .default,
            summary: "SQLCipher 4 defaults: 4096-byte pages, PBKDF2-HMAC-SHA512 with 256,000 iterations, HMAC-SHA512",
            swift: "CipherSettings.default (or CipherSettings.sqlcipher4)",
            readableBy: "SQLCipher 4.0 or later with its default settings; SQLCipher 3 cannot read it (it has no SHA-512)",
            pageSize: 4096, pragmas: [])
        return [sqlcipher4, sqlcipher3]
    }

    /// Verifies the file at `path` with `key`, trying `candidates` in order (from
    /// ``candidates(for:given:)``). Never throws: every failure is part of the result.
    /// `progress` hears the checks of a file that opened (HMAC check where the library has it,
    /// `integrity_check`, schema summary), counted in ``DatabaseProgress/Unit/checks``.
    /// `salt` is the salt of a file with a plaintext header, which does not store it; `candidates`
    /// then name the header's size (``CipherSettings/plaintextHeaderSize``).
    package static func verify(_ path: String, key: DatabaseKey, salt: Data? = nil, candidates: [SettingsCandidate],
                               library: SqlCipherLibrary,
                               progress: (@Sendable (DatabaseProgress) -> Void)? = nil) -> DatabaseVerification {
        // A `file:` URI with a key is refused by the inspection, and shown with the key masked.
        var run = VerificationRun(path: DatabasePath.keyURI(path) ?? path, target: SnapshotFiles.resolvedPath(path),
                                  inspection: DatabaseFileInspector.inspect(path), library: library)
        run.progress = progress
        run.verify(key: key, salt: salt, candidates: candidates)
        return run.result()
    }
}

// MARK: - Reading a file without changing it

extension DatabaseVerifier {
    /// The `-wal` and `-journal` beside a database, as far as they decide how it must be read.
    struct Companions {
        /// A `-wal` whose valid part is longer than its 32-byte header holds frames that may not
        /// be in the main file (frames after the first whose salts do not match are never read).
        let walHasFrames: Bool
        /// A `-journal` SQLite would replay: present, not empty, first byte not zero (the rule of
        /// pager.c's hasHotJournal; `journal_mode = PERSIST` zeroes the header of an unused journal).
        let journalIsHot: Bool
        /// How many bytes a copy of the file, `-wal` and `-journal` takes.
        let sizes: [Int]

        /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` when the file, its `-wal` or its
        ///   `-journal` is not a regular file.
        init(_ path: String) throws {
            let sources = try SnapshotFiles.sources(of: path)
            walHasFrames = (sources["-wal"]?.copyLength ?? 0) > 32
            var hot = false
            if let journal = sources["-journal"], journal.size > 0,
               let (descriptor, _) = try SnapshotFiles.openRegular(journal.path, database: path) {
                var first: UInt8 = 0
                hot = pread(descriptor, &first, 1, 0) == 1 && first != 0
                OpenFiles.release(descriptor)
            }
            journalIsHot = hot
            sizes = sources.values.map(\.copyLength)
        }
    }

    /// Identity, size and modification time of a file and its `-wal` and `-journal`: a change means
    /// another program wrote to the database while it was being verified. (The `-shm` is left out: a
    /// reader changes it too, and it holds no data.)
    struct Fingerprint: Equatable {
        private let files: [[Int]]

        init(_ path: String) {
            files = ["", "-wal", "-journal"].map { suffix in
                var info = stat()
                guard stat(path + suffix, &info) == 0 else { return [] }
                #if canImport(Darwin)
                let modified = [Int(info.st_mtimespec.tv_sec), Int(info.st_mtimespec.tv_nsec)]
                #else
                let modified = [Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
                #endif
                return [Int(info.st_dev), Int(info.st_ino), Int(info.st_size)] + modified
            }
        }
    }

    /// Opens `path` with `key` and the candidate's settings. In place: read-only and immutable (no
    /// lock, no journal or WAL, nothing created). Otherwise (a private copy): read-write.
    static func open(_ path: String, key: DatabaseKey, candidate: SettingsCandidate,
                     library: SqlCipherLibrary, inPlace: Bool) throws -> SQLiteConnection {
        let readOnly: Int32 = 0x0000_0001
        let connection = inPlace
            ? try SQLiteConnection(path: immutableURI(path), flags: readOnly | SQLiteConnection.uri | SQLiteConnection.noMutex)
            : try SQLiteConnection(path: path, flags: SQLiteConnection.readWrite | SQLiteConnection.noMutex)
        do {
            let material = try key.material()
            try connection.applyKey(material)
            // The package's own settings pragmas, which the raw-SQL guard refuses from users.
            try connection.asPackage {
                if library.cipherVersionIsAtLeast(4, 5, 1) { try connection.execute("PRAGMA cipher_log = off") }
                for pragma in candidate.pragmas { try connection.execute(pragma) }
            }
            return connection
        } catch {
            connection.close()
            throw error
        }
    }

    /// `file:` URI of `path` with `immutable=1` (https://sqlite.org/uri.html): an empty authority,
    /// then the absolute path with every byte outside `[A-Za-z0-9/._~-]` percent-encoded, so that
    /// `?`, `#` and `%` in a file name stay part of it.
    static func immutableURI(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let safe = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._~-".utf8)
        var encoded = ""
        for byte in absolute.utf8 {
            if safe.contains(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += String(format: "%%%02X", byte)
            }
        }
        return "file://" + encoded + "?immutable=1"
    }

    /// Copies the bytes of the file, its valid `-wal` and its `-journal` (not the `-shm`, which
    /// SQLite rebuilds from the WAL) into a new folder that only this user can enter, through
    /// ``SnapshotFiles``; returns the folder.
    static func makeSnapshot(of path: String, companions: Companions) throws -> String {
        let base = NSTemporaryDirectory()
        let needed = companions.sizes.reduce(0, +)
        var info = statvfs()
        if statvfs(base, &info) == 0 {
            let free = Int(info.f_bavail) * Int(info.f_frsize)
            if free < needed + 1 << 20 {
                throw SqlCipherError.cannotOpen(path: path, reason: "the temporary folder \(base) has \(free) bytes "
                    + "free, and a copy needs \(needed); set TMPDIR to a folder with more space")
            }
        }
        let directory = try SnapshotFiles.makePrivateDirectory(prefix: "sqlcipher-doctor-verify", for: path)
        do {
            try SnapshotFiles.copy(path, into: directory)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        return directory
    }
}
