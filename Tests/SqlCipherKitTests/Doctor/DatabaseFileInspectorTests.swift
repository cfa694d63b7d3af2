import Foundation
import Testing
@testable import SqlCipherKit

/// `DatabaseFileInspector` on real files: the fixtures made by the real CLIs, files made here by
/// SqlCipherKit and by libsqlite3, and hand-made non-databases.
@Suite struct DatabaseFileInspectorTests {
    private func fixture(_ name: String) -> String { Linking.fixtures.appendingPathComponent(name).path }

    private func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    private func randomBytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: .min ... .max) } }

    @Test func missingAndEmpty() throws {
        let directory = TemporaryDirectory()
        let missing = DatabaseFileInspector.inspect(directory.path("nothing.db"))
        #expect(missing.kind == .missing)
        #expect(missing.size == nil)
        let empty = directory.path("empty.db")
        try write([], to: empty)
        let report = DatabaseFileInspector.inspect(empty)
        #expect(report.kind == .empty)
        #expect(report.size == 0)
        #expect(report.detail.contains("new, empty database"))
    }

    @Test func missingWithLeftoverCompanions() throws {
        let directory = TemporaryDirectory()
        try write([1, 2, 3], to: directory.path("gone.db-wal"))
        let report = DatabaseFileInspector.inspect(directory.path("gone.db"))
        #expect(report.kind == .missing)
        #expect(report.companionFiles.map(\.suffix) == ["-wal"])
        #expect(report.detail.contains("-wal"))
    }

    /// A dangling symbolic link is not "no file at this path": an opening follows it and creates a
    /// database where it points. The report used to say only "no file at this path".
    @Test func aDanglingLinkIsNamedWithWhereItPoints() throws {
        let directory = TemporaryDirectory()
        let link = directory.path("store.db")
        try #require(symlink("elsewhere/real.db", link) == 0)
        let report = DatabaseFileInspector.inspect(link)
        #expect(report.kind == .missing)
        #expect(report.detail.contains("dangling link"), "\(report.detail)")
        #expect(report.detail.contains("elsewhere/real.db"), "\(report.detail)")
    }

    /// Through a link, the companions are those beside the file it leads to, where SQLite keeps
    /// them (the package resolves the path before every opening); they were looked for beside the
    /// link.
    @Test func companionsAreFoundBesideTheLinkedFile() throws {
        let directory = TemporaryDirectory()
        let folder = directory.path("data")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try write([UInt8](repeating: 7, count: 4096), to: folder + "/real.db")
        try write([1, 2, 3], to: folder + "/real.db-journal")
        let link = directory.path("store.db")
        try #require(symlink("data/real.db", link) == 0)
        let report = DatabaseFileInspector.inspect(link)
        #expect(report.companionFiles.map(\.suffix) == ["-journal"])
        #expect(report.companionFiles.first?.path.hasSuffix("/data/real.db-journal") == true)
    }

    /// A file named like a companion that SQLite did not write (here other databases called
    /// `x.db-wal` and `x.db-journal`) was reported as the file's own ("they belong to it, keep them
    /// together"); SQLite deletes such a file at the next opening or write of `x.db`. It is now
    /// named as what it is, and a real companion is still the file's own.
    @Test func aFileNamedLikeACompanionIsNotCalledTheDatabasesOwn() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path("x.db")
        for name in ["x.db", "other.db", "third.db"] {
            let db = try Database(path: directory.path(name), rawKey: rawKey(), journalMode: .rollback)
            try await db.execute("CREATE TABLE t(x)")
            await db.close()
        }
        try FileManager.default.moveItem(atPath: directory.path("other.db"), toPath: path + "-wal")
        try FileManager.default.moveItem(atPath: directory.path("third.db"), toPath: path + "-journal")
        let report = DatabaseFileInspector.inspect(path)
        #expect(report.kind == .encrypted)
        #expect(report.detail.contains("its -wal (") && report.detail.contains("bytes) is not a -wal file SQLite wrote"), "\(report.detail)")
        #expect(report.detail.contains("its -journal (") && report.detail.contains("bytes) is not a -journal file SQLite wrote"), "\(report.detail)")
        #expect(!report.detail.contains("keep them together"), "\(report.detail)")
        // A live -wal and -shm are the file's own.
        try FileManager.default.removeItem(atPath: path + "-wal")
        try FileManager.default.removeItem(atPath: path + "-journal")
        let live = try Database(path: path, rawKey: rawKey())
        try await live.execute("PRAGMA journal_mode = WAL")
        try await live.execute("INSERT INTO t VALUES (1)")
        let withLive = DatabaseFileInspector.inspect(path)
        #expect(withLive.detail.contains("keep them together") && !withLive.detail.contains("SQLite wrote"), "\(withLive.detail)")
        await live.close()
    }

    @Test func plaintextFixtureFromTheSqlite3CLI() {
        let report = DatabaseFileInspector.inspect(fixture("plaintext.db"))
        #expect(report.kind == .plaintext)
        #expect(report.pageSize == 4096)
        #expect(report.journalMode == .rollback)
        #expect(report.reservedBytes == 0)
        #expect(report.pageCount == 15)
        #expect(report.size == 61440)
        #expect(report.detail.contains("page size 4096"))
        #expect(report.detail.contains("journal mode rollback"))
        #expect(report.detail.contains("3.40.1"))
    }

    @Test func plaintextHeaderFixture() {
        let report = DatabaseFileInspector.inspect(fixture("sqlcipher4-plaintext-header.db"))
        #expect(report.kind == .plaintextHeader)
        #expect(report.reservedBytes == 80)
        #expect(report.pageSize == 4096)
        #expect(report.journalMode == .rollback)
        #expect(report.detail.contains("salt"))
    }

    @Test(arguments: [
        "sqlcipher3-default.db", "sqlcipher3-custom.db", "sqlcipher3-rawkey.db", "sqlcipher4-default.db",
        "sqlcipher4-compat3.db", "sqlcipher4-custom.db", "sqlcipher4-rawkey.db", "sqlcipher4-default-damaged-page1.db",
        "sqlcipher3-default-truncated.db", "sqlcipher4-default-truncated.db",
    ])
    func encryptedFixtures(name: String) {
        let report = DatabaseFileInspector.inspect(fixture(name))
        #expect(report.kind == .encrypted, "\(name): \(report.detail)")
        #expect(report.pageSize == nil)
        #expect(report.journalMode == nil)
        #expect(report.detail.contains("only the right key can confirm"))
    }

    @Test func encryptedSizesAreReadInTermsOfTheDefaults() {
        let v4 = DatabaseFileInspector.inspect(fixture("sqlcipher4-default.db"))
        #expect(v4.detail.contains("15 pages of 4096 bytes (SQLCipher 4's default)"))
        let v3 = DatabaseFileInspector.inspect(fixture("sqlcipher3-default.db"))
        #expect(v3.detail.contains("54 pages of 1024 bytes (SQLCipher 3's default)"))
        #expect(v3.detail.contains("not a multiple of 4096"))
        let truncated = DatabaseFileInspector.inspect(fixture("sqlcipher4-default-truncated.db"))
        #expect(truncated.detail.contains("not a complete SQLCipher 4 file"))
    }

    @Test func encryptedPageCountsComeFromTheSizeAndThePageSizeThatFits() {
        // A multiple of 4096 is a multiple of 1024 too: SQLCipher 4's default is assumed, and ambiguous.
        let v4 = DatabaseFileInspector.inspect(fixture("sqlcipher4-default.db"))
        #expect(v4.pageCount == 15)
        #expect(v4.assumedPageSize == 4096)
        #expect(v4.pageCountIsAmbiguous)
        #expect(v4.pageSize == nil, "the page size is not known, only assumed")
        // 55296 bytes are no whole number of 4096-byte pages: only SQLCipher 3's default fits.
        let v3 = DatabaseFileInspector.inspect(fixture("sqlcipher3-default.db"))
        #expect(v3.pageCount == 54)
        #expect(v3.assumedPageSize == 1024)
        #expect(!v3.pageCountIsAmbiguous)
        // The -wal's header says the page size.
        let wal = DatabaseFileInspector.inspect(fixture("sqlcipher4-wal.db"))
        #expect(wal.pageCount == 15)
        #expect(wal.assumedPageSize == 4096)
        #expect(!wal.pageCountIsAmbiguous)
        // Readable headers give the count; nothing is assumed.
        let plain = DatabaseFileInspector.inspect(fixture("plaintext.db"))
        #expect(plain.pageCount == 15)
        #expect(plain.assumedPageSize == nil)
        #expect(!plain.pageCountIsAmbiguous)
    }

    @Test func onePageIsSingular() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("one-page.bin")
        try write(randomBytes(4096), to: path)
        let report = DatabaseFileInspector.inspect(path)
        #expect(report.kind == .encrypted)
        #expect(report.pageCount == 1)
        #expect(report.detail.contains("1 page of 4096 bytes"), "\(report.detail)")
        #expect(report.detail.contains("4 pages of 1024 bytes"))
        #expect(!report.detail.contains("1 pages"))
    }

    @Test(arguments: ["sqlcipher3-wal.db", "sqlcipher4-wal.db"])
    func walFixturesUseThePageSizeOfTheirWal(name: String) throws {
        let report = DatabaseFileInspector.inspect(fixture(name))
        #expect(report.kind == .encrypted)
        #expect(report.journalMode == .wal)
        #expect(report.pageSize == (name.hasPrefix("sqlcipher3") ? 1024 : 4096))
        #expect(report.companionFiles.map(\.suffix) == ["-wal"])
        let wal = DatabaseFileInspector.inspect(fixture(name + "-wal"))
        #expect(wal.kind == .notADatabase)
        #expect(wal.detail.contains("write-ahead log"))
        #expect(wal.detail.contains("3 frames"))
    }

    @Test func filesMadeBySqlCipherKit() async throws {
        let directory = TemporaryDirectory()
        let encrypted = directory.path("enc.db"), plain = directory.path("plain.db")
        let db = try Database(path: encrypted, rawKey: rawKey(9), journalMode: .wal)
        try await db.execute("CREATE TABLE t(v)")
        // While open, the -wal and -shm are beside it.
        let open = DatabaseFileInspector.inspect(encrypted)
        #expect(open.kind == .encrypted)
        #expect(Set(open.companionFiles.map(\.suffix)) == ["-wal", "-shm"])
        #expect(open.journalMode == .wal)
        await db.close()
        #expect(DatabaseFileInspector.inspect(encrypted).kind == .encrypted)

        let plainDB = try Database(unencryptedPath: plain, journalMode: .wal)
        try await plainDB.execute("CREATE TABLE t(v)")
        await plainDB.close()
        let report = DatabaseFileInspector.inspect(plain)
        #expect(report.kind == .plaintext)
        #expect(report.journalMode == .wal)
        #expect(report.detail.contains("journal mode wal"))
    }

    @Test func aFileMadeByLibsqlite3WithAnotherPageSize() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("small-pages.db")
        try LibSQLite3.run(path, "PRAGMA page_size = 512; CREATE TABLE t(v); INSERT INTO t VALUES (1)")
        let report = DatabaseFileInspector.inspect(path)
        #expect(report.kind == .plaintext)
        #expect(report.pageSize == 512)
        #expect(report.pageCount == 2)
    }

    @Test func notADatabaseReasons() throws {
        let directory = TemporaryDirectory()
        func inspect(_ name: String, _ bytes: [UInt8]) throws -> DatabaseFileInspection {
            let path = directory.path(name)
            try write(bytes, to: path)
            return DatabaseFileInspector.inspect(path)
        }
        // A size no page size divides.
        let odd = try inspect("odd.bin", randomBytes(1000))
        #expect(odd.kind == .notADatabase)
        #expect(odd.detail.contains("not a multiple of any page size"))
        // Text whose size happens to be a whole number of pages.
        let text = try inspect("text.txt", Array(String(repeating: "hello, plain text\n", count: 512).utf8.prefix(4096)))
        #expect(text.kind == .notADatabase)
        #expect(text.detail.contains("not random-looking"))
        #expect(text.detail.contains("looks like text"))
        // Zeros.
        let zeros = try inspect("zeros.bin", [UInt8](repeating: 0, count: 8192))
        #expect(zeros.kind == .notADatabase)
        #expect(zeros.detail.contains("all zero bytes"))
        // A compressed file is random-looking too; its magic number tells it apart.
        let gzip = try inspect("archive.gz", [0x1F, 0x8B, 0x08] + randomBytes(4093))
        #expect(gzip.kind == .notADatabase)
        #expect(gzip.detail.contains("gzip"))
        // The SQLite header with nonsense after it.
        var badPage = FileHeader.sqliteMagic + [0x03, 0x00] + [UInt8](repeating: 0, count: 82)
        badPage += [UInt8](repeating: 0, count: 4096 - badPage.count)
        let invalid = try inspect("bad-page.db", badPage)
        #expect(invalid.kind == .notADatabase)
        #expect(invalid.detail.contains("page size field (768)"))
        let short = try inspect("short.db", FileHeader.sqliteMagic + [0x10, 0x00])
        #expect(short.kind == .notADatabase)
        #expect(short.detail.contains("fewer than the 100-byte header"))
        // A rollback journal.
        let journal = try inspect("x.db-journal", [0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7] + [UInt8](repeating: 0, count: 16)
            + [0, 0, 0x10, 0] + [UInt8](repeating: 0, count: 484))
        #expect(journal.kind == .notADatabase)
        #expect(journal.detail.contains("rollback journal"))
        #expect(journal.detail.contains("x.db"))
        // A directory.
        let folder = DatabaseFileInspector.inspect(directory.url.path)
        #expect(folder.kind == .notADatabase)
        #expect(folder.detail.contains("directory"))
        // This very source file.
        let source = DatabaseFileInspector.inspect(#filePath)
        #expect(source.kind == .notADatabase)
    }

    @Test func randomDataIsIndistinguishableFromCiphertext() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("random.bin")
        try write(randomBytes(3 * 4096), to: path)
        let report = DatabaseFileInspector.inspect(path)
        #expect(report.kind == .encrypted)
        #expect(report.detail.contains("other random data looks the same"))
    }

    @Test func entropyMeasure() {
        #expect(DatabaseFileInspector.entropy([]) == 0)
        #expect(DatabaseFileInspector.entropy([UInt8](repeating: 7, count: 100)) == 0)
        #expect(abs(DatabaseFileInspector.entropy((0..<256).map { UInt8($0) }) - 8) < 1e-9)
        #expect(DatabaseFileInspector.entropy(randomBytes(512)) > DatabaseFileInspector.randomEntropyThreshold)
    }
}
