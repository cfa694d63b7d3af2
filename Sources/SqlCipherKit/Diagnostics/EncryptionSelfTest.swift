import Foundation

/// An end-to-end proof that the loaded library encrypts what ``Database`` writes.
///
/// The self-test creates a database in a fresh temporary folder through the real ``Database``
/// actor, with a random key, writes rows that hold a random marker, and checks on disk and with a
/// second key what a user relies on:
///
/// 1. ``Check/Name/createDatabase``: the database is created and the rows written (WAL mode, so the
///    `-wal` and `-shm` files exist while it is open);
/// 2. ``Check/Name/headerEncrypted``: after closing, the first 16 bytes are not `SQLite format 3\0`;
/// 3. ``Check/Name/markerAbsent``: the marker appears in none of the files (database, `-wal`,
///    `-shm`, `-journal`), scanned while the database is open and again after it is closed;
/// 4. ``Check/Name/pagesEncrypted``: every page of the database file (after closing) and every
///    frame of the `-wal` (while open) has bytes distributed like ciphertext, the same test
///    ``Database`` applies to every new encrypted file;
/// 5. ``Check/Name/keyReadsBack``: the same key opens the file and reads every row back;
/// 6. ``Check/Name/wrongKeyRefused``: another key fails with ``SqlCipherError/keyFailed(path:reason:)``;
/// 7. ``Check/Name/filesRemoved``: the folder and every file in it are removed.
///
/// ```swift
/// let result = await (try SqlCipherLibrary.shared).runEncryptionSelfTest()
/// if !result.passed { print(result.failure ?? "") }
/// ```
///
/// The sqlcipher-doctor runs it. It never touches any file outside the folder it creates.
public struct EncryptionSelfTest: Sendable, Equatable {
    /// The kind of random key the self-test uses.
    public enum KeyKind: String, Sendable, CaseIterable {
        /// A random 32-byte raw key: no key derivation, so the test is fast.
        case rawKey = "raw-key"
        /// A random passphrase: exercises SQLCipher's PBKDF2 in the crypto provider too (about
        /// 200 ms per open with SQLCipher 4's defaults).
        case passphrase
    }

    /// The outcome of one step.
    public struct Check: Sendable, Equatable {
        /// The steps, in the order they run. The raw values are the names the doctor writes.
        public enum Name: String, Sendable, CaseIterable {
            /// The database was created and the rows written.
            case createDatabase = "create_database"
            /// The first 16 bytes are not the plaintext SQLite header.
            case headerEncrypted = "header_encrypted"
            /// The marker is in none of the files.
            case markerAbsent = "marker_absent"
            /// Every page and `-wal` frame looks like ciphertext (a byte-distribution test).
            case pagesEncrypted = "pages_encrypted"
            /// The key reads every row back.
            case keyReadsBack = "key_reads_back"
            /// A wrong key fails with the wrong-key error.
            case wrongKeyRefused = "wrong_key_refused"
            /// The temporary files are gone.
            case filesRemoved = "files_removed"
        }

        /// Which step.
        public let name: Name
        /// Whether it held. A step that could not run because an earlier one failed did not pass.
        public let passed: Bool
        /// What was observed, in a sentence.
        public let detail: String
    }

    /// The number of rows the self-test writes.
    static let rowCount = 64

    /// The kind of key used.
    public let keyKind: KeyKind
    /// The temporary database path used (removed by the time the result is returned).
    public let databasePath: String
    /// One entry per ``Check/Name``, in order.
    public let checks: [Check]

    /// Whether every check passed.
    public var passed: Bool { checks.count == Check.Name.allCases.count && checks.allSatisfy(\.passed) }

    /// The check of that name.
    public func check(_ name: Check.Name) -> Check? { checks.first { $0.name == name } }

    /// The first failed check, as `name: detail`, or nil when all passed.
    public var failure: String? {
        checks.first { !$0.passed }.map { "\($0.name.rawValue): \($0.detail)" }
    }

    /// Runs the self-test with `library` (the process's one loaded library); the public entry is
    /// ``SqlCipherLibrary/runEncryptionSelfTest(keyKind:directory:)``.
    static func run(library: SqlCipherLibrary, keyKind: KeyKind = .passphrase,
                           directory: URL? = nil) async -> EncryptionSelfTest {
        let base = directory ?? FileManager.default.temporaryDirectory
        let folder = base.appendingPathComponent("sqlcipherkit-selftest-\(UUID().uuidString)")
        let path = folder.appendingPathComponent("selftest.db").path
        var runner = Runner(library: library, keyKind: keyKind, folder: folder, path: path)
        await runner.run()
        return EncryptionSelfTest(keyKind: keyKind, databasePath: path, checks: runner.checks)
    }
}

extension SqlCipherLibrary {
    /// Runs the ``EncryptionSelfTest`` with this library (the process's one loaded library, the
    /// one ``Database`` uses) and never throws: a failure is a failed check.
    ///
    /// - Parameters:
    ///   - keyKind: A random raw key or a random passphrase.
    ///   - directory: Where to create the temporary folder; the system's temporary directory
    ///     (`TMPDIR`) when nil.
    ///
    /// ```swift
    /// let result = try await SqlCipherLibrary.shared.runEncryptionSelfTest(keyKind: .rawKey)
    /// print(result.passed)
    /// ```
    public func runEncryptionSelfTest(keyKind: EncryptionSelfTest.KeyKind = .passphrase,
                                      directory: URL? = nil) async -> EncryptionSelfTest {
        await EncryptionSelfTest.run(library: self, keyKind: keyKind, directory: directory)
    }
}

/// The steps of one run, and the checks they record.
private struct Runner {
    let library: SqlCipherLibrary
    let keyKind: EncryptionSelfTest.KeyKind
    let folder: URL
    let path: String
    let marker = "SQLCIPHERKIT-SELFTEST-" + Runner.randomHex(16)
    let key: Data
    let wrongKey: Data
    var checks: [EncryptionSelfTest.Check] = []

    init(library: SqlCipherLibrary, keyKind: EncryptionSelfTest.KeyKind, folder: URL, path: String) {
        self.library = library
        self.keyKind = keyKind
        self.folder = folder
        self.path = path
        key = Runner.randomKey(keyKind)
        wrongKey = Runner.randomKey(keyKind)
    }

    /// The database file and the files SQLite may keep beside it.
    var files: [String] { [path, path + "-wal", path + "-shm", path + "-journal"] }

    mutating func run() async {
        defer { removeFolder() }
        let keyText = keyKind == .rawKey ? "a random raw key" : "a random passphrase"
        let foundWhileOpen: [String]
        let scannedWhileOpen: [String]
        var pages = CiphertextProof.Scan()
        var pageSize = 0
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            let db = try open(with: key)
            guard db.library === library else {
                throw SelfTestFailure("the database opened with \(db.library.path), not with \(library.path)")
            }
            try await db.execute("CREATE TABLE selftest(id INTEGER PRIMARY KEY, marker TEXT NOT NULL, payload BLOB)")
            try await db.execute("CREATE INDEX selftest_marker ON selftest(marker)")
            let marker = self.marker
            try await db.transaction { conn in
                for row in 1...EncryptionSelfTest.rowCount {
                    try conn.execute("INSERT INTO selftest(id, marker, payload) VALUES (?, ?, ?)",
                                     row, "\(marker)-\(row)", Data(marker.utf8))
                }
            }
            // Scan while the database is open: committed pages are in the -wal until a checkpoint.
            scannedWhileOpen = files.filter { FileManager.default.fileExists(atPath: $0) }
            foundWhileOpen = filesContainingMarker()
            // SQLCipher 4 answers page_size as cipher_page_size, as text.
            let answer = try await db.query("PRAGMA page_size").first?[0]
            if case .integer(let value)? = answer { pageSize = Int(value) }
            if case .text(let text)? = answer { pageSize = Int(text) ?? 0 }
            pages.scanWAL(FileManager.default.contents(atPath: path + "-wal") ?? Data(), file: "selftest.db-wal",
                          pageSize: pageSize, plaintextHeaderSize: 0)
            await db.close()
            record(.createDatabase, true, "created \(path) with \(keyText) through Database (journal mode "
                + "\(db.journalMode.rawValue)) and wrote \(EncryptionSelfTest.rowCount) rows holding the marker")
        } catch {
            record(.createDatabase, false, "could not create the test database in \(folder.path): \(error)")
            skipRemaining(after: .createDatabase)
            return
        }

        checkHeader()
        let foundAfterClose = filesContainingMarker()
        let found = Array(Set(foundWhileOpen + foundAfterClose)).sorted()
        if found.isEmpty {
            let names = scannedWhileOpen.map { DatabasePath.lastComponent(of: $0) }.joined(separator: ", ")
            record(.markerAbsent, true, "the marker is in none of the files: scanned \(names) while open, and the "
                + "database file again after closing")
        } else {
            record(.markerAbsent, false, "the marker is readable in \(found.joined(separator: ", ")): rows were written "
                + "in plaintext")
        }
        checkPages(&pages, pageSize: pageSize)
        await checkReadBack()
        checkWrongKey()
    }

    private func open(with key: Data) throws -> Database {
        switch keyKind {
        case .rawKey: return try Database(path: path, rawKey: key, journalMode: .wal)
        case .passphrase: return try Database(path: path, key: .passphrase(key), journalMode: .wal)
        }
    }

    private mutating func checkHeader() {
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else {
            record(.headerEncrypted, false, "the database file is missing or empty after closing")
            return
        }
        let first = [UInt8](data.prefix(16))
        let hex = first.map { String(format: "%02x", $0) }.joined()
        if first == FileHeader.sqliteMagic {
            record(.headerEncrypted, false, "the file starts with \"SQLite format 3\\0\": it was written in plaintext")
        } else {
            record(.headerEncrypted, true, "the first 16 bytes are \(hex), not \"SQLite format 3\\0\" (\(data.count) bytes)")
        }
    }

    /// Judges the database file's pages (the -wal's frames were judged while it was open).
    private mutating func checkPages(_ scan: inout CiphertextProof.Scan, pageSize: Int) {
        let frames = scan.pagesJudged
        scan.scanDatabase(FileManager.default.contents(atPath: path) ?? Data(), file: "selftest.db",
                          pageSize: pageSize, plaintextHeaderSize: 0)
        let limit = Int(CiphertextProof.chiSquareLimit)
        if let failure = scan.failure {
            record(.pagesEncrypted, false, failure)
        } else if scan.pagesJudged == frames {
            record(.pagesEncrypted, false, "the database file holds no page to judge after closing")
        } else {
            record(.pagesEncrypted, true, "all \(scan.pagesJudged - frames) pages of selftest.db and \(frames) frames of its "
                + "-wal look like ciphertext (largest byte chi-square \(Int(scan.largestChiSquare.rounded())), limit \(limit))")
        }
    }

    private mutating func checkReadBack() async {
        do {
            let db = try open(with: key)
            let rows = try await db.query("SELECT id, marker, payload FROM selftest ORDER BY id")
            await db.close()
            let expected = (1...EncryptionSelfTest.rowCount).map { "\(marker)-\($0)" }
            let markers = rows.map { $0.get("marker", as: String.self) ?? "" }
            let payloads = rows.map { $0.get("payload", as: Data.self) ?? Data() }
            if markers == expected && payloads.allSatisfy({ $0 == Data(marker.utf8) }) {
                record(.keyReadsBack, true, "the key reopened the file and read all \(rows.count) rows back unchanged")
            } else {
                record(.keyReadsBack, false, "the key reopened the file but read \(rows.count) rows that differ from the "
                    + "\(EncryptionSelfTest.rowCount) written")
            }
        } catch {
            record(.keyReadsBack, false, "the right key could not read the file back: \(error)")
        }
    }

    private mutating func checkWrongKey() {
        do {
            let db = try open(with: wrongKey)
            _ = db
            record(.wrongKeyRefused, false, "a wrong key opened the database: the file is not protected by its key")
        } catch let error as SqlCipherError {
            if case .keyFailed = error {
                record(.wrongKeyRefused, true, "a wrong key failed with SqlCipherError.keyFailed, as it should")
            } else {
                record(.wrongKeyRefused, false, "a wrong key failed with another error than keyFailed: \(error)")
            }
        } catch {
            record(.wrongKeyRefused, false, "a wrong key failed with an unexpected error: \(error)")
        }
    }

    /// The files that hold the marker's bytes right now.
    private func filesContainingMarker() -> [String] {
        let needle = Data(marker.utf8)
        return files.filter { file in
            guard let data = FileManager.default.contents(atPath: file) else { return false }
            return data.range(of: needle) != nil
        }
    }

    private mutating func removeFolder() {
        var failure: String?
        do {
            if FileManager.default.fileExists(atPath: folder.path) {
                try FileManager.default.removeItem(at: folder)
            }
        } catch {
            failure = "\(error)"
        }
        if FileManager.default.fileExists(atPath: folder.path) {
            record(.filesRemoved, false, "could not remove \(folder.path): \(failure ?? "it is still there")")
        } else {
            record(.filesRemoved, true, "removed \(folder.path) and every file in it")
        }
    }

    private mutating func skipRemaining(after name: EncryptionSelfTest.Check.Name) {
        for later in EncryptionSelfTest.Check.Name.allCases where later != name && later != .filesRemoved {
            record(later, false, "not run: \(name.rawValue) failed")
        }
    }

    private mutating func record(_ name: EncryptionSelfTest.Check.Name, _ passed: Bool, _ detail: String) {
        checks.append(EncryptionSelfTest.Check(name: name, passed: passed, detail: detail))
    }

    /// A random key of the given kind: 32 random bytes, or the UTF-8 bytes of a random passphrase.
    private static func randomKey(_ kind: EncryptionSelfTest.KeyKind) -> Data {
        switch kind {
        case .rawKey: return Data((0..<32).map { _ in UInt8.random(in: .min ... .max) })
        case .passphrase: return Data(("selftest-" + randomHex(16)).utf8)
        }
    }

    private static func randomHex(_ count: Int) -> String {
        (0..<count).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()
    }
}

/// A self-test step that failed for a reason of its own (not a thrown SqlCipherError).
private struct SelfTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
