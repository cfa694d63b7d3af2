import CSQLite3
import Foundation
import Testing
@testable import SqlCipherKit

/// The test binary links the plaintext libsqlite3 (module CSQLite3) on purpose: both SQLite
/// copies work in this one process, and neither ever reads or writes through the other.
/// (Strict "before the bridge loads" ordering needs a fresh process: see ChildProcessLinkingTests.)
@Suite struct SameProcessSQLiteTests {
    @Test func theTestBinaryReallyLinksLibsqlite3() throws {
        // The linker drops an unused library (--as-needed); these calls keep it.
        #expect(sqlite3_libversion_number() > 3_000_000)
        let needed = try Linking.neededLibraries(CommandLine.arguments[0])
        #expect(needed.contains("libsqlite3.so.0"), "NEEDED: \(needed)")
        #expect(!needed.contains { $0.hasPrefix("libsqlcipher") })
    }

    @Test func twoDifferentLibrariesAnswer() throws {
        let library = try SqlCipherLibrary.shared
        // Different versions and source ids: calls through the bridge and through CSQLite3 reach
        // two different copies of SQLite.
        #expect(LibSQLite3.version != library.sqliteVersion)
        #expect(LibSQLite3.sourceID != library.sqliteSourceID)
        // libsqlite3 knows nothing of SQLCipher: a keyed in-memory database has no cipher_version.
        #expect(try LibSQLite3.run(":memory:", "PRAGMA cipher_version").isEmpty)
    }

    @Test func plaintextAndEncryptedWorkInterleavedAndStayWhatTheyAre() async throws {
        let library = try SqlCipherLibrary.shared
        let directory = TemporaryDirectory()
        let plain = directory.path("plain.db"), encrypted = directory.path("encrypted.db")
        let marker = Linking.marker("SAMEPROC")
        let key = Data((0..<32).map { _ in UInt8.random(in: .min ... .max) })

        // libsqlite3 writes a plaintext file.
        try LibSQLite3.run(plain, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('\(marker)-plain-1')")

        // SqlCipherKit writes an encrypted file.
        let db = try Database(path: encrypted, rawKey: key, journalMode: .rollback)
        #expect(db.library === library)
        try await db.execute("CREATE TABLE t(v TEXT)")
        try await db.execute("INSERT INTO t VALUES (?)", "\(marker)-encrypted-1")

        // While SqlCipherKit's connection is open, libsqlite3 keeps working on its own file.
        try LibSQLite3.run(plain, "INSERT INTO t VALUES ('\(marker)-plain-2')")
        #expect(try LibSQLite3.run(plain, "SELECT count(*) FROM t") == [["2"]])
        try await db.execute("INSERT INTO t VALUES (?)", "\(marker)-encrypted-2")
        await db.close()

        // libsqlite3 cannot read the encrypted file (SQLITE_NOTADB), without a key or with one.
        let readError = #expect(throws: LibSQLite3Error.self) {
            try LibSQLite3.run(encrypted, "SELECT count(*) FROM sqlite_master")
        }
        #expect(readError?.code == SQLITE_NOTADB)

        // SqlCipherKit reads the plaintext file libsqlite3 wrote, and refuses it with a key.
        let plainDB = try Database(unencryptedPath: plain)
        #expect(!plainDB.isEncrypted)
        let plainRows = try await plainDB.query("SELECT v FROM t ORDER BY rowid").compactMap { $0.get("v", as: String.self) }
        #expect(plainRows == ["\(marker)-plain-1", "\(marker)-plain-2"])
        await plainDB.close()
        let keyError = #expect(throws: SqlCipherError.self) { _ = try Database(path: plain, rawKey: key) }
        if case .keyFailed? = keyError {} else { Issue.record("expected keyFailed, got \(String(describing: keyError))") }

        // Each file is what it was made to be.
        #expect(Linking.hasPlaintextHeader(plain))
        #expect(Linking.anyFileContains([plain], "\(marker)-plain-2"))
        #expect(!Linking.hasPlaintextHeader(encrypted))
        #expect(!Linking.anyFileContains(Linking.databaseFiles(encrypted), marker))
        let reopened = try Database(path: encrypted, rawKey: key)
        let rows = try await reopened.query("SELECT v FROM t ORDER BY rowid").compactMap { $0.get("v", as: String.self) }
        #expect(rows == ["\(marker)-encrypted-1", "\(marker)-encrypted-2"])
        await reopened.close()

        // libsqlite3 still works after all of it.
        try LibSQLite3.run(plain, "INSERT INTO t VALUES ('\(marker)-plain-3')")
        #expect(try LibSQLite3.run(plain, "SELECT count(*) FROM t") == [["3"]])
        #expect(Linking.hasPlaintextHeader(plain))
    }

    @Test func aPlaintextFileMadeBySqlCipherKitIsReadByLibsqlite3() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path("public.db")
        let marker = Linking.marker("PUBLIC")
        let db = try Database(unencryptedPath: path, journalMode: .rollback)
        try await db.execute("CREATE TABLE t(v TEXT)")
        try await db.execute("INSERT INTO t VALUES (?)", marker)
        await db.close()
        #expect(Linking.hasPlaintextHeader(path))
        #expect(try LibSQLite3.run(path, "SELECT v FROM t") == [[marker]])
    }
}
