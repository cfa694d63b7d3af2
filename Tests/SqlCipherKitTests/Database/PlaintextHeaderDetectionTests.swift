import CSQLite3
import Foundation
import Testing
@testable import SqlCipherKit

/// A SQLCipher file made with a plaintext header keeps the first N bytes of page 1 readable. With
/// N of 100 or more, the SQLite header and even page 1's b-tree header and cell pointers read as
/// plain SQLite; only the cells (and the end of the page) are ciphertext. Every place that decides
/// "plaintext SQLite or not" (the inspector, `doctor inspect`, the refusal of a key, the opening of
/// `Database(unencryptedPath:)`, `encrypt(plaintextAt:)`, `encryptInPlace`) looks at page 1 past
/// the header, the same way, through ``FileHeader``.
@Suite struct PlaintextHeaderDetectionTests {
    /// Header sizes from SQLCipher's documented 32 to well past the 100-byte SQLite header.
    static let headerSizes = [32, 64, 96, 112, 512, 1024]

    /// A SQLCipher 4 file with `headerSize` plaintext bytes, made by the real 4.6.1 CLI: one table
    /// with a row, or (`empty`) no schema at all, so that page 1 has no cell to look at.
    static func makeFile(_ path: String, headerSize: Int, empty: Bool = false) throws {
        var statements = [SqlcipherCLI.keyPragma(passphrase: "header-key"),
                          "PRAGMA cipher_plaintext_header_size = \(headerSize)"]
        statements += empty
            ? ["PRAGMA user_version = 3"]
            : ["CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)", "INSERT INTO notes(body) VALUES ('secret row')"]
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, statements)
        let header = try #require(FileHeader(path: path))
        try #require(header.hasPlaintextMagic && (header.reservedBytes ?? 0) > 0, "the CLI wrote a plaintext header")
    }

    @Test(arguments: headerSizes)
    func everyCallerSeesAPlaintextHeaderFile(headerSize: Int) throws {
        for empty in [false, true] {
            let dir = TemporaryDirectory()
            let path = dir.path("header-\(headerSize).db")
            try Self.makeFile(path, headerSize: headerSize, empty: empty)
            let before = try #require(FileManager.default.contents(atPath: path))
            let label = "header \(headerSize)\(empty ? ", empty schema" : "")"

            let header = try #require(FileHeader(path: path))
            #expect(header.looksPlaintextHeaderSQLCipher, "\(label)")
            #expect(!header.looksPlaintextSQLite, "\(label)")
            let report = DatabaseFileInspector.inspect(path)
            #expect(report.kind == .plaintextHeader, "\(label): \(report.detail)")

            let opening = try #require(throws: SqlCipherError.self, "\(label)") { try Database(unencryptedPath: path) }
            #expect(isNotPlaintext(opening, path), "\(label): \(opening)")
            let target = dir.path("copy.db")
            let copying = try #require(throws: SqlCipherError.self, "\(label)") {
                try Database.encrypt(plaintextAt: path, to: target, key: "k", cipher: fastCipher)
            }
            #expect(isNotPlaintext(copying, path), "\(label): \(copying)")
            #expect(!FileManager.default.fileExists(atPath: target))
            let inPlace = try #require(throws: SqlCipherError.self, "\(label)") {
                try Database.encryptInPlace(path: path, key: "k", cipher: fastCipher)
            }
            #expect(isNotPlaintext(inPlace, path), "\(label): \(inPlace)")

            // With a key but without the header settings: told what the file is, not sent to
            // Database(unencryptedPath:).
            let keyed = try #require(throws: SqlCipherError.self, "\(label)") {
                try Database(path: path, key: "header-key", cipher: fastCipher)
            }
            guard case .keyFailed(_, let reason) = keyed else {
                Issue.record("\(label): expected keyFailed, got \(keyed)")
                continue
            }
            #expect(reason.contains("plaintext header"), "\(label): \(reason)")
            #expect(!reason.contains("unencryptedPath"), "\(label): \(reason)")
            #expect(FileManager.default.contents(atPath: path) == before, "\(label): the file was changed")
        }
    }

    @Test func doctorInspectNamesEveryHeaderSize() throws {
        let dir = TemporaryDirectory()
        let files = try Self.headerSizes.map { size in
            let path = dir.path("header-\(size).db")
            try Self.makeFile(path, headerSize: size)
            return path
        }
        let result = try runChild(productPath("sqlcipher-doctor"), ["inspect", "--json"] + files)
        #expect(!result.signaled, "the doctor crashed: \(result.stderr)")
        let report = try Linking.jsonObject(result.stdout)
        let entries = try #require(report["files"] as? [[String: Any]])
        #expect(entries.count == files.count)
        for entry in entries {
            #expect(entry["kind"] as? String == "plaintext-header", "\(entry)")
        }
    }

    /// The other side: plain SQLite files whose pages reserve bytes (as a checksum VFS does) stay
    /// plaintext however page 1 looks: with an empty schema, one table, or so many tables that
    /// page 1 is an interior b-tree page.
    @Test(arguments: [0, 1, 300])
    func plainFilesWithReservedBytesStayPlaintext(tables: Int) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("reserved.db")
        let schema = (0..<tables).map { "CREATE TABLE table_\($0)(id INTEGER PRIMARY KEY, body TEXT, more TEXT DEFAULT 'x')" }
        try ReservedBytesOpeningTests.makePlainFile(path, reserve: 32, statements: ["PRAGMA user_version = 1"] + schema)
        let header = try #require(FileHeader(path: path))
        try #require(header.reservedBytes == 32)
        if tables == 300 { try #require(header.firstPageType == 5, "page 1 is an interior page") }
        #expect(header.looksPlaintextSQLite)
        #expect(!header.looksPlaintextHeaderSQLCipher)
        #expect(DatabaseFileInspector.inspect(path).kind == .plaintext)
        let db = try Database(unencryptedPath: path)
        #expect(try await db.query("SELECT count(*) FROM sqlite_master")[0].get(0, as: Int.self) == tables)
        await db.close()
    }

    private func isNotPlaintext(_ error: SqlCipherError, _ path: String) -> Bool {
        if case .notPlaintextDatabase(let failed) = error { return failed == path }
        return false
    }
}
