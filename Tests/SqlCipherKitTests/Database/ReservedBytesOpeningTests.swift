import CSQLite3
import Foundation
import Testing
@testable import SqlCipherKit

/// A plain SQLite file whose pages reserve bytes for something other than SQLCipher (a checksum
/// VFS, `SQLITE_FCNTL_RESERVE_BYTES`) has a readable header with byte 20 non-zero, like a SQLCipher
/// file with a plaintext header. The opener and the inspector must tell them apart the same way.
@Suite struct ReservedBytesOpeningTests {
    /// Makes a plain SQLite file with `reserve` bytes reserved per page, through the linked
    /// libsqlite3 (https://sqlite.org/c3ref/c_fcntl_begin_atomic_write.html#sqlitefcntlreservebytes),
    /// then runs `statements` on it (by default: one table holding one row).
    static func makePlainFile(_ path: String, reserve: Int32, statements: [String] = [
        "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)", "INSERT INTO notes(body) VALUES ('plain with reserve')",
    ]) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else {
            sqlite3_close(db)
            throw LibSQLite3Error(code: SQLITE_CANTOPEN, message: "cannot create \(path)")
        }
        defer { sqlite3_close(db) }
        var wanted = reserve
        let rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_RESERVE_BYTES, &wanted)
        guard rc == SQLITE_OK else { throw LibSQLite3Error(code: rc, message: "SQLITE_FCNTL_RESERVE_BYTES refused") }
        // VACUUM last: it rewrites the file with the reserved bytes on every page.
        for sql in statements + ["VACUUM"] {
            let rc = sqlite3_exec(db, sql, nil, nil, nil)
            guard rc == SQLITE_OK else { throw LibSQLite3Error(code: rc, message: String(cString: sqlite3_errmsg(db))) }
        }
    }

    func plainFileWithReserve(_ dir: TemporaryDirectory, reserve: Int32 = 12) throws -> String {
        let path = dir.path("reserved.db")
        try Self.makePlainFile(path, reserve: reserve)
        let header = try #require(FileHeader(path: path))
        try #require(header.hasPlaintextMagic && header.reservedBytes == Int(reserve), "the file has no reserved bytes")
        return path
    }

    @Test func theInspectorAndTheHeaderRulesAgree() throws {
        let dir = TemporaryDirectory()
        let path = try plainFileWithReserve(dir)
        let report = DatabaseFileInspector.inspect(path)
        #expect(report.kind == .plaintext)
        #expect(report.reservedBytes == 12)
        let header = try #require(FileHeader(path: path))
        #expect(header.looksPlaintextSQLite)
        #expect(!header.looksPlaintextHeaderSQLCipher)
        // And a real SQLCipher file with a plaintext header is still one, for both.
        let fixture = Linking.fixtures.appendingPathComponent("sqlcipher4-plaintext-header.db").path
        let cipherHeader = try #require(FileHeader(path: fixture))
        #expect(cipherHeader.looksPlaintextHeaderSQLCipher)
        #expect(!cipherHeader.looksPlaintextSQLite)
        #expect(DatabaseFileInspector.inspect(fixture).kind == .plaintextHeader)
    }

    @Test func opensAsAPlaintextDatabase() async throws {
        let dir = TemporaryDirectory()
        let path = try plainFileWithReserve(dir)
        let db = try Database(unencryptedPath: path)
        #expect(try await db.query("SELECT body FROM notes")[0].get(0, as: String.self) == "plain with reserve")
        try await db.execute("INSERT INTO notes(body) VALUES ('more')")
        #expect(try await db.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) == 2)
        await db.close()
        // Still the same kind of file, reserve kept.
        #expect(FileHeader(path: path)?.reservedBytes == 12)
        #expect(try LibSQLite3.run(path, "SELECT count(*) FROM notes") == [["2"]])
    }

    @Test func withAKeyItIsReportedAsPlaintextNotAsAPlaintextHeader() throws {
        let dir = TemporaryDirectory()
        let path = try plainFileWithReserve(dir)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = try #require(throws: SqlCipherError.self) { try Database(path: path, key: "secret", cipher: fastCipher) }
        guard case .keyFailed(let failedPath, let reason) = error else {
            Issue.record("expected keyFailed, got \(error)")
            return
        }
        #expect(failedPath == path)
        #expect(reason.contains("plaintext SQLite database"), "\(reason)")
        #expect(reason.contains("reserve 12 bytes"), "\(reason)")
        #expect(reason.contains("unencryptedPath"), "\(reason)")
        #expect(!reason.contains("plaintext header"), "\(reason)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func encryptingSuchAFileWorks() async throws {
        let dir = TemporaryDirectory()
        let path = try plainFileWithReserve(dir, reserve: 8)
        let target = dir.path("encrypted.db")
        try Database.encrypt(plaintextAt: path, to: target, key: "secret", cipher: fastCipher)
        let db = try Database(path: target, key: "secret", cipher: fastCipher)
        #expect(try await db.query("SELECT body FROM notes")[0].get(0, as: String.self) == "plain with reserve")
        #expect(DatabaseFileInspector.inspect(target).kind == .encrypted)
    }
}
