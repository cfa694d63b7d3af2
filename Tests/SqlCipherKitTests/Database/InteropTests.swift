import Foundation
import Testing
@testable import SqlCipherKit

/// Files written by the package are read by the real `sqlcipher` CLI and the reverse, and nothing
/// readable reaches the disk.
@Suite struct InteropTests {
    /// The CLI of the loaded library's major version.
    var sameVersionCLI: String { isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3 }

    @Test(arguments: [JournalMode.wal, .rollback])
    func packageFileOpensInTheCLIWithTheSamePassphrase(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pkg.db")
        let db = try Database(path: path, key: "correct horse", journalMode: mode)
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, data BLOB)")
        try await db.execute("INSERT INTO t(name, data) VALUES (?, ?)", "O'Brien ☕", Data([0, 1, 2, 255]))
        try await db.execute("PRAGMA user_version = 3")
        await db.close()
        let lines = try SqlcipherCLI.run(sameVersionCLI, path, [
            SqlcipherCLI.keyPragma(passphrase: "correct horse"),
            "SELECT name, hex(data) FROM t", "PRAGMA user_version",
        ])
        #expect(lines == ["O'Brien ☕|000102FF", "3"])
        #expect(throws: SqlcipherCLI.CLIError.self) {
            try SqlcipherCLI.run(sameVersionCLI, path, [SqlcipherCLI.keyPragma(passphrase: "wrong"), "SELECT * FROM t"])
        }
    }

    @Test func packageRawKeyFileOpensInTheCLI() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pkg.db")
        let db = try Database(path: path, rawKey: rawKey(3))
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (7)")
        await db.close()
        let lines = try SqlcipherCLI.run(sameVersionCLI, path, [SqlcipherCLI.keyPragma(rawKey: rawKey(3)), "SELECT x FROM t"])
        #expect(lines == ["7"])
    }

    @Test func cliFileOpensInThePackage() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("cli.db")
        _ = try SqlcipherCLI.run(sameVersionCLI, path, [
            SqlcipherCLI.keyPragma(passphrase: "from the cli"),
            "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)",
            "INSERT INTO t(name) VALUES ('written by sqlcipher')",
            "PRAGMA user_version = 9",
        ])
        let db = try Database(path: path, key: "from the cli")
        #expect(try await db.query("SELECT name FROM t")[0].get("name", as: String.self) == "written by sqlcipher")
        #expect(try await db.query("PRAGMA user_version")[0].get(0, as: Int.self) == 9)
        #expect(db.journalMode == .rollback)
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "not it") }
    }

    /// A file in SQLCipher 3's format whose schema holds SQL that SQLite 3.15 (SQLCipher 3.4.1's)
    /// cannot parse, written by the 4.6.1 CLI: a newer library reads it; the older one says that
    /// the key opens it and that its schema needs a newer SQLite (it was SQLite's bare "malformed"
    /// code 11, which read like damage), on a `Database`, a read-only opening and a pool.
    @Test func aSchemaFromANewerSQLiteIsNamedAsSuchNotAsDamage() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("newer.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [
            SqlcipherCLI.keyPragma(passphrase: "newer"), "PRAGMA cipher_compatibility = 3", "PRAGMA journal_mode = WAL",
            "CREATE TABLE s(a INTEGER, b TEXT) STRICT",
            "CREATE TABLE g(a INT, b INT GENERATED ALWAYS AS (a * 2) STORED)", "INSERT INTO g(a) VALUES (21)",
        ])
        let library = try loadedLibrary()
        guard library.sqliteVersionNumber < 3_037_000 else {
            let db = try Database(path: path, key: "newer", cipher: .sqlcipher3)
            #expect(try await db.query("SELECT b FROM g")[0].get(0, as: Int.self) == 42)
            await db.close()
            return
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        func check(_ open: () throws -> Void) {
            do {
                try open()
                Issue.record("a schema this SQLite cannot parse opened")
            } catch let SqlCipherError.cannotOpen(_, reason) {
                #expect(reason.contains("the key opens it"))
                #expect(reason.contains("newer SQLite"))
                #expect(reason.contains("SQLite \(library.sqliteVersion)"))
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
        check { _ = try Database(path: path, key: "newer", cipher: .sqlcipher3) }
        check { _ = try Database(path: path, key: "newer", cipher: .sqlcipher3, readOnly: true) }
        check { _ = try DatabasePool(path: path, key: "newer", cipher: .sqlcipher3) }
        // A wrong key is still a wrong key, and nothing was written.
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "not it", cipher: .sqlcipher3) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        // The same for a plaintext file.
        let plain = dir.path("plain.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, plain, ["CREATE TABLE s(a INTEGER) STRICT"])
        do {
            _ = try Database(unencryptedPath: plain)
            Issue.record("a plaintext schema this SQLite cannot parse opened")
        } catch let SqlCipherError.cannotOpen(_, reason) {
            #expect(reason.contains("readable SQLite file") && reason.contains("newer SQLite"))
        }
    }

    @Test func sqlcipher341CLIFileOpensThroughSqlcipher3Settings() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("v3cli.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version3, path, [
            SqlcipherCLI.keyPragma(passphrase: "three"),
            "PRAGMA journal_mode = WAL",
            "CREATE TABLE t(x)", "INSERT INTO t VALUES ('made by 3.4.1')",
        ])
        let db = try Database(path: path, key: "three", cipher: .sqlcipher3)
        #expect(try await db.query("SELECT x FROM t")[0].get(0, as: String.self) == "made by 3.4.1")
        #expect(db.journalMode == .wal)
        try await db.execute("INSERT INTO t VALUES ('added by the package')")
        await db.close()
        let lines = try SqlcipherCLI.run(SqlcipherCLI.version3, path, [
            SqlcipherCLI.keyPragma(passphrase: "three"), "SELECT count(*) FROM t",
        ])
        #expect(lines == ["2"])
    }

    @Test(arguments: [JournalMode.wal, .rollback])
    func noPlaintextMarkerOnDiskAfterWrites(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("scan.db")
        let marker = "PLAINTEXT-MARKER-\(UUID().uuidString)"
        let db = try Database(path: path, rawKey: rawKey(), journalMode: mode)
        try await db.execute("CREATE TABLE \"\(marker)-table\"(body TEXT)")
        for round in 0..<20 {
            try await db.execute("INSERT INTO \"\(marker)-table\" VALUES (?)", marker + String(repeating: "z", count: 500) + "\(round)")
        }
        let companions = [path, path + "-wal", path + "-shm", path + "-journal"]
        // While open (WAL and its index exist) ...
        if mode == .wal { #expect(FileManager.default.fileExists(atPath: path + "-wal")) }
        #expect(filesContain(companions, marker).isEmpty)
        // ... in the middle of a transaction (the rollback journal exists) ...
        try await db.execute("BEGIN")
        try await db.execute("UPDATE \"\(marker)-table\" SET body = body || ?", marker)
        if mode == .rollback { #expect(FileManager.default.fileExists(atPath: path + "-journal")) }
        #expect(filesContain(companions, marker).isEmpty)
        try await db.execute("COMMIT")
        // ... and after close.
        await db.close()
        #expect(filesContain(companions, marker).isEmpty)
        let header = try #require(FileManager.default.contents(atPath: path))
        #expect(header.prefix(16) != Data("SQLite format 3\0".utf8))
        // The same writes in a plaintext database do show the marker: the scan can see it.
        let plainPath = dir.path("plain.db")
        let plain = try Database(unencryptedPath: plainPath, journalMode: mode)
        try await plain.execute("CREATE TABLE t(body TEXT)")
        try await plain.execute("INSERT INTO t VALUES (?)", marker)
        await plain.close()
        #expect(!filesContain([plainPath], marker).isEmpty)
    }

    @Test func everyEncryptedFileStartsWithCiphertextAfterTheFirstWrite() async throws {
        // The open sequence writes and checks once; here the file is checked from outside too.
        let dir = TemporaryDirectory()
        for (index, mode) in [JournalMode.wal, .rollback].enumerated() {
            let path = dir.path("fresh\(index).db")
            let db = try Database(path: path, key: "k", journalMode: mode, cipher: fastCipher)
            let header = try #require(FileHeader(path: path))
            #expect(header.fileSize > 0)
            #expect(!header.hasPlaintextMagic)
            #expect(try await db.query("SELECT count(*) FROM sqlite_master")[0].get(0, as: Int.self) == 0)
        }
    }
}
