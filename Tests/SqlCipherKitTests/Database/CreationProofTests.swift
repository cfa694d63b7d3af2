import Foundation
import Testing
@testable import SqlCipherKit

/// The on-disk proof every new encrypted file gets (`DatabaseOpener.verifyCiphertextOnDisk`):
/// the real libraries pass it in every setting, and each of its rules refuses what it should.
/// The lying library's side is in `FakeLibraryTests`.
@Suite struct CreationProofTests {
    /// Settings the loaded library supports, each with a name for the messages.
    private static func settings() -> [(String, CipherSettings)] {
        var list: [(String, CipherSettings)] = [
            ("default", .default), ("1024-byte pages", CipherSettings(pageSize: 1024)),
            ("65536-byte pages", CipherSettings(pageSize: 65536)), ("sqlcipher3", .sqlcipher3),
        ]
        if isSQLCipher4() {
            list += [("header 32", CipherSettings(plaintextHeaderSize: 32)),
                     ("header 48, 1024-byte pages", CipherSettings(pageSize: 1024, plaintextHeaderSize: 48)),
                     ("header 96", CipherSettings(plaintextHeaderSize: 96)),
                     ("sqlcipher3 with header 32", CipherSettings(compatibility: 3, plaintextHeaderSize: 32))]
        }
        return list
    }

    @Test(arguments: JournalMode.allCases)
    func theRealLibraryPassesInEverySetting(mode: JournalMode) async throws {
        let folder = TemporaryDirectory()
        for (index, (name, cipher)) in Self.settings().enumerated() {
            let path = folder.path("db\(index).db"), salt = Data((0..<16).map { UInt8($0) })
            let open = { () throws -> Database in
                cipher.plaintextHeaderSize != nil
                    ? try Database(path: path, key: .rawKey(rawKey(), salt: salt), journalMode: mode, cipher: cipher)
                    : try Database(path: path, rawKey: rawKey(), journalMode: mode, cipher: cipher)
            }
            let db = try open()
            // The probe is gone: the new file's schema is empty, and the file is usable.
            #expect(try await db.query("SELECT count(*) FROM sqlite_master").first?.get(0, as: Int.self) == 0, "\(name)")
            try await db.execute("CREATE TABLE t(v)")
            try await db.execute("INSERT INTO t VALUES ('kept')")
            #expect(try await db.query("PRAGMA integrity_check").first?.get(0, as: String.self) == "ok", "\(name)")
            await db.close()
            let again = try open()
            #expect(try await again.query("SELECT v FROM t").first?.get("v", as: String.self) == "kept", "\(name)")
            #expect(try await again.query("SELECT name FROM sqlite_master").compactMap { $0.get(0, as: String.self) } == ["t"])
            await again.close()
            #expect(FileHeader(path: path)?.hasPlaintextMagic == (cipher.plaintextHeaderSize != nil), "\(name)")
        }
    }

    @Test func aPassphraseFilePassesToo() async throws {
        let folder = TemporaryDirectory()
        for mode in JournalMode.allCases {
            let db = try Database(path: folder.path("\(mode).db"), key: "a passphrase", journalMode: mode,
                                  cipher: CipherSettings(kdfIterations: 1000))
            #expect(try await db.query("SELECT count(*) FROM sqlite_master").first?.get(0, as: Int.self) == 0)
            await db.close()
        }
    }

    @Test func pagesOf512BytesAreRefusedBeforeAnythingIsWritten() throws {
        // Measured: SQLCipher 3.4.1 cannot write such a file, and 4.6.1 writes pages that are not
        // ciphertext (the proof caught it). SQLCipher's per-page IV and HMAC need more room.
        let folder = TemporaryDirectory()
        #expect {
            try Database(path: folder.path("small.db"), rawKey: rawKey(), cipher: CipherSettings(pageSize: 512))
        } throws: { error in
            guard case SqlCipherError.invalidQuery(let reason) = error else { return false }
            return reason.contains("1024") && reason.contains("IV and HMAC")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("small.db")))
    }

    /// A real encrypted file of many pages (rows of zeros and repeated text, the easiest content
    /// to spot in the clear), and, while still open, its `-wal`.
    private func bigEncryptedFile(_ folder: TemporaryDirectory, mode: JournalMode) async throws -> (main: Data, wal: Data, pageSize: Int) {
        let path = folder.path("big-\(mode).db")
        let db = try Database(path: path, rawKey: rawKey(), journalMode: mode)
        try await db.execute("CREATE TABLE t(a, b)")
        try await db.execute("""
            WITH RECURSIVE c(x) AS (VALUES(1) UNION ALL SELECT x + 1 FROM c WHERE x < 1500)
            INSERT INTO t SELECT zeroblob(500), 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' FROM c
            """)
        let wal = FileManager.default.contents(atPath: path + "-wal") ?? Data()
        await db.close()
        let pageSize = (try loadedLibrary()).cipherMajorVersion >= 4 ? 4096 : 1024
        return (try #require(FileManager.default.contents(atPath: path)), wal, pageSize)
    }

    @Test(arguments: JournalMode.allCases)
    func realCiphertextStaysFarBelowTheLimit(mode: JournalMode) async throws {
        // The limit is chosen so that real ciphertext never fails: measured here on every page.
        let folder = TemporaryDirectory()
        let (main, wal, pageSize) = try await bigEncryptedFile(folder, mode: mode)
        var scan = CiphertextProof.Scan()
        scan.scanDatabase(main, file: "main", pageSize: pageSize, plaintextHeaderSize: 0)
        scan.scanWAL(wal, file: "wal", pageSize: pageSize, plaintextHeaderSize: 0)
        #expect(scan.failure == nil, "\(scan.failure ?? "")")
        #expect(scan.pagesJudged > 200)
        // Random bytes: mean 255, standard deviation about 23; 450 is over 8 deviations out.
        #expect(scan.largestChiSquare < 450, "largest \(scan.largestChiSquare) over \(scan.pagesJudged) pages")
        if mode == .wal { #expect(!wal.isEmpty) }
    }

    @Test func everyPageOfAPlaintextFileFails() async throws {
        let folder = TemporaryDirectory()
        let path = folder.path("plain.db")
        let db = try Database(unencryptedPath: path, journalMode: .rollback)
        try await db.execute("CREATE TABLE t(a, b)")
        try await db.execute("""
            WITH RECURSIVE c(x) AS (VALUES(1) UNION ALL SELECT x + 1 FROM c WHERE x < 300)
            INSERT INTO t SELECT randomblob(8), 'row ' || x FROM c
            """)
        await db.close()
        let data = try #require(FileManager.default.contents(atPath: path))
        let pages = data.count / 4096
        var failed = 0
        for page in 0..<pages {
            var one = CiphertextProof.Scan()
            one.scanDatabase(data.subdata(in: page * 4096..<(page + 1) * 4096), file: "p", pageSize: 4096, plaintextHeaderSize: 0)
            if one.failure != nil { failed += 1 }
        }
        #expect(pages > 2)
        #expect(failed == pages)
    }

    @Test func chiSquareOfUniformAndConstantBytes() {
        let uniform = [UInt8]((0..<4096).map { UInt8($0 % 256) })
        #expect(uniform.withUnsafeBytes { CiphertextProof.chiSquare($0) } == 0)
        let zeros = [UInt8](repeating: 0, count: 512)
        #expect(zeros.withUnsafeBytes { CiphertextProof.chiSquare($0) } == 512 * 255)
    }

    // MARK: Each rule, on files made from a real encrypted one

    /// A real rollback-mode file of two pages (the schema and one table), and its page size.
    private func realTwoPageFile(_ folder: TemporaryDirectory) async throws -> (path: String, data: Data, pageSize: Int) {
        let path = folder.path("real.db")
        let db = try Database(path: path, rawKey: rawKey(), journalMode: .rollback)
        try await db.execute("CREATE TABLE t(v)")
        try await db.execute("INSERT INTO t VALUES (zeroblob(100))")
        await db.close()
        let data = try #require(FileManager.default.contents(atPath: path))
        let pageSize = (try loadedLibrary()).cipherMajorVersion >= 4 ? 4096 : 1024
        #expect(data.count == 2 * pageSize)
        return (path, data, pageSize)
    }

    private func prove(_ path: String, _ probe: DatabaseOpener.Probe, pageSize: Int, pageCount: Int = 2,
                       header: Int = 0) -> String? {
        do {
            try DatabaseOpener.proveCiphertext(path: path, probe: probe, pageSize: pageSize, pageCount: pageCount,
                                               plaintextHeaderSize: header)
            return nil
        } catch SqlCipherError.plaintextDetected(let failed, let reason) {
            #expect(failed == path)
            return reason
        } catch {
            return "unexpected \(error)"
        }
    }

    @Test func theRealFilePasses() async throws {
        let folder = TemporaryDirectory()
        let (path, _, pageSize) = try await realTwoPageFile(folder)
        #expect(prove(path, DatabaseOpener.Probe(), pageSize: pageSize) == nil)
    }

    @Test func aPlaintextPageAmongEncryptedOnesIsRefusedByNumber() async throws {
        let folder = TemporaryDirectory()
        let (path, data, pageSize) = try await realTwoPageFile(folder)
        // Page 2 replaced by a page of text and zeros, as SQLite writes a table page in the clear.
        var bytes = [UInt8](data)
        let text = Array("a row in the clear, ".utf8)
        for i in 0..<pageSize { bytes[pageSize + i] = i < 600 ? text[i % text.count] : 0 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let reason = try #require(prove(path, DatabaseOpener.Probe(), pageSize: pageSize))
        #expect(reason.contains("page 2 of \(path) does not look like ciphertext"), "\(reason)")
    }

    @Test func theProbeValueOnAnyPageIsRefused() async throws {
        let folder = TemporaryDirectory()
        let (path, data, pageSize) = try await realTwoPageFile(folder)
        let probe = DatabaseOpener.Probe()
        // Each form of the probe, alone, inside otherwise random bytes: blob, hex text, table name.
        for needle in probe.needles {
            var bytes = [UInt8](data)
            bytes.replaceSubrange(pageSize + 100..<pageSize + 100 + needle.count, with: needle)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let reason = try #require(prove(path, probe, pageSize: pageSize))
            #expect(reason.contains("readable in \(path)"), "\(reason)")
        }
        // In a -journal or -wal beside it, too.
        try data.write(to: URL(fileURLWithPath: path))
        for suffix in ["-journal", "-wal"] {
            try (Data(repeating: 7, count: 40) + probe.marker).write(to: URL(fileURLWithPath: path + suffix))
            let reason = try #require(prove(path, probe, pageSize: pageSize))
            #expect(reason.contains("readable in \(path + suffix)"), "\(reason)")
            try FileManager.default.removeItem(atPath: path + suffix)
        }
    }

    @Test func aPlaintextHeaderIsRefusedUnlessOneWasAskedFor() async throws {
        let folder = TemporaryDirectory()
        let (path, data, pageSize) = try await realTwoPageFile(folder)
        var bytes = [UInt8](data)
        bytes.replaceSubrange(0..<16, with: FileHeader.sqliteMagic)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(prove(path, DatabaseOpener.Probe(), pageSize: pageSize)?.contains("SQLite format 3") == true)
        // Asked for: the first 32 bytes are not judged, the rest of page 1 still is.
        #expect(prove(path, DatabaseOpener.Probe(), pageSize: pageSize, header: 32) == nil)
        for i in 32..<pageSize { bytes[i] = 0 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let reason = prove(path, DatabaseOpener.Probe(), pageSize: pageSize, header: 32)
        #expect(reason?.contains("page 1 of") == true, "\(reason ?? "passed")")
    }

    @Test func aPageTheLibraryCountsButNoFileHoldsIsRefused() async throws {
        // Positive proof: every page of the database must have been judged somewhere.
        let folder = TemporaryDirectory()
        let (path, _, pageSize) = try await realTwoPageFile(folder)
        let reason = prove(path, DatabaseOpener.Probe(), pageSize: pageSize, pageCount: 3)
        #expect(reason?.contains("page 3 is in neither the file nor its -wal") == true, "\(reason ?? "passed")")
        try Data().write(to: URL(fileURLWithPath: path))
        #expect(prove(path, DatabaseOpener.Probe(), pageSize: pageSize)?.contains("nothing was written") == true)
    }

    @Test func aWALFrameInTheClearIsRefused() async throws {
        // A -wal of one encrypted frame and one frame in the clear (page 2).
        let folder = TemporaryDirectory()
        let (path, data, pageSize) = try await realTwoPageFile(folder)
        var wal = Data(count: 32)
        wal[8] = UInt8(pageSize >> 24 & 0xFF); wal[9] = UInt8(pageSize >> 16 & 0xFF)
        wal[10] = UInt8(pageSize >> 8 & 0xFF); wal[11] = UInt8(pageSize & 0xFF)
        var frame1 = Data(count: 24); frame1[3] = 1
        var frame2 = Data(count: 24); frame2[3] = 2
        wal += frame1 + data.prefix(pageSize) + frame2 + Data(repeating: 0, count: pageSize)
        try wal.write(to: URL(fileURLWithPath: path + "-wal"))
        let reason = prove(path, DatabaseOpener.Probe(), pageSize: pageSize)
        #expect(reason?.contains("frame 2 (page 2) of \(path)-wal") == true, "\(reason ?? "passed")")
    }

    @Test func aRefusedCreationIsWipedAndRemoved() throws {
        let folder = TemporaryDirectory()
        let path = folder.path("w.db")
        for file in [path, path + "-wal", path + "-journal", path + "-shm"] {
            try Data(repeating: 0x41, count: 10_000).write(to: URL(fileURLWithPath: file))
        }
        // The database file was given (empty) by the caller; the companions were created.
        DatabaseOpener.wipeRefusedCreation(path: path, created: [path + "-wal", path + "-journal"])
        #expect(FileManager.default.contents(atPath: path) == Data())
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: path + "-journal"))
        // The -shm holds no content (it is SQLite's WAL index): the opener removes it with the
        // other files it created.
        #expect(FileManager.default.fileExists(atPath: path + "-shm"))
    }
}
